//===- Sequences.cpp - Lower sequences built in the graph -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// SequenceConstruct and SequenceAt. A sequence lowers to the list of its
// element tensors (buildSequence), so it costs nothing at run time; the
// ops that read one (SequenceAt, ONNX Runtime's AdamWOptimizer) take the
// elements they need. Positions must be constants, and a sequence the graph
// takes as an input has no elements to take: both are errors naming the
// node.
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

/// SequenceAt(sequence, position): the element at a constant position,
/// counted from the end when negative.
static LoweringResult lowerSequenceAt(NodeLowering &node) {
  std::optional<SmallVector<Value>> elements = node.sequenceOperand(0);
  if (!elements)
    return failure();
  std::optional<SmallVector<int64_t>> position = node.getConstantInts(1);
  if (!position || position->size() != 1)
    return node.emitError()
           << "the position (input 1) must be a constant of one element";
  int64_t size = elements->size(), index = position->front();
  if (index < -size || index >= size)
    return node.emitError()
           << "position " << index << " is outside a sequence of " << size
           << " tensors";
  return SmallVector<Value>{(*elements)[index < 0 ? index + size : index]};
}

void amp::lowering::populateSequenceLowerings(LoweringTable &table) {
  table.add("", "SequenceConstruct", lowerSequenceConstruct);
  table.add("", "SequenceAt", lowerSequenceAt);
}
