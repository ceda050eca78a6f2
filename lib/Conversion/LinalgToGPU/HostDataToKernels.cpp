//===- HostDataToKernels.cpp - Host reads and writes into kernels ---------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-host-data-to-kernels pass: what is left of a step on the host
// after bufferization besides linalg ops (buffer copies, the loops of
// scatters and other element-by-element code) would read and write the
// step's buffers from the CPU. Copies become linalg.copy ops, which
// amp-linalg-to-grid-loops tiles like any other; each independent part of
// a run of the other ops becomes a loop over one point, which that pass
// makes a grid of one thread or runs in another grid. Reads (and the scalar
// arithmetic on what they read) first sink to just before their first use,
// past ops that write other buffers, so that a read and the write that
// uses it fall in one run instead of two.
//
//===----------------------------------------------------------------------===//

#include "GridMapping.h"

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_HOSTDATATOKERNELS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Whether `op` holds work that gets kernels of its own or stays on the
/// host by design: linalg ops, grids (and amp-parallelize-loop-nests'
/// parallel loops, to be tiled into grids), calls (the runtime's GEMMs).
static bool holdsKernelOrCall(Operation *op) {
  WalkResult walk = op->walk([](Operation *nested) {
    return isa<linalg::LinalgOp, scf::ParallelOp, CallOpInterface>(nested)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// Whether `op` reads or writes buffer data, itself or in its regions, and
/// can move into a kernel whole.
static bool isHostDataAccess(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() || holdsKernelOrCall(op))
    return false;
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  return effects &&
         llvm::any_of(*effects, [](const MemoryEffects::EffectInstance &e) {
           return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
         });
}

/// Whether a result of `op` is used outside `run`.
static bool hasUseOutside(Operation *op, ArrayRef<Operation *> run) {
  for (Operation *user : op->getUsers())
    if (llvm::none_of(
            run, [&](Operation *member) { return member->isAncestor(user); }))
      return true;
  return false;
}

/// The buffer that `value` views: an allocation or a function argument.
static Value getBaseBuffer(Value value) {
  auto memref = dyn_cast<MemrefValue>(value);
  return memref ? memref::skipViewLikeOps(memref) : value;
}

/// Whether `op` only reads buffers, or computes without memory effects:
/// it can move later, past ops that do not write what it reads. `reads`
/// gets the buffers it reads.
static bool isReadOnly(Operation *op, SmallVectorImpl<Value> &reads) {
  if (op->getNumRegions() || op->hasTrait<OpTrait::IsTerminator>())
    return false;
  auto effecting = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effecting)
    return false;
  SmallVector<MemoryEffects::EffectInstance> effects;
  effecting.getEffects(effects);
  for (const MemoryEffects::EffectInstance &effect : effects) {
    if (!isa<MemoryEffects::Read>(effect.getEffect()) || !effect.getValue())
      return false;
    reads.push_back(getBaseBuffer(effect.getValue()));
  }
  return true;
}

/// Whether `op` may write one of `buffers`. Distinct allocations and
/// arguments do not overlap (a step's buffers are separate).
static bool mayWrite(Operation *op, ArrayRef<Value> buffers) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return true;
  return llvm::any_of(*effects, [&](const MemoryEffects::EffectInstance &e) {
    if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
      return false;
    return !e.getValue() ||
           llvm::is_contained(buffers, getBaseBuffer(e.getValue()));
  });
}

/// Sinks each load in `block`, and the effect-free ops that compute on
/// loaded values, to just before the first op that uses it, as long as no
/// op it passes may write what it reads.
static void sinkReads(Block &block) {
  // The sinkable ops in block order, with the buffers each reads.
  llvm::MapVector<Operation *, SmallVector<Value>> sinkable;
  for (Operation &op : block) {
    bool loads = isa<memref::LoadOp>(op);
    bool computesOnLoads = llvm::any_of(op.getOperands(), [&](Value v) {
      return sinkable.contains(v.getDefiningOp());
    });
    SmallVector<Value> reads;
    if ((loads || computesOnLoads) && isReadOnly(&op, reads))
      sinkable[&op] = std::move(reads);
  }
  for (auto &[op, reads] : llvm::reverse(sinkable)) {
    Operation *firstUser = nullptr;
    for (Operation *user : op->getUsers()) {
      Operation *inBlock = block.findAncestorOpInBlock(*user);
      if (inBlock && (!firstUser || inBlock->isBeforeInBlock(firstUser)))
        firstUser = inBlock;
    }
    if (!firstUser)
      continue;
    Operation *target = op;
    for (Operation *next = op->getNextNode(); next != firstUser;
         next = next->getNextNode()) {
      if (!reads.empty() && mayWrite(next, reads))
        break;
      target = next;
    }
    if (target != op)
      op->moveAfter(target);
  }
}

/// The buffers (allocations and arguments) that `op` touches, with whether
/// it writes them; nullopt when it may touch memory it does not name.
static std::optional<SmallVector<amp::MemrefUse>> getBufferUses(Operation *op) {
  std::optional<SmallVector<amp::MemrefUse>> uses = amp::getMemrefUses(op);
  if (uses)
    for (amp::MemrefUse &use : *uses)
      use.first = getBaseBuffer(use.first);
  return uses;
}

/// Whether two ops with these buffer uses touch a buffer that one of them
/// writes (or may touch any memory: nullopt).
static bool touchWritten(const std::optional<SmallVector<amp::MemrefUse>> &a,
                         const std::optional<SmallVector<amp::MemrefUse>> &b) {
  if (!a || !b)
    return true;
  for (const amp::MemrefUse &useA : *a)
    for (const amp::MemrefUse &useB : *b)
      if (useA.first == useB.first && (useA.second || useB.second))
        return true;
  return false;
}

/// For each op of `run` (consecutive ops of one block), the part it
/// belongs to, numbered in the order of the parts' first ops: two ops are
/// in one part when one uses what the other computes, or both touch a
/// buffer that one of them writes. The parts can run in any order.
static SmallVector<unsigned> getIndependentParts(ArrayRef<Operation *> run) {
  llvm::EquivalenceClasses<unsigned> classes;
  SmallVector<std::optional<SmallVector<amp::MemrefUse>>> uses;
  for (unsigned i = 0; i < run.size(); ++i) {
    classes.insert(i);
    uses.push_back(getBufferUses(run[i]));
    for (unsigned j = 0; j < i; ++j) {
      bool usesResult = llvm::any_of(run[j]->getUsers(), [&](Operation *user) {
        return run[i]->isAncestor(user);
      });
      if (usesResult || touchWritten(uses[i], uses[j]))
        classes.unionSets(i, j);
    }
  }
  SmallVector<unsigned> parts;
  llvm::DenseMap<unsigned, unsigned> numbers;
  for (unsigned i = 0; i < run.size(); ++i)
    parts.push_back(
        numbers.try_emplace(classes.getLeaderValue(i), numbers.size())
            .first->second);
  return parts;
}

namespace {
struct HostDataToKernelsPass
    : amp::impl::HostDataToKernelsBase<HostDataToKernelsPass> {

  /// Moves `run`, consecutive ops of one block, into one-point loops (grids
  /// of one thread once tiled): one per independent part (getIndependentParts),
  /// so that amp-linalg-to-grid-loops can run each with the work it is
  /// independent of. Constants stay outside: kernel outlining clones them.
  LogicalResult moveIntoGrids(RewriterBase &rewriter,
                              ArrayRef<Operation *> run) {
    SmallVector<Operation *> work =
        llvm::filter_to_vector(run, [](Operation *op) {
          return !op->hasTrait<OpTrait::ConstantLike>();
        });
    if (work.empty())
      return success();
    SmallVector<unsigned> parts = getIndependentParts(work);
    rewriter.setInsertionPoint(run.front());
    SmallVector<scf::ParallelOp> loops;
    for (auto [op, part] : llvm::zip(work, parts))
      if (part == loops.size())
        loops.push_back(amp::createOnePointLoop(rewriter, op->getLoc()));
    for (Operation *op : run)
      if (op->hasTrait<OpTrait::ConstantLike>())
        rewriter.moveOpBefore(op, loops.front());
    for (auto [op, part] : llvm::zip(work, parts))
      rewriter.moveOpBefore(op, loops[part].getBody()->getTerminator());
    return success();
  }

  /// Moves the runs of host data accesses in `block` into grids, and those
  /// of the blocks of ops that stay on the host.
  LogicalResult moveBlock(RewriterBase &rewriter, Block &block) {
    sinkReads(block);
    // A run takes the effect-free ops between its accesses (the arithmetic
    // on what they read), not those after its last access.
    SmallVector<Operation *> run, between;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isHostDataAccess(&op)) {
        run.append(between);
        between.clear();
        run.push_back(&op);
        continue;
      }
      if (!run.empty() && amp::isPlainOp(&op) &&
          !op.hasTrait<OpTrait::IsTerminator>()) {
        between.push_back(&op);
        continue;
      }
      between.clear();
      if (failed(moveRun(rewriter, run)))
        return failure();
      run.clear();
      // Linalg ops and grids (or loops to be tiled into grids) are kernels
      // whole; other ops that hold them stay on the host.
      if (holdsKernelOrCall(&op) && !isa<linalg::LinalgOp, scf::ParallelOp>(op))
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            if (failed(moveBlock(rewriter, nested)))
              return failure();
    }
    return moveRun(rewriter, run);
  }

  /// Moves `run` into grids, split around the ops whose results host code
  /// uses: those stay on the host, with a warning. An op whose results a
  /// later op of its own grid does not take all of stays too, so the ops
  /// are decided from the last: each one's grid ends at the next op that
  /// stays.
  LogicalResult moveRun(RewriterBase &rewriter, ArrayRef<Operation *> run) {
    SmallVector<bool> stays(run.size(), false);
    size_t end = run.size();
    for (size_t i = run.size(); i-- > 0;) {
      if (!hasUseOutside(run[i], run.slice(i + 1, end - i - 1)))
        continue;
      stays[i] = true;
      end = i;
      if (!isHostDataAccess(run[i]))
        continue; // arithmetic the host uses: its operands say why
      run[i]->emitWarning("reads or writes buffers on the host, which uses "
                          "its results: the step's buffers must be "
                          "host-accessible (CUDA managed memory)");
    }
    size_t start = 0;
    for (size_t i = 0; i <= run.size(); ++i) {
      if (i < run.size() && !stays[i])
        continue;
      if (failed(moveIntoGrids(rewriter, run.slice(start, i - start))))
        return failure();
      start = i + 1;
    }
    return success();
  }

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Copies first: they become linalg ops, and leave the runs.
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
    for (Block &block : getOperation().getBody())
      if (failed(moveBlock(rewriter, block)))
        return signalPassFailure();
  }
};
} // namespace
