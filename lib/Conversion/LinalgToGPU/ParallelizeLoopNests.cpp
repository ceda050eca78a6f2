//===- ParallelizeLoopNests.cpp - Independent loops of a nest, parallel ---===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-parallelize-loop-nests pass: a perfect nest of scf.for loops on
// buffers (the loops of a scatter) becomes an scf.parallel over the loops
// whose iterations touch disjoint elements of every buffer the nest
// writes, around the other loops in their order. With atomic-updates, a
// nest whose writes are all additions (a scatter-add) becomes parallel
// over every loop, each addition an atomic read-modify-write.
//
//===----------------------------------------------------------------------===//

#include "GridMapping.h"

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_PARALLELIZELOOPNESTS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The loops of the perfect nest that `outer` begins, outermost first: each
/// loop's body holds the next loop alone. Empty when a loop carries values
/// or has a bound computed inside the nest.
static SmallVector<scf::ForOp> getPerfectNest(scf::ForOp outer) {
  SmallVector<scf::ForOp> nest = {outer};
  while (true) {
    Block *body = nest.back().getBody();
    if (!llvm::hasSingleElement(body->without_terminator()))
      break;
    auto inner = dyn_cast<scf::ForOp>(body->front());
    if (!inner)
      break;
    nest.push_back(inner);
  }
  for (scf::ForOp loop : nest)
    if (loop.getNumRegionIterArgs() != 0 ||
        !llvm::all_of(
            ValueRange{loop.getLowerBound(), loop.getUpperBound(),
                       loop.getStep()},
            [&](Value bound) { return outer.isDefinedOutsideOfLoop(bound); }))
      return {};
  return nest;
}

namespace {
/// A load or store: the op, its view and its indices.
struct Access {
  Operation *op;
  Value view;
  ValueRange indices;
};

/// The loads and stores of one buffer in a nest.
struct BufferAccesses {
  SmallVector<Access> accesses;
  bool written = false;
};

/// An update `store (addf (load B[i]), update), B[i]`.
struct Addition {
  memref::LoadOp load;
  arith::AddFOp add;
  memref::StoreOp store;
  Value update;
};
} // namespace

/// Whether each iteration of the loop whose induction variable is `iv`
/// touches its own elements of `buffer`: every access, through one view,
/// indexes one dimension, the same for all, with `iv` itself.
static bool isPartitionedBy(const BufferAccesses &buffer, Value iv) {
  Value view = buffer.accesses.front().view;
  unsigned rank = buffer.accesses.front().indices.size();
  for (unsigned dim = 0; dim < rank; ++dim)
    if (llvm::all_of(buffer.accesses, [&](const Access &access) {
          return access.view == view && access.indices[dim] == iv;
        }))
      return true;
  return false;
}

/// The loads and stores in `nest`'s body by the buffer they access, or
/// nullopt when the body has another memory effect.
static std::optional<llvm::MapVector<Value, BufferAccesses>>
getAccesses(scf::ForOp nest) {
  llvm::MapVector<Value, BufferAccesses> buffers;
  WalkResult walk = nest.getBody()->walk([&](Operation *op) {
    ValueRange indices;
    Value memref = amp::getScalarAccess(op, indices);
    if (!memref) {
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
                     isMemoryEffectFree(op)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    BufferAccesses &buffer =
        buffers[memref::skipViewLikeOps(cast<MemrefValue>(memref))];
    buffer.accesses.push_back({op, memref, indices});
    buffer.written |= isa<memref::StoreOp>(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return buffers;
}

/// `store` as an addition `store (addf (load B[i]), u), B[i]` whose load
/// feeds the addition alone, which feeds the store alone, at the same view
/// and indices; nullopt when it is not one.
static std::optional<Addition> getAddition(memref::StoreOp store) {
  auto add = store.getValueToStore().getDefiningOp<arith::AddFOp>();
  if (!add || !add->hasOneUse() || add.getLhs() == add.getRhs())
    return std::nullopt;
  for (auto [loaded, update] : {std::pair(add.getLhs(), add.getRhs()),
                                std::pair(add.getRhs(), add.getLhs())}) {
    auto load = loaded.getDefiningOp<memref::LoadOp>();
    if (load && load.getMemRef() == store.getMemRef() &&
        load.getIndices() == store.getIndices() && load->hasOneUse() &&
        load->getBlock() == store->getBlock())
      return Addition{load, add, store, update};
  }
  return std::nullopt;
}

/// The additions through which a nest writes `buffer` (its accesses
/// there), when the nest touches the buffer in no other way and its
/// elements are f32 or f64 (what NVPTX adds atomically); else empty.
static SmallVector<Addition> getAdditions(Value buffer,
                                          const BufferAccesses &accesses) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  if (!element.isF32() && !element.isF64())
    return {};
  SmallVector<Addition> additions;
  for (const Access &access : accesses.accesses) {
    auto store = dyn_cast<memref::StoreOp>(access.op);
    if (!store)
      continue;
    std::optional<Addition> addition = getAddition(store);
    if (!addition)
      return {};
    additions.push_back(*addition);
  }
  // Every access is one addition's load or store.
  if (accesses.accesses.size() != 2 * additions.size())
    return {};
  return additions;
}

/// Each addition as `memref.atomic_rmw addf u, B[i]`.
static void makeAtomic(RewriterBase &rewriter, ArrayRef<Addition> additions) {
  for (const Addition &addition : additions) {
    memref::StoreOp store = addition.store;
    rewriter.setInsertionPoint(store);
    memref::AtomicRMWOp::create(rewriter, store.getLoc(),
                                arith::AtomicRMWKind::addf, addition.update,
                                store.getMemRef(), store.getIndices());
    rewriter.eraseOp(store);
    rewriter.eraseOp(addition.add);
    rewriter.eraseOp(addition.load);
  }
}

/// Rewrites `nest` as an scf.parallel over its loops in `parallel` around
/// its other loops, in their order.
static void parallelize(RewriterBase &rewriter,
                        MutableArrayRef<scf::ForOp> nest,
                        const llvm::SmallBitVector &parallel) {
  scf::ForOp outer = nest.front();
  Location loc = outer.getLoc();
  SmallVector<Value> lowers, uppers, steps;
  for (auto [i, loop] : llvm::enumerate(nest))
    if (parallel.test(i)) {
      lowers.push_back(loop.getLowerBound());
      uppers.push_back(loop.getUpperBound());
      steps.push_back(loop.getStep());
    }
  rewriter.setInsertionPoint(outer);
  auto grid = scf::ParallelOp::create(rewriter, loc, lowers, uppers, steps);
  rewriter.setInsertionPointToStart(grid.getBody());
  unsigned next = 0;
  for (auto [i, loop] : llvm::enumerate(nest)) {
    Value iv = loop.getInductionVar();
    if (parallel.test(i)) {
      rewriter.replaceAllUsesWith(iv, grid.getInductionVars()[next++]);
      continue;
    }
    auto sequential = scf::ForOp::create(rewriter, loc, loop.getLowerBound(),
                                         loop.getUpperBound(), loop.getStep());
    rewriter.replaceAllUsesWith(iv, sequential.getInductionVar());
    rewriter.setInsertionPointToStart(sequential.getBody());
  }
  Block *body = nest.back().getBody();
  Operation *end = rewriter.getInsertionBlock()->getTerminator();
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator()))
    rewriter.moveOpBefore(&op, end);
  rewriter.eraseOp(outer);
}

namespace {
struct ParallelizeLoopNestsPass
    : amp::impl::ParallelizeLoopNestsBase<ParallelizeLoopNestsPass> {
  using ParallelizeLoopNestsBase::ParallelizeLoopNestsBase;

  void runOnOperation() override {
    SmallVector<SmallVector<scf::ForOp>> nests;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ParallelOp>(op))
        return WalkResult::skip();
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop)
        return WalkResult::advance();
      SmallVector<scf::ForOp> nest = getPerfectNest(loop);
      if (!nest.empty())
        nests.push_back(std::move(nest));
      return WalkResult::skip();
    });
    IRRewriter rewriter(&getContext());
    for (MutableArrayRef<scf::ForOp> nest : nests) {
      std::optional<llvm::MapVector<Value, BufferAccesses>> buffers =
          getAccesses(nest.back());
      if (!buffers)
        continue;
      llvm::SmallBitVector parallel(nest.size());
      for (auto [i, loop] : llvm::enumerate(nest)) {
        Value iv = loop.getInductionVar();
        parallel[i] = llvm::all_of(*buffers, [&](const auto &entry) {
          return !entry.second.written || isPartitionedBy(entry.second, iv);
        });
      }
      if (atomicUpdates && !parallel.all()) {
        // Every written buffer updated by additions only: all loops.
        SmallVector<Addition> additions;
        bool allAdditions = true;
        for (const auto &[buffer, accesses] : *buffers) {
          if (!accesses.written)
            continue;
          SmallVector<Addition> found = getAdditions(buffer, accesses);
          allAdditions &= !found.empty();
          llvm::append_range(additions, found);
        }
        if (allAdditions) {
          makeAtomic(rewriter, additions);
          parallel.set();
        }
      }
      if (parallel.any())
        parallelize(rewriter, nest, parallel);
    }
  }
};
} // namespace
