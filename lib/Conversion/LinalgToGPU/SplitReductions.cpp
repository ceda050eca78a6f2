//===- SplitReductions.cpp - Reductions with few outputs, split -----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-split-reductions pass: a reduction with few output elements and
// many reduced ones becomes a parallel partial reduction and a small final
// one (upstream linalg::splitReduction), after its reduction dimensions are
// collapsed into one (linalg::collapseOpIterationDims).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::amp {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Reductions smaller than this stay in one thread per output element.
static constexpr int64_t kMinReduced = 8192;
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

namespace {
struct SplitReductionsPass
    : amp::impl::SplitReductionsBase<SplitReductionsPass> {
  using SplitReductionsBase::SplitReductionsBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      std::optional<std::pair<int64_t, int64_t>> volumes = getLoopVolumes(op);
      if (op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 &&
          llvm::all_of(
              op.getIndexingMapsArray(),
              [](AffineMap map) { return map.isProjectedPermutation(); }) &&
          op.getNumReductionLoops() > 0 && volumes &&
          volumes->first * 4 < threads && volumes->second >= kMinReduced)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgOp> collapsed =
          collapseReductionLoops(rewriter, op);
      if (failed(collapsed))
        continue;
      int64_t parallel = getLoopVolumes(*collapsed)->first;
      auto control = [&](linalg::LinalgOp target) {
        linalg::SplitReductionOptions options;
        SmallVector<unsigned> reductions;
        target.getReductionDims(reductions);
        int64_t size = target.getStaticLoopRanges()[reductions.front()];
        int64_t limit = std::min(
            {kMaxRatio, size / 2, std::max<int64_t>(1, threads / parallel)});
        for (int64_t ratio = limit; ratio >= kMinRatio; --ratio)
          if (size % ratio == 0) {
            options.ratio = ratio;
            break;
          }
        options.index = reductions.front();
        options.innerParallel = true;
        return options;
      };
      (void)linalg::splitReduction(rewriter, *collapsed, control);
    }
  }
};
} // namespace
