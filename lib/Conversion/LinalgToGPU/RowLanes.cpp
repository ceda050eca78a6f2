//===- RowLanes.cpp - Rows of a grid shared by lanes ----------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// A grid loop whose iterations are rows (reductions over the row with the
// elementwise ops over its elements, as amp-linalg-to-grid-loops fuses
// them) tiled so that several threads, the lanes, share each row: each lane
// takes every `lanes`-th element of the row's loops, and a reduction's
// partial results meet in a scratch buffer of the block. The row's phases
// are consecutive thread loops of one block loop; amp-grid-phases-to-gpu
// puts a barrier between them on the GPU, and the scratch buffers in its
// shared memory.
//
//===----------------------------------------------------------------------===//

#include "GridMapping.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

/// The combiners of `loop`'s iter_args, when each has exactly one with a
/// neutral element and its body writes no memory.
static std::optional<amp::LaneReduction> matchLaneReduction(scf::ForOp loop) {
  std::optional<SmallVector<amp::MemrefUse>> uses = amp::getMemrefUses(loop);
  if (!uses ||
      llvm::any_of(*uses, [](const amp::MemrefUse &use) { return use.second; }))
    return std::nullopt;
  amp::LaneReduction reduction;
  SmallVector<BlockArgument> iterArgs =
      llvm::to_vector(loop.getRegionIterArgs());
  for (unsigned i = 0; i < iterArgs.size(); ++i) {
    SmallVector<Operation *> combiners;
    Value reduced = matchReduction(iterArgs, i, combiners);
    if (!reduced || combiners.size() != 1)
      return std::nullopt;
    std::optional<TypedAttr> neutral =
        arith::getNeutralElement(combiners.front());
    if (!neutral)
      return std::nullopt;
    reduction.combiners.push_back(combiners.front());
    reduction.reduced.push_back(reduced);
    reduction.neutral.push_back(*neutral);
  }
  return reduction;
}

/// Whether `index` is `iv`, or an affine.apply that gives it unchanged.
static bool isInductionVar(Value index, Value iv) {
  if (index == iv)
    return true;
  auto apply = index.getDefiningOp<affine::AffineApplyOp>();
  if (!apply)
    return false;
  auto dim = dyn_cast<AffineDimExpr>(apply.getAffineMap().getResult(0));
  return dim && apply.getMapOperands()[dim.getPosition()] == iv;
}

/// Whether the lanes of `loop` read and write along rows: an access in it
/// takes its induction variable as the last index, of a memref whose last
/// dimension is contiguous, and no access takes it elsewhere, so that
/// neighbouring lanes touch neighbouring elements.
static bool accessesAlongRows(scf::ForOp loop) {
  Value iv = loop.getInductionVar();
  bool along = false;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    ValueRange indices;
    Value memref = amp::getScalarAccess(op, indices);
    if (!memref)
      return WalkResult::advance();
    for (auto [i, index] : llvm::enumerate(indices)) {
      if (!isInductionVar(index, iv))
        continue;
      SmallVector<int64_t> strides;
      int64_t offset;
      if (i + 1 != indices.size() ||
          failed(cast<MemRefType>(memref.getType())
                     .getStridesAndOffset(strides, offset)) ||
          strides.back() != 1)
        return WalkResult::interrupt();
      along = true;
    }
    return WalkResult::advance();
  });
  return along && !walk.wasInterrupted();
}

/// Whether `op` runs wherever its value is needed: a load, or a plain op.
static bool runsWhereNeeded(Operation *op) {
  return isa<memref::LoadOp>(op) || amp::isPlainOp(op);
}

/// Whether `load`, an op of `body`, gives the same value wherever a phase
/// needs it: no op of `body` between it and an op that needs its value
/// (directly, through ops that run where needed, or through a reduction's
/// initial value) writes its memory, nor does a lane loop that needs it,
/// whose other lanes run beside the load.
static bool isLoadStable(memref::LoadOp load, Block *body,
                         const amp::RowPlan &plan) {
  Value memref = load.getMemRef();
  SmallVector<Value> worklist = {load.getResult()};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = body->findAncestorOpInBlock(*use.getOwner());
      if (!user || !seen.insert(user).second)
        continue;
      auto loop = dyn_cast<scf::ForOp>(user);
      bool isInit = loop && use.getOwner() == user &&
                    llvm::is_contained(loop.getInitArgsMutable(), use);
      if (runsWhereNeeded(user) || isInit) {
        llvm::append_range(worklist, user->getResults());
        if (!isInit)
          continue;
      }
      if (amp::isWrittenBetween(load, user, memref) ||
          (isa<scf::ForOp>(user) && amp::mayWrite(user, memref)))
        return false;
    }
  }
  return true;
}

std::optional<amp::RowPlan> amp::planRowLanes(scf::ParallelOp rows,
                                              ArrayRef<Operation *> laneLoops,
                                              int64_t lanes) {
  if (lanes < 2 || !rows.getInitVals().empty())
    return std::nullopt;
  for (Value bound : llvm::concat<Value>(rows.getLowerBound(),
                                         rows.getUpperBound(), rows.getStep()))
    if (!getConstantIntValue(bound))
      return std::nullopt;
  llvm::SmallPtrSet<Operation *, 8> laneLoopSet(laneLoops.begin(),
                                                laneLoops.end());
  amp::RowPlan plan;
  int64_t longest = 0;
  Block *body = rows.getBody();
  for (Operation &op : body->without_terminator()) {
    if (laneLoopSet.contains(&op)) {
      auto loop = cast<scf::ForOp>(op);
      if (!accessesAlongRows(loop))
        return std::nullopt;
      if (loop.getNumResults() > 0) {
        std::optional<amp::LaneReduction> reduction = matchLaneReduction(loop);
        if (!reduction)
          return std::nullopt;
        plan.reductions[loop] = std::move(*reduction);
      }
      if (std::optional<APInt> count = loop.getStaticTripCount())
        longest = std::max(longest, count->getSExtValue());
      plan.phases.push_back({loop, {}});
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (plan.phases.empty() || plan.phases.back().laneLoop)
        plan.phases.emplace_back();
      plan.phases.back().stores.push_back(store);
      continue;
    }
    if (!runsWhereNeeded(&op))
      return std::nullopt;
  }
  if (plan.reductions.empty() || longest < lanes)
    return std::nullopt;
  for (auto load : body->getOps<memref::LoadOp>())
    if (!isLoadStable(load, body, plan))
      return std::nullopt;
  return plan;
}

namespace {
/// Builds the phases of a row shared by lanes: each phase's values from the
/// old body, cloned where the phase needs them.
class RowPhaseBuilder {
public:
  RowPhaseBuilder(RewriterBase &rewriter, scf::ParallelOp rows,
                  const amp::RowPlan &plan, int64_t lanes)
      : rewriter(rewriter), rows(rows), plan(plan), lanes(lanes) {}

  /// Builds one thread loop per phase of `plan` at the rewriter's insertion
  /// point (in a block of `block`'s `rowsPerBlock` rows, of `total`), with
  /// `scratch` holding each reduction's partial results per thread.
  void build(Value block, int64_t rowsPerBlock, int64_t total,
             const llvm::DenseMap<Operation *, SmallVector<Value>> &scratch);

private:
  /// The value of `value` in the current phase, cloning the ops of the old
  /// body that define it (a reduction's lanes combined) where needed.
  Value materialize(Value value);

  /// Maps `loop`'s results to its lanes' partial results combined (in lane
  /// order, from its initial values).
  void combineLanes(scf::ForOp loop);

  /// Clones `loop`, a lane loop, for this lane: from `lower + lane * step`
  /// by `step * lanes`; a reduction's partial results start from the
  /// neutral elements and go to its scratch buffers.
  void cloneLaneLoop(scf::ForOp loop);

  RewriterBase &rewriter;
  scf::ParallelOp rows;
  const amp::RowPlan &plan;
  int64_t lanes;
  const llvm::DenseMap<Operation *, SmallVector<Value>> *scratch = nullptr;
  // The current phase's values.
  IRMapping mapping;
  Value thread, lane, rowStart;
};
} // namespace

Value RowPhaseBuilder::materialize(Value value) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != rows.getBody())
    return value; // defined above the rows
  if (auto loop = dyn_cast<scf::ForOp>(def)) {
    combineLanes(loop);
    return mapping.lookup(value);
  }
  for (Value operand : def->getOperands())
    materialize(operand);
  return rewriter.clone(*def, mapping)
      ->getResult(cast<OpResult>(value).getResultNumber());
}

void RowPhaseBuilder::combineLanes(scf::ForOp loop) {
  Location loc = loop.getLoc();
  const amp::LaneReduction &reduction = plan.reductions.at(loop);
  SmallVector<Value> initial = llvm::map_to_vector(
      loop.getInitArgs(), [&](Value init) { return materialize(init); });
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value count = arith::ConstantIndexOp::create(rewriter, loc, lanes);
  const SmallVector<Value> &buffers = scratch->at(loop);
  auto combined = scf::ForOp::create(
      rewriter, loc, zero, count, one, initial,
      [&](OpBuilder &builder, Location loc, Value other, ValueRange partial) {
        Value index = arith::AddIOp::create(builder, loc, rowStart, other);
        SmallVector<Value> results;
        for (auto [i, buffer] : llvm::enumerate(buffers)) {
          IRMapping combine;
          combine.map(loop.getRegionIterArgs()[i], partial[i]);
          combine.map(reduction.reduced[i],
                      memref::LoadOp::create(builder, loc, buffer, index));
          results.push_back(
              builder.clone(*reduction.combiners[i], combine)->getResult(0));
        }
        scf::YieldOp::create(builder, loc, results);
      });
  mapping.map(loop.getResults(), combined.getResults());
}

void RowPhaseBuilder::cloneLaneLoop(scf::ForOp loop) {
  Location loc = loop.getLoc();
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  used.insert_range(loop->getOperands());
  for (Value value : used)
    materialize(value);
  Value step = mapping.lookupOrDefault(loop.getStep());
  Value lower = arith::AddIOp::create(
      rewriter, loc, mapping.lookupOrDefault(loop.getLowerBound()),
      arith::MulIOp::create(rewriter, loc, lane, step));
  Value stride = arith::MulIOp::create(
      rewriter, loc, step,
      arith::ConstantIndexOp::create(rewriter, loc, lanes));
  auto found = plan.reductions.find(loop);
  SmallVector<Value> neutral;
  if (found != plan.reductions.end())
    for (TypedAttr value : found->second.neutral)
      neutral.push_back(arith::ConstantOp::create(rewriter, loc, value));
  auto lanesShared = cast<scf::ForOp>(rewriter.clone(*loop, mapping));
  lanesShared.setLowerBound(lower);
  lanesShared.setStep(stride);
  if (found == plan.reductions.end())
    return;
  // Each lane's partial results start from the neutral elements.
  for (auto [init, value] :
       llvm::zip(lanesShared.getInitArgsMutable(), neutral))
    init.set(value);
  for (auto [result, buffer] :
       llvm::zip(lanesShared.getResults(), scratch->at(loop)))
    memref::StoreOp::create(rewriter, loc, result, buffer, thread);
}

void RowPhaseBuilder::build(
    Value block, int64_t rowsPerBlock, int64_t total,
    const llvm::DenseMap<Operation *, SmallVector<Value>> &scratchBuffers) {
  scratch = &scratchBuffers;
  Location loc = rows.getLoc();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  int64_t threads = rowsPerBlock * lanes;
  for (const amp::RowPhase &phase : plan.phases) {
    mapping.clear();
    auto loop = scf::ParallelOp::create(rewriter, loc, constant(0),
                                        constant(threads), constant(1));
    (void)amp::mapToProcessor(loop, gpu::Processor::ThreadX);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    thread = loop.getInductionVars().front();
    Value rowInBlock =
        arith::DivUIOp::create(rewriter, loc, thread, constant(lanes));
    lane = arith::RemUIOp::create(rewriter, loc, thread, constant(lanes));
    rowStart =
        arith::MulIOp::create(rewriter, loc, rowInBlock, constant(lanes));
    Value row = arith::AddIOp::create(rewriter, loc, block, rowInBlock);
    if (total % rowsPerBlock != 0) {
      Value inside = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, row, constant(total));
      auto ifInside = scf::IfOp::create(rewriter, loc, inside,
                                        /*withElseRegion=*/false);
      rewriter.setInsertionPoint(ifInside.thenBlock()->getTerminator());
    }
    mapping.map(rows.getInductionVars(),
                amp::delinearizeIndex(rewriter, loc, rows, row));
    if (phase.laneLoop) {
      cloneLaneLoop(cast<scf::ForOp>(phase.laneLoop));
      continue;
    }
    // One lane stores the row's own elements, with the values it needs.
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        lane, constant(0));
    auto ifFirst =
        scf::IfOp::create(rewriter, loc, first, /*withElseRegion=*/false);
    rewriter.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
    for (Operation *store : phase.stores) {
      for (Value operand : store->getOperands())
        materialize(operand);
      rewriter.clone(*store, mapping);
    }
  }
}

scf::ParallelOp amp::tileRowsIntoLanes(RewriterBase &rewriter,
                                       scf::ParallelOp rows,
                                       const RowPlan &plan, int64_t lanes,
                                       int64_t blockSize) {
  Location loc = rows.getLoc();
  int64_t total = *getStaticTripCount(rows);
  int64_t rowsPerBlock = std::clamp<int64_t>(blockSize / lanes, 1, total);
  rewriter.setInsertionPoint(rows);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto blocks = scf::ParallelOp::create(
      rewriter, loc, constant(0), constant(total), constant(rowsPerBlock));
  (void)mapToProcessor(blocks, gpu::Processor::BlockX);
  rewriter.setInsertionPointToStart(blocks.getBody());
  // The scratch buffers belong to the block (on a GPU, its shared memory).
  llvm::DenseMap<Operation *, SmallVector<Value>> scratch;
  for (const RowPhase &phase : plan.phases) {
    if (!phase.laneLoop)
      continue;
    for (Value result : phase.laneLoop->getResults())
      scratch[phase.laneLoop].push_back(memref::AllocOp::create(
          rewriter, loc,
          MemRefType::get({rowsPerBlock * lanes}, result.getType())));
  }
  RowPhaseBuilder(rewriter, rows, plan, lanes)
      .build(blocks.getInductionVars().front(), rowsPerBlock, total, scratch);
  for (const RowPhase &phase : plan.phases)
    if (phase.laneLoop)
      for (Value buffer : scratch.lookup(phase.laneLoop))
        memref::DeallocOp::create(rewriter, loc, buffer);
  rewriter.eraseOp(rows);
  return blocks;
}
