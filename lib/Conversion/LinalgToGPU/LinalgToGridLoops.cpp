//===- LinalgToGridLoops.cpp - linalg ops to block and thread loops -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-linalg-to-grid-loops pass: each linalg op on memrefs becomes an
// scf.parallel of blocks around an scf.parallel of threads, mapped for
// convert-parallel-loops-to-gpu, with the op's reductions sequential in
// each thread.
//
//===----------------------------------------------------------------------===//

#include "GridMapping.h"

#include "amp/Conversion/OutputFills.h"
#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <numeric>

namespace mlir::amp {
#define GEN_PASS_DEF_LINALGTOGRIDLOOPS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Maps `loop`'s one dimension to `processor`.
static LogicalResult mapTo(scf::ParallelOp loop, gpu::Processor processor) {
  OpBuilder builder(loop);
  AffineMap identity = builder.getDimIdentityMap();
  return gpu::setMappingAttr(loop,
                             {builder.getAttr<gpu::ParallelLoopDimMappingAttr>(
                                 processor, identity, identity)});
}

LogicalResult amp::createSingleThreadGrid(RewriterBase &rewriter,
                                          Location loc) {
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto blocks = scf::ParallelOp::create(rewriter, loc, zero, one, one);
  rewriter.setInsertionPointToStart(blocks.getBody());
  auto threads = scf::ParallelOp::create(rewriter, loc, zero, one, one);
  rewriter.setInsertionPointToStart(threads.getBody());
  return success(succeeded(mapTo(blocks, gpu::Processor::BlockX)) &&
                 succeeded(mapTo(threads, gpu::Processor::ThreadX)));
}

/// The number of iterations of `loop`, when its bounds are constants.
static std::optional<int64_t> getStaticTripCount(scf::ParallelOp loop) {
  int64_t count = 1;
  for (auto [lower, upper, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> lb = getConstantIntValue(lower);
    std::optional<int64_t> ub = getConstantIntValue(upper);
    std::optional<int64_t> st = getConstantIntValue(step);
    if (!lb || !ub || !st || *st <= 0)
      return std::nullopt;
    count *= std::max<int64_t>(0, (*ub - *lb + *st - 1) / *st);
  }
  return count;
}

/// Collapses `loop`'s dimensions into one and tiles it into blocks of
/// threads.
static LogicalResult tileIntoGrid(RewriterBase &rewriter, scf::ParallelOp loop,
                                  int64_t blockSize) {
  std::optional<int64_t> tripCount = getStaticTripCount(loop);
  if (loop.getNumLoops() > 1) {
    std::vector<unsigned> all(loop.getNumLoops());
    std::iota(all.begin(), all.end(), 0);
    Operation *next = loop->getNextNode();
    collapseParallelLoops(rewriter, loop, {all});
    loop = cast<scf::ParallelOp>(next->getPrevNode());
  }
  int64_t threads = blockSize;
  if (tripCount)
    threads = std::clamp<int64_t>(*tripCount, 1, blockSize);
  auto [blocks, inner] =
      scf::tileParallelLoop(loop, {threads}, /*noMinMaxBounds=*/true);
  return success(succeeded(mapTo(blocks, gpu::Processor::BlockX)) &&
                 succeeded(mapTo(inner, gpu::Processor::ThreadX)));
}

/// `op` as a linalg.generic whose parallel dimensions come first.
static FailureOr<linalg::GenericOp>
genericWithParallelFirst(RewriterBase &rewriter, linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op.emitOpError("has no linalg.generic form to map to a grid");
    generic = *generalized;
  }
  SmallVector<unsigned> order;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::parallel)
      order.push_back(i);
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator != utils::IteratorType::parallel)
      order.push_back(i);
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return generic;
  return linalg::interchangeGenericOp(rewriter, generic, order);
}

/// The values of `map`'s results at `dims`.
static SmallVector<Value> applyMap(OpBuilder &builder, Location loc,
                                   AffineMap map, ValueRange dims) {
  SmallVector<Value> results;
  for (unsigned i = 0; i < map.getNumResults(); ++i)
    results.push_back(
        affine::AffineApplyOp::create(builder, loc, map.getSubMap({i}), dims));
  return results;
}

/// Whether `op`'s reductions can accumulate in registers: no output is
/// indexed by a reduction dimension, and no input reads an output's buffer
/// (whose value would change during the loop).
static bool canAccumulateInRegisters(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (op.getNumReductionLoops() == 0 ||
      op.getNumParallelLoops() + op.getNumReductionLoops() != op.getNumLoops())
    return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (auto [dim, iterator] : llvm::enumerate(iterators))
      if (!linalg::isParallelIterator(iterator) && map.isFunctionOfDim(dim))
        return false;
    Value buffer =
        memref::skipViewLikeOps(cast<TypedValue<MemRefType>>(init.get()));
    for (Value input : op.getDpsInputs())
      if (auto memref = dyn_cast<TypedValue<MemRefType>>(input))
        if (memref::skipViewLikeOps(memref) == buffer)
          return false;
  }
  return true;
}

/// Lowers `generic`, whose parallel dimensions come first, to an
/// scf.parallel over those dimensions (none when it has none) around
/// scf.for loops over its reductions that carry the outputs in iter_args:
/// each output is loaded once before the loops (or starts from its
/// `initialValues` entry, where not null) and stored once after, where
/// linalgOpToParallelLoops loads and stores it at every iteration (kept in
/// global memory on a GPU, since kernel pointers may alias).
static scf::ParallelOp
lowerWithRegisterAccumulators(RewriterBase &rewriter, linalg::GenericOp generic,
                              ArrayRef<Value> initialValues) {
  Location loc = generic.getLoc();
  unsigned numParallel = generic.getNumParallelLoops();
  SmallVector<Value> lowers, uppers, steps;
  for (Range range : cast<linalg::LinalgOp>(generic.getOperation())
                         .createLoopRanges(rewriter, loc)) {
    lowers.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.offset));
    uppers.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
    steps.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.stride));
  }
  auto parallelPart = [&](ArrayRef<Value> values) {
    return ValueRange(values.take_front(numParallel));
  };
  auto reductionPart = [&](ArrayRef<Value> values) {
    return ValueRange(values.drop_front(numParallel));
  };

  scf::ParallelOp parallel;
  SmallVector<Value> dims;
  if (numParallel > 0) {
    parallel =
        scf::ParallelOp::create(rewriter, loc, parallelPart(lowers),
                                parallelPart(uppers), parallelPart(steps));
    rewriter.setInsertionPointToStart(parallel.getBody());
    llvm::append_range(dims, parallel.getInductionVars());
  }
  // The outputs' indices use the parallel dimensions only; the reduction
  // dimensions' operands are placeholders.
  SmallVector<Value> outputDims = dims;
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  outputDims.resize(generic.getNumLoops(), zero);
  SmallVector<Value> initial;
  SmallVector<SmallVector<Value>> outputIndices;
  for (auto [i, init] : llvm::enumerate(generic.getDpsInitsMutable())) {
    outputIndices.push_back(applyMap(
        rewriter, loc, generic.getMatchingIndexingMap(&init), outputDims));
    initial.push_back(initialValues[i]
                          ? initialValues[i]
                          : memref::LoadOp::create(rewriter, loc, init.get(),
                                                   outputIndices.back()));
  }

  Block *body = generic.getBody();
  scf::LoopNest nest = scf::buildLoopNest(
      rewriter, loc, reductionPart(lowers), reductionPart(uppers),
      reductionPart(steps), initial,
      [&](OpBuilder &builder, Location loc, ValueRange reductionDims,
          ValueRange accumulators) -> scf::ValueVector {
        SmallVector<Value> allDims = dims;
        llvm::append_range(allDims, reductionDims);
        IRMapping mapping;
        for (OpOperand *input : generic.getDpsInputOperands()) {
          BlockArgument arg = generic.getMatchingBlockArgument(input);
          if (!isa<MemRefType>(input->get().getType())) {
            mapping.map(arg, input->get());
            continue;
          }
          if (arg.use_empty())
            continue;
          mapping.map(arg, memref::LoadOp::create(
                               builder, loc, input->get(),
                               applyMap(builder, loc,
                                        generic.getMatchingIndexingMap(input),
                                        allDims)));
        }
        for (auto [init, accumulator] :
             llvm::zip(generic.getDpsInitsMutable(), accumulators))
          mapping.map(generic.getMatchingBlockArgument(&init), accumulator);
        for (Operation &op : body->without_terminator()) {
          if (auto index = dyn_cast<linalg::IndexOp>(op)) {
            mapping.map(index.getResult(), allDims[index.getDim()]);
            continue;
          }
          builder.clone(op, mapping);
        }
        return llvm::map_to_vector(
            body->getTerminator()->getOperands(),
            [&](Value value) { return mapping.lookupOrDefault(value); });
      });
  for (auto [init, result, indices] :
       llvm::zip(generic.getDpsInits(), nest.results, outputIndices))
    memref::StoreOp::create(rewriter, loc, result, init, indices);
  return parallel;
}

/// For each output of `op` that a linalg.fill sets just before it, the
/// fill's value, with the fill added to `erased`; null for the others.
/// Only where `op` will accumulate in registers with outputs indexed by all
/// its parallel dimensions, so that it overwrites every output element.
static SmallVector<Value>
foldOutputFills(linalg::LinalgOp op, SmallVectorImpl<Operation *> &erased) {
  SmallVector<Value> values(op.getNumDpsInits());
  if (!canAccumulateInRegisters(op) ||
      llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
        AffineMap map = op.getMatchingIndexingMap(&init);
        return map.getNumResults() != op.getNumParallelLoops() ||
               !map.isProjectedPermutation();
      }))
    return values;
  for (auto [i, init] : llvm::enumerate(op.getDpsInits()))
    if (linalg::FillOp fill = amp::getFillOfOutput(op, init)) {
      values[i] = fill.getInputs().front();
      erased.push_back(fill);
    }
  return values;
}

namespace {
struct LinalgToGridLoopsPass
    : amp::impl::LinalgToGridLoopsBase<LinalgToGridLoopsPass> {
  using LinalgToGridLoopsBase::LinalgToGridLoopsBase;

  LogicalResult lowerToGrid(RewriterBase &rewriter, linalg::LinalgOp op,
                            ArrayRef<Value> initialValues) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic =
        genericWithParallelFirst(rewriter, op);
    if (failed(generic))
      return failure();
    unsigned numParallel = generic->getNumParallelLoops();
    if (numParallel == 0) {
      // A full reduction, or a scalar op: one thread does it all.
      if (failed(amp::createSingleThreadGrid(rewriter, generic->getLoc())))
        return failure();
      rewriter.moveOpBefore(*generic, rewriter.getInsertionBlock(),
                            rewriter.getInsertionPoint());
    }
    scf::ParallelOp outer;
    if (canAccumulateInRegisters(*generic)) {
      rewriter.setInsertionPoint(*generic);
      outer = lowerWithRegisterAccumulators(rewriter, *generic, initialValues);
    } else {
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, *generic);
      if (failed(loops))
        return generic->emitOpError("cannot be lowered to loops");
      if (numParallel > 0)
        outer = cast<scf::ParallelOp>(loops->front());
    }
    rewriter.eraseOp(*generic);
    if (numParallel == 0)
      return success();
    return tileIntoGrid(rewriter, outer, blockSize);
  }

  /// Checks the options once, before any function is rewritten.
  LogicalResult initialize(MLIRContext *context) override {
    if (blockSize >= 1 && blockSize <= 1024)
      return success();
    return emitError(UnknownLoc::get(context))
           << "amp-linalg-to-grid-loops: block-size must be in [1, 1024], "
              "got "
           << static_cast<int64_t>(blockSize);
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    SmallVector<scf::ParallelOp> loops;
    WalkResult walk =
        getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
            if (!loop->hasAttr(gpu::getMappingAttrName()))
              loops.push_back(loop);
            return WalkResult::skip();
          }
          auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
          if (!linalgOp)
            return WalkResult::advance();
          if (!linalgOp.hasPureBufferSemantics()) {
            op->emitOpError(
                "must be bufferized before amp-linalg-to-grid-loops");
            return WalkResult::interrupt();
          }
          ops.push_back(linalgOp);
          return WalkResult::skip();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : loops)
      if (failed(tileIntoGrid(rewriter, loop, blockSize)))
        return signalPassFailure();
    // Reductions start from the fills of their outputs, which go.
    SmallVector<Operation *> folded;
    SmallVector<SmallVector<Value>> initialValues;
    for (linalg::LinalgOp op : ops)
      initialValues.push_back(foldOutputFills(op, folded));
    llvm::SmallPtrSet<Operation *, 16> foldedSet(folded.begin(), folded.end());
    for (auto [op, values] : llvm::zip(ops, initialValues)) {
      if (foldedSet.contains(op.getOperation()))
        continue;
      if (failed(lowerToGrid(rewriter, op, values)))
        return signalPassFailure();
    }
    for (Operation *fill : folded)
      rewriter.eraseOp(fill);
    // Fold the index arithmetic, but not the loops: canonicalize would fold
    // a one-block loop away with its mapping.
    RewritePatternSet patterns(&getContext());
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
