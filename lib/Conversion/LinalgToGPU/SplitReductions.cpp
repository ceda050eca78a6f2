//===- SplitReductions.cpp - Reductions with few outputs, split -----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-split-reductions pass: a reduction with few output elements and
// many reduced ones becomes a parallel partial reduction and a small final
// one (upstream linalg::splitReduction), after its reduction dimensions are
// collapsed into one (linalg::collapseOpIterationDims). Reduction
// dimensions that do not collapse together (BatchNorm's batch and spatial
// ones, across its channels) are reduced in two steps first: the largest
// group that collapses, then the others. For the GPU the split gives a
// reduction with few outputs more threads; with serial-terms (the CPU) it
// gives every floating-point sum blocks of at most that many terms, for
// accuracy.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/BiasGradients.h"
#include "amp/Conversion/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::amp {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Reductions smaller than this stay in one thread per output element
/// (unless they combine the partials of an earlier split).
static constexpr int64_t kMinReduced = 2048;
/// The smallest split ratio.
static constexpr int64_t kMinRatio = 8;
/// What one more level of a split costs for threads, in the sequential
/// iterations of one thread: a kernel launch (shared with the independent
/// levels that amp-linalg-to-grid-loops runs in the same kernel).
static constexpr int64_t kLevelCost = 256;

/// The sizes of `op`'s parallel and reduction loops, multiplied; nullopt
/// when a loop has no static size.
static std::optional<std::pair<int64_t, int64_t>>
getLoopVolumes(linalg::LinalgOp op) {
  int64_t parallel = 1, reduced = 1;
  for (auto [size, iterator] :
       llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    (linalg::isParallelIterator(iterator) ? parallel : reduced) *= size;
  }
  return std::make_pair(parallel, reduced);
}

/// `op` with its reduction loops collapsed into one, when they are
/// consecutive and every indexing map keeps them contiguous; `op` itself
/// when it has one.
static FailureOr<linalg::LinalgOp>
collapseReductionLoops(RewriterBase &rewriter, linalg::LinalgOp op) {
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (reductions.size() == 1)
    return op;
  ReassociationIndices group(reductions.begin(), reductions.end());
  for (auto [i, dim] : llvm::enumerate(group))
    if (dim != group.front() + static_cast<int64_t>(i))
      return failure();
  if (!llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap map) {
        return linalg::isDimSequencePreserved(map, group);
      }))
    return failure();
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, {group}, rewriter);
  if (failed(collapsed))
    return failure();
  rewriter.replaceOp(op, collapsed->results);
  return collapsed->collapsedOp;
}

/// The largest group of consecutive reduction loops of `op`, by volume,
/// that every indexing map keeps contiguous.
static ReassociationIndices getLargestCollapsibleGroup(linalg::LinalgOp op) {
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  ReassociationIndices best;
  int64_t bestVolume = 0;
  for (int64_t first = 0; first < op.getNumLoops(); ++first) {
    ReassociationIndices group;
    int64_t volume = 1;
    for (int64_t dim = first;
         dim < op.getNumLoops() && !linalg::isParallelIterator(iterators[dim]);
         ++dim) {
      group.push_back(dim);
      volume *= sizes[dim];
      if (volume > bestVolume && llvm::all_of(maps, [&](AffineMap map) {
            return linalg::isDimSequencePreserved(map, group);
          })) {
        best = group;
        bestVolume = volume;
      }
    }
  }
  return best;
}

/// Reduces `op` in two steps when its reduction loops do not collapse
/// into one: a partial reduction over `inner` (the other reduction loops
/// made parallel, their sizes appended to the output, starting from the
/// combiner's neutral element), then the partials combined into `op`'s
/// output over the others. Returns the first step, and adds the second to
/// `combining` where given.
static FailureOr<linalg::GenericOp>
reduceInTwoSteps(RewriterBase &rewriter, linalg::LinalgOp op,
                 ArrayRef<int64_t> inner,
                 SmallVectorImpl<linalg::LinalgOp> *combining) {
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return failure();
  Operation *combiner = combiners.front();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral)
    return failure();
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  OpOperand *init = op.getDpsInitOperand(0);
  auto initType = cast<RankedTensorType>(init->get().getType());
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap outputMap = op.getMatchingIndexingMap(init);

  // The partials: the output's shape and then each outer reduction loop's.
  SmallVector<int64_t> partialShape(initType.getShape());
  SmallVector<AffineExpr> partialExprs(outputMap.getResults());
  SmallVector<int64_t> outer;
  for (auto [dim, iterator] : llvm::enumerate(iterators)) {
    if (linalg::isParallelIterator(iterator) || llvm::is_contained(inner, dim))
      continue;
    outer.push_back(dim);
    partialShape.push_back(sizes[dim]);
    partialExprs.push_back(getAffineDimExpr(dim, context));
    iterator = utils::IteratorType::parallel;
  }
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape,
                                        initType.getElementType());
  Value neutralValue = arith::ConstantOp::create(rewriter, loc, *neutral);
  Value partialInit =
      linalg::FillOp::create(rewriter, loc, neutralValue, empty).getResult(0);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(op.getNumLoops(), 0, partialExprs, context);
  auto partial = linalg::GenericOp::create(rewriter, loc, partialInit.getType(),
                                           op.getDpsInputs(), partialInit, maps,
                                           iterators);
  rewriter.cloneRegionBefore(op->getRegion(0), partial.getRegion(),
                             partial.getRegion().begin());

  // The partials combined over the outer loops into the output.
  int64_t rank = initType.getRank();
  int64_t finalLoops = rank + outer.size();
  SmallVector<utils::IteratorType> finalIterators(
      rank, utils::IteratorType::parallel);
  finalIterators.append(outer.size(), utils::IteratorType::reduction);
  // The output's map keeps the first `rank` loops (none for a 0-d output,
  // FP8's amax: getMajorSubMap(0) would be the null map).
  AffineMap identity = rewriter.getMultiDimIdentityMap(finalLoops);
  AffineMap finalOutputMap = AffineMap::get(
      finalLoops, 0, identity.getResults().take_front(rank), context);
  auto combined = linalg::GenericOp::create(
      rewriter, loc, initType, partial.getResult(0), init->get(),
      {identity, finalOutputMap}, finalIterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        IRMapping mapping;
        BlockArgument acc = op.getRegionOutputArgs().front();
        for (Value operand : combiner->getOperands())
          mapping.map(operand, operand == acc ? args[1] : args[0]);
        linalg::YieldOp::create(b, nested,
                                b.clone(*combiner, mapping)->getResult(0));
      });
  rewriter.replaceOp(op, combined.getResults());
  if (combining)
    combining->push_back(combined);
  return partial;
}

/// Drops the unit dimensions that `generic`'s inputs index with a constant
/// 0 (a row's max broadcast from a [rows, 1] tensor in a softmax), which
/// linalg::splitReduction's maps cannot invert: each such input becomes a
/// tensor.collapse_shape without them. Fails, changing nothing, when an
/// input has another kind of constant index.
static LogicalResult dropZeroIndexedUnitDims(RewriterBase &rewriter,
                                             linalg::GenericOp generic) {
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  SmallVector<std::pair<OpOperand *, SmallVector<int64_t>>> inputs;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = maps[input->getOperandNumber()];
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    SmallVector<int64_t> zeros;
    for (auto [i, result] : llvm::enumerate(map.getResults())) {
      if (isa<AffineDimExpr>(result))
        continue;
      if (!type || type.getDimSize(i) != 1 || !isa<AffineConstantExpr>(result))
        return failure();
      zeros.push_back(i);
    }
    if (!zeros.empty())
      inputs.emplace_back(input, std::move(zeros));
  }
  for (auto &[input, zeros] : inputs) {
    auto type = cast<RankedTensorType>(input->get().getType());
    SmallVector<int64_t> shape;
    for (auto [i, size] : llvm::enumerate(type.getShape()))
      if (!llvm::is_contained(zeros, i))
        shape.push_back(size);
    auto collapsedType = type.clone(shape);
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(type, collapsedType);
    if (!groups)
      return failure();
    rewriter.setInsertionPoint(generic);
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, generic.getLoc(), collapsedType, input->get(), *groups);
    unsigned number = input->getOperandNumber();
    maps[number] = maps[number].dropResults(zeros);
    OpOperand *operand = input;
    rewriter.modifyOpInPlace(generic, [&] { operand->set(collapsed); });
  }
  rewriter.modifyOpInPlace(generic, [&] {
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  return success();
}

/// Rewrites the linalg.index ops of `split`, the partial reduction that
/// linalg::splitReduction (innerParallel) made of an op whose loop `index`
/// it split into loops `index` (reduced) and `index` + 1 (parallel, of
/// `ratio` iterations): upstream leaves them on the old loop numbers. The
/// old loop `index` is index * ratio + (index + 1); later loops move up one.
static void remapSplitIndices(RewriterBase &rewriter, linalg::LinalgOp split,
                              unsigned index, int64_t ratio) {
  SmallVector<linalg::IndexOp> indexOps;
  split->walk([&](linalg::IndexOp op) { indexOps.push_back(op); });
  for (linalg::IndexOp op : indexOps) {
    uint64_t dim = op.getDim();
    if (dim < index)
      continue;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    if (dim > index) {
      rewriter.replaceOpWithNewOp<linalg::IndexOp>(op, dim + 1);
      continue;
    }
    Value outer = linalg::IndexOp::create(rewriter, loc, index);
    Value inner = linalg::IndexOp::create(rewriter, loc, index + 1);
    Value scaled = arith::MulIOp::create(
        rewriter, loc, outer,
        arith::ConstantIndexOp::create(rewriter, loc, ratio));
    rewriter.replaceOpWithNewOp<arith::AddIOp>(op, scaled, inner);
  }
}

/// Whether `op` sums floating-point values: one `arith.addf` combiner.
static bool isFloatSum(linalg::LinalgOp op) {
  SmallVector<Operation *> combiners;
  return matchReduction(op.getRegionOutputArgs(), 0, combiners) &&
         combiners.size() == 1 && isa<arith::AddFOp>(combiners.front());
}

/// The ratio that splits a sum of `size` terms for accuracy: two levels of
/// about its square root when both fit in `serialTerms`, otherwise its
/// largest divisor up to `serialTerms` (the partials, of size / ratio
/// terms, are split again); where it has no divisor in [2, serialTerms] (a
/// large prime), `serialTerms` itself, which leaves a tail (splitTail).
static int64_t getCascadeRatio(int64_t size, int64_t serialTerms) {
  int64_t best = 0;
  for (int64_t ratio = 2; ratio <= serialTerms && ratio < size; ++ratio)
    if (size % ratio == 0 && size / ratio <= serialTerms &&
        (!best || ratio + size / ratio < best + size / best))
      best = ratio;
  if (best)
    return best;
  for (int64_t ratio = std::min(serialTerms, size - 1); ratio >= 2; --ratio)
    if (size % ratio == 0)
      return ratio;
  return size > 2 * serialTerms ? serialTerms : 0;
}

namespace {
/// The split for threads that gives a reduction the shortest chain of
/// sequential iterations: a reduction of `size` elements per output, over
/// `parallel` outputs, split by `ratio` (at least kMinRatio, for at most
/// `threads` threads) runs `size / ratio` iterations per partial, then
/// reduces `ratio` partials per output, which may split again; each level
/// adds kLevelCost. A ratio that does not divide `size` (a power of two,
/// for a size with a large prime factor: a vocabulary's 30522 = 6 * 5087)
/// leaves a tail of `size % ratio` elements, reduced after the partials
/// (splitTail), which may split again too.
class ThreadSplitPlanner {
public:
  explicit ThreadSplitPlanner(int64_t threads) : threads(threads) {}

  /// The first ratio of the best split; 0 when none beats the reduction
  /// as it is.
  int64_t getRatio(int64_t size, int64_t parallel) {
    return plan(size, parallel).second;
  }

private:
  /// The best chain's length and its first ratio.
  std::pair<int64_t, int64_t> plan(int64_t size, int64_t parallel) {
    std::pair<int64_t, int64_t> key = {size, parallel};
    if (auto it = plans.find(key); it != plans.end())
      return it->second;
    std::pair<int64_t, int64_t> best = {size, 0};
    int64_t limit =
        std::min(size / 2, std::max<int64_t>(1, threads / parallel));
    for (int64_t divisor = 1; divisor * divisor <= size; ++divisor) {
      if (size % divisor)
        continue;
      for (int64_t ratio : {divisor, size / divisor}) {
        if (ratio < kMinRatio || ratio > limit)
          continue;
        int64_t length =
            size / ratio + kLevelCost + plan(ratio, parallel).first;
        if (length < best.first ||
            (length == best.first && ratio > best.second))
          best = {length, ratio};
      }
    }
    for (int64_t ratio = kMinRatio; ratio <= limit; ratio *= 2) {
      if (size % ratio == 0)
        continue;
      int64_t length = size / ratio + kLevelCost + plan(ratio, parallel).first +
                       kLevelCost + plan(size % ratio, parallel).first;
      if (length < best.first)
        best = {length, ratio};
    }
    plans[key] = best;
    return best;
  }

  int64_t threads;
  llvm::DenseMap<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>>
      plans;
};
} // namespace

/// Splits the last `size % ratio` elements off the one reduction loop of
/// `op` (of `size` iterations), so that the rest divides by `ratio`: `op`
/// becomes a reduction of the first elements (returned) and one of the
/// tail, which starts from the first's result (so any combiner will do)
/// and is added to `combining` where given. Inputs that the loop indexes
/// are sliced; the tail's linalg.index of the loop is shifted.
static linalg::LinalgOp
splitTail(RewriterBase &rewriter, linalg::LinalgOp op, int64_t ratio,
          SmallVectorImpl<linalg::LinalgOp> *combining) {
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  unsigned dim = reductions.front();
  int64_t size = op.getStaticLoopRanges()[dim];
  int64_t head = size - size % ratio;
  Location loc = op.getLoc();
  AffineExpr loop = getAffineDimExpr(dim, op.getContext());
  rewriter.setInsertionPoint(op);
  // A copy of `op` over the loop's elements [offset, offset + length).
  auto createPart = [&](int64_t offset, int64_t length) {
    SmallVector<std::pair<unsigned, Value>> slices;
    for (OpOperand *input : op.getDpsInputOperands()) {
      std::optional<unsigned> position =
          op.getMatchingIndexingMap(input).getResultPosition(loop);
      auto type = dyn_cast<RankedTensorType>(input->get().getType());
      if (!position || !type)
        continue;
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes =
          getAsIndexOpFoldResult(op.getContext(), type.getShape());
      SmallVector<OpFoldResult> strides(type.getRank(),
                                        rewriter.getIndexAttr(1));
      offsets[*position] = rewriter.getIndexAttr(offset);
      sizes[*position] = rewriter.getIndexAttr(length);
      slices.emplace_back(input->getOperandNumber(),
                          tensor::ExtractSliceOp::create(rewriter, loc,
                                                         input->get(), offsets,
                                                         sizes, strides));
    }
    Operation *part = rewriter.clone(*op.getOperation());
    for (auto [number, slice] : slices)
      part->setOperand(number, slice);
    return cast<linalg::LinalgOp>(part);
  };
  linalg::LinalgOp first = createPart(0, head);
  linalg::LinalgOp tail = createPart(head, size - head);
  for (auto [init, result] :
       llvm::zip(tail.getDpsInitsMutable(), first->getResults()))
    init.set(result);
  SmallVector<linalg::IndexOp> indices;
  tail->walk([&](linalg::IndexOp index) {
    if (index.getDim() == dim)
      indices.push_back(index);
  });
  for (linalg::IndexOp index : indices) {
    rewriter.setInsertionPointAfter(index);
    Value shifted = arith::AddIOp::create(
        rewriter, loc, index,
        arith::ConstantIndexOp::create(rewriter, loc, head));
    rewriter.replaceAllUsesExcept(index, shifted, shifted.getDefiningOp());
  }
  rewriter.replaceOp(op, tail->getResults());
  if (combining)
    combining->push_back(tail);
  return first;
}

/// Splits the reduction `op` (its reduction loops collapsed into one first,
/// or reduced in two steps when they do not collapse) by the ratio that
/// `chooseRatio` gives for the reduced size and the output elements.
/// Returns the op left whole when it did not split (which may be a
/// collapsed or first-step replacement of `op`), null when it did. Adds the
/// reductions of partials it makes (of the split, of two steps) to
/// `combining`, where given.
static linalg::LinalgOp
collapseAndSplit(RewriterBase &rewriter, linalg::LinalgOp op,
                 function_ref<int64_t(int64_t, int64_t)> chooseRatio,
                 SmallVectorImpl<linalg::LinalgOp> *combining = nullptr) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!llvm::all_of(
          op.getIndexingMapsArray(),
          [](AffineMap map) { return map.isProjectedPermutation(); }) &&
      (!generic || failed(dropZeroIndexedUnitDims(rewriter, generic))))
    return op;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::LinalgOp> collapsed = collapseReductionLoops(rewriter, op);
  if (failed(collapsed)) {
    ReassociationIndices inner = getLargestCollapsibleGroup(op);
    int64_t innerVolume = 1;
    for (int64_t dim : inner)
      innerVolume *= op.getStaticLoopRanges()[dim];
    // Two steps take the serial work per thread from inner * outer to
    // about inner + outer.
    if (innerVolume < kMinRatio)
      return op;
    FailureOr<linalg::GenericOp> partial =
        reduceInTwoSteps(rewriter, op, inner, combining);
    if (failed(partial))
      return op;
    rewriter.setInsertionPoint(*partial);
    collapsed = collapseReductionLoops(rewriter, *partial);
    if (failed(collapsed))
      return *partial;
  }
  std::pair<int64_t, int64_t> volumes = *getLoopVolumes(*collapsed);
  int64_t ratio = chooseRatio(volumes.second, volumes.first);
  if (ratio < 2)
    return *collapsed;
  if (volumes.second % ratio)
    collapsed = splitTail(rewriter, *collapsed, ratio, combining);
  linalg::SplitReductionOptions chosen;
  auto control = [&](linalg::LinalgOp target) {
    SmallVector<unsigned> reductions;
    target.getReductionDims(reductions);
    chosen.ratio = ratio;
    chosen.index = reductions.front();
    chosen.innerParallel = true;
    return chosen;
  };
  FailureOr<linalg::SplitReductionResult> split =
      linalg::splitReduction(rewriter, *collapsed, control);
  if (failed(split))
    return *collapsed;
  remapSplitIndices(rewriter, split->splitLinalgOp, chosen.index, chosen.ratio);
  if (combining)
    combining->push_back(split->resultCombiningLinalgOp);
  return nullptr;
}

namespace {
struct SplitReductionsPass
    : amp::impl::SplitReductionsBase<SplitReductionsPass> {
  using SplitReductionsBase::SplitReductionsBase;

  /// Whether `op` is a reduction this pass may split (before its sizes).
  /// Contractions are left to the GEMM library (split-K is its own), and
  /// so are their bias gradients (the GEMM's epilogue) unless
  /// `splitBiasGradients`.
  bool isSplittable(linalg::LinalgOp op) {
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    return !isa<linalg::ContractOp>(op) && op.hasPureTensorSemantics() &&
           (splitBiasGradients || !generic ||
            !amp::isBiasGradientOfAContraction(generic)) &&
           op.getNumDpsInits() == 1 &&
           llvm::all_of(op.getIndexingMapsArray(),
                        [](AffineMap map) {
                          return map.isProjectedPermutation(
                              /*allowZeroInResults=*/true);
                        }) &&
           op.getNumReductionLoops() > 0;
  }

  /// For threads: each large reduction with few outputs, split by
  /// ThreadSplitPlanner, and the reductions of its partials again where
  /// the plan splits them.
  void splitForThreads(IRRewriter &rewriter) {
    ThreadSplitPlanner planner(threads);
    auto chooseRatio = [&](int64_t size, int64_t parallel) {
      return planner.getRatio(size, parallel);
    };
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      std::optional<std::pair<int64_t, int64_t>> volumes = getLoopVolumes(op);
      if (isSplittable(op) && volumes && volumes->first * 4 < threads &&
          volumes->second >= kMinReduced)
        candidates.push_back(op);
    });
    while (!candidates.empty()) {
      linalg::LinalgOp op = candidates.pop_back_val();
      collapseAndSplit(rewriter, op, chooseRatio, &candidates);
    }
  }

  /// For accuracy: every sum of more than `serialTerms` terms, split until
  /// none is left (each split leaves sums of fewer terms).
  void splitForAccuracy(IRRewriter &rewriter) {
    DenseSet<Operation *> whole;
    while (true) {
      SmallVector<linalg::LinalgOp> candidates;
      getOperation().walk([&](linalg::LinalgOp op) {
        std::optional<std::pair<int64_t, int64_t>> volumes = getLoopVolumes(op);
        if (!whole.contains(op) && isSplittable(op) && volumes &&
            volumes->second > serialTerms && isFloatSum(op))
          candidates.push_back(op);
      });
      if (candidates.empty())
        return;
      for (linalg::LinalgOp op : candidates)
        if (linalg::LinalgOp left =
                collapseAndSplit(rewriter, op, [&](int64_t size, int64_t) {
                  return getCascadeRatio(size, serialTerms);
                }))
          whole.insert(left);
    }
  }

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    if (serialTerms > 0)
      splitForAccuracy(rewriter);
    else
      splitForThreads(rewriter);
  }
};
} // namespace
