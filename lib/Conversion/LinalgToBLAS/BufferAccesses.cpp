//===- BufferAccesses.cpp - Who writes and reads a buffer, in order -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/BufferAccesses.h"

#include "amp/Runtime/ConvRecord.h"
#include "amp/Runtime/GemmRecord.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

bool amp::isLibraryCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call &&
         (call.getCallee().starts_with(amp::runtime::kGemmEntryPrefix) ||
          call.getCallee().starts_with(amp::runtime::kConvEntryPrefix));
}

/// Whether `op` or an op nested in it may have `Effect` on `buffer`'s
/// memory (an op without memory effects declared may have any).
template <typename Effect>
static bool mayHaveEffect(Operation *op, Value buffer) {
  Value root = memref::skipViewLikeOps(cast<MemrefValue>(buffer));
  auto hasEffect = [&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      auto memref = dyn_cast<MemrefValue>(value);
      if (!memref || isa<ViewLikeOpInterface>(op) ||
          memref::skipViewLikeOps(memref) != root)
        continue;
      // A library call reads its operands and writes only its result (and
      // a GEMM's bias gradient); an activation's aux matrix or ReLU mask,
      // its last operand, it may read or write (GELU's input and the mask
      // are written forward, read backward).
      if (amp::isLibraryCall(op)) {
        unsigned number = operand.getOperandNumber();
        StringRef callee = cast<func::CallOp>(op).getCallee();
        bool isAux =
            number + 1 == op->getNumOperands() &&
            llvm::any_of(
                ArrayRef<StringRef>{amp::runtime::kAuxGemmEntryPrefix,
                                    amp::runtime::kBiasAuxGemmEntryPrefix,
                                    amp::runtime::kMaskGemmEntryPrefix,
                                    amp::runtime::kBiasMaskGemmEntryPrefix},
                [&](StringRef prefix) { return callee.starts_with(prefix); });
        bool written =
            number == 3 || isAux ||
            (number == 4 &&
             callee.starts_with(amp::runtime::kBiasGradGemmEntryPrefix));
        if (std::is_same_v<Effect, MemoryEffects::Write> ? written
                                                         : !written || isAux)
          return true;
        continue;
      }
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

std::optional<SmallVector<amp::MemrefUse>> amp::getMemrefUses(Operation *op) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return std::nullopt;
  SmallVector<MemrefUse> uses;
  for (const MemoryEffects::EffectInstance &effect : *effects) {
    if (!isa<MemoryEffects::Read, MemoryEffects::Write, MemoryEffects::Free>(
            effect.getEffect()))
      continue;
    Value value = effect.getValue();
    if (!value || !isa<MemRefType>(value.getType()))
      return std::nullopt;
    uses.emplace_back(value, !isa<MemoryEffects::Read>(effect.getEffect()));
  }
  return uses;
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

bool amp::isDefinedBefore(Value value, Operation *op) {
  Operation *def = value.getDefiningOp();
  return !def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op);
}

bool amp::canWriteBefore(Value buffer, Operation *op) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  return isDefinedBefore(buffer, op) || (alloc && alloc->getNumOperands() == 0);
}

void amp::moveDefinitionBefore(Value buffer, Operation *op) {
  if (!isDefinedBefore(buffer, op))
    buffer.getDefiningOp()->moveBefore(op);
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

std::optional<SmallVector<Operation *>> amp::getAccessingOps(Value buffer,
                                                             Block &block) {
  SmallVector<Operation *> ops;
  for (Operation *access : getAccesses(buffer)) {
    Operation *op = block.findAncestorOpInBlock(*access);
    if (!op)
      return std::nullopt;
    ops.push_back(op);
  }
  return ops;
}

Operation *amp::getNextAccess(Operation *op, Value buffer) {
  std::optional<SmallVector<Operation *>> ops =
      getAccessingOps(buffer, *op->getBlock());
  if (!ops)
    return nullptr;
  Operation *next = op->getNextNode();
  while (next && !llvm::is_contained(*ops, next))
    next = next->getNextNode();
  return next;
}

bool amp::isReadAfter(Operation *writer, Value buffer) {
  std::optional<SmallVector<Operation *>> ops =
      getAccessingOps(buffer, *writer->getBlock());
  if (!ops)
    return true;
  for (Operation *op = writer->getNextNode(); op; op = op->getNextNode()) {
    if (!llvm::is_contained(*ops, op))
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

bool amp::eraseWriterIfUnread(Operation *writer, Value buffer) {
  if (isReadAfter(writer, buffer))
    return false;
  writer->erase();
  eraseIfUnaccessed(buffer);
  return true;
}
