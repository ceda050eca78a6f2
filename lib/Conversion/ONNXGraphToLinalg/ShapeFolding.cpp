//===- ShapeFolding.cpp - Evaluate shape arithmetic while lowering --------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Exporters compute shapes with small integer subgraphs (ConstantOfShape,
// Mul, Equal, Where, Concat, Gather ... on shape vectors), and sizes and
// trip counts with small float ones (a Resize's output size from a scale,
// Floor and a Cast; Range's expansion, Ceil of a quotient). When every
// operand of such a node is a constant, its value is computed here, so the
// Expand, Reshape, Tile or Loop that reads it sees a constant.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

using namespace mlir;
using namespace mlir::amp::lowering;

/// Tensors larger than this are not folded.
static constexpr int64_t kMaxFoldedElements = 64;

namespace {
/// A small constant tensor: its shape and values.
template <typename T>
struct ConstantTensor {
  SmallVector<int64_t> shape;
  SmallVector<T> values;
};
using IntTensor = ConstantTensor<int64_t>;
using FloatTensor = ConstantTensor<double>;
} // namespace

static std::optional<IntTensor> getIntTensor(NodeLowering &node, unsigned i) {
  Value value = node.operand(i);
  auto type = getRankedType(value);
  if (!type || !type.hasStaticShape() ||
      !isa<IntegerType>(type.getElementType()) ||
      type.getNumElements() > kMaxFoldedElements)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> values = node.getConstantInts(i);
  if (!values)
    return std::nullopt;
  return IntTensor{llvm::to_vector(type.getShape()), *values};
}

/// The value of element `flat` of a result of `shape`, read from `operand`
/// broadcast to it.
template <typename Tensor>
static auto readBroadcast(const Tensor &operand, ArrayRef<int64_t> shape,
                          int64_t flat) {
  int64_t offset = shape.size() - operand.shape.size();
  int64_t index = 0, stride = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    int64_t coordinate = flat % shape[i];
    flat /= shape[i];
    if (i < offset)
      continue;
    int64_t size = operand.shape[i - offset];
    index += (size == 1 ? 0 : coordinate) * stride;
    stride *= size;
  }
  return operand.values[index];
}

/// The one-operand op types the folding evaluates.
static constexpr StringLiteral kUnaryOps[] = {
    "Identity", "Cast", "Not",     "Neg",     "Abs",       "Ceil",   "Floor",
    "Sqrt",     "Relu", "Reshape", "Squeeze", "Unsqueeze", "Flatten"};

/// One element of `opType` on `args`, in int64 (shape arithmetic) or in
/// double (size arithmetic in floats); nullopt when it does not fold.
template <typename T>
static std::optional<T> evaluate(StringRef opType, ArrayRef<T> args) {
  constexpr bool isInteger = std::is_integral_v<T>;
  if (opType == "Add")
    return args[0] + args[1];
  if (opType == "Sub")
    return args[0] - args[1];
  if (opType == "Mul")
    return args[0] * args[1];
  if (opType == "Div") {
    if (isInteger && !args[1])
      return std::nullopt;
    return args[0] / args[1];
  }
  if (opType == "Equal")
    return args[0] == args[1];
  if (opType == "Less")
    return args[0] < args[1];
  if (opType == "LessOrEqual")
    return args[0] <= args[1];
  if (opType == "Greater")
    return args[0] > args[1];
  if (opType == "GreaterOrEqual")
    return args[0] >= args[1];
  if (opType == "Where")
    return args[0] != 0 ? args[1] : args[2];
  if (opType == "Not" && isInteger)
    return args[0] == 0;
  if (opType == "Neg")
    return -args[0];
  if (opType == "Abs")
    return std::abs(args[0]);
  if (opType == "Max")
    return std::max(args[0], args[1]);
  if (opType == "Min")
    return std::min(args[0], args[1]);
  if (opType == "Relu")
    return std::max(args[0], T(0));
  if constexpr (!isInteger) {
    if (opType == "Ceil")
      return std::ceil(args[0]);
    if (opType == "Floor")
      return std::floor(args[0]);
    if (opType == "Sqrt")
      return std::sqrt(args[0]);
  }
  if (llvm::is_contained(
          {"Identity", "Cast", "Reshape", "Squeeze", "Unsqueeze", "Flatten"},
          opType))
    return args[0];
  return std::nullopt;
}

/// The row-major positions in a tensor of `shape` of the elements at
/// `index(d, c)` along each axis d, for every row-major position of a
/// tensor of `resultShape` (c its coordinates): Slice and Transpose folding.
static SmallVector<int64_t>
gatherPositions(ArrayRef<int64_t> shape, ArrayRef<int64_t> resultShape,
                function_ref<int64_t(size_t, ArrayRef<int64_t>)> index) {
  int64_t count = 1;
  for (int64_t size : resultShape)
    count *= size;
  SmallVector<int64_t> positions;
  for (int64_t flat = 0; flat < count; ++flat) {
    SmallVector<int64_t> coordinates(resultShape.size());
    for (int64_t i = resultShape.size() - 1, rest = flat; i >= 0; --i) {
      coordinates[i] = rest % resultShape[i];
      rest /= resultShape[i];
    }
    int64_t position = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      position = position * shape[d] + index(d, coordinates);
    positions.push_back(position);
  }
  return positions;
}

/// The elements a Slice of a constant integer tensor keeps (parts of a
/// Shape, the pads torch.onnx computes), by ONNX's clamping rules.
static std::optional<SmallVector<int64_t>> foldSlice(NodeLowering &node) {
  std::optional<IntTensor> data = getIntTensor(node, 0);
  if (!data)
    return std::nullopt;
  int64_t rank = data->shape.size();
  bool notConstant = false;
  auto read = [&](StringRef name, unsigned i) {
    return node.getIntsFromAttrOrOperand(name, i, notConstant);
  };
  std::optional<SmallVector<int64_t>> starts = read("starts", 1),
                                      ends = read("ends", 2),
                                      axes = read("axes", 3),
                                      steps = read("steps", 4);
  if (notConstant || !starts || !ends || starts->size() != ends->size() ||
      (axes && axes->size() != starts->size()) ||
      (steps && steps->size() != starts->size()))
    return std::nullopt;
  // Per axis: the first index, the step and the count kept.
  SmallVector<int64_t> first(rank, 0), stride(rank, 1), shape(data->shape);
  for (size_t i = 0; i < starts->size(); ++i) {
    std::optional<int64_t> axis =
        normalizeAxis(axes ? (*axes)[i] : int64_t(i), rank);
    int64_t step = steps ? (*steps)[i] : 1;
    if (!axis || step == 0)
      return std::nullopt;
    int64_t size = data->shape[*axis];
    auto clamp = [&](int64_t index, int64_t low, int64_t high) {
      if (index < 0)
        index += size;
      return std::clamp(index, low, high);
    };
    int64_t start = step > 0 ? clamp((*starts)[i], 0, size)
                             : clamp((*starts)[i], 0, size - 1);
    int64_t end =
        step > 0 ? clamp((*ends)[i], 0, size) : clamp((*ends)[i], -1, size - 1);
    int64_t kept = step > 0 ? (end - start + step - 1) / step
                            : (start - end - step - 1) / -step;
    first[*axis] = start;
    stride[*axis] = step;
    shape[*axis] = std::max<int64_t>(0, kept);
  }
  SmallVector<int64_t> values;
  for (int64_t position : gatherPositions(
           data->shape, shape, [&](size_t d, ArrayRef<int64_t> coordinates) {
             return first[d] + coordinates[d] * stride[d];
           }))
    values.push_back(data->values[position]);
  return values;
}

/// The elements of a Transpose of a constant integer tensor.
static std::optional<SmallVector<int64_t>> foldTranspose(NodeLowering &node) {
  std::optional<IntTensor> data = getIntTensor(node, 0);
  if (!data)
    return std::nullopt;
  int64_t rank = data->shape.size();
  SmallVector<int64_t> perm = node.getInts("perm").value_or(
      llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  if (int64_t(perm.size()) != rank)
    return std::nullopt;
  SmallVector<int64_t> shape, inverse(rank);
  for (auto [i, axis] : llvm::enumerate(perm)) {
    if (axis < 0 || axis >= rank)
      return std::nullopt;
    shape.push_back(data->shape[axis]);
    inverse[axis] = i;
  }
  SmallVector<int64_t> values;
  // Input axis perm[i] is output axis i.
  for (int64_t position : gatherPositions(
           data->shape, shape, [&](size_t d, ArrayRef<int64_t> coordinates) {
             return coordinates[inverse[d]];
           }))
    values.push_back(data->values[position]);
  return values;
}

/// Operand `i` when it is a small constant tensor of numbers (floats, or
/// integers and booleans read as doubles).
static std::optional<FloatTensor> getFloatTensor(NodeLowering &node,
                                                 unsigned i) {
  auto type = getRankedType(node.operand(i));
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldedElements)
    return std::nullopt;
  FloatTensor tensor{llvm::to_vector(type.getShape()), {}};
  if (isa<FloatType>(type.getElementType())) {
    std::optional<SmallVector<double>> values = node.getConstantFloats(i);
    if (!values)
      return std::nullopt;
    tensor.values = *values;
  } else if (std::optional<IntTensor> ints = getIntTensor(node, i)) {
    tensor.values.assign(ints->values.begin(), ints->values.end());
  } else {
    return std::nullopt;
  }
  return tensor;
}

/// Operand `i` as a small constant tensor of int64 or double elements.
template <typename T>
static std::optional<ConstantTensor<T>> getConstantTensor(NodeLowering &node,
                                                          unsigned i) {
  if constexpr (std::is_integral_v<T>)
    return getIntTensor(node, i);
  else
    return getFloatTensor(node, i);
}

/// The elements of `node`'s result of `shape`, an elementwise op on
/// constant operands, evaluated in T (a one-operand op reads its operand's
/// elements in order, which the reshapes keep; the others broadcast);
/// nullopt when it does not fold.
template <typename T>
static std::optional<SmallVector<T>> foldElementwise(NodeLowering &node,
                                                     ArrayRef<int64_t> shape) {
  StringRef opType = node.getNode().getOpType();
  bool unary = llvm::is_contained(kUnaryOps, opType);
  unsigned arity = opType == "Where" ? 3 : unary ? 1 : 2;
  if (node.getNumOperands() < arity)
    return std::nullopt;
  SmallVector<ConstantTensor<T>> operands;
  for (unsigned i = 0; i < arity; ++i) {
    std::optional<ConstantTensor<T>> operand = getConstantTensor<T>(node, i);
    if (!operand)
      return std::nullopt;
    operands.push_back(*operand);
  }
  bool reshape = unary && opType != "Not";
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  SmallVector<T> values;
  for (int64_t flat = 0; flat < count; ++flat) {
    SmallVector<T> args;
    for (const ConstantTensor<T> &operand : operands) {
      if (reshape && flat >= int64_t(operand.values.size()))
        return std::nullopt;
      args.push_back(reshape ? operand.values[flat]
                             : readBroadcast(operand, shape, flat));
    }
    std::optional<T> value = evaluate<T>(opType, args);
    if (!value)
      return std::nullopt;
    values.push_back(*value);
  }
  return values;
}

/// The value of a node computing a small float tensor from constants, or an
/// integer or boolean one from floats (a Cast, a comparison); null when it
/// does not fold. Each result is computed in double and rounded once to the
/// result's type, as one IEEE operation of that type rounds it.
static Value foldFloatNode(NodeLowering &node, RankedTensorType type) {
  Type element = type.getElementType();
  // Only floats enter this path: integer arithmetic is exact in int64.
  bool anyFloat = false;
  for (Value operand : node.getNode().getInputs())
    if (auto operandType = getRankedType(operand))
      anyFloat |= isa<FloatType>(operandType.getElementType());
  if (!isa<FloatType>(element) && !anyFloat)
    return {};
  std::optional<SmallVector<double>> values =
      foldElementwise<double>(node, type.getShape());
  if (!values)
    return {};
  SmallVector<Attribute> elements;
  for (double value : *values) {
    if (auto floatType = dyn_cast<FloatType>(element)) {
      APFloat rounded(value);
      bool lost;
      rounded.convert(floatType.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &lost);
      elements.push_back(FloatAttr::get(floatType, rounded));
      continue;
    }
    // To a boolean: whether it is nonzero; to an integer: truncated toward
    // zero, as C++ and ONNX Runtime cast.
    auto intType = dyn_cast<IntegerType>(element);
    if (!intType || intType.isUnsigned() || std::isnan(value))
      return {};
    unsigned width = intType.getWidth();
    if (width == 1) {
      elements.push_back(IntegerAttr::get(intType, APInt(1, value != 0)));
      continue;
    }
    if (!std::isfinite(value) || std::abs(value) >= 0x1p62)
      return {};
    elements.push_back(IntegerAttr::get(
        intType, APInt(width, static_cast<int64_t>(value), /*isSigned=*/true,
                       /*implicitTrunc=*/true)));
  }
  return arith::ConstantOp::create(node.getBuilder(), node.getLoc(),
                                   DenseElementsAttr::get(type, elements));
}

Value amp::lowering::foldConstantNode(NodeLowering &node) {
  onnxg::NodeOp op = node.getNode();
  if (!onnxg::isDefaultDomain(op.getDomain()) || op.getNumResults() != 1)
    return {};
  RankedTensorType type = node.resultType(0);
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldedElements)
    return {};
  if (Value folded = foldFloatNode(node, type))
    return folded;
  if (!isa<IntegerType>(type.getElementType()) ||
      type.getElementType().isUnsignedInteger())
    return {};
  StringRef opType = op.getOpType();
  SmallVector<int64_t> values;
  if (opType == "ConstantOfShape") {
    auto value = dyn_cast_or_null<ElementsAttr>(node.getAttr("value"));
    auto fill = dyn_cast_or_null<IntegerAttr>(
        value ? onnxg::getUniformElement(value) : TypedAttr());
    if (!fill)
      return {};
    values.assign(type.getNumElements(), fill.getType().isInteger(1)
                                             ? fill.getValue().getZExtValue()
                                             : fill.getValue().getSExtValue());
  } else if (opType == "Concat" || opType == "Gather") {
    if (type.getRank() > 1)
      return {};
    SmallVector<IntTensor> operands;
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      std::optional<IntTensor> operand = getIntTensor(node, i);
      if (!operand || operand->shape.size() > 1)
        return {};
      operands.push_back(*operand);
    }
    if (opType == "Concat") {
      for (const IntTensor &operand : operands)
        values.append(operand.values);
    } else {
      if (operands.size() != 2 || node.getInt("axis", 0) != 0)
        return {};
      int64_t size = operands[0].values.size();
      for (int64_t index : operands[1].values) {
        if (index < -size || index >= size)
          return {};
        values.push_back(operands[0].values[index < 0 ? index + size : index]);
      }
    }
  } else if (opType == "Slice" || opType == "Transpose") {
    std::optional<SmallVector<int64_t>> folded =
        opType == "Slice" ? foldSlice(node) : foldTranspose(node);
    if (!folded)
      return {};
    values = *folded;
  } else {
    std::optional<SmallVector<int64_t>> folded =
        foldElementwise<int64_t>(node, type.getShape());
    if (!folded)
      return {};
    values = *folded;
  }
  if (int64_t(values.size()) != type.getNumElements())
    return {};
  unsigned width = type.getElementTypeBitWidth();
  SmallVector<APInt> elements;
  for (int64_t value : values)
    elements.push_back(APInt(width, width == 1 ? value != 0 : value,
                             /*isSigned=*/width > 1, /*implicitTrunc=*/true));
  return arith::ConstantOp::create(node.getBuilder(), node.getLoc(),
                                   DenseElementsAttr::get(type, elements));
}
