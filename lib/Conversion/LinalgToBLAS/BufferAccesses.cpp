//===- BufferAccesses.cpp - Who writes and reads a buffer, in order -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/BufferAccesses.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

/// Whether `op` or an op nested in it may have `Effect` on `buffer`'s
/// memory (an op without memory effects declared may have any).
template <typename Effect>
static bool mayHaveEffect(Operation *op, Value buffer) {
  Value root = memref::skipViewLikeOps(cast<MemrefValue>(buffer));
  auto hasEffect = [&](Operation *op) {
    for (Value value : op->getOperands()) {
      auto memref = dyn_cast<MemrefValue>(value);
      if (!memref || isa<ViewLikeOpInterface>(op) ||
          memref::skipViewLikeOps(memref) != root)
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects || effects.getEffectOnValue<Effect>(value).has_value())
        return true;
    }
    return false;
  };
  return op
      ->walk([&](Operation *nested) {
        return hasEffect(nested) ? WalkResult::interrupt()
                                 : WalkResult::advance();
      })
      .wasInterrupted();
}

bool amp::mayWrite(Operation *op, Value buffer) {
  return mayHaveEffect<MemoryEffects::Write>(op, buffer);
}

bool amp::mayRead(Operation *op, Value buffer) {
  return mayHaveEffect<MemoryEffects::Read>(op, buffer);
}

bool amp::isWrittenBetween(Operation *from, Operation *to, Value buffer) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode())
    if (mayWrite(op, buffer))
      return true;
  return false;
}

Operation *amp::getLastWriterBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
    if (mayWrite(prev, buffer))
      return prev;
  return nullptr;
}

SmallVector<Operation *> amp::getAccesses(Value buffer) {
  SmallVector<Operation *> accesses;
  for (Operation *user : buffer.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    if (isa<ViewLikeOpInterface>(user)) {
      for (Value view : user->getResults())
        llvm::append_range(accesses, getAccesses(view));
      continue;
    }
    accesses.push_back(user);
  }
  return accesses;
}

bool amp::isReadAfter(Operation *writer, Value buffer) {
  Block *block = writer->getBlock();
  // Accesses in the block, as the ops of the block that hold them.
  SmallVector<Operation *> ops;
  for (Operation *access : getAccesses(buffer)) {
    Operation *op = block->findAncestorOpInBlock(*access);
    if (!op)
      return true;
    if (op != writer)
      ops.push_back(op);
  }
  for (Operation *op = writer->getNextNode(); op; op = op->getNextNode()) {
    if (!llvm::is_contained(ops, op))
      continue;
    // An op that writes the buffer without reading it (a copy's target, an
    // output-only linalg op) ends what `writer` wrote.
    if (mayRead(op, buffer))
      return true;
    if (mayWrite(op, buffer))
      return false;
  }
  // A buffer the function did not allocate: its caller reads it.
  return isa<BlockArgument>(memref::skipViewLikeOps(cast<MemrefValue>(buffer)));
}

void amp::eraseIfUnaccessed(Value buffer) {
  if (!getAccesses(buffer).empty() || !buffer.getDefiningOp<memref::AllocOp>())
    return;
  SmallVector<Operation *> worklist(buffer.getUsers());
  while (!worklist.empty()) {
    Operation *user = worklist.pop_back_val();
    for (Value result : user->getResults())
      llvm::append_range(worklist, result.getUsers());
    user->dropAllUses();
    user->erase();
  }
  buffer.getDefiningOp()->erase();
}

void amp::eraseWriterIfUnread(Operation *writer, Value buffer) {
  if (isReadAfter(writer, buffer))
    return;
  writer->erase();
  eraseIfUnaccessed(buffer);
}
