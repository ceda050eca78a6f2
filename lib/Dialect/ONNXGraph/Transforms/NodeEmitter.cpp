//===- NodeEmitter.cpp - Build ONNX nodes that expand another -------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "NodeEmitter.h"

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace mlir::onnxg;

LogicalResult mlir::onnxg::expandNodes(
    func::FuncOp func, function_ref<bool(NodeOp)> matches,
    function_ref<LogicalResult(NodeOp, OpBuilder &)> expand) {
  if (func.isExternal())
    return success();
  SmallVector<NodeOp> nodes;
  func.walk([&](NodeOp node) {
    if (matches(node))
      nodes.push_back(node);
  });
  if (nodes.empty())
    return success();
  OpBuilder builder(func.getContext());
  for (NodeOp node : nodes) {
    builder.setInsertionPoint(node);
    if (failed(expand(node, builder)))
      return failure();
  }
  Block &body = func.getBody().front();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 body.getTerminator()->getOperandTypes()));
  return success();
}

std::optional<SmallVector<int64_t>> mlir::onnxg::getConstantInts(Value value) {
  ElementsAttr values = getConstantValue(value);
  if (!values || !values.getElementType().isInteger(64))
    return std::nullopt;
  auto elements = values.tryGetValues<APInt>();
  if (!elements)
    return std::nullopt;
  SmallVector<int64_t> ints;
  for (APInt element : *elements)
    ints.push_back(element.getSExtValue());
  return ints;
}

Value NodeEmitter::castTo(Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return create("Cast", type.clone(elementType), value,
                builder.getNamedAttr("to", builder.getI64IntegerAttr(
                                               *getOnnxDataType(elementType))));
}

Value NodeEmitter::scalar(Type elementType, double value) {
  Value &constant = scalars[elementType][value];
  if (!constant)
    constant = createSplat(elementType, value);
  return constant;
}

Value NodeEmitter::index(int64_t value) {
  Value &constant = indices[value];
  if (!constant)
    constant = createSplat(builder.getI64Type(), value);
  return constant;
}

Value NodeEmitter::pick(Value value, int64_t position, int64_t axis) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  return create("Gather", type.clone(shape), {value, index(position)},
                builder.getNamedAttr("axis", builder.getI64IntegerAttr(axis)));
}

Value NodeEmitter::reshape(Value value, ArrayRef<int64_t> shape,
                           ArrayRef<int64_t> resultShape) {
  auto type = cast<RankedTensorType>(value.getType());
  return create("Reshape", type.clone(resultShape), {value, createI64s(shape)});
}

Value NodeEmitter::transpose(Value value, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(type.getDimSize(axis));
  return create(
      "Transpose", type.clone(shape), value,
      builder.getNamedAttr("perm", builder.getDenseI64ArrayAttr(perm)));
}

Value NodeEmitter::concat(ValueRange values, int64_t axis) {
  if (values.size() == 1)
    return values.front();
  auto type = cast<RankedTensorType>(values.front().getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = 0;
  for (Value value : values) {
    int64_t size = cast<RankedTensorType>(value.getType()).getDimSize(axis);
    shape[axis] = ShapedType::isDynamic(size)          ? ShapedType::kDynamic
                  : ShapedType::isDynamic(shape[axis]) ? shape[axis]
                                                       : shape[axis] + size;
  }
  return create("Concat", type.clone(shape), values,
                builder.getNamedAttr("axis", builder.getI64IntegerAttr(axis)));
}

Value NodeEmitter::binary(StringRef opType, Value lhs, Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<int64_t> shape;
  bool broadcasts = OpTrait::util::getBroadcastedShape(
      lhsType.getShape(), rhsType.getShape(), shape);
  assert(broadcasts && "the expansion broadcasts compatible shapes");
  (void)broadcasts;
  Type elementType = llvm::is_contained({"Less", "Greater", "Equal"}, opType)
                         ? builder.getI1Type()
                         : lhsType.getElementType();
  return create(opType, RankedTensorType::get(shape, elementType), {lhs, rhs});
}

Value NodeEmitter::unary(StringRef opType, Value value,
                         ArrayRef<NamedAttribute> attrs) {
  return create(opType, value.getType(), value, attrs);
}

Value NodeEmitter::matmul(Value lhs, Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<int64_t> shape(lhsType.getShape());
  shape.back() = rhsType.getShape().back();
  return create("MatMul", lhsType.clone(shape), {lhs, rhs});
}

Value NodeEmitter::reduceSum(Value value, ArrayRef<int64_t> axes, bool keepDims,
                             RankedTensorType resultType) {
  return reduce("ReduceSum", value, axes, keepDims, resultType);
}

Value NodeEmitter::reduce(StringRef opType, Value value, ArrayRef<int64_t> axes,
                          bool keepDims, RankedTensorType resultType) {
  NamedAttribute keep =
      builder.getNamedAttr("keepdims", builder.getI64IntegerAttr(keepDims));
  // Axes became an input in opset 13 for ReduceSum, 18 for the others.
  if (getOpset() >= (opType == "ReduceSum" ? 13 : 18))
    return create(opType, resultType, {value, createI64s(axes)}, {keep});
  return create(
      opType, resultType, {value},
      {keep, builder.getNamedAttr("axes", builder.getDenseI64ArrayAttr(axes))});
}
