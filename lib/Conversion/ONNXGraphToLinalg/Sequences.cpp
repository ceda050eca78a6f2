//===- Sequences.cpp - Lower sequences built in the graph -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// SequenceConstruct, SequenceEmpty, SequenceAt, SequenceLength,
// SequenceInsert, SequenceErase, SplitToSequence and ConcatFromSequence. A
// sequence lowers to the list of its element tensors (buildSequence), so it
// costs nothing at run time; the ops that read one (SequenceAt, ONNX
// Runtime's AdamWOptimizer) take the elements they need. Positions must be
// constants, and a sequence the graph takes as an input has no elements to
// take: both are errors naming the node.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

using namespace mlir;
using namespace mlir::amp::lowering;

/// SequenceConstruct(inputs...): a sequence of the input tensors, which
/// ONNX requires to share one element type.
static LoweringResult lowerSequenceConstruct(NodeLowering &node) {
  SmallVector<Value> elements;
  Type elementType;
  for (unsigned i = 0; i < node.getNumOperands(); ++i) {
    RankedTensorType type = getRankedType(node.operand(i));
    if (!type)
      return node.emitError() << "input " << i << " must be a ranked tensor";
    if (elementType && type.getElementType() != elementType)
      return node.emitError()
             << "input " << i << " has element type " << type.getElementType()
             << ", input 0 " << elementType;
    elementType = type.getElementType();
    elements.push_back(node.operand(i));
  }
  if (elements.empty())
    return node.emitError() << "expects at least one input";
  return SmallVector<Value>{buildSequence(node.getBuilder(), node.getLoc(),
                                          node.getNode().getResult(0).getType(),
                                          elements)};
}

/// The position operand `i` of a sequence op on `size` tensors, in [0,
/// size] (`size` itself only for an insertion), counted from the end when
/// negative; `fallback` without one, or an error without a fallback.
static FailureOr<int64_t> getPosition(NodeLowering &node, unsigned i,
                                      int64_t size,
                                      std::optional<int64_t> fallback,
                                      bool inserting) {
  if (!node.operand(i) && fallback)
    return *fallback;
  std::optional<SmallVector<int64_t>> position = node.getConstantInts(i);
  if (!position || position->size() != 1)
    return node.emitError() << "the position (input " << i
                            << ") must be a constant of one element";
  int64_t index = position->front(), end = inserting ? size : size - 1;
  if (index < -size || index > end)
    return node.emitError()
           << "position " << index << " is outside a sequence of " << size
           << " tensors";
  return index < 0 ? index + size : index;
}

/// SequenceAt(sequence, position): the element at a constant position,
/// counted from the end when negative.
static LoweringResult lowerSequenceAt(NodeLowering &node) {
  std::optional<SmallVector<Value>> elements = node.sequenceOperand(0);
  if (!elements)
    return failure();
  FailureOr<int64_t> position =
      getPosition(node, 1, elements->size(), std::nullopt, false);
  if (failed(position))
    return failure();
  return SmallVector<Value>{(*elements)[*position]};
}

/// The sequence result of `node` made of `elements`.
static LoweringResult sequenceResult(NodeLowering &node,
                                     ArrayRef<Value> elements) {
  Type type = node.getNode().getResult(0).getType();
  if (elements.empty() && !isa<onnxg::SequenceType>(type))
    return node.emitError() << "an empty sequence needs a sequence type";
  return SmallVector<Value>{
      buildSequence(node.getBuilder(), node.getLoc(), type, elements)};
}

/// SequenceEmpty: a sequence of no tensors.
static LoweringResult lowerSequenceEmpty(NodeLowering &node) {
  return sequenceResult(node, {});
}

/// SequenceLength(sequence): its number of tensors, an i64 scalar.
static LoweringResult lowerSequenceLength(NodeLowering &node) {
  std::optional<SmallVector<Value>> elements = node.sequenceOperand(0);
  if (!elements)
    return failure();
  OpBuilder &b = node.getBuilder();
  return SmallVector<Value>{arith::ConstantOp::create(
      b, node.getLoc(),
      DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                             int64_t(elements->size())))};
}

/// SequenceInsert(sequence, tensor, [position]): the tensor inserted at a
/// constant position (at the end without one).
static LoweringResult lowerSequenceInsert(NodeLowering &node) {
  std::optional<SmallVector<Value>> elements = node.sequenceOperand(0);
  if (!elements || !node.operand(1))
    return failure();
  int64_t size = elements->size();
  FailureOr<int64_t> position = getPosition(node, 2, size, size, true);
  if (failed(position))
    return failure();
  elements->insert(elements->begin() + *position, node.operand(1));
  return sequenceResult(node, *elements);
}

/// SequenceErase(sequence, [position]): without the tensor at a constant
/// position (the last without one).
static LoweringResult lowerSequenceErase(NodeLowering &node) {
  std::optional<SmallVector<Value>> elements = node.sequenceOperand(0);
  if (!elements)
    return failure();
  int64_t size = elements->size();
  if (size == 0)
    return node.emitError() << "cannot erase from an empty sequence";
  FailureOr<int64_t> position = getPosition(node, 1, size, size - 1, false);
  if (failed(position))
    return failure();
  elements->erase(elements->begin() + *position);
  return sequenceResult(node, *elements);
}

/// SplitToSequence(input, [split]): the input split along `axis` into
/// parts of one element (squeezed unless keepdims), of a constant size
/// (the last part smaller), or of constant sizes.
static LoweringResult lowerSplitToSequence(NodeLowering &node) {
  FailureOr<int64_t> axis = getSplitAxis(node);
  if (failed(axis))
    return failure();
  RankedTensorType type = getRankedType(node.operand(0));
  int64_t size = type.getDimSize(*axis);
  SmallVector<int64_t> parts;
  bool squeeze = false;
  if (!node.operand(1)) {
    parts.assign(size, 1);
    squeeze = node.getInt("keepdims", 1) == 0;
  } else {
    std::optional<SmallVector<int64_t>> split = node.getConstantInts(1);
    if (!split)
      return node.emitError() << "split must be a constant";
    if (getRankedType(node.operand(1)).getRank() == 0) {
      int64_t part = split->front();
      if (part <= 0)
        return node.emitError() << "split must be positive";
      for (int64_t offset = 0; offset < size; offset += part)
        parts.push_back(std::min(part, size - offset));
    } else {
      parts = *split;
    }
  }
  FailureOr<SmallVector<Value>> elements = splitInput(node, *axis, parts);
  if (failed(elements))
    return failure();
  if (squeeze) {
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + *axis);
    for (Value &element : *elements)
      element = reshapeTo(node.getBuilder(), node.getLoc(), element,
                          type.clone(shape));
  }
  return sequenceResult(node, *elements);
}

/// ConcatFromSequence(sequence): its tensors concatenated along `axis`, or
/// stacked along a new axis with new_axis.
static LoweringResult lowerConcatFromSequence(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  std::optional<SmallVector<Value>> elements = node.sequenceOperand(0);
  if (!elements)
    return failure();
  if (elements->empty())
    return node.emitError() << "cannot concatenate an empty sequence";
  RankedTensorType type = getRankedType(elements->front());
  if (!type)
    return node.emitError() << "expects ranked tensors";
  bool stack = node.getInt("new_axis", 0) != 0;
  int64_t rank = type.getRank() + (stack ? 1 : 0);
  std::optional<int64_t> axis = normalizeAxis(node.getInt("axis", 0), rank);
  if (!axis)
    return node.emitError() << "axis is out of range for rank " << rank;
  if (stack)
    for (Value &element : *elements) {
      RankedTensorType elementType = getRankedType(element);
      SmallVector<int64_t> shape(elementType.getShape());
      shape.insert(shape.begin() + *axis, 1);
      element = reshapeTo(b, loc, element, elementType.clone(shape));
    }
  return SmallVector<Value>{concatTensors(b, loc, *elements, *axis)};
}

void amp::lowering::populateSequenceLowerings(LoweringTable &table) {
  table.add("", "SequenceConstruct", lowerSequenceConstruct);
  table.add("", "SequenceEmpty", lowerSequenceEmpty);
  table.add("", "SequenceAt", lowerSequenceAt);
  table.add("", "SequenceLength", lowerSequenceLength);
  table.add("", "SequenceInsert", lowerSequenceInsert);
  table.add("", "SequenceErase", lowerSequenceErase);
  table.add("", "SplitToSequence", lowerSplitToSequence);
  table.add("", "ConcatFromSequence", lowerConcatFromSequence);
}
