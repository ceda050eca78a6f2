//===- ExpandATen.cpp - PyTorch's ATen nodes as ONNX nodes ----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The onnxg-expand-aten pass: the org.pytorch.aten ATen nodes that ORTModule
// exports (nn.Embedding, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, argmax,
// .T) and the gradients its gradient builder writes for them become the ONNX
// and ONNX Runtime nodes that compute the same: Gather, GatherGrad, MaxPool,
// MaxPoolGrad, AveragePool, AveragePoolGrad, Transpose, ArgMax.
//
//===----------------------------------------------------------------------===//

#include "NodeEmitter.h"

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::onnxg {
#define GEN_PASS_DEF_ONNXGRAPHEXPANDATEN
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"
} // namespace mlir::onnxg

using namespace mlir;
using namespace mlir::onnxg;

/// The operators this pass expands (the message of an unknown one).
static constexpr StringLiteral kExpandedOperators =
    "embedding, embedding_backward, max_pool2d_with_indices, "
    "max_pool2d_with_indices_backward, avg_pool2d, avg_pool2d_backward, "
    "_adaptive_avg_pool2d, _adaptive_avg_pool2d_backward, numpy_T, argmax, "
    "max, min (also overload dim), value_selecting_reduction_backward, "
    "upsample_nearest1d/2d/3d (overload vec) and their _backward, "
    "native_group_norm, native_group_norm_backward, "
    "binary_cross_entropy_with_logits, diagonal, unfold and their "
    "_backward, bitwise_or (overload Tensor), multinomial";

/// What the nodes of an unnamed ATen node are named after: its first
/// output's name, else "ATen".
static StringRef getFallbackName(NodeOp node) {
  StringRef name =
      node->getNumResults() ? getValueName(node->getResult(0)) : "";
  return name.empty() ? "ATen" : name;
}

/// `shape` reduced over `axis`: the axis kept as 1, or removed.
static SmallVector<int64_t> getReducedShape(ArrayRef<int64_t> shape,
                                            int64_t axis, bool keep) {
  SmallVector<int64_t> reduced(shape);
  if (keep)
    reduced[axis] = 1;
  else
    reduced.erase(reduced.begin() + axis);
  return reduced;
}

namespace {
/// A 2-D pool's window in ONNX's attributes.
struct PoolWindow {
  SmallVector<int64_t> kernel, strides, pads, dilations;
  bool ceilMode = false;
  /// The output's spatial sizes, as PyTorch computes them.
  SmallVector<int64_t> sizes;
};

/// Expands one ATen node.
class ATenExpansion {
public:
  // An unnamed node's nodes take its first output's name.
  ATenExpansion(NodeOp node, OpBuilder &builder)
      : node(node), nodes(node, builder, getFallbackName(node)),
        builder(builder) {}

  LogicalResult run();

private:
  InFlightDiagnostic emitError() {
    return node.emitNodeError() << "ATen '" << op << "': ";
  }
  Value input(unsigned i) { return node.getOptionalOperand(i); }
  /// The static type of input `i`, or null.
  RankedTensorType getStaticType(unsigned i) {
    auto type =
        input(i) ? dyn_cast<RankedTensorType>(input(i).getType()) : nullptr;
    return type && type.hasStaticShape() ? type : nullptr;
  }
  /// The int64 values of constant input `i` (a scalar is one); nullopt when
  /// it is absent or not constant.
  std::optional<SmallVector<int64_t>> getInts(unsigned i) {
    if (!input(i))
      return std::nullopt;
    // PyTorch writes an empty list (a default stride) as an empty float
    // tensor.
    if (ElementsAttr value = getConstantValue(input(i));
        value && value.getNumElements() == 0)
      return SmallVector<int64_t>();
    return getConstantInts(input(i));
  }
  /// The constant bool (or integer) input `i`; `otherwise` when absent.
  FailureOr<bool> getBool(unsigned i, bool otherwise);
  /// The window of a pool whose inputs from `first` are kernel_size,
  /// stride, padding and, with `hasDilation`, dilation. Fails (with an
  /// error) on values it cannot take.
  FailureOr<PoolWindow> getWindow(RankedTensorType x, unsigned first,
                                  bool hasDilation, bool ceilMode);
  /// The window of the pool over input `self` (0 in a forward, 1 after the
  /// gradient in a backward) whose ceil_mode is input `self + ceilInput`.
  FailureOr<PoolWindow> getPoolWindow(unsigned self, bool hasDilation,
                                      unsigned ceilInput) {
    FailureOr<bool> ceilMode = getBool(self + ceilInput, false);
    if (failed(ceilMode))
      return failure();
    return getWindow(getStaticType(self), self + 1, hasDilation, *ceilMode);
  }
  /// ONNX's pool attributes for `window`.
  SmallVector<NamedAttribute> getPoolAttrs(const PoolWindow &window,
                                           bool withDilations);
  /// The flat offset of each (n, c) plane of `x` in the whole tensor:
  /// [N, C, 1, 1] int64 (MaxPool's Indices count over the tensor,
  /// PyTorch's over a plane).
  Value getPlaneOffsets(RankedTensorType x);
  /// Replaces result `i` by `value`, cast to its declared element type.
  void replaceResult(unsigned i, Value value);

  LogicalResult expandEmbedding();
  LogicalResult expandEmbeddingBackward();
  LogicalResult expandMaxPool(bool backward);
  LogicalResult expandAvgPool(bool backward);
  LogicalResult expandAdaptiveAvgPool(bool backward);
  LogicalResult expandArgMax();
  LogicalResult expandExtreme(bool overDim);
  LogicalResult expandValueSelectingBackward();
  LogicalResult expandUpsampleNearest(bool backward);
  LogicalResult expandBinaryCrossEntropy(bool backward);
  LogicalResult expandDiagonal(bool backward);
  LogicalResult expandMultinomial();
  LogicalResult expandUnfold(bool backward);
  /// The constant group count input `groupInput`, which must divide x's
  /// channels.
  FailureOr<int64_t> getGroups(RankedTensorType x, unsigned groupInput);
  LogicalResult expandGroupNorm();
  LogicalResult expandGroupNormBackward();
  /// The declared static type of result `i`, or null.
  RankedTensorType getResultType(unsigned i) {
    auto type = dyn_cast<RankedTensorType>(node.getResult(i).getType());
    return type && type.hasStaticShape() ? type : nullptr;
  }
  /// The float constant input `i`, through Casts (PyTorch's double eps).
  std::optional<double> getFloat(unsigned i);
  /// The axis of the constant dim input `i` for a rank `rank`, or nullopt.
  std::optional<int64_t> getAxis(unsigned i, int64_t rank) {
    std::optional<SmallVector<int64_t>> dim = getInts(i);
    if (!dim || dim->size() != 1)
      return std::nullopt;
    int64_t axis = dim->front() < 0 ? dim->front() + rank : dim->front();
    return axis >= 0 && axis < rank ? std::optional(axis) : std::nullopt;
  }

  NodeOp node;
  NodeEmitter nodes;
  OpBuilder &builder;
  StringRef op;
};
} // namespace

FailureOr<bool> ATenExpansion::getBool(unsigned i, bool otherwise) {
  if (!input(i))
    return otherwise;
  ElementsAttr value = getConstantValue(input(i));
  auto element = value && value.getNumElements() == 1
                     ? dyn_cast_or_null<IntegerAttr>(getUniformElement(value))
                     : nullptr;
  if (!element) {
    emitError() << "input " << i << " must be a constant bool";
    return failure();
  }
  return !element.getValue().isZero();
}

FailureOr<PoolWindow> ATenExpansion::getWindow(RankedTensorType x,
                                               unsigned first, bool hasDilation,
                                               bool ceilMode) {
  std::optional<SmallVector<int64_t>> kernel = getInts(first),
                                      strides = getInts(first + 1),
                                      padding = getInts(first + 2);
  std::optional<SmallVector<int64_t>> dilations =
      hasDilation ? getInts(first + 3) : SmallVector<int64_t>{1, 1};
  // PyTorch gives one value for both axes as two; an empty stride is the
  // kernel's.
  auto pair = [](std::optional<SmallVector<int64_t>> &values) {
    if (values && values->size() == 1)
      values->push_back(values->front());
    return values && values->size() == 2;
  };
  if (strides && strides->empty())
    strides = kernel;
  if (!x || x.getRank() != 4 || !pair(kernel) || !pair(strides) ||
      !pair(padding) || !pair(dilations)) {
    emitError() << "needs a static 4-D input and constant kernel_size, "
                   "stride, padding"
                << (hasDilation ? " and dilation" : "");
    return failure();
  }
  PoolWindow window;
  window.kernel = *kernel;
  window.strides = *strides;
  window.dilations = *dilations;
  window.pads = {(*padding)[0], (*padding)[1], (*padding)[0], (*padding)[1]};
  window.ceilMode = ceilMode;
  for (int i = 0; i < 2; ++i) {
    int64_t size = x.getDimSize(2 + i), step = (*strides)[i];
    int64_t span =
        size + 2 * (*padding)[i] - (*dilations)[i] * ((*kernel)[i] - 1) - 1;
    if (step <= 0 || span < 0 || (*kernel)[i] <= 0) {
      emitError() << "needs positive strides and kernel sizes and a window "
                     "within its padded input";
      return failure();
    }
    int64_t floor = span / step + 1, ceil = (span + step - 1) / step + 1;
    int64_t torchCeil =
        (ceil - 1) * step >= size + (*padding)[i] ? ceil - 1 : ceil;
    // ONNX's ceil_mode keeps a last window that starts in the padding;
    // PyTorch drops it.
    if (ceilMode && torchCeil != ceil) {
      emitError() << "with ceil_mode has a last window that starts in the "
                     "padding, which PyTorch drops and ONNX keeps";
      return failure();
    }
    window.sizes.push_back(ceilMode ? ceil : floor);
  }
  return window;
}

SmallVector<NamedAttribute>
ATenExpansion::getPoolAttrs(const PoolWindow &window, bool withDilations) {
  SmallVector<NamedAttribute> attrs = {
      builder.getNamedAttr("kernel_shape",
                           builder.getDenseI64ArrayAttr(window.kernel)),
      builder.getNamedAttr("strides",
                           builder.getDenseI64ArrayAttr(window.strides)),
      builder.getNamedAttr("pads", builder.getDenseI64ArrayAttr(window.pads)),
      builder.getNamedAttr("ceil_mode",
                           builder.getI64IntegerAttr(window.ceilMode))};
  if (withDilations)
    attrs.push_back(builder.getNamedAttr(
        "dilations", builder.getDenseI64ArrayAttr(window.dilations)));
  return attrs;
}

Value ATenExpansion::getPlaneOffsets(RankedTensorType x) {
  int64_t planes = x.getDimSize(0) * x.getDimSize(1);
  int64_t planeSize = x.getDimSize(2) * x.getDimSize(3);
  SmallVector<APInt> offsets;
  for (int64_t plane = 0; plane < planes; ++plane)
    offsets.push_back(APInt(64, plane * planeSize));
  auto type = RankedTensorType::get({x.getDimSize(0), x.getDimSize(1), 1, 1},
                                    builder.getI64Type());
  return nodes.create(
      "Constant", type, {},
      builder.getNamedAttr("value", DenseElementsAttr::get(type, offsets)));
}

void ATenExpansion::replaceResult(unsigned i, Value value) {
  Value result = node.getResult(i);
  if (auto declared = dyn_cast<RankedTensorType>(result.getType()))
    value = nodes.castTo(value, declared.getElementType());
  result.replaceAllUsesWith(value);
}

LogicalResult ATenExpansion::expandEmbedding() {
  // (weight, indices, padding_idx, scale_grad_by_freq, sparse): rows of
  // weight; the other inputs only change the gradient.
  RankedTensorType weight = getStaticType(0);
  auto indices =
      input(1) ? dyn_cast<RankedTensorType>(input(1).getType()) : nullptr;
  if (!weight || weight.getRank() != 2 || !indices)
    return emitError() << "needs a static 2-D weight and ranked indices";
  SmallVector<int64_t> shape(indices.getShape());
  shape.push_back(weight.getDimSize(1));
  replaceResult(
      0,
      nodes.create("Gather", weight.clone(shape), {input(0), input(1)},
                   builder.getNamedAttr("axis", builder.getI64IntegerAttr(0))));
  return success();
}

LogicalResult ATenExpansion::expandEmbeddingBackward() {
  // (grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse).
  RankedTensorType grad = getStaticType(0), indices = getStaticType(1);
  if (!grad || !indices || grad.getRank() != indices.getRank() + 1)
    return emitError() << "needs static grad and indices, grad of rank "
                          "indices' plus one";
  // num_weights: the result's rows (typed at import), else a constant.
  int64_t rows = ShapedType::kDynamic;
  if (auto declared = dyn_cast<RankedTensorType>(node.getResult(0).getType());
      declared && declared.getRank() == 2)
    rows = declared.getDimSize(0);
  if (std::optional<SmallVector<int64_t>> numWeights = getInts(2);
      ShapedType::isDynamic(rows) && numWeights && numWeights->size() == 1)
    rows = numWeights->front();
  if (ShapedType::isDynamic(rows) || rows <= 0)
    return emitError() << "needs a known num_weights (a constant, or the "
                          "rows of a static weight)";
  std::optional<SmallVector<int64_t>> padding = getInts(3);
  FailureOr<bool> scaleByFrequency = getBool(4, false);
  if (failed(scaleByFrequency))
    return failure();
  FailureOr<bool> sparse = getBool(5, false);
  if (failed(sparse))
    return failure();
  if (input(3) && (!padding || padding->size() != 1))
    return emitError() << "needs a constant padding_idx";
  if (*sparse)
    return emitError() << "sparse gradients are not supported";
  Value dy = input(0);
  Type elementType = grad.getElementType();
  SmallVector<int64_t> columnShape(indices.getShape());
  columnShape.push_back(1);
  auto column = [&](Value value) {
    return nodes.reshape(value, columnShape, columnShape);
  };
  Value flatIndices = input(1);
  // The padding row gets no gradient.
  if (padding && padding->front() >= 0) {
    Value pad =
        nodes.castTo(nodes.index(padding->front()), indices.getElementType());
    Value isPadding = column(nodes.binary("Equal", flatIndices, pad));
    dy = nodes.create("Where", grad,
                      {isPadding, nodes.scalar(elementType, 0), dy});
  }
  if (*scaleByFrequency) {
    // Each row's gradient over the number of times its index occurs.
    Type f32 = builder.getF32Type();
    Value ones = nodes.createSplat(f32, 1, indices.clone(f32));
    Value counts =
        nodes
            .createWithResults("GatherGrad", RankedTensorType::get({rows}, f32),
                               {nodes.createI64s({rows}), flatIndices, ones},
                               {}, kMicrosoftDomain)
            .getResult(0);
    Value frequency = nodes.create(
        "Gather", indices.clone(f32), {counts, flatIndices},
        builder.getNamedAttr("axis", builder.getI64IntegerAttr(0)));
    dy = nodes.binary("Div", dy, column(nodes.castTo(frequency, elementType)));
  }
  auto resultType =
      RankedTensorType::get({rows, grad.getShape().back()}, elementType);
  replaceResult(
      0, nodes
             .createWithResults(
                 "GatherGrad", resultType,
                 {nodes.createI64s({rows, grad.getShape().back()}), flatIndices,
                  dy},
                 {builder.getNamedAttr("axis", builder.getI64IntegerAttr(0))},
                 kMicrosoftDomain)
             .getResult(0));
  return success();
}

LogicalResult ATenExpansion::expandMaxPool(bool backward) {
  // Forward (self, kernel_size, stride, padding, dilation, ceil_mode) ->
  // (values, indices); backward (grad, self, kernel_size, stride, padding,
  // dilation, ceil_mode, indices).
  unsigned self = backward ? 1 : 0;
  FailureOr<PoolWindow> window =
      getPoolWindow(self, /*hasDilation=*/true, /*ceilInput=*/5);
  if (failed(window))
    return failure();
  RankedTensorType x = getStaticType(self);
  if (backward) {
    RankedTensorType indices = getStaticType(7);
    if (!indices || !getStaticType(0))
      return emitError() << "needs static grad and indices";
    Value flat = nodes.binary("Add", input(7), getPlaneOffsets(x));
    replaceResult(0, nodes.create("MaxPoolGrad", x, {input(0), flat}));
    return success();
  }
  SmallVector<int64_t> shape = {x.getDimSize(0), x.getDimSize(1),
                                window->sizes[0], window->sizes[1]};
  NodeOp pool = nodes.createWithResults(
      "MaxPool", {x.clone(shape), x.clone(shape, builder.getI64Type())},
      input(0), getPoolAttrs(*window, /*withDilations=*/true));
  replaceResult(0, pool.getResult(0));
  if (node.getNumResults() > 1 && !node.getResult(1).use_empty())
    replaceResult(1,
                  nodes.binary("Sub", pool.getResult(1), getPlaneOffsets(x)));
  return success();
}

LogicalResult ATenExpansion::expandAvgPool(bool backward) {
  // Forward (self, kernel_size, stride, padding, ceil_mode,
  // count_include_pad, divisor_override); backward (grad, self, ...).
  unsigned self = backward ? 1 : 0;
  FailureOr<PoolWindow> window =
      getPoolWindow(self, /*hasDilation=*/false, /*ceilInput=*/4);
  if (failed(window))
    return failure();
  FailureOr<bool> countPadding = getBool(self + 5, true);
  if (failed(countPadding))
    return failure();
  RankedTensorType x = getStaticType(self);
  if (Value divisor = input(self + 6);
      divisor && !isa<NoneType>(divisor.getType()))
    return emitError() << "divisor_override is not supported";
  // With ceil_mode, PyTorch's last windows count the padding up to the
  // padded end only: take those pools only where ceil_mode changes nothing.
  if (window->ceilMode) {
    FailureOr<PoolWindow> floor = getWindow(x, self + 1, /*hasDilation=*/false,
                                            /*ceilMode=*/false);
    if (failed(floor) || floor->sizes != window->sizes)
      return emitError() << "with ceil_mode is supported where it adds no "
                            "window";
    window->ceilMode = false;
  }
  SmallVector<NamedAttribute> attrs =
      getPoolAttrs(*window, /*withDilations=*/false);
  attrs.push_back(builder.getNamedAttr(
      "count_include_pad", builder.getI64IntegerAttr(*countPadding)));
  if (backward) {
    if (!getStaticType(0))
      return emitError() << "needs a static grad";
    replaceResult(0, nodes.create("AveragePoolGrad", x, input(0), attrs));
    return success();
  }
  SmallVector<int64_t> shape = {x.getDimSize(0), x.getDimSize(1),
                                window->sizes[0], window->sizes[1]};
  replaceResult(0,
                nodes.create("AveragePool", x.clone(shape), input(0), attrs));
  return success();
}

LogicalResult ATenExpansion::expandAdaptiveAvgPool(bool backward) {
  // Forward (self, output_size); backward (grad, self). Windows of equal
  // size: each output size must divide its input size.
  unsigned self = backward ? 1 : 0;
  RankedTensorType x = getStaticType(self);
  SmallVector<int64_t> outputSizes;
  if (backward) {
    if (RankedTensorType grad = getStaticType(0); grad && grad.getRank() == 4)
      outputSizes.assign(grad.getShape().begin() + 2, grad.getShape().end());
  } else if (std::optional<SmallVector<int64_t>> sizes = getInts(1)) {
    outputSizes = *sizes;
  }
  if (!x || x.getRank() != 4 || outputSizes.size() != 2)
    return emitError() << "needs a static 4-D input and "
                       << (backward ? "grad" : "a constant output_size");
  SmallVector<int64_t> kernel;
  for (int i = 0; i < 2; ++i) {
    int64_t size = x.getDimSize(2 + i), out = outputSizes[i];
    if (out <= 0 || size % out)
      return emitError() << "needs output sizes that divide the input's ("
                         << size << " by " << out << ")";
    kernel.push_back(size / out);
  }
  SmallVector<NamedAttribute> attrs = {
      builder.getNamedAttr("kernel_shape",
                           builder.getDenseI64ArrayAttr(kernel)),
      builder.getNamedAttr("strides", builder.getDenseI64ArrayAttr(kernel))};
  if (backward) {
    replaceResult(0, nodes.create("AveragePoolGrad", x, input(0), attrs));
    return success();
  }
  SmallVector<int64_t> shape = {x.getDimSize(0), x.getDimSize(1),
                                outputSizes[0], outputSizes[1]};
  replaceResult(0,
                nodes.create("AveragePool", x.clone(shape), input(0), attrs));
  return success();
}

LogicalResult ATenExpansion::expandArgMax() {
  // (self, dim?, keepdim): without a dim, over the flattened self.
  RankedTensorType x = getStaticType(0);
  FailureOr<bool> keepDim = getBool(2, false);
  if (failed(keepDim))
    return failure();
  std::optional<SmallVector<int64_t>> dim = getInts(1);
  if (!x || (input(1) && (!dim || dim->size() != 1)))
    return emitError() << "needs a static input and a constant dim";
  Type i64 = builder.getI64Type();
  auto argMax = [&](Value value, RankedTensorType type, int64_t axis,
                    bool keep) {
    return nodes.create(
        "ArgMax", type, value,
        {builder.getNamedAttr("axis", builder.getI64IntegerAttr(axis)),
         builder.getNamedAttr("keepdims", builder.getI64IntegerAttr(keep))});
  };
  if (!input(1)) {
    Value flat = nodes.reshape(input(0), {-1}, {x.getNumElements()});
    Value index = argMax(flat, RankedTensorType::get({}, i64), 0, false);
    if (*keepDim) {
      SmallVector<int64_t> ones(x.getRank(), 1);
      index = nodes.reshape(index, ones, ones);
    }
    replaceResult(0, index);
    return success();
  }
  std::optional<int64_t> axis = getAxis(1, x.getRank());
  if (!axis)
    return emitError() << "dim " << dim->front() << " is out of range";
  replaceResult(0,
                argMax(input(0),
                       RankedTensorType::get(
                           getReducedShape(x.getShape(), *axis, *keepDim), i64),
                       *axis, *keepDim));
  return success();
}

std::optional<double> ATenExpansion::getFloat(unsigned i) {
  Value value = input(i);
  while (value) {
    if (ElementsAttr constant = getConstantValue(value)) {
      auto element =
          constant.getNumElements() == 1
              ? dyn_cast_or_null<FloatAttr>(getUniformElement(constant))
              : nullptr;
      return element ? std::optional(element.getValueAsDouble()) : std::nullopt;
    }
    auto cast = value.getDefiningOp<NodeOp>();
    if (!cast || !isDefaultDomain(cast.getDomain()) ||
        cast.getOpType() != "Cast" || cast.getNumOperands() != 1)
      return std::nullopt;
    value = cast.getOperand(0);
  }
  return std::nullopt;
}

LogicalResult ATenExpansion::expandExtreme(bool overDim) {
  // max and min: (self) -> the extreme of every element; over a dim
  // (self, dim, keepdim) -> (values, indices of the first extreme).
  RankedTensorType x = getStaticType(0);
  if (!x)
    return emitError() << "needs a static input";
  bool isMax = op == "max";
  StringRef reduction = isMax ? "ReduceMax" : "ReduceMin";
  if (!overDim) {
    replaceResult(
        0, nodes.create(
               reduction, x.clone(ArrayRef<int64_t>{}), input(0),
               builder.getNamedAttr("keepdims", builder.getI64IntegerAttr(0))));
    return success();
  }
  std::optional<int64_t> axis = getAxis(1, x.getRank());
  FailureOr<bool> keepDim = getBool(2, false);
  if (failed(keepDim))
    return failure();
  if (!axis)
    return emitError() << "needs a constant dim within the input's rank";
  SmallVector<int64_t> shape = getReducedShape(x.getShape(), *axis, *keepDim);
  replaceResult(
      0, nodes.reduce(reduction, input(0), {*axis}, *keepDim, x.clone(shape)));
  if (node.getNumResults() > 1 && !node.getResult(1).use_empty())
    replaceResult(
        1, nodes.create(
               isMax ? "ArgMax" : "ArgMin",
               x.clone(shape, builder.getI64Type()), input(0),
               {builder.getNamedAttr("axis", builder.getI64IntegerAttr(*axis)),
                builder.getNamedAttr("keepdims",
                                     builder.getI64IntegerAttr(*keepDim))}));
  return success();
}

LogicalResult ATenExpansion::expandValueSelectingBackward() {
  // (grad, dim, indices, sizes, keepdim): grad where the indices point
  // along dim, zeros elsewhere (max and min over a dim).
  RankedTensorType result = getResultType(0), grad = getStaticType(0),
                   indices = getStaticType(2);
  FailureOr<bool> keepDim = getBool(4, false);
  if (failed(keepDim))
    return failure();
  if (!result || !grad || !indices)
    return emitError() << "needs static grad, indices and sizes (typed from "
                          "the input's shape)";
  std::optional<int64_t> axis = getAxis(1, result.getRank());
  if (!axis)
    return emitError() << "needs a constant dim within the input's rank";
  Value dy = input(0), positions = input(2);
  if (!*keepDim) {
    SmallVector<int64_t> kept(result.getShape());
    kept[*axis] = 1;
    dy = nodes.reshape(dy, kept, kept);
    positions = nodes.reshape(positions, kept, kept);
  }
  replaceResult(
      0,
      nodes
          .createWithResults(
              "GatherElementsGrad", result,
              {dy, nodes.createI64s(result.getShape()), positions},
              {builder.getNamedAttr("axis", builder.getI64IntegerAttr(*axis))},
              kMicrosoftDomain)
          .getResult(0));
  return success();
}

LogicalResult ATenExpansion::expandUpsampleNearest(bool backward) {
  // Forward (self, output_size?, scale_factors?); backward (grad,
  // output_size, input_size, scales...). Whole ratios only: each input
  // element repeated into a block (Reshape, Expand, Reshape); the gradient
  // sums each block.
  RankedTensorType x = backward ? getResultType(0) : getStaticType(0);
  RankedTensorType y = backward ? getStaticType(0) : nullptr;
  if (!x || x.getRank() < 3)
    return emitError() << "needs static input sizes of rank 3 to 5";
  int64_t spatial = x.getRank() - 2;
  SmallVector<int64_t> outSizes;
  if (y) {
    outSizes.assign(y.getShape().begin() + 2, y.getShape().end());
  } else if (std::optional<SmallVector<int64_t>> sizes = getInts(1);
             sizes && !sizes->empty()) {
    outSizes = *sizes;
  } else if (ElementsAttr scales =
                 input(2) ? getConstantValue(input(2)) : ElementsAttr()) {
    auto values = scales.tryGetValues<APFloat>();
    if (values)
      for (auto [i, scale] : llvm::enumerate(*values)) {
        double factor = scale.convertToDouble();
        int64_t size = x.getDimSize(2 + i);
        // PyTorch reads source element floor(dst / factor): the blocks are
        // whole only for a whole factor.
        if (factor != std::floor(factor))
          return emitError() << "needs whole scale factors, not " << factor;
        outSizes.push_back(size * int64_t(factor));
      }
  }
  if (int64_t(outSizes.size()) != spatial)
    return emitError() << "needs constant output sizes or scale factors";
  SmallVector<int64_t> blocks, split, repeated;
  split.append({x.getDimSize(0), x.getDimSize(1)});
  repeated = split;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = x.getDimSize(2 + i), out = outSizes[i];
    if (in <= 0 || out % in)
      return emitError() << "needs output sizes that are multiples of the "
                            "input's ("
                         << out << " of " << in << ")";
    split.append({in, 1});
    repeated.append({in, out / in});
    blocks.push_back(3 + 2 * i);
  }
  SmallVector<int64_t> outShape = {x.getDimSize(0), x.getDimSize(1)};
  outShape.append(outSizes);
  if (backward) {
    Value parts = nodes.reshape(input(0), repeated, repeated);
    replaceResult(0, nodes.reduceSum(parts, blocks, /*keepDims=*/false, x));
    return success();
  }
  Value columns = nodes.reshape(input(0), split, split);
  Value expanded = nodes.create("Expand", x.clone(repeated),
                                {columns, nodes.createI64s(repeated)});
  replaceResult(0, nodes.reshape(expanded, outShape, outShape));
  return success();
}

FailureOr<int64_t> ATenExpansion::getGroups(RankedTensorType x,
                                            unsigned groupInput) {
  std::optional<SmallVector<int64_t>> groups = getInts(groupInput);
  if (!groups || groups->size() != 1)
    return emitError() << "needs a constant group", failure();
  int64_t channels = x.getDimSize(1), count = groups->front();
  if (count <= 0 || channels % count)
    return emitError() << "needs a group count that divides the channels ("
                       << channels << " by " << count << ")",
           failure();
  return count;
}

LogicalResult ATenExpansion::expandGroupNorm() {
  // (input, weight, bias, N, C, HxW, group, eps) -> (Y, mean, rstd): the
  // statistics of each sample's group of C / group channels, in f32.
  RankedTensorType x = getStaticType(0);
  std::optional<double> eps = getFloat(7);
  if (!x || x.getRank() < 2 || !eps)
    return emitError() << "needs a static input, a constant group and eps";
  FailureOr<int64_t> groups = getGroups(x, 6);
  if (failed(groups))
    return failure();
  int64_t n = x.getDimSize(0), c = x.getDimSize(1), g = *groups;
  Type f32 = builder.getF32Type();
  auto grouped =
      RankedTensorType::get({n, g, x.getNumElements() / (n * g)}, f32);
  auto perGroup = RankedTensorType::get({n, g, 1}, f32);
  Value data = nodes.reshape(nodes.castTo(input(0), f32), grouped.getShape(),
                             grouped.getShape());
  Value mean = nodes.reduce("ReduceMean", data, {2}, true, perGroup);
  Value centered = nodes.binary("Sub", data, mean);
  Value variance =
      nodes.reduce("ReduceMean", nodes.binary("Mul", centered, centered), {2},
                   true, perGroup);
  Value rstd = nodes.unary(
      "Reciprocal", nodes.unary("Sqrt", nodes.binary("Add", variance,
                                                     nodes.scalar(f32, *eps))));
  Value normalized = nodes.reshape(nodes.binary("Mul", centered, rstd),
                                   x.getShape(), x.getShape());
  // weight and bias per channel: [C, 1, ...].
  SmallVector<int64_t> channelShape(x.getRank() - 1, 1);
  channelShape.front() = c;
  for (unsigned i : {1u, 2u})
    if (input(i) && !isa<NoneType>(input(i).getType()))
      normalized = nodes.binary(i == 1 ? "Mul" : "Add", normalized,
                                nodes.reshape(nodes.castTo(input(i), f32),
                                              channelShape, channelShape));
  replaceResult(0, normalized);
  SmallVector<int64_t> statistics = {n, g};
  for (auto [i, value] : llvm::enumerate(ArrayRef<Value>{mean, rstd}))
    if (node.getNumResults() > i + 1 && !node.getResult(i + 1).use_empty())
      replaceResult(i + 1, nodes.reshape(value, statistics, statistics));
  return success();
}

LogicalResult ATenExpansion::expandGroupNormBackward() {
  // (dY, X, mean, rstd, weight, N, C, HxW, group, output_mask) -> (dX,
  // dweight, dbias), in f32: with x^ = (x - mean) rstd per group,
  // dbias = sum dY, dweight = sum dY x^ (over samples and positions), and
  // dX = rstd (g - mean(g) - x^ mean(g x^)) per group for g = dY weight.
  RankedTensorType dyType = getStaticType(0), x = getStaticType(1);
  if (!dyType || !x || x.getRank() < 2 || !getStaticType(2) ||
      !getStaticType(3))
    return emitError() << "needs static dY, X, mean and rstd and a constant "
                          "group";
  FailureOr<int64_t> groups = getGroups(x, 8);
  if (failed(groups))
    return failure();
  int64_t n = x.getDimSize(0), c = x.getDimSize(1), g = *groups;
  Type f32 = builder.getF32Type();
  SmallVector<int64_t> grouped = {n, g, x.getNumElements() / (n * g)};
  SmallVector<int64_t> perGroup = {n, g, 1};
  auto group = [&](Value value) {
    return nodes.reshape(nodes.castTo(value, f32), grouped, grouped);
  };
  Value mean = nodes.reshape(nodes.castTo(input(2), f32), perGroup, perGroup);
  Value rstd = nodes.reshape(nodes.castTo(input(3), f32), perGroup, perGroup);
  Value normalized =
      nodes.binary("Mul", nodes.binary("Sub", group(input(1)), mean), rstd);
  Value dy = nodes.castTo(input(0), f32);
  SmallVector<int64_t> reduced = {0};
  for (int64_t i = 2; i < x.getRank(); ++i)
    reduced.push_back(i);
  auto channels = RankedTensorType::get({c}, f32);
  SmallVector<int64_t> channelShape(x.getRank() - 1, 1);
  channelShape.front() = c;
  Value dyTimesWeight = dy;
  Value weight = input(4);
  if (weight && !isa<NoneType>(weight.getType()))
    dyTimesWeight = nodes.binary(
        "Mul", dy,
        nodes.reshape(nodes.castTo(weight, f32), channelShape, channelShape));
  Value scaled = group(dyTimesWeight);
  auto groupType = RankedTensorType::get(perGroup, f32);
  Value meanScaled = nodes.reduce("ReduceMean", scaled, {2}, true, groupType);
  Value meanProduct =
      nodes.reduce("ReduceMean", nodes.binary("Mul", scaled, normalized), {2},
                   true, groupType);
  Value dx =
      nodes.binary("Mul", rstd,
                   nodes.binary("Sub", nodes.binary("Sub", scaled, meanScaled),
                                nodes.binary("Mul", normalized, meanProduct)));
  replaceResult(0, nodes.reshape(dx, x.getShape(), x.getShape()));
  Value normalizedFull = nodes.reshape(normalized, x.getShape(), x.getShape());
  if (node.getNumResults() > 1 && !node.getResult(1).use_empty())
    replaceResult(1, nodes.reduceSum(nodes.binary("Mul", dy, normalizedFull),
                                     reduced, false, channels));
  if (node.getNumResults() > 2 && !node.getResult(2).use_empty())
    replaceResult(2, nodes.reduceSum(dy, reduced, false, channels));
  return success();
}

LogicalResult ATenExpansion::expandBinaryCrossEntropy(bool backward) {
  // Forward (self, target, weight?, pos_weight?, reduction) -> the loss of
  // each element, (1 - t) x + l softplus(-x) with l = 1 + (pos_weight - 1) t,
  // times weight, reduced (0 none, 1 mean, 2 sum); backward (grad, self,
  // ...) -> grad (l sigmoid(x) - pos_weight t) weight (over N for mean).
  // In f32.
  unsigned self = backward ? 1 : 0;
  RankedTensorType xType = getStaticType(self);
  std::optional<SmallVector<int64_t>> reduction = getInts(self + 4);
  if (!xType || !reduction || reduction->size() != 1 ||
      reduction->front() < 0 || reduction->front() > 2)
    return emitError() << "needs a static input and a constant reduction "
                          "(0, 1 or 2)";
  Type f32 = builder.getF32Type();
  auto operand = [&](unsigned i) -> Value {
    Value value = input(self + i);
    return value && !isa<NoneType>(value.getType()) ? nodes.castTo(value, f32)
                                                    : Value();
  };
  Value x = operand(0), target = operand(1), weight = operand(2),
        positiveWeight = operand(3);
  if (!target)
    return emitError() << "needs a target";
  Value one = nodes.scalar(f32, 1);
  // l = 1 + (pos_weight - 1) t.
  Value positiveScale =
      positiveWeight
          ? nodes.binary("Add", one,
                         nodes.binary("Mul",
                                      nodes.binary("Sub", positiveWeight, one),
                                      target))
          : Value();
  Value result;
  if (backward) {
    Value sigmoid = nodes.unary("Sigmoid", x);
    result =
        positiveWeight
            ? nodes.binary("Sub", nodes.binary("Mul", positiveScale, sigmoid),
                           nodes.binary("Mul", positiveWeight, target))
            : nodes.binary("Sub", sigmoid, target);
  } else {
    // softplus(-x) = log(1 + exp(-|x|)) + max(-x, 0), without overflow.
    Value negated = nodes.unary("Neg", x);
    Value softplus = nodes.binary(
        "Add",
        nodes.unary(
            "Log",
            nodes.binary(
                "Add", one,
                nodes.unary("Exp", nodes.unary("Neg", nodes.unary("Abs", x))))),
        nodes.unary("Relu", negated));
    if (positiveScale)
      softplus = nodes.binary("Mul", positiveScale, softplus);
    result = nodes.binary(
        "Add", nodes.binary("Mul", nodes.binary("Sub", one, target), x),
        softplus);
  }
  if (weight)
    result = nodes.binary("Mul", result, weight);
  int64_t mode = reduction->front();
  if (backward) {
    result = nodes.binary("Mul", result, nodes.castTo(input(0), f32));
    if (mode == 1)
      result = nodes.binary("Div", result,
                            nodes.scalar(f32, double(xType.getNumElements())));
  } else if (mode != 0) {
    result = nodes.create(
        mode == 1 ? "ReduceMean" : "ReduceSum", RankedTensorType::get({}, f32),
        result, builder.getNamedAttr("keepdims", builder.getI64IntegerAttr(0)));
  }
  replaceResult(0, result);
  return success();
}

LogicalResult ATenExpansion::expandDiagonal(bool backward) {
  // Forward (self, offset, dim1, dim2): dim1 and dim2 removed, the diagonal
  // (offset above dim2's) appended; backward (grad, input_sizes, offset,
  // dim1, dim2). Both through dim1 and dim2 moved last and flattened: a
  // Gather of the diagonal's positions, a GatherGrad back.
  RankedTensorType x = backward ? getResultType(0) : getStaticType(0);
  unsigned first = backward ? 2 : 1;
  std::optional<SmallVector<int64_t>> offset = getInts(first);
  std::optional<int64_t> dim1 =
                             x ? getAxis(first + 1, x.getRank()) : std::nullopt,
                         dim2 =
                             x ? getAxis(first + 2, x.getRank()) : std::nullopt;
  if (!x || !offset || offset->size() != 1 || !dim1 || !dim2 || *dim1 == *dim2)
    return emitError() << "needs static sizes and constant offset and "
                          "distinct dims";
  int64_t rows = x.getDimSize(*dim1), columns = x.getDimSize(*dim2);
  int64_t shift = offset->front();
  int64_t length =
      std::max<int64_t>(0, shift >= 0 ? std::min(rows, columns - shift)
                                      : std::min(rows + shift, columns));
  SmallVector<int64_t> perm, batch;
  for (int64_t i = 0; i < x.getRank(); ++i)
    if (i != *dim1 && i != *dim2) {
      perm.push_back(i);
      batch.push_back(x.getDimSize(i));
    }
  perm.append({*dim1, *dim2});
  SmallVector<int64_t> flat(batch), diagonal(batch), moved(batch);
  flat.push_back(rows * columns);
  diagonal.push_back(length);
  moved.append({rows, columns});
  SmallVector<int64_t> positions;
  for (int64_t k = 0; k < length; ++k)
    positions.push_back((k + std::max<int64_t>(0, -shift)) * columns + k +
                        std::max<int64_t>(0, shift));
  // No Transpose where the dims are last already.
  bool moves = !llvm::equal(perm, llvm::seq<int64_t>(0, x.getRank()));
  int64_t last = batch.size();
  Type elementType = x.getElementType();
  if (!backward) {
    Value flattened = nodes.reshape(
        moves ? nodes.transpose(input(0), perm) : input(0), flat, flat);
    replaceResult(
        0, nodes.create(
               "Gather", x.clone(diagonal),
               {flattened, nodes.createI64s(positions)},
               builder.getNamedAttr("axis", builder.getI64IntegerAttr(last))));
    return success();
  }
  if (!getStaticType(0))
    return emitError() << "needs a static grad";
  Value scattered =
      nodes
          .createWithResults(
              "GatherGrad", RankedTensorType::get(flat, elementType),
              {nodes.createI64s(flat), nodes.createI64s(positions), input(0)},
              {builder.getNamedAttr("axis", builder.getI64IntegerAttr(last))},
              kMicrosoftDomain)
          .getResult(0);
  Value unflattened = nodes.reshape(scattered, moved, moved);
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, axis] : llvm::enumerate(perm))
    inverse[axis] = i;
  replaceResult(0, moves ? nodes.transpose(unflattened, inverse) : unflattened);
  return success();
}

LogicalResult ATenExpansion::expandUnfold(bool backward) {
  // Forward (self, dimension, size, step): dimension replaced by the
  // windows, a last axis of each window's elements: a Gather of
  // [windows, size] positions, its window axis moved last; backward (grad,
  // input_sizes, dimension, size, step): the axis moved back and a
  // GatherGrad.
  RankedTensorType x = backward ? getResultType(0) : getStaticType(0);
  unsigned first = backward ? 2 : 1;
  std::optional<int64_t> axis =
      x ? getAxis(first, std::max<int64_t>(x.getRank(), 1)) : std::nullopt;
  std::optional<SmallVector<int64_t>> size = getInts(first + 1),
                                      step = getInts(first + 2);
  if (!x || x.getRank() == 0 || !axis || !size || size->size() != 1 || !step ||
      step->size() != 1 || step->front() <= 0 || size->front() <= 0 ||
      size->front() > x.getDimSize(*axis))
    return emitError() << "needs static sizes, a constant dimension, a size "
                          "within it and a positive step";
  int64_t window = size->front(), stride = step->front();
  int64_t windows = (x.getDimSize(*axis) - window) / stride + 1;
  SmallVector<APInt> positions;
  for (int64_t w = 0; w < windows; ++w)
    for (int64_t k = 0; k < window; ++k)
      positions.push_back(APInt(64, w * stride + k));
  auto indexType =
      RankedTensorType::get({windows, window}, builder.getI64Type());
  Value indices =
      nodes.create("Constant", indexType, {},
                   builder.getNamedAttr(
                       "value", DenseElementsAttr::get(indexType, positions)));
  // [..., windows, window, ...] -> [..., windows, ..., window].
  SmallVector<int64_t> gathered(x.getShape());
  gathered[*axis] = window;
  gathered.insert(gathered.begin() + *axis, windows);
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < int64_t(gathered.size()); ++i)
    if (i != *axis + 1)
      perm.push_back(i);
  perm.push_back(*axis + 1);
  if (!backward) {
    Value windowsFirst = nodes.create(
        "Gather", x.clone(gathered), {input(0), indices},
        builder.getNamedAttr("axis", builder.getI64IntegerAttr(*axis)));
    replaceResult(0, nodes.transpose(windowsFirst, perm));
    return success();
  }
  if (!getStaticType(0))
    return emitError() << "needs a static grad";
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, position] : llvm::enumerate(perm))
    inverse[position] = i;
  replaceResult(
      0, nodes
             .createWithResults("GatherGrad", x,
                                {nodes.createI64s(x.getShape()), indices,
                                 nodes.transpose(input(0), inverse)},
                                {builder.getNamedAttr(
                                    "axis", builder.getI64IntegerAttr(*axis))},
                                kMicrosoftDomain)
             .getResult(0));
  return success();
}

LogicalResult ATenExpansion::expandMultinomial() {
  // (self, num_samples, replacement, generator): draws of class indices in
  // proportion to the weights of each row; ONNX's Multinomial draws from
  // log-probabilities, with replacement (the same without for one draw).
  RankedTensorType x = getStaticType(0);
  std::optional<SmallVector<int64_t>> samples = getInts(1);
  FailureOr<bool> replacement = getBool(2, false);
  if (failed(replacement))
    return failure();
  if (!x || (x.getRank() != 1 && x.getRank() != 2) || !samples ||
      samples->size() != 1 || samples->front() <= 0)
    return emitError() << "needs static 1-D or 2-D weights and a constant "
                          "num_samples";
  if (!*replacement && samples->front() != 1)
    return emitError() << "draws without replacement only one sample per "
                          "row";
  if (input(3) && !isa<NoneType>(input(3).getType()))
    return emitError() << "a generator is not supported";
  int64_t draws = samples->front();
  Type f32 = builder.getF32Type();
  SmallVector<int64_t> rows = {x.getRank() == 2 ? x.getDimSize(0) : 1,
                               x.getShape().back()};
  Value logits = nodes.unary(
      "Log", nodes.reshape(nodes.castTo(input(0), f32), rows, rows));
  auto drawnType =
      RankedTensorType::get({rows[0], draws}, builder.getI64Type());
  Value drawn = nodes.create(
      "Multinomial", drawnType, logits,
      {builder.getNamedAttr("sample_size", builder.getI64IntegerAttr(draws)),
       builder.getNamedAttr("dtype", builder.getI64IntegerAttr(7 /*INT64*/))});
  if (x.getRank() == 1)
    drawn = nodes.reshape(drawn, {draws}, {draws});
  replaceResult(0, drawn);
  return success();
}

LogicalResult ATenExpansion::run() {
  StringRef overload;
  op = getATenOperator(node, &overload);
  bool overDim = overload == "dim" && (op == "max" || op == "min");
  bool byVector = overload == "vec" && op.starts_with("upsample_nearest");
  bool ofTensors = overload == "Tensor" && op == "bitwise_or";
  if (!overload.empty() && !overDim && !byVector && !ofTensors)
    return emitError() << "overload '" << overload
                       << "' has no expansion (expanded: " << kExpandedOperators
                       << ", without overloads)";
  if (op.empty())
    return node.emitNodeError() << "ATen node without an operator";
  if (node->getNumResults() == 0)
    return emitError() << "has no outputs";
  LogicalResult result = failure();
  if (op == "embedding")
    result = expandEmbedding();
  else if (op == "embedding_backward")
    result = expandEmbeddingBackward();
  else if (op == "max_pool2d_with_indices" ||
           op == "max_pool2d_with_indices_backward")
    result = expandMaxPool(op.ends_with("_backward"));
  else if (op == "avg_pool2d" || op == "avg_pool2d_backward")
    result = expandAvgPool(op.ends_with("_backward"));
  else if (op == "_adaptive_avg_pool2d" ||
           op == "_adaptive_avg_pool2d_backward")
    result = expandAdaptiveAvgPool(op.ends_with("_backward"));
  else if (op == "argmax")
    result = expandArgMax();
  else if (op == "max" || op == "min")
    result = expandExtreme(overDim);
  else if (op == "value_selecting_reduction_backward")
    result = expandValueSelectingBackward();
  else if (llvm::is_contained({"upsample_nearest1d", "upsample_nearest2d",
                               "upsample_nearest3d"},
                              op.drop_back(op.ends_with("_backward") ? 9 : 0)))
    result = expandUpsampleNearest(op.ends_with("_backward"));
  else if (op == "native_group_norm")
    result = expandGroupNorm();
  else if (op == "native_group_norm_backward")
    result = expandGroupNormBackward();
  else if (op == "multinomial")
    result = expandMultinomial();
  else if (op == "bitwise_or") {
    // (self, other): Or of booleans, BitwiseOr (opset 18) of integers.
    auto type =
        input(0) ? dyn_cast<RankedTensorType>(input(0).getType()) : nullptr;
    bool isBool = type && type.getElementType().isInteger(1);
    if (!type || !input(1) || (!isBool && nodes.getOpset() < 18))
      return emitError() << "needs ranked operands (integers from opset 18)";
    replaceResult(
        0, nodes.binary(isBool ? "Or" : "BitwiseOr", input(0), input(1)));
    result = success();
  } else if (op == "diagonal" || op == "diagonal_backward")
    result = expandDiagonal(op.ends_with("_backward"));
  else if (op == "unfold" || op == "unfold_backward")
    result = expandUnfold(op.ends_with("_backward"));
  else if (op == "binary_cross_entropy_with_logits" ||
           op == "binary_cross_entropy_with_logits_backward")
    result = expandBinaryCrossEntropy(op.ends_with("_backward"));
  else if (op == "numpy_T") {
    auto type =
        input(0) ? dyn_cast<RankedTensorType>(input(0).getType()) : nullptr;
    if (!type)
      return emitError() << "needs a ranked input";
    replaceResult(
        0,
        nodes.transpose(input(0), llvm::to_vector(llvm::reverse(
                                      llvm::seq<int64_t>(0, type.getRank())))));
    result = success();
  } else
    return emitError() << "has no expansion (expanded: " << kExpandedOperators
                       << ")";
  if (failed(result))
    return failure();
  for (OpResult value : node->getResults())
    if (!value.use_empty())
      return emitError() << "result " << value.getResultNumber()
                         << " has no expansion";
  node.erase();
  return success();
}

namespace {
struct ONNXGraphExpandATenPass
    : public onnxg::impl::ONNXGraphExpandATenBase<ONNXGraphExpandATenPass> {
  void runOnOperation() override {
    if (failed(expandNodes(getOperation(), isATenNode,
                           [](NodeOp node, OpBuilder &builder) {
                             return ATenExpansion(node, builder).run();
                           })))
      signalPassFailure();
  }
};
} // namespace
