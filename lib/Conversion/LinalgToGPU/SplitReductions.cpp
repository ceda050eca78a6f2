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

/// Reductions smaller than this stay in one thread per output element.
static constexpr int64_t kMinReduced = 2048;
/// The smallest and largest split ratios.
static constexpr int64_t kMinRatio = 8, kMaxRatio = 1024;

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
/// output over the others. Returns the first step.
static FailureOr<linalg::GenericOp> reduceInTwoSteps(RewriterBase &rewriter,
                                                     linalg::LinalgOp op,
                                                     ArrayRef<int64_t> inner) {
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
/// terms, are split again); 0 when it has no divisor in [2, serialTerms].
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
  return 0;
}

/// Splits the reduction `op` (its reduction loops collapsed into one first,
/// or reduced in two steps when they do not collapse) by the ratio that
/// `chooseRatio` gives for the reduced size and the output elements.
/// Returns the op left whole when it did not split (which may be a
/// collapsed or first-step replacement of `op`), null when it did.
static linalg::LinalgOp
collapseAndSplit(RewriterBase &rewriter, linalg::LinalgOp op,
                 function_ref<int64_t(int64_t, int64_t)> chooseRatio) {
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
        reduceInTwoSteps(rewriter, op, inner);
    if (failed(partial))
      return op;
    rewriter.setInsertionPoint(*partial);
    collapsed = collapseReductionLoops(rewriter, *partial);
    if (failed(collapsed))
      return *partial;
  }
  std::pair<int64_t, int64_t> volumes = *getLoopVolumes(*collapsed);
  linalg::SplitReductionOptions chosen;
  auto control = [&](linalg::LinalgOp target) {
    SmallVector<unsigned> reductions;
    target.getReductionDims(reductions);
    chosen.ratio = chooseRatio(volumes.second, volumes.first);
    chosen.index = reductions.front();
    chosen.innerParallel = true;
    return chosen;
  };
  FailureOr<linalg::SplitReductionResult> split =
      linalg::splitReduction(rewriter, *collapsed, control);
  if (failed(split))
    return *collapsed;
  remapSplitIndices(rewriter, split->splitLinalgOp, chosen.index, chosen.ratio);
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

  /// For threads: each large reduction with few outputs, split once.
  void splitForThreads(IRRewriter &rewriter) {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      std::optional<std::pair<int64_t, int64_t>> volumes = getLoopVolumes(op);
      if (isSplittable(op) && volumes && volumes->first * 4 < threads &&
          volumes->second >= kMinReduced)
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      collapseAndSplit(rewriter, op, [&](int64_t size, int64_t parallel) {
        int64_t limit = std::min(
            {kMaxRatio, size / 2, std::max<int64_t>(1, threads / parallel)});
        for (int64_t ratio = limit; ratio >= kMinRatio; --ratio)
          if (size % ratio == 0)
            return ratio;
        return int64_t(0);
      });
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
