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

std::optional<SmallVector<std::pair<linalg::GenericOp, unsigned>>>
amp::getReadersOfNewResult(Operation *writer, Value buffer) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getNumOperands() != 0 ||
      !alloc.getType().getElementType().isF32() ||
      alloc->getBlock() != writer->getBlock())
    return std::nullopt;
  SmallVector<std::pair<linalg::GenericOp, unsigned>> readers;
  Operation *last = writer;
  for (Operation *next = getNextAccess(writer, buffer);
       next && mayRead(next, buffer); next = getNextAccess(next, buffer)) {
    auto reader = dyn_cast<linalg::GenericOp>(next);
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
    if (!index)
      return std::nullopt;
    readers.emplace_back(reader, *index);
    last = reader;
  }
  if (readers.empty() || isReadAfter(last, buffer))
    return std::nullopt;
  return readers;
}

std::optional<std::pair<linalg::GenericOp, unsigned>>
amp::getReaderOfNewResult(Operation *writer, Value buffer) {
  auto readers = getReadersOfNewResult(writer, buffer);
  if (!readers || readers->size() != 1)
    return std::nullopt;
  return readers->front();
}

/// The element through which `reader` reads its input `index`.
static BlockArgument getElement(linalg::GenericOp reader, unsigned index) {
  return reader.getMatchingBlockArgument(&reader->getOpOperand(index));
}

/// Whether `op` rounds its operand to nearest even to `type`.
static bool isRoundingTo(Operation *op, Type type) {
  auto truncation = dyn_cast<arith::TruncFOp>(op);
  return truncation && !truncation.getRoundingmodeAttr() &&
         truncation.getType() == type;
}

/// Whether `element` is used, and only by roundings to `type`.
static bool isOnlyRounded(BlockArgument element, Type type) {
  return !element.use_empty() &&
         llvm::all_of(element.getUsers(), [&](Operation *user) {
           return isRoundingTo(user, type);
         });
}

std::optional<amp::OutputCast> amp::matchOutputCast(Operation *writer,
                                                    Value result, Type type) {
  if (!type.isF16() && !type.isBF16())
    return std::nullopt;
  auto readers = getReadersOfNewResult(writer, stripReshapes(result));
  if (!readers || llvm::any_of(*readers, [&](auto reader) {
        return !isOnlyRounded(getElement(reader.first, reader.second), type);
      }))
    return std::nullopt;
  return OutputCast{*readers, cast<FloatType>(type)};
}

std::optional<amp::OutputCast>
amp::matchWidenedOutput(Operation *writer, Value result, Type type) {
  if (!type.isF16() && !type.isBF16())
    return std::nullopt;
  auto readers = getReadersOfNewResult(writer, stripReshapes(result));
  if (!readers)
    return std::nullopt;
  // Rounded to `type`, or first added to another value (a bias) and then
  // only rounded to `type`.
  auto isRounding = [&](Operation *user) { return isRoundingTo(user, type); };
  bool added = false;
  for (auto [reader, index] : *readers) {
    BlockArgument element = getElement(reader, index);
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
  }
  if (!added)
    return std::nullopt;
  return OutputCast{*readers, cast<FloatType>(type)};
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
  // Each reader takes the rounded element as it is, or widened back where
  // it does more than round it.
  for (auto [reader, index] : outputCast.readers) {
    OpOperand &input = reader->getOpOperand(index);
    input.set(rebuildReshapes(input.get(), buffer, rounded->getResult(0)));
    BlockArgument element = reader.getMatchingBlockArgument(&input);
    bool onlyRounded = isOnlyRounded(element, outputCast.type);
    element.setType(outputCast.type);
    if (!onlyRounded) {
      OpBuilder body = OpBuilder::atBlockBegin(reader.getBody());
      Value wide = arith::ExtFOp::create(body, reader.getLoc(),
                                         body.getF32Type(), element);
      element.replaceAllUsesExcept(wide, wide.getDefiningOp());
      continue;
    }
    for (Operation *truncation :
         llvm::make_early_inc_range(element.getUsers())) {
      truncation->getResult(0).replaceAllUsesWith(element);
      truncation->erase();
    }
  }
  return rebuildReshapes(result, buffer, rounded->getResult(0));
}

Value amp::createRoundedCopy(OpBuilder &builder, Location loc, Value source,
                             FloatType narrow) {
  auto type = cast<MemRefType>(source.getType());
  Value copy = memref::AllocOp::create(
      builder, loc, MemRefType::get(type.getShape(), narrow));
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  linalg::GenericOp::create(
      builder, loc, ValueRange{source}, ValueRange{copy},
      ArrayRef<AffineMap>{identity, identity},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
        Value rounded =
            arith::TruncFOp::create(nested, nestedLoc, narrow, arguments[0]);
        linalg::YieldOp::create(nested, nestedLoc, rounded);
      });
  return copy;
}
