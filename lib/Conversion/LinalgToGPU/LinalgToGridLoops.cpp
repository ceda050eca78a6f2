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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include <numeric>

namespace mlir::amp {
#define GEN_PASS_DEF_LINALGTOGRIDLOOPS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The threads that run in lockstep on NVIDIA GPUs.
static constexpr int64_t kWarpSize = 32;
/// How many loops past the next one a loop looks for one to fuse into.
static constexpr size_t kFusionLookAhead = 4;

bool amp::isPlainOp(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

Value amp::getScalarAccess(Operation *op, ValueRange &indices) {
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    indices = load.getIndices();
    return load.getMemRef();
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    indices = store.getIndices();
    return store.getMemRef();
  }
  return nullptr;
}

LogicalResult amp::mapToProcessor(scf::ParallelOp loop,
                                  gpu::Processor processor) {
  OpBuilder builder(loop);
  AffineMap identity = builder.getDimIdentityMap();
  return gpu::setMappingAttr(loop,
                             {builder.getAttr<gpu::ParallelLoopDimMappingAttr>(
                                 processor, identity, identity)});
}

scf::ParallelOp amp::createOnePointLoop(OpBuilder &builder, Location loc) {
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  return scf::ParallelOp::create(builder, loc, zero, one, one);
}

std::optional<int64_t> amp::getStaticTripCount(scf::ParallelOp loop) {
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

SmallVector<Value> amp::delinearizeIndex(OpBuilder &builder, Location loc,
                                         scf::ParallelOp loop, Value linear) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  SmallVector<Value> indices(loop.getNumLoops());
  for (int64_t dim = loop.getNumLoops() - 1; dim >= 0; --dim) {
    int64_t lower = *getConstantIntValue(loop.getLowerBound()[dim]);
    int64_t upper = *getConstantIntValue(loop.getUpperBound()[dim]);
    int64_t step = *getConstantIntValue(loop.getStep()[dim]);
    Value index = linear;
    if (dim > 0) {
      Value size = constant(llvm::divideCeil(upper - lower, step));
      index = arith::RemUIOp::create(builder, loc, linear, size);
      linear = arith::DivUIOp::create(builder, loc, linear, size);
    }
    index = arith::MulIOp::create(builder, loc, index, constant(step));
    indices[dim] = arith::AddIOp::create(builder, loc, index, constant(lower));
  }
  return indices;
}

/// Collapses `loop`'s dimensions into one and tiles it into blocks of
/// threads.
static LogicalResult tileIntoGrid(RewriterBase &rewriter, scf::ParallelOp loop,
                                  int64_t blockSize) {
  std::optional<int64_t> tripCount = amp::getStaticTripCount(loop);
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
  return success(
      succeeded(amp::mapToProcessor(blocks, gpu::Processor::BlockX)) &&
      succeeded(amp::mapToProcessor(inner, gpu::Processor::ThreadX)));
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

/// Clones the ops of `body`, a linalg.generic's, with its block arguments
/// mapped in `mapping` and `linalg.index` taken from `dims` (the loops'
/// values); returns the values it yields.
static SmallVector<Value> cloneBody(OpBuilder &builder, Block *body,
                                    IRMapping &mapping, ValueRange dims) {
  for (Operation &op : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(index.getResult(), dims[index.getDim()]);
      continue;
    }
    builder.clone(op, mapping);
  }
  return llvm::map_to_vector(
      body->getTerminator()->getOperands(),
      [&](Value value) { return mapping.lookupOrDefault(value); });
}

/// The lower bounds, upper bounds and steps of `generic`'s loops.
static void getLoopBounds(RewriterBase &rewriter, linalg::GenericOp generic,
                          SmallVectorImpl<Value> &lowers,
                          SmallVectorImpl<Value> &uppers,
                          SmallVectorImpl<Value> &steps) {
  Location loc = generic.getLoc();
  for (Range range : cast<linalg::LinalgOp>(generic.getOperation())
                         .createLoopRanges(rewriter, loc)) {
    lowers.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.offset));
    uppers.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
    steps.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.stride));
  }
}

/// Whether the subviews `a` and `b` of one memref (not rank-reducing, with
/// static offsets, sizes and strides) cover disjoint ranges of one of its
/// dimensions: the slices of a concatenation.
static bool areDisjointSubviews(memref::SubViewOp a, memref::SubViewOp b) {
  if (a.getSource() != b.getSource() ||
      a.getType().getRank() != a.getSourceType().getRank() ||
      b.getType().getRank() != b.getSourceType().getRank())
    return false;
  for (int64_t dim = 0; dim < a.getType().getRank(); ++dim) {
    auto range = [&](memref::SubViewOp view)
        -> std::optional<std::pair<int64_t, int64_t>> {
      std::optional<int64_t> offset =
          getConstantIntValue(view.getMixedOffsets()[dim]);
      std::optional<int64_t> size =
          getConstantIntValue(view.getMixedSizes()[dim]);
      std::optional<int64_t> stride =
          getConstantIntValue(view.getMixedStrides()[dim]);
      if (!offset || !size || !stride || *stride < 0)
        return std::nullopt;
      return std::make_pair(*offset, *offset + (*size - 1) * *stride);
    };
    auto rangeA = range(a), rangeB = range(b);
    if (rangeA && rangeB &&
        (rangeA->second < rangeB->first || rangeB->second < rangeA->first))
      return true;
  }
  return false;
}

/// Whether two memrefs may share memory: views of one buffer, unless they
/// are disjoint subviews of it. The step's arguments are distinct buffers
/// (docs/AmpCompile.md).
static bool mayShareMemory(Value a, Value b) {
  if (memref::skipViewLikeOps(cast<MemrefValue>(a)) !=
      memref::skipViewLikeOps(cast<MemrefValue>(b)))
    return false;
  auto subviewA = a.getDefiningOp<memref::SubViewOp>();
  auto subviewB = b.getDefiningOp<memref::SubViewOp>();
  return !subviewA || !subviewB || !areDisjointSubviews(subviewA, subviewB);
}

/// The memrefs that `op`'s body uses from above (a gather's table, read by
/// `memref.load` at computed indices): accesses that no indexing map
/// describes.
static SmallVector<Value> getCapturedMemrefs(linalg::LinalgOp op) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(op->getRegion(0), used);
  return llvm::filter_to_vector(
      used, [](Value value) { return isa<MemRefType>(value.getType()); });
}

/// Whether `op`'s reductions can accumulate in registers: no output is
/// indexed by a reduction dimension, and no input (nor the body, through a
/// memref from above) reads an output's buffer, whose value would change
/// during the loop.
static bool canAccumulateInRegisters(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (op.getNumReductionLoops() == 0 ||
      op.getNumParallelLoops() + op.getNumReductionLoops() != op.getNumLoops())
    return false;
  SmallVector<Value> reads = getCapturedMemrefs(op);
  for (Value input : op.getDpsInputs())
    if (isa<MemRefType>(input.getType()))
      reads.push_back(input);
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (auto [dim, iterator] : llvm::enumerate(iterators))
      if (!linalg::isParallelIterator(iterator) && map.isFunctionOfDim(dim))
        return false;
    for (Value read : reads)
      if (mayShareMemory(read, init.get()))
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
/// global memory on a GPU, since kernel pointers may alias). Adds the
/// reduction's loop to `laneLoops` when it is one loop in a parallel one.
static scf::ParallelOp
lowerWithRegisterAccumulators(RewriterBase &rewriter, linalg::GenericOp generic,
                              ArrayRef<Value> initialValues,
                              SmallVectorImpl<Operation *> &laneLoops) {
  Location loc = generic.getLoc();
  unsigned numParallel = generic.getNumParallelLoops();
  SmallVector<Value> lowers, uppers, steps;
  getLoopBounds(rewriter, generic, lowers, uppers, steps);
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
        return cloneBody(builder, body, mapping, allDims);
      });
  for (auto [init, result, indices] :
       llvm::zip(generic.getDpsInits(), nest.results, outputIndices))
    memref::StoreOp::create(rewriter, loc, result, init, indices);
  if (parallel && nest.loops.size() == 1)
    laneLoops.push_back(nest.loops.front());
  return parallel;
}

/// Whether `operand` of `generic` (whose innermost loop is `inner`) is read
/// and written in pairs: a 16-bit float memref indexed by `inner` as its
/// contiguous last dimension only, with an even offset and even strides
/// elsewhere, so that an even index of `inner` is 4-byte aligned.
static bool isPairedOperand(linalg::GenericOp generic, OpOperand &operand,
                            unsigned inner) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || type.getRank() == 0 || !isa<FloatType>(type.getElementType()) ||
      type.getElementTypeBitWidth() != 16)
    return false;
  AffineMap map = generic.getMatchingIndexingMap(&operand);
  AffineExpr innerExpr = getAffineDimExpr(inner, generic.getContext());
  for (unsigned i = 0; i + 1 < map.getNumResults(); ++i)
    if (map.getResult(i).isFunctionOfDim(inner))
      return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (map.getResults().back() != innerExpr ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset % 2 != 0 || strides.back() != 1)
    return false;
  return llvm::all_of(ArrayRef(strides).drop_back(), [](int64_t stride) {
    return !ShapedType::isDynamic(stride) && stride % 2 == 0;
  });
}

/// Whether `generic` (parallel dimensions first) is elementwise on 16-bit
/// floats with an innermost loop of even static size: one thread can take
/// two adjacent elements of it, its paired operands (isPairedOperand) with
/// one 32-bit access each.
static bool canLowerInPairs(linalg::GenericOp generic) {
  if (generic.getNumLoops() == 0 || generic.getNumReductionLoops() != 0)
    return false;
  SmallVector<int64_t> sizes = generic.getStaticLoopRanges();
  if (ShapedType::isDynamic(sizes.back()) || sizes.back() % 2 != 0)
    return false;
  unsigned inner = generic.getNumLoops() - 1;
  return llvm::any_of(generic->getOpOperands(), [&](OpOperand &operand) {
    return isPairedOperand(generic, operand, inner);
  });
}

/// Lowers `generic` (canLowerInPairs) to an scf.parallel whose innermost
/// dimension steps by 2: each iteration computes the body for the
/// elements i and i + 1 of that dimension, paired operands loaded and
/// stored as one 4-byte aligned vector<2xT>, the others per element.
static scf::ParallelOp lowerInPairs(RewriterBase &rewriter,
                                    linalg::GenericOp generic) {
  Location loc = generic.getLoc();
  SmallVector<Value> lowers, uppers, steps;
  getLoopBounds(rewriter, generic, lowers, uppers, steps);
  unsigned inner = generic.getNumLoops() - 1;
  steps.back() = arith::ConstantIndexOp::create(rewriter, loc, 2);
  auto parallel = scf::ParallelOp::create(rewriter, loc, lowers, uppers, steps);
  rewriter.setInsertionPointToStart(parallel.getBody());
  SmallVector<Value> dims[2];
  dims[0] = llvm::to_vector(parallel.getInductionVars());
  dims[1] = dims[0];
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  dims[1][inner] = arith::AddIOp::create(rewriter, loc, dims[0][inner], one);

  // The paired operands' vectors, loaded once at the even element.
  auto alignment = llvm::MaybeAlign(4);
  IRMapping mappings[2];
  Block *body = generic.getBody();
  for (OpOperand *input : generic.getDpsInputOperands()) {
    BlockArgument arg = generic.getMatchingBlockArgument(input);
    Value memref = input->get();
    if (!isa<MemRefType>(memref.getType())) {
      mappings[0].map(arg, memref);
      mappings[1].map(arg, memref);
      continue;
    }
    if (arg.use_empty())
      continue;
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (isPairedOperand(generic, *input, inner)) {
      auto type = VectorType::get({2}, arg.getType());
      Value pair = vector::LoadOp::create(rewriter, loc, type, memref,
                                          applyMap(rewriter, loc, map, dims[0]),
                                          /*nontemporal=*/false, alignment);
      for (int64_t i : {0, 1})
        mappings[i].map(arg, vector::ExtractOp::create(rewriter, loc, pair, i));
      continue;
    }
    for (int64_t i : {0, 1})
      mappings[i].map(
          arg, memref::LoadOp::create(rewriter, loc, memref,
                                      applyMap(rewriter, loc, map, dims[i])));
  }
  // The body once per element; an output's current value is read only
  // where the body uses it.
  SmallVector<Value> results[2];
  for (int64_t i : {0, 1}) {
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      BlockArgument arg = generic.getMatchingBlockArgument(&init);
      if (!arg.use_empty())
        mappings[i].map(
            arg, memref::LoadOp::create(
                     rewriter, loc, init.get(),
                     applyMap(rewriter, loc,
                              generic.getMatchingIndexingMap(&init), dims[i])));
    }
    results[i] = cloneBody(rewriter, body, mappings[i], dims[i]);
  }
  for (auto [index, init] : llvm::enumerate(generic.getDpsInitsMutable())) {
    AffineMap map = generic.getMatchingIndexingMap(&init);
    if (isPairedOperand(generic, init, inner)) {
      Value pair = vector::FromElementsOp::create(
          rewriter, loc, VectorType::get({2}, results[0][index].getType()),
          ValueRange{results[0][index], results[1][index]});
      vector::StoreOp::create(rewriter, loc, pair, init.get(),
                              applyMap(rewriter, loc, map, dims[0]),
                              /*nontemporal=*/false, alignment);
      continue;
    }
    for (int64_t i : {0, 1})
      memref::StoreOp::create(rewriter, loc, results[i][index], init.get(),
                              applyMap(rewriter, loc, map, dims[i]));
  }
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
/// One memref operand of an op lowered to a parallel loop: the memref, its
/// indexing map (parallel dimensions first) and whether the op writes it.
struct BufferAccess {
  Value memref;
  AffineMap map;
  bool writes;
};

/// A linalg op lowered to an unmapped parallel loop over its parallel
/// dimensions, with its memref operands (indexing maps over the op's loops,
/// the first `numParallel` those of the parallel loop); ops fused into it
/// add theirs. `serialIterations`: the trip count of the longest sequential
/// loop (a reduction's) that one of its ops runs in an iteration, 0 when
/// unknown. `laneLoops`: the scf.for loops in its body whose iterations
/// may run on several threads, and `rowPlan` how they will
/// (amp::planRowLanes), when they will.
struct LoweredLoop {
  scf::ParallelOp loop;
  unsigned numParallel;
  SmallVector<BufferAccess> accesses;
  int64_t serialIterations;
  SmallVector<Operation *> laneLoops = {};
  std::unique_ptr<amp::RowPlan> rowPlan = nullptr;
};

/// Independent loops to run as one (fuseIndependentLoops) where the first
/// member is: the members, the values they use from above with the bytes
/// of kernel parameters those take, and the ops between the first member
/// and a later one that define values it uses (allocations, views), which
/// move up with it.
struct IndependentRun {
  SmallVector<const LoweredLoop *> members;
  llvm::DenseSet<Value> parameters;
  int64_t parameterBytes = 0;
  SmallVector<Operation *> hoisted;
};
} // namespace

/// `generic`'s memref operands as accesses, and the memrefs its body uses
/// from above (a gather's table, loaded at computed indices) without a map:
/// any iteration may touch any of their elements.
static SmallVector<BufferAccess> getBufferAccesses(linalg::GenericOp generic) {
  SmallVector<BufferAccess> accesses;
  for (OpOperand &operand : generic->getOpOperands())
    if (isa<MemRefType>(operand.get().getType()))
      accesses.push_back({operand.get(),
                          generic.getMatchingIndexingMap(&operand),
                          generic.isDpsInit(&operand)});
  for (Value memref : getCapturedMemrefs(generic)) {
    bool writes = llvm::any_of(memref.getUsers(), [&](Operation *user) {
      return generic->isProperAncestor(user) && !isa<memref::LoadOp>(user);
    });
    accesses.push_back({memref, AffineMap(), writes});
  }
  return accesses;
}

/// The memrefs from above that `loop`'s body reads and writes (a scatter's
/// nest, a scalar store that amp-host-data-to-kernels moved into a loop),
/// without maps: any iteration may touch any of their elements. Nullopt
/// when an op in it may touch memory it does not name.
static std::optional<SmallVector<BufferAccess>>
getLoopAccesses(scf::ParallelOp loop) {
  std::optional<SmallVector<amp::MemrefUse>> uses = amp::getMemrefUses(loop);
  if (!uses)
    return std::nullopt;
  SmallVector<BufferAccess> accesses;
  for (auto [memref, writes] : *uses)
    if (!loop->isAncestor(memref.getParentRegion()->getParentOp()))
      accesses.push_back({memref, AffineMap(), writes});
  return accesses;
}

/// For each of the first `numParallel` dimensions of `map` (the parallel
/// loop's), the first result that is that dimension alone, when each has
/// one: iteration `i` of the parallel loop touches only elements whose
/// coordinates at those results are `i`, which no other iteration touches.
static std::optional<SmallVector<unsigned>>
getPartitionResults(AffineMap map, unsigned numParallel) {
  if (!map)
    return std::nullopt;
  SmallVector<unsigned> results;
  for (unsigned dim = 0; dim < numParallel; ++dim) {
    AffineExpr expr = getAffineDimExpr(dim, map.getContext());
    auto found = llvm::find(map.getResults(), expr);
    if (found == map.getResults().end())
      return std::nullopt;
    results.push_back(std::distance(map.getResults().begin(), found));
  }
  return results;
}

/// Whether `a` and `b` are the same memref: one value, or equal views (the
/// same op on the same memref, e.g. the collapses of one buffer that
/// dropping unit dimensions made for two ops).
static bool isSameMemref(Value a, Value b) {
  if (a == b)
    return true;
  Operation *defA = a.getDefiningOp<ViewLikeOpInterface>();
  Operation *defB = b.getDefiningOp<ViewLikeOpInterface>();
  return defA && defB &&
         cast<OpResult>(a).getResultNumber() ==
             cast<OpResult>(b).getResultNumber() &&
         OperationEquivalence::isEquivalentTo(
             defA, defB,
             [](Value lhs, Value rhs) {
               return success(isa<MemRefType>(lhs.getType())
                                  ? isSameMemref(lhs, rhs)
                                  : lhs == rhs);
             },
             /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// Whether the parallel loops `first` and `second`, over the same points
/// (their first `numParallel` dimensions), can run as one: every element
/// one writes and the other touches is the same memref, partitioned by the
/// parallel dimensions at the same results in both, so each iteration
/// depends on itself only; or both run over one point, in one thread.
static bool canFuseAccesses(const LoweredLoop &first, const LoweredLoop &second,
                            unsigned numParallel) {
  if (numParallel == 0)
    return true; // one thread runs both, in order
  for (const BufferAccess &a : first.accesses)
    for (const BufferAccess &b : second.accesses) {
      if ((!a.writes && !b.writes) || !mayShareMemory(a.memref, b.memref))
        continue;
      if (!isSameMemref(a.memref, b.memref))
        return false;
      std::optional<SmallVector<unsigned>> resultsA =
          getPartitionResults(a.map, numParallel);
      std::optional<SmallVector<unsigned>> resultsB =
          getPartitionResults(b.map, numParallel);
      if (!resultsA || !resultsB || *resultsA != *resultsB)
        return false;
    }
  return true;
}

/// Whether `second`'s first dimensions iterate over the same points as
/// all of `first`'s: equal bounds and steps.
static bool startsWithIterationSpace(scf::ParallelOp second,
                                     scf::ParallelOp first) {
  unsigned count = first.getNumLoops();
  auto equal = [count](ValueRange lhs, ValueRange rhs) {
    return llvm::all_of(llvm::zip(lhs, rhs.take_front(count)), [](auto pair) {
      auto [l, r] = pair;
      return isEqualConstantIntOrValue(getAsOpFoldResult(l),
                                       getAsOpFoldResult(r));
    });
  };
  return second.getNumLoops() >= count &&
         equal(first.getLowerBound(), second.getLowerBound()) &&
         equal(first.getUpperBound(), second.getUpperBound()) &&
         equal(first.getStep(), second.getStep());
}

/// Makes the dimensions of `loop` after its first `count` sequential
/// scf.for loops inside a parallel loop over the first `count`; returns
/// that loop, and the outermost scf.for in `outermost`.
static scf::ParallelOp makeTrailingDimsSequential(RewriterBase &rewriter,
                                                  scf::ParallelOp loop,
                                                  unsigned count,
                                                  Operation *&outermost) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  auto outer = scf::ParallelOp::create(
      rewriter, loc, loop.getLowerBound().take_front(count),
      loop.getUpperBound().take_front(count), loop.getStep().take_front(count));
  rewriter.setInsertionPoint(outer.getBody()->getTerminator());
  scf::LoopNest nest = scf::buildLoopNest(
      rewriter, loc, loop.getLowerBound().drop_front(count),
      loop.getUpperBound().drop_front(count), loop.getStep().drop_front(count));
  SmallVector<Value> indices = llvm::to_vector(outer.getInductionVars());
  for (scf::ForOp inner : nest.loops)
    indices.push_back(inner.getInductionVar());
  Block *innermost = nest.loops.back().getBody();
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, innermost->getTerminator(), indices);
  rewriter.eraseOp(loop);
  outermost = nest.loops.front();
  return outer;
}

/// Whether a loop may move past `op`: an allocation, or an op without
/// memory effects (a view).
static bool isAllocationOrPlain(Operation *op) {
  return isa<memref::AllocOp, memref::AllocaOp>(op) || amp::isPlainOp(op);
}

/// Whether only allocations and ops without memory effects lie between
/// `first` and `second`, so that `first`'s work can move down to `second`.
static bool haveOnlyPureOpsBetween(Operation *first, Operation *second) {
  if (first->getBlock() != second->getBlock() ||
      !first->isBeforeInBlock(second))
    return false;
  for (Operation *op = first->getNextNode(); op != second;
       op = op->getNextNode())
    if (!isAllocationOrPlain(op))
      return false;
  return true;
}

/// Moves `first`'s body to the start of `second`'s (their iteration
/// spaces equal) and erases `first`.
static void fuseInto(RewriterBase &rewriter, scf::ParallelOp first,
                     scf::ParallelOp second) {
  Block *body = first.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, &second.getBody()->front(),
                             second.getInductionVars());
  rewriter.eraseOp(first);
}

/// Whether `first` and `second` touch no memory that either of them writes,
/// so that their iterations can run in any order.
static bool areIndependent(const LoweredLoop &first,
                           const LoweredLoop &second) {
  for (const BufferAccess &a : first.accesses)
    for (const BufferAccess &b : second.accesses)
      if ((a.writes || b.writes) && mayShareMemory(a.memref, b.memref))
        return false;
  return true;
}

/// Whether `op` may write memory that `loop` touches, or read memory that
/// it writes (a library call: its operands).
static bool mayConflict(Operation *op, const LoweredLoop &loop) {
  return llvm::any_of(loop.accesses, [&](const BufferAccess &access) {
    return amp::mayWrite(op, access.memref) ||
           (access.writes && amp::mayRead(op, access.memref));
  });
}

/// Whether `loop` writes a buffer of more than one element that the step
/// allocates (not one of its arguments, nor a scalar such as an amax): a
/// buffer whose memory the plan would have to keep from the write on.
static bool writesTemporary(const LoweredLoop &loop) {
  return llvm::any_of(loop.accesses, [](const BufferAccess &access) {
    Value buffer = memref::skipViewLikeOps(cast<MemrefValue>(access.memref));
    auto type = cast<MemRefType>(buffer.getType());
    return access.writes && !isa<BlockArgument>(buffer) &&
           (!type.hasStaticShape() || type.getNumElements() > 1);
  });
}

/// Whether `op` can move up with a loop that uses its results: an
/// allocation, or an op without memory effects or regions (a view, a
/// constant).
static bool canHoistWithUser(Operation *op) {
  return op->getNumRegions() == 0 &&
         (isa<memref::AllocOp, memref::AllocaOp>(op) || isMemoryEffectFree(op));
}

/// The bytes of kernel parameters that `values`, defined outside a kernel
/// and used in it, take: a memref's descriptor (two pointers, an offset, a
/// size and a stride per dimension), 8 bytes for anything else. Constants
/// are not counted: the CUDA pipeline sinks them into the kernel
/// (gpu-launch-sink-index-computations).
static int64_t getParameterBytes(ArrayRef<Value> values) {
  int64_t bytes = 0;
  for (Value value : values) {
    if (Operation *def = value.getDefiningOp();
        def && def->hasTrait<OpTrait::ConstantLike>())
      continue;
    auto type = dyn_cast<MemRefType>(value.getType());
    bytes += type ? 8 * (3 + 2 * type.getRank()) : 8;
  }
  return bytes;
}

/// Runs the independent `loops` (areIndependent, static bounds, the later
/// ones free to move up to the first: fuseIndependent) as one loop where the
/// first was: the points of each loop in turn, each padded to a multiple of
/// `alignment` so that a warp runs one loop's body; an scf.index_switch on
/// the segment of the point picks the body, with the loop's indices
/// delinearized from the point's offset in the segment.
static scf::ParallelOp fuseIndependentLoops(RewriterBase &rewriter,
                                            ArrayRef<scf::ParallelOp> loops,
                                            int64_t alignment) {
  SmallVector<Location> locs = llvm::map_to_vector(
      loops, [](scf::ParallelOp loop) { return loop.getLoc(); });
  Location loc = rewriter.getFusedLoc(locs);
  rewriter.setInsertionPoint(loops.front());
  SmallVector<int64_t> counts, offsets;
  int64_t total = 0;
  for (scf::ParallelOp loop : loops) {
    counts.push_back(*amp::getStaticTripCount(loop));
    offsets.push_back(total);
    total += llvm::alignTo(counts.back(), alignment);
  }
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  Value zero = constant(0), one = constant(1);
  auto fused =
      scf::ParallelOp::create(rewriter, loc, zero, constant(total), one);
  rewriter.setInsertionPointToStart(fused.getBody());
  Value point = fused.getInductionVars().front();
  Value segment = zero;
  for (int64_t offset : ArrayRef(offsets).drop_front()) {
    Value past = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::uge,
                                       point, constant(offset));
    segment = arith::AddIOp::create(
        rewriter, loc, segment,
        arith::SelectOp::create(rewriter, loc, past, one, zero));
  }
  auto cases = llvm::to_vector(llvm::seq<int64_t>(0, loops.size() - 1));
  auto dispatch = scf::IndexSwitchOp::create(rewriter, loc, TypeRange(),
                                             segment, cases, cases.size());
  for (auto [i, member] : llvm::enumerate(loops)) {
    scf::ParallelOp loop = member;
    Region &region = i < cases.size() ? dispatch.getCaseRegions()[i]
                                      : dispatch.getDefaultRegion();
    rewriter.createBlock(&region);
    auto yield = scf::YieldOp::create(rewriter, loc);
    rewriter.setInsertionPoint(yield);
    Value local =
        arith::SubIOp::create(rewriter, loc, point, constant(offsets[i]));
    if (counts[i] !=
        static_cast<int64_t>(llvm::alignTo(counts[i], alignment))) {
      Value inside = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, local, constant(counts[i]));
      auto guard = scf::IfOp::create(rewriter, loc, inside,
                                     /*withElseRegion=*/false);
      rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
    }
    // The offset in the segment is below the loop's count.
    SmallVector<Value> indices =
        amp::delinearizeIndex(rewriter, loc, loop, local);
    Block *body = loop.getBody();
    rewriter.eraseOp(body->getTerminator());
    rewriter.inlineBlockBefore(body, rewriter.getInsertionBlock(),
                               rewriter.getInsertionPoint(), indices);
    rewriter.eraseOp(loop);
  }
  return fused;
}

namespace {
struct LinalgToGridLoopsPass
    : amp::impl::LinalgToGridLoopsBase<LinalgToGridLoopsPass> {
  using LinalgToGridLoopsBase::LinalgToGridLoopsBase;

  /// Lowers `op` to an unmapped parallel loop over its parallel dimensions,
  /// or over one point when it has none, added to `lowered`.
  LogicalResult lowerToParallelLoop(RewriterBase &rewriter, linalg::LinalgOp op,
                                    ArrayRef<Value> initialValues,
                                    SmallVectorImpl<LoweredLoop> &lowered) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic =
        genericWithParallelFirst(rewriter, op);
    if (failed(generic))
      return failure();
    unsigned numParallel = generic->getNumParallelLoops();
    scf::ParallelOp outer;
    if (numParallel == 0) {
      // A full reduction, or a scalar op: one thread does it all.
      outer = amp::createOnePointLoop(rewriter, generic->getLoc());
      rewriter.moveOpBefore(*generic, outer.getBody()->getTerminator());
    }
    SmallVector<BufferAccess> accesses = getBufferAccesses(*generic);
    int64_t serialIterations = 1;
    for (int64_t size :
         ArrayRef(generic->getStaticLoopRanges()).drop_front(numParallel))
      serialIterations =
          ShapedType::isDynamic(size) ? 0 : serialIterations * size;
    SmallVector<Operation *> laneLoops;
    if (halfPairs && canLowerInPairs(*generic)) {
      rewriter.setInsertionPoint(*generic);
      outer = lowerInPairs(rewriter, *generic);
    } else if (canAccumulateInRegisters(*generic)) {
      rewriter.setInsertionPoint(*generic);
      scf::ParallelOp parallel = lowerWithRegisterAccumulators(
          rewriter, *generic, initialValues, laneLoops);
      if (numParallel > 0)
        outer = parallel;
    } else {
      rewriter.setInsertionPoint(*generic);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, *generic);
      if (failed(loops))
        return generic->emitOpError("cannot be lowered to loops");
      if (numParallel > 0)
        outer = cast<scf::ParallelOp>(loops->front());
    }
    rewriter.eraseOp(*generic);
    lowered.push_back({outer, numParallel, std::move(accesses),
                       serialIterations, std::move(laneLoops)});
    return success();
  }

  /// The sequential iterations that `wide` would add to each iteration of
  /// `rows` if it ran in them, its first dimensions `rows`'s, its others
  /// sequential; none where `rows` does not run a reduction at least as
  /// long in each (softmax's division in the threads of the row sums,
  /// LayerNorm's normalization in those of its statistics, the op that
  /// computes the rows before).
  static std::optional<int64_t> getAddedRowIterations(const LoweredLoop &rows,
                                                      const LoweredLoop &wide) {
    if (rows.numParallel == 0 || rows.serialIterations == 0 ||
        wide.numParallel <= rows.numParallel ||
        scf::ParallelOp(wide.loop).getNumLoops() != wide.numParallel)
      return std::nullopt;
    std::optional<int64_t> total = amp::getStaticTripCount(wide.loop);
    std::optional<int64_t> count = amp::getStaticTripCount(rows.loop);
    if (!total || !count || *count == 0)
      return std::nullopt;
    int64_t added =
        *total / *count * std::max<int64_t>(1, wide.serialIterations);
    if (added > rows.serialIterations)
      return std::nullopt;
    return added;
  }

  /// Whether `current` can run in the iterations of `next` (only pure ops
  /// and allocations between, dependencies within an iteration only): over
  /// the same points, or one of them over rows of the other's points
  /// (getAddedRowIterations), then made so. Not two independent ops of one
  /// point each.
  bool prepareFusion(RewriterBase &rewriter, LoweredLoop &current,
                     LoweredLoop &next) {
    bool samePoints = current.numParallel == next.numParallel &&
                      current.loop.getNumLoops() == next.loop.getNumLoops();
    // Two independent ops of one thread each (full reductions) run in
    // parallel warps once fuse-independent joins them, not one after the
    // other in one thread.
    if (samePoints && current.numParallel == 0 && fuseIndependentGrids &&
        areIndependent(current, next))
      return false;
    std::optional<int64_t> nextInRows, currentInRows;
    if (!samePoints) {
      nextInRows = getAddedRowIterations(current, next);
      if (!nextInRows)
        currentInRows = getAddedRowIterations(next, current);
      if (!nextInRows && !currentInRows)
        return false;
    }
    LoweredLoop &rows = currentInRows ? next : current;
    LoweredLoop &wide = currentInRows ? current : next;
    if (!startsWithIterationSpace(wide.loop, rows.loop) ||
        !haveOnlyPureOpsBetween(current.loop, next.loop) ||
        !canFuseAccesses(current, next, rows.numParallel))
      return false;
    if (!samePoints) {
      Operation *outermost;
      wide.loop = makeTrailingDimsSequential(rewriter, wide.loop,
                                             rows.numParallel, outermost);
      // Its iterations are the op's parallel ones; loops inside it run in
      // each.
      wide.laneLoops.assign({outermost});
      wide.numParallel = rows.numParallel;
      wide.serialIterations = nextInRows ? *nextInRows : *currentInRows;
    }
    return true;
  }

  /// Whether `first` and `second` as one kernel take at most
  /// `maxParameterBytes` of parameters: the values either uses from above,
  /// counted once (a concatenation's copies each read another input).
  bool fitParameters(Operation *first, Operation *second) {
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(first->getRegions(), used);
    getUsedValuesDefinedAbove(second->getRegions(), used);
    return getParameterBytes(used.getArrayRef()) <= maxParameterBytes;
  }

  /// Whether `lowered[i]` can move down to just before `lowered[j]`: each
  /// loop between is independent of it (areIndependent), and the other ops
  /// between have no memory effects (views, allocations).
  static bool canSinkPast(ArrayRef<LoweredLoop> lowered, size_t i, size_t j) {
    Operation *from = lowered[i].loop, *to = lowered[j].loop;
    if (from->getBlock() != to->getBlock() || !from->isBeforeInBlock(to))
      return false;
    llvm::SmallPtrSet<Operation *, 8> between;
    for (size_t k = i + 1; k < j; ++k) {
      if (!areIndependent(lowered[i], lowered[k]))
        return false;
      between.insert(lowered[k].loop);
    }
    for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
      if (!between.contains(op) && !isAllocationOrPlain(op))
        return false;
    return true;
  }

  /// The loop of `lowered` that `lowered[i]` fuses into (prepareFusion,
  /// within the parameter limit): the next one or, past loops it can move
  /// down past (canSinkPast), one of the kFusionLookAhead after it, before
  /// which it then moves (a BatchNorm's centering, then its running mean's
  /// update, then its normalization over the centered values). Nullopt
  /// where there is none.
  std::optional<size_t> findLoopToFuseInto(RewriterBase &rewriter,
                                           MutableArrayRef<LoweredLoop> lowered,
                                           size_t i) {
    LoweredLoop &current = lowered[i];
    for (size_t j = i + 1; j < lowered.size() && j <= i + 1 + kFusionLookAhead;
         ++j) {
      bool sinks = j > i + 1;
      if (sinks && !canSinkPast(lowered, i, j))
        return std::nullopt;
      LoweredLoop &next = lowered[j];
      if (!fitParameters(current.loop, next.loop))
        continue;
      Operation *after = current.loop->getNextNode();
      if (sinks)
        rewriter.moveOpBefore(current.loop, next.loop);
      if (prepareFusion(rewriter, current, next))
        return j;
      if (sinks)
        rewriter.moveOpBefore(current.loop, after);
    }
    return std::nullopt;
  }

  /// Fuses each loop of `lowered` into a later one where they can run as
  /// one grid (findLoopToFuseInto); returns the loops that remain.
  SmallVector<LoweredLoop> fuseLoops(RewriterBase &rewriter,
                                     MutableArrayRef<LoweredLoop> lowered) {
    SmallVector<LoweredLoop> remaining;
    for (auto [i, current] : llvm::enumerate(lowered)) {
      std::optional<size_t> target;
      if (fuse)
        target = findLoopToFuseInto(rewriter, lowered, i);
      if (target) {
        LoweredLoop &next = lowered[*target];
        fuseInto(rewriter, current.loop, next.loop);
        next.accesses.append(current.accesses);
        next.laneLoops.append(current.laneLoops);
        next.serialIterations =
            std::max(next.serialIterations, current.serialIterations);
        continue;
      }
      remaining.push_back(std::move(current));
    }
    return remaining;
  }

  /// The values `run` does not pass yet among `used`, when `loop` can
  /// join it: static bounds, rows not shared by lanes, independent of every
  /// member, within `maxParameterBytes` of kernel parameters together.
  std::optional<SmallVector<Value>>
  getAddedParameters(const IndependentRun &run, const LoweredLoop &loop,
                     ArrayRef<Value> used) {
    if (!amp::getStaticTripCount(run.members.front()->loop) ||
        run.members.front()->rowPlan ||
        !llvm::all_of(run.members, [&](const LoweredLoop *member) {
          return areIndependent(*member, loop);
        }))
      return std::nullopt;
    SmallVector<Value> added = llvm::filter_to_vector(
        used, [&](Value value) { return !run.parameters.contains(value); });
    if (run.parameterBytes + getParameterBytes(added) > maxParameterBytes)
      return std::nullopt;
    return added;
  }

  /// The run of `runs` that `loop` (static bounds) joins, looking back
  /// from it in its block for runs that it can join and move up to: it must
  /// not pass an op that writes memory it touches or reads memory it
  /// writes, nor a member of a run that it depends on (that member now runs
  /// where its run's first member is). The earliest such run, unless
  /// `loop` writes a buffer of the step's own (writesTemporary): then the
  /// nearest, since the buffer lives from its first write on and the memory
  /// plan could not reuse its memory before. The allocations and
  /// effect-free ops it passes that define values it uses go into
  /// `hoisted`, to move up with it, and the values it adds to the run's
  /// parameters (getAddedParameters) into `added`.
  std::optional<unsigned>
  findRunToJoin(const LoweredLoop &loop, ArrayRef<Value> used,
                ArrayRef<IndependentRun> runs,
                const llvm::DenseMap<Operation *, unsigned> &runOf,
                SmallVectorImpl<Operation *> &hoisted,
                SmallVectorImpl<Value> &added) {
    llvm::DenseSet<Value> needed(llvm::from_range, used);
    SmallVector<Operation *> passed;
    std::optional<unsigned> chosen;
    size_t chosenPassed = 0;
    Operation *limit = nullptr; // the loop may not move up to or past it
    for (Operation *op = loop.loop->getPrevNode(); op; op = op->getPrevNode()) {
      if (limit && (op == limit || op->isBeforeInBlock(limit)))
        break;
      if (auto found = runOf.find(op); found != runOf.end()) {
        const IndependentRun &run = runs[found->second];
        const LoweredLoop *member =
            *llvm::find_if(run.members, [&](const LoweredLoop *m) {
              return scf::ParallelOp(m->loop).getOperation() == op;
            });
        Operation *first = run.members.front()->loop;
        bool independent = areIndependent(*member, loop);
        if (op != first) {
          if (!independent && (!limit || limit->isBeforeInBlock(first)))
            limit = first;
          continue;
        }
        if (!independent)
          break;
        if (std::optional<SmallVector<Value>> parameters =
                getAddedParameters(run, loop, used)) {
          chosen = found->second;
          chosenPassed = passed.size();
          added.assign(*parameters);
          if (writesTemporary(loop))
            break;
        }
        continue;
      }
      if (llvm::any_of(op->getResults(),
                       [&](Value value) { return needed.contains(value); })) {
        if (!canHoistWithUser(op))
          break;
        passed.push_back(op);
        needed.insert_range(op->getOperands());
        continue;
      }
      if (mayConflict(op, loop))
        break;
    }
    hoisted.append(passed.begin(), passed.begin() + chosenPassed);
    return chosen;
  }

  /// Fuses independent loops of `loops` into one loop each
  /// (fuseIndependentLoops): each loop with static bounds whose rows lanes
  /// do not share joins the run of loops before it that it can move up to
  /// (findRunToJoin), or starts one. Returns the loops that remain.
  SmallVector<scf::ParallelOp> fuseIndependent(RewriterBase &rewriter,
                                               ArrayRef<LoweredLoop> loops) {
    SmallVector<IndependentRun> runs;
    llvm::DenseMap<Operation *, unsigned> runOf;
    for (const LoweredLoop &loop : loops) {
      llvm::SetVector<Value> usedSet;
      getUsedValuesDefinedAbove(scf::ParallelOp(loop.loop).getRegion(),
                                usedSet);
      SmallVector<Value> used = usedSet.takeVector();
      SmallVector<Operation *> hoisted;
      SmallVector<Value> added;
      std::optional<unsigned> joined;
      if (fuseIndependentGrids && !loop.rowPlan &&
          amp::getStaticTripCount(loop.loop))
        joined = findRunToJoin(loop, used, runs, runOf, hoisted, added);
      if (!joined) {
        joined = runs.size();
        runs.emplace_back();
        added = used;
      }
      IndependentRun &run = runs[*joined];
      run.members.push_back(&loop);
      run.parameters.insert_range(added);
      run.parameterBytes += getParameterBytes(added);
      run.hoisted.append(hoisted);
      runOf[loop.loop] = *joined;
    }
    SmallVector<scf::ParallelOp> remaining;
    for (IndependentRun &run : runs) {
      auto members = llvm::map_to_vector(
          run.members, [](const LoweredLoop *member) { return member->loop; });
      if (members.size() == 1) {
        remaining.push_back(members.front());
        continue;
      }
      Operation *first = members.front();
      llvm::sort(run.hoisted, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      for (Operation *op : llvm::make_range(
               run.hoisted.begin(),
               std::unique(run.hoisted.begin(), run.hoisted.end())))
        if (first->isBeforeInBlock(op))
          rewriter.moveOpBefore(op, first);
      remaining.push_back(fuseIndependentLoops(
          rewriter, members, std::min<int64_t>(kWarpSize, blockSize)));
    }
    return remaining;
  }

  /// Checks the options once, before any function is rewritten.
  LogicalResult initialize(MLIRContext *context) override {
    if (blockSize < 1 || blockSize > 1024)
      return emitError(UnknownLoc::get(context))
             << "amp-linalg-to-grid-loops: block-size must be in [1, 1024], "
                "got "
             << static_cast<int64_t>(blockSize);
    if (rowLanes < 1 || rowLanes > blockSize || !llvm::isPowerOf2_64(rowLanes))
      return emitError(UnknownLoc::get(context))
             << "amp-linalg-to-grid-loops: row-lanes must be a power of two "
                "in [1, block-size], got "
             << static_cast<int64_t>(rowLanes);
    if (maxParameterBytes < 0)
      return emitError(UnknownLoc::get(context))
             << "amp-linalg-to-grid-loops: max-parameter-bytes must not be "
                "negative, got "
             << static_cast<int64_t>(maxParameterBytes);
    return success();
  }

  void runOnOperation() override {
    // The linalg ops and the loops still to tile (amp-parallelize-loop-nests'
    // nests, amp-host-data-to-kernels' one-point loops), in order.
    SmallVector<Operation *> work;
    WalkResult walk =
        getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
            if (!loop->hasAttr(gpu::getMappingAttrName()))
              work.push_back(loop);
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
          work.push_back(linalgOp);
          return WalkResult::skip();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    // Reductions start from the fills of their outputs, which go.
    SmallVector<Operation *> folded;
    llvm::DenseMap<Operation *, SmallVector<Value>> initialValues;
    for (Operation *op : work)
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
        initialValues[op] = foldOutputFills(linalgOp, folded);
    llvm::SmallPtrSet<Operation *, 16> foldedSet(folded.begin(), folded.end());
    SmallVector<LoweredLoop> lowered;
    for (Operation *op : work) {
      if (foldedSet.contains(op))
        continue;
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (failed(lowerToParallelLoop(rewriter, linalgOp, initialValues[op],
                                       lowered)))
          return signalPassFailure();
        continue;
      }
      auto loop = cast<scf::ParallelOp>(op);
      std::optional<SmallVector<BufferAccess>> accesses = getLoopAccesses(loop);
      if (!accesses) {
        if (failed(tileIntoGrid(rewriter, loop, blockSize)))
          return signalPassFailure();
        continue;
      }
      std::optional<int64_t> tripCount = amp::getStaticTripCount(loop);
      unsigned numParallel =
          tripCount == 1 ? 0 : static_cast<unsigned>(loop.getNumLoops());
      lowered.push_back({loop, numParallel, std::move(*accesses), 0});
    }
    for (Operation *fill : folded)
      rewriter.eraseOp(fill);
    SmallVector<LoweredLoop> fused = fuseLoops(rewriter, lowered);
    llvm::DenseMap<Operation *, const amp::RowPlan *> rowPlans;
    for (LoweredLoop &loop : fused) {
      if (std::optional<amp::RowPlan> plan =
              amp::planRowLanes(loop.loop, loop.laneLoops, rowLanes)) {
        loop.rowPlan = std::make_unique<amp::RowPlan>(std::move(*plan));
        rowPlans[loop.loop] = loop.rowPlan.get();
      }
    }
    for (scf::ParallelOp loop : fuseIndependent(rewriter, fused)) {
      if (const amp::RowPlan *plan = rowPlans.lookup(loop)) {
        amp::tileRowsIntoLanes(rewriter, loop, *plan, rowLanes, blockSize);
        continue;
      }
      if (failed(tileIntoGrid(rewriter, loop, blockSize)))
        return signalPassFailure();
    }
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
