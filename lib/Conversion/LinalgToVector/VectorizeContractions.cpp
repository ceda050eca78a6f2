//===- VectorizeContractions.cpp - Register-block GEMM-like generics ------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-vectorize-contractions pass: tiles each GEMM-like linalg.generic
// to m x n x k tiles and vectorizes every tile into a vector.contract, so
// that the CPU pipeline's GEMMs run on vector registers instead of one
// scalar multiply-add per loop iteration.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_VECTORIZECONTRACTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Whether `op` is a contraction this pass tiles: a multiply-accumulate
/// body, projected permutation maps, static loop ranges, at least two
/// parallel loops followed by the reduction loops.
static bool isGEMMLike(linalg::GenericOp op) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInits() != 1)
    return false;
  // At least two parallel loops, then the reduction loops (several when a
  // reshape of K was folded into the op).
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  size_t parallel = llvm::count(iterators, utils::IteratorType::parallel);
  if (parallel < 2 || parallel == iterators.size() ||
      !llvm::all_of(ArrayRef(iterators).drop_front(parallel), [](auto type) {
        return type == utils::IteratorType::reduction;
      }))
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return false;
  return llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

/// The largest power of two at most `target` that divides `size`.
static int64_t getDividingTile(int64_t target, int64_t size) {
  int64_t tile = 1;
  while (tile * 2 <= target && size % (tile * 2) == 0)
    tile *= 2;
  return tile;
}

namespace {
struct VectorizeContractionsPass
    : amp::impl::VectorizeContractionsBase<VectorizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<linalg::GenericOp> contractions;
    func.walk([&](linalg::GenericOp op) {
      if (isGEMMLike(op))
        contractions.push_back(op);
    });
    IRRewriter rewriter(context);
    for (linalg::GenericOp op : contractions) {
      // Loops: outer parallel ones by 1, then m and n, outer reductions by
      // 1 and the innermost reduction k. Each tile size divides its loop,
      // so that no tile overhangs and no vector needs a mask.
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      size_t loops = ranges.size();
      size_t parallel = op.getNumParallelLoops();
      SmallVector<int64_t> tile(loops, 1);
      tile[parallel - 2] = getDividingTile(tileM, ranges[parallel - 2]);
      tile[parallel - 1] = getDividingTile(tileN, ranges[parallel - 1]);
      tile[loops - 1] = getDividingTile(tileK, ranges[loops - 1]);
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(context, tile));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue;
      rewriter.replaceOp(op, tiled->replacements);
      Operation *tileOp = tiled->tiledOps.front();
      // Fixed-size vectors: one scalable flag (false) per dimension.
      SmallVector<bool> scalable(loops, false);
      if (failed(linalg::vectorizeOpPrecondition(tileOp, tile, scalable)))
        continue;
      rewriter.setInsertionPoint(tileOp);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, tileOp, tile, scalable);
      if (succeeded(vectorized))
        rewriter.replaceOp(tileOp, vectorized->replacements);
    }
    // Fold the transfers' broadcasts into the contractions' maps.
    RewritePatternSet contract(context);
    vector::populateVectorTransferPermutationMapLoweringPatterns(contract);
    vector::populateVectorReductionToContractPatterns(contract);
    vector::populateSinkVectorOpsPatterns(contract);
    if (failed(applyPatternsGreedily(func, std::move(contract))))
      return signalPassFailure();
    // Then lower the register-level vector ops to 1-D ones (outer products
    // to FMAs); transfers stay for convert-vector-to-scf after
    // bufferization.
    RewritePatternSet lower(context);
    vector::populateVectorContractLoweringPatterns(
        lower, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(lower);
    vector::populateVectorTransposeLoweringPatterns(
        lower, vector::VectorTransposeLowering::EltWise);
    vector::populateVectorBroadcastLoweringPatterns(lower);
    vector::populateVectorShapeCastLoweringPatterns(lower);
    vector::populateVectorMaskOpLoweringPatterns(lower);
    vector::populateVectorMultiReductionLoweringPatterns(
        lower, vector::VectorMultiReductionLowering::InnerReduction);
    if (failed(applyPatternsGreedily(func, std::move(lower))))
      signalPassFailure();
  }
};
} // namespace
