//===- ExpandGradients.cpp - Differentiate ONNX's Gradient nodes ----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The onnxg-expand-gradients pass: reverse-mode differentiation of the nodes
// between an `ai.onnx.preview.training` Gradient node's `xs` and `y`, written
// as ONNX nodes that replace the Gradient node's outputs.
//
//===----------------------------------------------------------------------===//

#include "NodeEmitter.h"
#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

namespace mlir::onnxg {
#define GEN_PASS_DEF_ONNXGRAPHEXPANDGRADIENTS
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"
} // namespace mlir::onnxg

using namespace mlir;
using namespace mlir::onnxg;

static constexpr StringLiteral kPreviewTraining = "ai.onnx.preview.training";

/// The ints attribute `name` of `node`, or nullopt when it has none.
static std::optional<SmallVector<int64_t>> getInts(NodeOp node,
                                                   StringRef name) {
  auto array =
      dyn_cast_or_null<DenseI64ArrayAttr>(node.getOnnxAttrsOrEmpty().get(name));
  if (!array)
    return std::nullopt;
  return llvm::to_vector(array.asArrayRef());
}

/// The int attribute `name` of `node`, or `otherwise`.
static int64_t getInt(NodeOp node, StringRef name, int64_t otherwise) {
  auto attr = node.getOnnxAttrsOrEmpty().getAs<IntegerAttr>(name);
  return attr ? attr.getInt() : otherwise;
}

/// The float attribute `name` of `node`, or `otherwise`.
static double getFloat(NodeOp node, StringRef name, double otherwise) {
  auto attr = node.getOnnxAttrsOrEmpty().getAs<FloatAttr>(name);
  return attr ? attr.getValueAsDouble() : otherwise;
}

/// The string attribute `name` of `node`, or `otherwise`.
static StringRef getString(NodeOp node, StringRef name, StringRef otherwise) {
  auto attr = node.getOnnxAttrsOrEmpty().getAs<StringAttr>(name);
  return attr ? attr.getValue() : otherwise;
}

namespace {
/// Differentiates one Gradient node: the gradient of every value between
/// its `xs` and its `y`, built from a seed of ones at `y`.
class GradientExpansion {
public:
  GradientExpansion(NodeOp gradient, OpBuilder &builder)
      : gradient(gradient), builder(builder),
        nodes(gradient, builder, "Gradient") {}

  /// Replaces the Gradient node's outputs; fails after an error.
  LogicalResult run();

private:
  /// A new node named after the Gradient node (NodeEmitter::create).
  Value create(StringRef opType, Type type, ValueRange inputs,
               ArrayRef<NamedAttribute> attrs = {}) {
    return nodes.create(opType, type, inputs, attrs);
  }
  /// Split: its results' gradients (zeros where a part has none) joined.
  LogicalResult differentiateSplit(NodeOp node);
  /// LayerNormalization, and BatchNormalization with batch statistics
  /// (training_mode) or its input statistics.
  LogicalResult differentiateNormalization(NodeOp node, Value dy);
  /// Elements [begins[i], ends[i]) of `value` along each of `axes`, of
  /// type `type`.
  Value slice(Value value, ArrayRef<int64_t> axes, ArrayRef<int64_t> begins,
              ArrayRef<int64_t> ends, Type type);
  /// `value` summed over the dimensions ONNX broadcast it to from `type`.
  FailureOr<Value> sumToShape(Value value, Type type, NodeOp node);
  /// Adds `contribution` to the gradient of `value`.
  void accumulate(Value value, Value contribution);
  /// Adds the contributions of `node` to its operands' gradients, from the
  /// gradient `dy` of its output.
  LogicalResult differentiate(NodeOp node, Value dy);
  /// A reduction's constant axes (attribute or input; empty: none given),
  /// or nullopt when they are computed.
  std::optional<SmallVector<int64_t>> getConstantAxes(NodeOp node);
  /// The value of a one-element initializer or Constant node's output.
  std::optional<double> getConstantScalar(Value value);
  /// The same for what --amp-pipeline puts between `xs` and `y`: the loss
  /// scaling of `y` and precision casts; false for other ops.
  bool differentiateAMPOp(Operation *op, Value dy);
  /// An error at the Gradient node, "node 'g' (Gradient): ..."; with
  /// `node`, about differentiating it.
  InFlightDiagnostic emitError();
  InFlightDiagnostic emitError(NodeOp node);

  NodeOp gradient;
  OpBuilder &builder;
  NodeEmitter nodes;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> gradients;
  /// Forward nodes replaced by copies with more results (a Dropout's mask),
  /// erased after the expansion.
  SmallVector<NodeOp> replacedForwards;
};
} // namespace

InFlightDiagnostic GradientExpansion::emitError() {
  return gradient.emitNodeError();
}

InFlightDiagnostic GradientExpansion::emitError(NodeOp node) {
  return emitError() << "cannot differentiate " << node.describe() << ": ";
}

FailureOr<Value> GradientExpansion::sumToShape(Value value, Type type,
                                               NodeOp node) {
  if (value.getType() == type)
    return value;
  auto from = dyn_cast<RankedTensorType>(value.getType());
  auto to = dyn_cast<RankedTensorType>(type);
  if (!from || !to || !from.hasStaticShape() || !to.hasStaticShape() ||
      from.getRank() < to.getRank())
    return emitError(node) << "broadcasting from " << type << " to "
                           << value.getType() << " needs static shapes",
           failure();
  int64_t extra = from.getRank() - to.getRank();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < from.getRank(); ++i)
    if (i < extra || (to.getDimSize(i - extra) == 1 && from.getDimSize(i) != 1))
      axes.push_back(i);
  Value sum = value;
  if (!axes.empty()) {
    SmallVector<int64_t> kept(from.getShape());
    for (int64_t axis : axes)
      kept[axis] = 1;
    auto keptType = RankedTensorType::get(kept, from.getElementType());
    sum = nodes.reduceSum(value, axes, /*keepDims=*/true, keptType);
  }
  return create("Reshape", to, {sum, nodes.createI64s(to.getShape())});
}

LogicalResult GradientExpansion::differentiateSplit(NodeOp node) {
  Value x = node.getOperand(0);
  if (llvm::none_of(node.getResults(),
                    [&](Value v) { return gradients.count(v); }) ||
      !active.contains(x))
    return success();
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  if (!xType || !xType.hasStaticShape() ||
      llvm::any_of(node.getResultTypes(), [](Type type) {
        auto ranked = dyn_cast<RankedTensorType>(type);
        return !ranked || !ranked.hasStaticShape();
      }))
    return emitError(node) << "its gradient needs static shapes";
  int64_t axis = 0;
  if (auto attr = node.getOnnxAttrsOrEmpty().getAs<IntegerAttr>("axis"))
    axis = attr.getInt();
  if (axis < 0)
    axis += xType.getRank();
  SmallVector<Value> parts;
  for (Value result : node.getResults()) {
    Value part = gradients.lookup(result);
    parts.push_back(
        part ? part
             : nodes.createSplat(xType.getElementType(), 0,
                                 cast<RankedTensorType>(result.getType())));
  }
  accumulate(x, nodes.concat(parts, axis));
  return success();
}

LogicalResult GradientExpansion::differentiateNormalization(NodeOp node,
                                                            Value dy) {
  // y = xhat * scale + bias, xhat = (x - mean) * inv, inv = (var + eps)^-1/2
  // over the normalized axes (LayerNormalization's from `axis` on, a
  // training BatchNormalization's all but the channels):
  //   dx = inv * (g - mean(g) - xhat * mean(g * xhat)), g = dy * scale,
  // where the statistics are the input's; with given statistics (an
  // inference BatchNormalization) dx = g * inv. dscale = sum(dy * xhat),
  // dbias = sum(dy), over the other axes.
  auto xType = cast<RankedTensorType>(node.getOperand(0).getType());
  Type element = xType.getElementType();
  int64_t rank = xType.getRank();
  double epsilon = getFloat(node, "epsilon", 1e-5);
  bool layer = node.getOpType() == "LayerNormalization";
  bool batchStatistics = !layer && getInt(node, "training_mode", 0);
  if (!layer && rank < 2)
    return emitError(node) << "BatchNormalization needs a channel dimension";
  if (!layer && llvm::any_of(llvm::seq<unsigned>(3, 5), [&](unsigned i) {
        return i < node.getNumOperands() && active.contains(node.getOperand(i));
      }))
    return emitError(node) << "its input mean and variance are not "
                              "differentiated";
  // The normalized axes, and the shape a per-channel or per-feature
  // operand broadcasts as.
  SmallVector<int64_t> axes, channelShape(rank, 1);
  if (layer) {
    int64_t axis = getInt(node, "axis", -1);
    axis = axis < 0 ? axis + rank : axis;
    for (int64_t i = axis; i < rank; ++i)
      axes.push_back(i);
  } else {
    for (int64_t i = 0; i < rank; ++i)
      if (i != 1)
        axes.push_back(i);
    channelShape[1] = xType.getDimSize(1);
  }
  SmallVector<int64_t> kept(xType.getShape());
  int64_t count = 1;
  for (int64_t axis : axes) {
    count *= kept[axis];
    kept[axis] = 1;
  }
  auto keptType = xType.clone(kept);
  auto asChannels = [&](Value value) {
    return layer ? value : nodes.reshape(value, channelShape, channelShape);
  };
  auto mean = [&](Value value) {
    return nodes.binary(
        "Div", nodes.reduceSum(value, axes, /*keepDims=*/true, keptType),
        nodes.scalar(element, double(count)));
  };
  Value x = node.getOperand(0), centered, variance;
  if (layer || batchStatistics) {
    centered = nodes.binary("Sub", x, mean(x));
    variance = mean(nodes.binary("Mul", centered, centered));
  } else {
    centered = nodes.binary("Sub", x, asChannels(node.getOperand(3)));
    variance = asChannels(node.getOperand(4));
  }
  Value inverse = nodes.unary(
      "Reciprocal",
      nodes.unary("Sqrt", nodes.binary("Add", variance,
                                       nodes.scalar(element, epsilon))));
  Value normalized = nodes.binary("Mul", centered, inverse);
  Value scale = node.getOptionalOperand(1), bias = node.getOptionalOperand(2);
  // dscale and dbias: summed to the parameter's shape (LayerNormalization
  // broadcasts it from the right; BatchNormalization's is per channel).
  auto addParameter = [&](Value parameter, Value contribution) {
    if (!parameter || !active.contains(parameter))
      return success();
    auto type = cast<RankedTensorType>(parameter.getType());
    if (layer) {
      FailureOr<Value> summed = sumToShape(contribution, type, node);
      if (failed(summed))
        return failure();
      accumulate(parameter, *summed);
      return success();
    }
    accumulate(parameter, nodes.reduceSum(contribution, axes,
                                          /*keepDims=*/false, type));
    return success();
  };
  if (failed(addParameter(scale, nodes.binary("Mul", dy, normalized))) ||
      failed(addParameter(bias, dy)))
    return failure();
  if (!active.contains(x))
    return success();
  Value scaled = scale ? nodes.binary("Mul", dy, asChannels(scale)) : dy;
  Value dx;
  if (layer || batchStatistics) {
    Value correction = nodes.binary(
        "Add", mean(scaled),
        nodes.binary("Mul", normalized,
                     mean(nodes.binary("Mul", scaled, normalized))));
    dx = nodes.binary("Mul", inverse, nodes.binary("Sub", scaled, correction));
  } else {
    dx = nodes.binary("Mul", scaled, inverse);
  }
  accumulate(x, dx);
  return success();
}

Value GradientExpansion::slice(Value value, ArrayRef<int64_t> axes,
                               ArrayRef<int64_t> begins, ArrayRef<int64_t> ends,
                               Type type) {
  // Slice takes its bounds as inputs from opset 10, as attributes before.
  if (nodes.getOpset() >= 10)
    return create("Slice", type,
                  {value, nodes.createI64s(begins), nodes.createI64s(ends),
                   nodes.createI64s(axes)});
  auto ints = [&](ArrayRef<int64_t> v) {
    return builder.getDenseI64ArrayAttr(v);
  };
  return create("Slice", type, value,
                {builder.getNamedAttr("starts", ints(begins)),
                 builder.getNamedAttr("ends", ints(ends)),
                 builder.getNamedAttr("axes", ints(axes))});
}

void GradientExpansion::accumulate(Value value, Value contribution) {
  Value &sum = gradients[value];
  sum =
      sum ? create("Add", value.getType(), {sum, contribution}) : contribution;
}

LogicalResult GradientExpansion::differentiate(NodeOp node, Value dy) {
  StringRef type = node.getOpType();
  Value y = node.getResult(0);
  Type outType = y.getType();
  auto elementType = getElementTypeOrSelf(outType);
  auto input = [&](unsigned i) { return node.getOperand(i); };
  // Adds `contribution` (of the output's shape) to input `i`'s gradient.
  auto add = [&](unsigned i, Value contribution) -> LogicalResult {
    if (!active.contains(input(i)))
      return success();
    FailureOr<Value> summed =
        sumToShape(contribution, input(i).getType(), node);
    if (failed(summed))
      return failure();
    accumulate(input(i), *summed);
    return success();
  };
  auto binary = [&](StringRef opType, Value a, Value b) {
    return create(opType, outType, {a, b});
  };

  if (type == "Identity")
    return add(0, dy);
  if (type == "Sum" || type == "Mean") {
    // Every input gets dy (Mean's over the count), summed to its shape.
    Value share =
        type == "Sum"
            ? dy
            : binary("Div", dy,
                     nodes.scalar(elementType, double(node.getNumOperands())));
    for (unsigned i = 0; i < node.getNumOperands(); ++i)
      if (failed(add(i, share)))
        return failure();
    return success();
  }
  if (type == "Softplus") {
    // d log(1 + e^x) = sigmoid(x).
    return add(0, binary("Mul", dy, create("Sigmoid", outType, input(0))));
  }
  if (type == "Clip") {
    // dy where min < x < max (inputs from opset 11, attributes before).
    Value keep;
    for (auto [i, predicate, name] :
         {std::tuple<unsigned, StringRef, StringRef>{1, "Greater", "min"},
          {2, "Less", "max"}}) {
      Value bound = node.getOptionalOperand(i);
      if (auto attr = node.getOnnxAttrsOrEmpty().getAs<FloatAttr>(name))
        bound = nodes.scalar(elementType, attr.getValueAsDouble());
      if (!bound)
        continue;
      if (active.contains(bound))
        return emitError(node) << "its bounds are not differentiated";
      Value inside = nodes.binary(predicate, input(0), bound);
      keep = keep ? nodes.binary("And", keep, inside) : inside;
    }
    if (!keep)
      return add(0, dy);
    return add(0, create("Where", outType,
                         {keep, dy, nodes.createSplat(elementType, 0)}));
  }
  if (type == "Dropout") {
    // In training mode (a constant true training_mode, opset 12 on) dy
    // where the mask kept the element, over the keep probability; else dy.
    Value mode = node.getOptionalOperand(2);
    std::optional<double> training =
        mode ? getConstantScalar(mode) : std::optional<double>(0);
    if (!training)
      return emitError(node) << "its training_mode must be a constant";
    if (nodes.getOpset() < 12 || *training == 0)
      return add(0, dy);
    Value mask = node.getNumResults() > 1 ? node.getResult(1) : Value();
    if (!mask) {
      // The random mask cannot be drawn again: the forward node becomes
      // one that returns it too, with its names.
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(node);
      std::string output = getValueName(y).str();
      NodeOp masked = createNode(
          builder, "Dropout",
          {outType, cast<ShapedType>(outType).clone(builder.getI1Type())},
          node.getOperands(), node.getNodeName(), {output, output + "_mask"},
          llvm::to_vector(node.getOnnxAttrsOrEmpty().getValue()));
      y.replaceAllUsesWith(masked.getResult(0));
      replacedForwards.push_back(node);
      mask = masked.getResult(1);
    }
    Value ratio = node.getOptionalOperand(1);
    std::optional<double> rate = ratio ? getConstantScalar(ratio) : 0.5;
    if (auto attr = node.getOnnxAttrsOrEmpty().getAs<FloatAttr>("ratio"))
      rate = attr.getValueAsDouble();
    if (!rate || *rate >= 1)
      return emitError(node) << "its ratio must be a constant below 1";
    Value kept =
        create("Where", outType, {mask, dy, nodes.createSplat(elementType, 0)});
    return add(0, binary("Div", kept, nodes.scalar(elementType, 1 - *rate)));
  }
  if (type == "Neg")
    return add(0, create("Neg", outType, dy));
  if (type == "Add")
    return failure(failed(add(0, dy)) || failed(add(1, dy)));
  if (type == "Sub")
    return failure(failed(add(0, dy)) ||
                   failed(add(1, create("Neg", outType, dy))));
  if (type == "Mul")
    return failure(failed(add(0, binary("Mul", dy, input(1)))) ||
                   failed(add(1, binary("Mul", dy, input(0)))));
  if (type == "Div") {
    // d(a/b)/db = -(a/b)/b.
    Value db =
        create("Neg", outType, binary("Div", binary("Mul", dy, y), input(1)));
    return failure(failed(add(0, binary("Div", dy, input(1)))) ||
                   failed(add(1, db)));
  }
  if (type == "Relu")
    return add(0, create("Where", outType,
                         {create("Greater",
                                 cast<RankedTensorType>(outType).clone(
                                     builder.getI1Type()),
                                 {input(0), nodes.createSplat(elementType, 0)}),
                          dy, nodes.createSplat(elementType, 0)}));
  if (type == "Sigmoid")
    return add(
        0, binary("Mul", dy,
                  binary("Mul", y,
                         binary("Sub", nodes.createSplat(elementType, 1), y))));
  if (type == "Tanh")
    return add(0, binary("Mul", dy,
                         binary("Sub", nodes.createSplat(elementType, 1),
                                binary("Mul", y, y))));
  if (type == "Exp")
    return add(0, binary("Mul", dy, y));
  if (type == "Log")
    return add(0, binary("Div", dy, input(0)));
  if (type == "Sqrt")
    return add(0, binary("Div", dy,
                         binary("Mul", nodes.createSplat(elementType, 2), y)));
  if (type == "MatMul") {
    // dA = dy B^T, dB = A^T dy, each summed over the batch dimensions the
    // operand was broadcast along (a [batch, T, C] by a [C, N] weight).
    auto a = dyn_cast<RankedTensorType>(input(0).getType());
    auto b = dyn_cast<RankedTensorType>(input(1).getType());
    auto out = dyn_cast<RankedTensorType>(outType);
    if (!a || !b || !out || a.getRank() < 2 || b.getRank() < 2)
      return emitError(node)
             << "MatMul is differentiated for operands of rank 2 or more";
    auto transpose = [&](Value value) {
      int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
      SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      std::swap(perm[rank - 1], perm[rank - 2]);
      return nodes.transpose(value, perm);
    };
    // The product's batch dimensions with `rows` x `cols` at the end.
    auto productType = [&](int64_t rows, int64_t cols) {
      SmallVector<int64_t> shape(out.getShape().drop_back(2));
      shape.append({rows, cols});
      return out.clone(shape);
    };
    ArrayRef<int64_t> aShape = a.getShape(), bShape = b.getShape();
    if (active.contains(input(0)) &&
        failed(
            add(0, create("MatMul",
                          productType(aShape[aShape.size() - 2], aShape.back()),
                          {dy, transpose(input(1))}))))
      return failure();
    if (active.contains(input(1)) &&
        failed(
            add(1, create("MatMul",
                          productType(bShape[bShape.size() - 2], bShape.back()),
                          {transpose(input(0)), dy}))))
      return failure();
    return success();
  }
  if (type == "Cast") {
    std::optional<int32_t> to =
        getOnnxDataType(getElementTypeOrSelf(input(0).getType()));
    if (!to || !isa<FloatType>(getElementTypeOrSelf(input(0).getType())))
      return emitError(node) << "Cast is differentiated from float types";
    return add(
        0, create("Cast", input(0).getType(), dy,
                  builder.getNamedAttr("to", builder.getI64IntegerAttr(*to))));
  }

  auto boolType = [&](Type like) {
    return cast<RankedTensorType>(like).clone(builder.getI1Type());
  };
  if (type == "Where") {
    // The gradient goes to the branch each element took.
    Value zero = nodes.createSplat(elementType, 0);
    if (active.contains(input(1)) &&
        failed(add(1, create("Where", outType, {input(0), dy, zero}))))
      return failure();
    if (active.contains(input(2)) &&
        failed(add(2, create("Where", outType, {input(0), zero, dy}))))
      return failure();
    return success();
  }
  if (type == "LeakyRelu") {
    double alpha = getFloat(node, "alpha", 0.01);
    Value positive = create("Greater", boolType(outType),
                            {input(0), nodes.createSplat(elementType, 0)});
    return add(0,
               create("Where", outType,
                      {positive, dy,
                       binary("Mul", dy, nodes.scalar(elementType, alpha))}));
  }
  if (type == "Abs")
    return add(0, binary("Mul", dy, create("Sign", outType, input(0))));
  if (type == "Erf") {
    // d erf(x) = 2 / sqrt(pi) exp(-x^2).
    Value gauss =
        create("Exp", outType,
               create("Neg", outType, binary("Mul", input(0), input(0))));
    return add(0,
               binary("Mul", dy,
                      binary("Mul", gauss,
                             nodes.scalar(elementType, 1.1283791670955126))));
  }
  if (type == "Sin")
    return add(0, binary("Mul", dy, create("Cos", outType, input(0))));
  if (type == "Cos")
    return add(0, create("Neg", outType,
                         binary("Mul", dy, create("Sin", outType, input(0)))));
  if (type == "HardSigmoid") {
    // y = clamp(alpha x + beta, 0, 1): alpha dy where y is inside (0, 1).
    double alpha = getFloat(node, "alpha", 0.2);
    Value inside = create("And", boolType(outType),
                          {create("Greater", boolType(outType),
                                  {y, nodes.createSplat(elementType, 0)}),
                           create("Less", boolType(outType),
                                  {y, nodes.createSplat(elementType, 1)})});
    return add(
        0, create("Where", outType,
                  {inside, binary("Mul", dy, nodes.scalar(elementType, alpha)),
                   nodes.createSplat(elementType, 0)}));
  }

  // The rest need static shapes.
  auto xType = dyn_cast<RankedTensorType>(input(0).getType());
  auto yType = dyn_cast<RankedTensorType>(outType);
  if (!xType || !yType || !xType.hasStaticShape() || !yType.hasStaticShape())
    return emitError(node) << "its gradient needs static shapes";
  auto normalize = [](int64_t axis, int64_t rank) {
    return axis < 0 ? axis + rank : axis;
  };

  if (type == "Reshape" || type == "Flatten" || type == "Squeeze" ||
      type == "Unsqueeze")
    return add(0, nodes.reshape(dy, xType.getShape(), xType.getShape()));
  if (type == "Transpose") {
    SmallVector<int64_t> perm;
    if (std::optional<SmallVector<int64_t>> attr = getInts(node, "perm"))
      perm = *attr;
    else
      for (int64_t i = xType.getRank() - 1; i >= 0; --i)
        perm.push_back(i);
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, axis] : llvm::enumerate(perm))
      inverse[axis] = i;
    return add(0, nodes.transpose(dy, inverse));
  }
  if (type == "ReduceSum" || type == "ReduceMean" || type == "ReduceMax" ||
      type == "ReduceMin") {
    std::optional<SmallVector<int64_t>> axes = getConstantAxes(node);
    if (!axes)
      return emitError(node) << "its axes must be a constant";
    if (axes->empty() && getInt(node, "noop_with_empty_axes", 0))
      return add(0, dy);
    SmallVector<int64_t> reduced;
    for (int64_t axis : *axes)
      reduced.push_back(normalize(axis, xType.getRank()));
    if (reduced.empty())
      reduced = llvm::to_vector(llvm::seq<int64_t>(0, xType.getRank()));
    SmallVector<int64_t> kept(xType.getShape());
    int64_t count = 1;
    for (int64_t axis : reduced) {
      count *= kept[axis];
      kept[axis] = 1;
    }
    Value keptDy = nodes.reshape(dy, kept, kept);
    if (type == "ReduceSum" || type == "ReduceMean") {
      // dy, kept at the reduced axes, expanded back over them.
      Value expanded =
          create("Expand", xType, {keptDy, nodes.createI64s(xType.getShape())});
      if (type == "ReduceMean")
        expanded = create("Div", xType,
                          {expanded, nodes.scalar(elementType, double(count))});
      return add(0, expanded);
    }
    // dy shared evenly by the elements equal to the result (PyTorch's amax
    // and amin).
    auto keptType = xType.clone(kept);
    std::optional<int32_t> dataType = getOnnxDataType(elementType);
    if (!dataType)
      return emitError(node) << "its gradient needs a float type";
    Value selected = create(
        "Cast", xType,
        create("Equal", boolType(xType),
               {input(0), nodes.reshape(y, kept, kept)}),
        builder.getNamedAttr("to", builder.getI64IntegerAttr(*dataType)));
    Value ties =
        nodes.reduceSum(selected, reduced, /*keepDims=*/true, keptType);
    return add(0, create("Mul", xType,
                         {selected, create("Div", keptType, {keptDy, ties})}));
  }
  if (type == "Tile") {
    // y's [r0 d0, r1 d1, ...] as [r0, d0, r1, d1, ...], summed over the
    // repeats.
    std::optional<SmallVector<int64_t>> repeats =
        node.getNumOperands() == 2 ? getConstantInts(input(1)) : std::nullopt;
    if (!repeats || repeats->size() != size_t(xType.getRank()))
      return emitError(node) << "Tile is differentiated for constant repeats";
    SmallVector<int64_t> split, repeatAxes;
    for (auto [repeat, size] : llvm::zip(*repeats, xType.getShape())) {
      repeatAxes.push_back(split.size());
      split.append({repeat, size});
    }
    return add(0, nodes.reduceSum(nodes.reshape(dy, split, split), repeatAxes,
                                  /*keepDims=*/false, xType));
  }
  if (type == "Softmax" || type == "LogSoftmax") {
    int64_t rank = xType.getRank();
    int64_t axis =
        normalize(getInt(node, "axis", nodes.getOpset() < 13 ? 1 : -1), rank);
    if (nodes.getOpset() < 13 && axis != rank - 1)
      return emitError(node) << "before opset 13 it is differentiated over "
                                "the last axis only";
    SmallVector<int64_t> kept(xType.getShape());
    kept[axis] = 1;
    auto keptType = xType.clone(kept);
    if (type == "Softmax") {
      // dx = y * (dy - sum(dy * y)).
      Value sum = nodes.reduceSum(binary("Mul", dy, y), {axis},
                                  /*keepDims=*/true, keptType);
      return add(0, binary("Mul", y, binary("Sub", dy, sum)));
    }
    // dx = dy - exp(y) * sum(dy).
    Value sum = nodes.reduceSum(dy, {axis}, /*keepDims=*/true, keptType);
    return add(
        0, binary("Sub", dy, binary("Mul", create("Exp", outType, y), sum)));
  }
  if (type == "Pow") {
    // A constant exponent p: dx = dy * p * x^(p - 1).
    std::optional<double> p = getConstantScalar(input(1));
    if (!p || active.contains(input(1)))
      return emitError(node) << "Pow is differentiated for a constant "
                                "scalar exponent";
    Value power =
        create("Pow", outType, {input(0), nodes.scalar(elementType, *p - 1)});
    return add(0, binary("Mul", dy,
                         binary("Mul", power, nodes.scalar(elementType, *p))));
  }
  if (type == "Gemm") {
    // Y = alpha op(A) op(B) + beta C.
    auto bType = dyn_cast<RankedTensorType>(input(1).getType());
    if (!bType || xType.getRank() != 2 || bType.getRank() != 2)
      return emitError(node) << "Gemm is differentiated for 2-D operands";
    bool transA = getInt(node, "transA", 0), transB = getInt(node, "transB", 0);
    double alpha = getFloat(node, "alpha", 1), beta = getFloat(node, "beta", 1);
    auto gemm = [&](RankedTensorType type, Value a, Value b, bool ta, bool tb) {
      return create(
          "Gemm", type, {a, b},
          {builder.getNamedAttr("alpha", builder.getF32FloatAttr(alpha)),
           builder.getNamedAttr("transA", builder.getI64IntegerAttr(ta)),
           builder.getNamedAttr("transB", builder.getI64IntegerAttr(tb))});
    };
    // d op(A) = dy op(B)^T, d op(B) = op(A)^T dy, each transposed back.
    if (active.contains(input(0)))
      accumulate(input(0), transA ? gemm(xType, input(1), dy, transB, true)
                                  : gemm(xType, dy, input(1), false, !transB));
    if (active.contains(input(1)))
      accumulate(input(1), transB ? gemm(bType, dy, input(0), true, transA)
                                  : gemm(bType, input(0), dy, !transA, false));
    if (node.getNumOperands() > 2 && active.contains(input(2))) {
      Value dc =
          beta == 1 ? dy : binary("Mul", dy, nodes.scalar(elementType, beta));
      return add(2, dc);
    }
    return success();
  }
  if (type == "LayerNormalization" || type == "BatchNormalization")
    return differentiateNormalization(node, dy);
  if (type == "Expand")
    return add(0, dy);
  if (type == "Slice") {
    // dy padded with zeros back to x's shape (constant bounds and steps;
    // inputs from opset 10, attributes before); along an axis with a
    // negative step, dy reversed first; with a step other than 1 or -1,
    // dy's elements spread that far apart.
    auto bounds = [&](unsigned operand,
                      StringRef name) -> std::optional<SmallVector<int64_t>> {
      if (nodes.getOpset() < 10)
        return getInts(node, name);
      Value value = node.getOptionalOperand(operand);
      return value ? getConstantInts(value) : std::nullopt;
    };
    std::optional<SmallVector<int64_t>> starts = bounds(1, "starts"),
                                        ends = bounds(2, "ends"),
                                        axes = bounds(3, "axes"),
                                        steps = bounds(4, "steps");
    int64_t rank = xType.getRank();
    if (!axes)
      axes =
          llvm::to_vector(llvm::seq<int64_t>(0, starts ? starts->size() : 0));
    if (!steps && starts)
      steps = SmallVector<int64_t>(starts->size(), 1);
    if (!starts || !ends || starts->size() != ends->size() ||
        axes->size() != starts->size() || steps->size() != starts->size() ||
        llvm::is_contained(*steps, 0))
      return emitError(node) << "Slice is differentiated for constant "
                                "bounds and nonzero steps";
    auto pad = [&](Value value, ArrayRef<int64_t> pads, ArrayRef<int64_t> to) {
      auto type = xType.clone(to);
      if (nodes.getOpset() >= 11)
        return create("Pad", type, {value, nodes.createI64s(pads)});
      return create(
          "Pad", type, value,
          builder.getNamedAttr("pads", builder.getDenseI64ArrayAttr(pads)));
    };
    Value dx = dy;
    SmallVector<int64_t> shape(yType.getShape());
    SmallVector<int64_t> pads(2 * rank, 0);
    for (auto [start, signedStep, axis] : llvm::zip(*starts, *steps, *axes)) {
      axis = normalize(axis, rank);
      int64_t size = xType.getDimSize(axis);
      int64_t count = shape[axis];
      int64_t from = start < 0 ? start + size : start;
      int64_t first = std::clamp<int64_t>(from, 0, size);
      int64_t step = std::abs(signedStep);
      if (signedStep < 0 && count > 0) {
        // Backwards from start (clamped into the axis): dy reversed runs
        // forwards from the last index taken.
        first = std::clamp<int64_t>(from, 0, size - 1) - (count - 1) * step;
        int64_t lowest = std::numeric_limits<int64_t>::min();
        dx = create("Slice", xType.clone(shape),
                    {dx, nodes.createI64s(-1), nodes.createI64s(lowest),
                     nodes.createI64s(axis), nodes.createI64s(-1)});
      }
      if (step > 1 && count > 0) {
        // [.., n, ..] as [.., n, 1, ..], padded to [.., n, step, ..], seen
        // as [.., n * step, ..], cut at x's end.
        SmallVector<int64_t> split(shape);
        split.insert(split.begin() + axis + 1, 1);
        SmallVector<int64_t> spread(split), spreadPads(2 * (rank + 1), 0);
        spread[axis + 1] = step;
        spreadPads[rank + 1 + axis + 1] = step - 1;
        dx = pad(nodes.reshape(dx, split, split), spreadPads, spread);
        shape[axis] = count * step;
        dx = nodes.reshape(dx, shape, shape);
        if (shape[axis] > size - first) {
          shape[axis] = size - first;
          dx = slice(dx, {axis}, {0}, {shape[axis]}, xType.clone(shape));
        }
      }
      pads[axis] = first;
      pads[rank + axis] = size - first - shape[axis];
    }
    return add(0, pad(dx, pads, xType.getShape()));
  }
  if (type == "Concat") {
    // Each input's part of dy along the axis.
    int64_t axis = normalize(getInt(node, "axis", 0), yType.getRank());
    int64_t offset = 0;
    for (unsigned i = 0; i < node.getNumOperands(); ++i) {
      auto part = dyn_cast<RankedTensorType>(input(i).getType());
      if (!part || !part.hasStaticShape())
        return emitError(node) << "its gradient needs static shapes";
      int64_t size = part.getDimSize(axis);
      if (active.contains(input(i)))
        accumulate(input(i),
                   slice(dy, {axis}, {offset}, {offset + size}, part));
      offset += size;
    }
    return success();
  }
  DictionaryAttr forwardAttrs = node.getOnnxAttrsOrEmpty();
  // An ONNX Runtime gradient op with the forward's attributes, giving dX.
  auto createOrtGradient = [&](StringRef opType, ValueRange operands) {
    return nodes
        .createWithResults(opType, TypeRange(xType), operands,
                           llvm::to_vector(forwardAttrs.getValue()),
                           kMicrosoftDomain)
        .getResult(0);
  };
  if (type == "Resize") {
    // ONNX Runtime's ResizeGrad(dY, X, roi, scales) with the forward's
    // attributes, which amp-opt lowers: dy times each resized axis's
    // [out, in] matrix of interpolation weights; without scales (sizes
    // given), the scales are the sizes' ratios.
    StringRef mode = getString(node, "mode", "nearest");
    StringRef transform =
        getString(node, "coordinate_transformation_mode", "half_pixel");
    if (nodes.getOpset() < 11 || (mode != "nearest" && mode != "linear") ||
        !llvm::is_contained(
            {"half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"},
            transform) ||
        getInt(node, "antialias", 0) || getInts(node, "axes"))
      return emitError(node)
             << "Resize is differentiated from opset 11, in modes nearest and "
                "linear, with coordinate_transformation_mode half_pixel, "
                "pytorch_half_pixel, asymmetric or align_corners, without "
                "antialias or axes";
    // Scales given as an empty tensor (with sizes) are none.
    Value scales = node.getOptionalOperand(2);
    auto scalesType =
        scales ? dyn_cast<RankedTensorType>(scales.getType()) : nullptr;
    SmallVector<Value> operands = {dy, input(0)};
    if (scalesType && scalesType.getNumElements() != 0)
      operands.append({node.getOperand(1), scales});
    return add(0, createOrtGradient("ResizeGrad", operands));
  }
  if (type == "Conv" || type == "ConvTranspose") {
    // ONNX Runtime's ConvGrad or ConvTransposeGrad(dY, X, W) -> (dX, dW,
    // dB), which amp-opt lowers, with the convolution's attributes; B has
    // W's output channels (a transposed convolution's W[1] per group).
    auto wType = dyn_cast<RankedTensorType>(input(1).getType());
    if (!wType || !wType.hasStaticShape() || wType.getRank() < 2)
      return emitError(node) << "its gradient needs static shapes";
    bool transposed = type == "ConvTranspose";
    int64_t channels = transposed
                           ? wType.getDimSize(1) * getInt(node, "group", 1)
                           : wType.getDimSize(0);
    auto biasType = RankedTensorType::get({channels}, elementType);
    NodeOp grad = nodes.createWithResults(
        transposed ? "ConvTransposeGrad" : "ConvGrad", {xType, wType, biasType},
        {dy, input(0), input(1)}, llvm::to_vector(forwardAttrs.getValue()),
        kMicrosoftDomain);
    for (unsigned i = 0; i < std::min(3u, node.getNumOperands()); ++i)
      if (active.contains(input(i)))
        accumulate(input(i), grad.getResult(i));
    return success();
  }
  if (type == "AveragePool")
    return add(0, create("AveragePoolGrad", xType, dy,
                         llvm::to_vector(forwardAttrs.getValue())));
  if (type == "MaxPool") {
    // MaxPoolGrad scatters dy through MaxPool's Indices: the node's own,
    // or those of a copy that returns them.
    Value indices = node.getNumResults() > 1 ? node.getResult(1) : Value();
    if (!indices)
      indices = nodes
                    .createWithResults(
                        "MaxPool", {yType, yType.clone(builder.getI64Type())},
                        input(0), llvm::to_vector(forwardAttrs.getValue()))
                    .getResult(1);
    return add(0, create("MaxPoolGrad", xType, {dy, indices}));
  }
  if (type == "NegativeLogLikelihoodLoss") {
    // loss = -w[t] x[n, t, d...] at each position (reduced: summed, or
    // over the sum of the weights taken): dx = -dy w[t] where the class is
    // the target, 0 elsewhere and at ignore_index.
    Value target = input(1);
    auto targetType = dyn_cast<RankedTensorType>(target.getType());
    if (xType.getRank() < 2 || !targetType ||
        targetType.getRank() != xType.getRank() - 1)
      return emitError(node) << "its input must be [N, C, ...] and its "
                                "target [N, ...]";
    Value weights = node.getOptionalOperand(2);
    if (weights && active.contains(weights))
      return emitError(node) << "its weights are not differentiated";
    int64_t rank = xType.getRank(), classes = xType.getDimSize(1);
    SmallVector<int64_t> kept(targetType.getShape());
    kept.insert(kept.begin() + 1, 1);
    SmallVector<int64_t> channels(rank, 1);
    channels[1] = classes;
    Type indexType = targetType.getElementType();
    auto indicesType = RankedTensorType::get(channels, indexType);
    SmallVector<APInt> range;
    for (int64_t c = 0; c < classes; ++c)
      range.push_back(APInt(indexType.getIntOrFloatBitWidth(), c));
    Value classIndices =
        create("Constant", indicesType, {},
               builder.getNamedAttr(
                   "value", DenseElementsAttr::get(indicesType, range)));
    Value keptTarget = nodes.reshape(target, kept, kept);
    Value selected = nodes.binary("Equal", keptTarget, classIndices);
    if (auto ignore = forwardAttrs.getAs<IntegerAttr>("ignore_index")) {
      Value ignored = create(
          "Constant", RankedTensorType::get({}, indexType), {},
          builder.getNamedAttr(
              "value",
              DenseElementsAttr::get(RankedTensorType::get({}, indexType),
                                     APInt(indexType.getIntOrFloatBitWidth(),
                                           ignore.getInt(), true))));
      Value counted = create("Not", boolType(keptTarget.getType()),
                             nodes.binary("Equal", keptTarget, ignored));
      selected = nodes.binary("And", selected, counted);
    }
    Value weight = weights ? nodes.reshape(weights, channels, channels)
                           : nodes.createSplat(elementType, 1);
    Value weightAt = create(
        "Where", xType, {selected, weight, nodes.createSplat(elementType, 0)});
    StringRef reduction = getString(node, "reduction", "mean");
    Value scaled =
        reduction == "none"
            ? nodes.binary("Mul", weightAt, nodes.reshape(dy, kept, kept))
            : nodes.binary("Mul", weightAt, dy);
    if (reduction == "mean") {
      auto scalarType = RankedTensorType::get({}, elementType);
      Value total = nodes.reduceSum(
          weightAt, llvm::to_vector(llvm::seq<int64_t>(0, rank)),
          /*keepDims=*/false, scalarType);
      scaled = nodes.binary("Div", scaled, total);
    }
    return add(0, create("Neg", xType, scaled));
  }
  if (type == "SoftmaxCrossEntropyLoss") {
    // ONNX Runtime's SoftmaxCrossEntropyLossGrad(dY, log_prob, labels,
    // weights?) with the loss's reduction and ignore_index.
    Value weights = node.getOptionalOperand(2);
    if (weights && active.contains(weights))
      return emitError(node) << "its weights are not differentiated";
    Value logProb = node.getNumResults() > 1 ? node.getResult(1) : Value();
    if (!logProb) {
      if (xType.getRank() > 2 && nodes.getOpset() < 13)
        return emitError(node) << "before opset 13 it is differentiated "
                                  "for 2-D scores only";
      logProb =
          create("LogSoftmax", xType, input(0),
                 builder.getNamedAttr("axis", builder.getI64IntegerAttr(1)));
    }
    SmallVector<Value> operands = {dy, logProb, input(1)};
    if (weights)
      operands.push_back(weights);
    return add(0, createOrtGradient("SoftmaxCrossEntropyLossGrad", operands));
  }
  if (type == "Gather") {
    // ONNX Runtime's GatherGrad(shape, indices, dY): dy summed into the
    // slices Gather read.
    if (active.contains(input(1)))
      return emitError(node) << "its indices are not differentiated";
    return add(
        0, createOrtGradient("GatherGrad", {nodes.createI64s(xType.getShape()),
                                            input(1), dy}));
  }
  if (type == "GatherElements") {
    // ONNX Runtime's GatherElementsGrad(dY, shape, indices).
    if (active.contains(input(1)))
      return emitError(node) << "its indices are not differentiated";
    return add(0, createOrtGradient(
                      "GatherElementsGrad",
                      {dy, nodes.createI64s(xType.getShape()), input(1)}));
  }
  if (type == "Pad") {
    // Constant padding: dy's elements inside the pads (constant pads, as
    // an input from opset 11, an attribute before; no negative pads).
    StringRef mode = getString(node, "mode", "constant");
    std::optional<SmallVector<int64_t>> pads = nodes.getOpset() >= 11
                                                   ? getConstantInts(input(1))
                                                   : getInts(node, "pads");
    int64_t rank = xType.getRank();
    if (mode != "constant" || !pads || pads->size() != size_t(2 * rank) ||
        (nodes.getOpset() >= 18 && node.getOptionalOperand(3)) ||
        (node.getOptionalOperand(2) &&
         active.contains(node.getOptionalOperand(2))) ||
        llvm::any_of(*pads, [](int64_t p) { return p < 0; }))
      return emitError(node) << "Pad is differentiated for constant mode "
                                "and constant, non-negative pads of every "
                                "axis";
    SmallVector<int64_t> starts, ends, axes;
    for (int64_t axis = 0; axis < rank; ++axis) {
      starts.push_back((*pads)[axis]);
      ends.push_back((*pads)[axis] + xType.getDimSize(axis));
      axes.push_back(axis);
    }
    return add(0, slice(dy, axes, starts, ends, xType));
  }
  return emitError(node)
         << "amp-opt differentiates Add, Sub, Mul, Div, Neg, Identity, Sum, "
            "Mean, Relu, LeakyRelu, Sigmoid, Tanh, Softplus, Exp, Log, Sqrt, "
            "Abs, Erf, Sin, Cos, HardSigmoid, Clip, Dropout, Pow "
            "(constant exponent), Where, MatMul, Gemm, Conv, ConvTranspose, "
            "MaxPool, "
            "AveragePool, LayerNormalization, BatchNormalization, ReduceSum, "
            "ReduceMean, ReduceMax, ReduceMin, Softmax, LogSoftmax, "
            "SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, Reshape, "
            "Flatten, Squeeze, Unsqueeze, "
            "Transpose, Expand, Tile, Resize, Concat, Split, Slice, Pad, "
            "Gather, "
            "GatherElements and Cast";
}

std::optional<SmallVector<int64_t>>
GradientExpansion::getConstantAxes(NodeOp node) {
  if (std::optional<SmallVector<int64_t>> attr = getInts(node, "axes"))
    return attr;
  Value operand = node.getOptionalOperand(1);
  return operand ? getConstantInts(operand) : SmallVector<int64_t>();
}

std::optional<double> GradientExpansion::getConstantScalar(Value value) {
  ElementsAttr values = getConstantValue(value);
  if (!values || values.getNumElements() != 1)
    return std::nullopt;
  // (Booleans are resource blobs, which ElementsAttr does not iterate.)
  TypedAttr element = getUniformElement(values);
  if (auto number = dyn_cast_or_null<FloatAttr>(element))
    return number.getValueAsDouble();
  if (auto number = dyn_cast_or_null<IntegerAttr>(element))
    return number.getType().isInteger(1)
               ? double(number.getValue().getBoolValue())
               : double(number.getValue().getSExtValue());
  return std::nullopt;
}

bool GradientExpansion::differentiateAMPOp(Operation *op, Value dy) {
  if (auto scaled = dyn_cast<amp::ScaleLossOp>(op)) {
    if (!active.contains(scaled.getInput()))
      return true;
    Value scale = scaled.getScale();
    Type element = getElementTypeOrSelf(dy);
    if (getElementTypeOrSelf(scale) != element)
      scale = create(
          "Cast", cast<RankedTensorType>(scale.getType()).clone(element), scale,
          builder.getNamedAttr(
              "to", builder.getI64IntegerAttr(*getOnnxDataType(element))));
    accumulate(scaled.getInput(), create("Mul", dy.getType(), {dy, scale}));
    return true;
  }
  if (auto cast = dyn_cast<amp::CastOp>(op)) {
    Value input = cast.getInput();
    if (!active.contains(input))
      return true;
    std::optional<int32_t> to =
        getOnnxDataType(getElementTypeOrSelf(input.getType()));
    if (!to)
      return false;
    accumulate(input, create("Cast", input.getType(), dy,
                             builder.getNamedAttr(
                                 "to", builder.getI64IntegerAttr(*to))));
    return true;
  }
  return false;
}

LogicalResult GradientExpansion::run() {
  auto func = gradient->getParentOfType<func::FuncOp>();
  ValueNames names(func);
  DictionaryAttr attrs = gradient.getOnnxAttrsOrEmpty();
  auto xs = attrs.getAs<ArrayAttr>("xs");
  auto yName = attrs.getAs<StringAttr>("y");
  Value y = yName ? names.lookup(yName.getValue()) : Value();
  if (!xs || !y || xs.size() != gradient.getNumResults())
    return emitError()
           << "attributes 'xs' and 'y' must name values of the graph, "
              "one 'xs' per output";
  SmallVector<Value> inputs;
  for (Attribute x : xs) {
    Value value = names.lookup(cast<StringAttr>(x).getValue());
    if (!value)
      return emitError() << "'xs' names '" << cast<StringAttr>(x).getValue()
                         << "', which is no value of the graph";
    inputs.push_back(value);
  }
  auto yType = dyn_cast<RankedTensorType>(y.getType());
  if (!yType || !yType.hasStaticShape() ||
      !isa<FloatType>(yType.getElementType()))
    return emitError()
           << "'y' has type " << y.getType()
           << "; its seed of ones needs a float tensor of static shape";

  // The nodes to differentiate: those that depend on an x and that y
  // depends on, in order.
  Block &body = func.getBody().front();
  active.insert(inputs.begin(), inputs.end());
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op.getResults().begin(), op.getResults().end());
  llvm::DenseSet<Operation *> needed;
  SmallVector<Value> work = {y};
  while (!work.empty()) {
    Operation *op = work.pop_back_val().getDefiningOp();
    if (op && needed.insert(op).second)
      llvm::append_range(work, op->getOperands());
  }

  builder.setInsertionPoint(body.getTerminator());
  gradients[y] = nodes.createSplat(yType.getElementType(), 1, yType);
  for (Operation &op : llvm::reverse(body)) {
    if (!needed.contains(&op) || llvm::none_of(op.getResults(), [&](Value v) {
          return active.contains(v);
        }))
      continue;
    if (op.getNumResults() == 1 && !isa<NodeOp>(op)) {
      Value dy = gradients.lookup(op.getResult(0));
      if (!dy || differentiateAMPOp(&op, dy))
        continue;
    }
    auto node = dyn_cast<NodeOp>(op);
    if (node && node.getOpType() == "Split" &&
        isDefaultDomain(node.getDomain())) {
      if (failed(differentiateSplit(node)))
        return failure();
      continue;
    }
    // Of a node with several results (MaxPool's Indices, the loss's
    // log_prob) only the first may carry a gradient.
    if (!node || !isDefaultDomain(node.getDomain()) ||
        llvm::any_of(node.getResults().drop_front(),
                     [&](Value v) { return gradients.count(v); }))
      return emitError() << "cannot differentiate "
                         << (node ? node.describe()
                                  : "'" + op.getName().getStringRef().str() +
                                        "'")
                         << " between 'xs' and 'y'";
    if (Value dy = gradients.lookup(node.getResult(0)))
      if (failed(differentiate(node, dy)))
        return failure();
  }

  for (auto [output, x] : llvm::zip(gradient.getResults(), inputs)) {
    Value dx = gradients.lookup(x);
    if (!dx) {
      auto type = dyn_cast<RankedTensorType>(x.getType());
      if (!type || !type.hasStaticShape())
        return emitError() << "'y' does not depend on '" << getValueName(x)
                           << "', whose zero gradient needs a "
                           << "static shape";
      dx = nodes.createSplat(type.getElementType(), 0, type);
    }
    output.replaceAllUsesWith(dx);
  }
  gradient.erase();
  for (NodeOp node : replacedForwards)
    node.erase();
  return success();
}

namespace {
struct ExpandGradientsPass
    : onnxg::impl::ONNXGraphExpandGradientsBase<ExpandGradientsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool expanded = false;
    if (failed(expandNodes(
            func,
            [](NodeOp node) {
              return node.getDomain() == kPreviewTraining &&
                     node.getOpType() == "Gradient";
            },
            [&](NodeOp node, OpBuilder &builder) {
              expanded = true;
              return GradientExpansion(node, builder).run();
            })))
      return signalPassFailure();
    // Nothing expanded (a declaration has no body to sort).
    if (!expanded)
      return;
    Block &body = func.getBody().front();
    if (!sortTopologically(&body, body.without_terminator())) {
      emitError(func.getLoc(),
                "the gradients feed the values they differentiate");
      return signalPassFailure();
    }
  }
};
} // namespace
