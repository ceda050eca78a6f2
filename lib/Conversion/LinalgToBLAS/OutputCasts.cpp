//===- OutputCasts.cpp - A library call's result rounded by its reader ----===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/OutputCasts.h"
#include "amp/Conversion/BufferAccesses.h"
#include "amp/Conversion/OutputFills.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

std::optional<std::pair<linalg::GenericOp, unsigned>>
amp::getReaderOfNewResult(Operation *writer, Value buffer) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getNumOperands() != 0 ||
      !alloc.getType().getElementType().isF32() ||
      alloc->getBlock() != writer->getBlock())
    return std::nullopt;
  auto reader =
      dyn_cast_if_present<linalg::GenericOp>(getNextAccess(writer, buffer));
  if (!reader || !reader.hasPureBufferSemantics())
    return std::nullopt;
  // One input, a reshape of the buffer; no other operand of the buffer.
  std::optional<unsigned> index;
  for (OpOperand &operand : reader->getOpOperands()) {
    auto memref = dyn_cast<MemrefValue>(operand.get());
    if (!memref || memref::skipViewLikeOps(memref) != buffer)
      continue;
    if (index || reader.isDpsInit(&operand) ||
        stripReshapes(operand.get()) != buffer)
      return std::nullopt;
    index = operand.getOperandNumber();
  }
  if (!index || isReadAfter(reader, buffer))
    return std::nullopt;
  return std::make_pair(reader, *index);
}

/// Whether `op` rounds its operand to nearest even to `type`.
static bool isRoundingTo(Operation *op, Type type) {
  auto truncation = dyn_cast<arith::TruncFOp>(op);
  return truncation && !truncation.getRoundingmodeAttr() &&
         truncation.getType() == type;
}

std::optional<amp::OutputCast> amp::matchOutputCast(Operation *writer,
                                                    Value result, Type type) {
  if (!type.isF16() && !type.isBF16())
    return std::nullopt;
  Value buffer = stripReshapes(result);
  std::optional<std::pair<linalg::GenericOp, unsigned>> found =
      getReaderOfNewResult(writer, buffer);
  if (!found)
    return std::nullopt;
  auto [reader, index] = *found;
  // Its element used only by truncations, to nearest even, to `type`.
  BlockArgument element =
      reader.getMatchingBlockArgument(&reader->getOpOperand(index));
  if (element.use_empty() ||
      llvm::any_of(element.getUsers(),
                   [&](Operation *user) { return !isRoundingTo(user, type); }))
    return std::nullopt;
  return OutputCast{reader, index, cast<FloatType>(type)};
}

std::optional<amp::OutputCast>
amp::matchWidenedOutput(Operation *writer, Value result, Type type) {
  if (!type.isF16() && !type.isBF16())
    return std::nullopt;
  std::optional<std::pair<linalg::GenericOp, unsigned>> found =
      getReaderOfNewResult(writer, stripReshapes(result));
  if (!found)
    return std::nullopt;
  auto [reader, index] = *found;
  // Rounded to `type`, or first added to another value (a bias) and then
  // only rounded to `type`.
  auto isRounding = [&](Operation *user) { return isRoundingTo(user, type); };
  BlockArgument element =
      reader.getMatchingBlockArgument(&reader->getOpOperand(index));
  bool added = false;
  for (Operation *user : element.getUsers()) {
    if (isRounding(user))
      continue;
    auto addition = dyn_cast<arith::AddFOp>(user);
    if (!addition || addition.getLhs() == addition.getRhs() ||
        addition->use_empty() ||
        !llvm::all_of(addition->getUsers(), isRounding))
      return std::nullopt;
    added = true;
  }
  if (!added)
    return std::nullopt;
  return OutputCast{reader, index, cast<FloatType>(type), /*widened=*/true};
}

/// `view`, reshapes of `buffer`, rebuilt as the same reshapes of
/// `replacement` (the same shape, another element type), each next to the
/// one it copies.
static Value rebuildReshapes(Value view, Value buffer, Value replacement) {
  if (view == buffer)
    return replacement;
  Operation *reshape = view.getDefiningOp();
  IRMapping mapping;
  mapping.map(reshape->getOperand(0),
              rebuildReshapes(reshape->getOperand(0), buffer, replacement));
  OpBuilder b(reshape);
  b.setInsertionPointAfter(reshape);
  Operation *copy = b.clone(*reshape, mapping);
  auto elementType = cast<MemRefType>(replacement.getType()).getElementType();
  copy->getResult(0).setType(
      MemRefType::Builder(cast<MemRefType>(view.getType()))
          .setElementType(elementType));
  return copy->getResult(0);
}

Value amp::applyOutputCast(const OutputCast &outputCast, Value result) {
  Value buffer = stripReshapes(result);
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  OpBuilder b(alloc);
  b.setInsertionPointAfter(alloc);
  Operation *rounded = b.clone(*alloc);
  rounded->getResult(0).setType(
      MemRefType::Builder(alloc.getType()).setElementType(outputCast.type));
  for (Operation *user : buffer.getUsers())
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
      b.setInsertionPoint(dealloc);
      memref::DeallocOp::create(b, dealloc.getLoc(), rounded->getResult(0));
    }
  // The reader takes the rounded element as it is.
  OpOperand &input = outputCast.reader->getOpOperand(outputCast.inputIndex);
  input.set(rebuildReshapes(input.get(), buffer, rounded->getResult(0)));
  linalg::GenericOp reader = outputCast.reader;
  BlockArgument element = reader.getMatchingBlockArgument(&input);
  element.setType(outputCast.type);
  if (outputCast.widened) {
    OpBuilder body = OpBuilder::atBlockBegin(reader.getBody());
    Value wide = arith::ExtFOp::create(body, reader.getLoc(), body.getF32Type(),
                                       element);
    element.replaceAllUsesExcept(wide, wide.getDefiningOp());
    return rebuildReshapes(result, buffer, rounded->getResult(0));
  }
  for (Operation *truncation : llvm::make_early_inc_range(element.getUsers())) {
    truncation->getResult(0).replaceAllUsesWith(element);
    truncation->erase();
  }
  return rebuildReshapes(result, buffer, rounded->getResult(0));
}
