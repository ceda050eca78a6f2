//===- FreeDeadBuffers.cpp - Free buffers after their last use ------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-free-dead-buffers pass: ownership-based buffer deallocation frees
// all buffers of a block in one bufferization.dealloc at its end. Each of
// its allocations whose memory no other value can reach (only views of it
// in the block, no region result or call) is freed on its own, after its
// last use.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_FREEDEADBUFFERS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Appends the ops of `block` that use `buffer` or a view of it, other than
/// `dealloc` freeing `buffer` itself, to `accesses`. False when its memory
/// may be reached otherwise: through a region's result or terminator, an
/// op that returns a buffer or tensor, another free, or a use outside
/// `block`.
static bool collectAccesses(Value buffer, Block &block,
                            bufferization::DeallocOp dealloc, bool isView,
                            SmallVectorImpl<Operation *> &accesses) {
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    if (user == dealloc.getOperation() && !isView)
      continue;
    if (auto view = dyn_cast<ViewLikeOpInterface>(user);
        view && view.getViewSource() == buffer) {
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) &&
            !collectAccesses(result, block, dealloc, /*isView=*/true, accesses))
          return false;
      continue;
    }
    if (isa<bufferization::DeallocOp, memref::DeallocOp>(user) ||
        user->hasTrait<OpTrait::IsTerminator>() ||
        llvm::any_of(user->getResultTypes(),
                     [](Type type) { return isa<ShapedType>(type); }))
      return false;
    Operation *ancestor = block.findAncestorOpInBlock(*user);
    if (!ancestor)
      return false;
    accesses.push_back(ancestor);
  }
  return true;
}

/// Frees each allocation that `dealloc` frees unconditionally, retaining
/// nothing, with a memref.dealloc after its last access (`early`) or where
/// `dealloc` is, when nothing but its views reaches its memory; appends
/// them to `freed` and erases `dealloc` when that leaves it nothing to
/// free.
static void freeDistinctAllocations(bufferization::DeallocOp dealloc,
                                    bool early, llvm::SetVector<Value> &freed) {
  if (!dealloc.getRetained().empty())
    return;
  Block &block = *dealloc->getBlock();
  SmallVector<Value> keptMemrefs, keptConditions;
  OpBuilder b(dealloc);
  for (auto [memref, condition] :
       llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions())) {
    auto alloc = memref.getDefiningOp<memref::AllocOp>();
    SmallVector<Operation *> accesses;
    if (freed.contains(memref))
      continue;
    if (!alloc || alloc->getBlock() != &block ||
        !matchPattern(condition, m_One()) ||
        !collectAccesses(memref, block, dealloc, /*isView=*/false, accesses)) {
      keptMemrefs.push_back(memref);
      keptConditions.push_back(condition);
      continue;
    }
    Operation *last = alloc;
    for (Operation *access : accesses)
      if (last->isBeforeInBlock(access))
        last = access;
    if (early)
      b.setInsertionPointAfter(last);
    else
      b.setInsertionPoint(dealloc);
    memref::DeallocOp::create(b, dealloc.getLoc(), memref);
    freed.insert(memref);
  }
  if (keptMemrefs.empty()) {
    dealloc.erase();
    return;
  }
  dealloc.getMemrefsMutable().assign(keptMemrefs);
  dealloc.getConditionsMutable().assign(keptConditions);
}

/// The bytes of a statically shaped buffer of numbers, or 0.
static int64_t getStaticBytes(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return 0;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// The most bytes of the `freed` buffers live at once, in the order of the
/// ops of their blocks (a block's peak counted for every block).
static int64_t getPeakBytes(const llvm::SetVector<Value> &freed) {
  llvm::SetVector<Block *> blocks;
  for (Value buffer : freed)
    blocks.insert(buffer.getDefiningOp()->getBlock());
  int64_t peak = 0;
  for (Block *block : blocks) {
    int64_t live = 0, blockPeak = 0;
    for (Operation &op : *block) {
      if (isa<memref::AllocOp>(op) && freed.contains(op.getResult(0)))
        live += getStaticBytes(op.getResult(0));
      else if (auto free = dyn_cast<memref::DeallocOp>(op);
               free && freed.contains(free.getMemref()))
        live -= getStaticBytes(free.getMemref());
      blockPeak = std::max(blockPeak, live);
    }
    peak += blockPeak;
  }
  return peak;
}

namespace {
struct FreeDeadBuffersPass
    : amp::impl::FreeDeadBuffersBase<FreeDeadBuffersPass> {
  using FreeDeadBuffersBase::FreeDeadBuffersBase;

  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk(
        [&](bufferization::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    llvm::SetVector<Value> freed;
    for (bufferization::DeallocOp dealloc : deallocs)
      freeDistinctAllocations(dealloc, early, freed);
    if (!emitRemarks || freed.empty())
      return;
    int64_t total = 0;
    for (Value buffer : freed)
      total += getStaticBytes(buffer);
    emitRemark(getOperation().getLoc())
        << "freed " << freed.size() << " buffers: at most "
        << getPeakBytes(freed) << " of their " << total
        << " bytes live at once";
  }
};
} // namespace
