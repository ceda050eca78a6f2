//===- FuseElementwise.cpp - Elementwise fusion around linalg.contract ----===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-fuse-elementwise pass: upstream's elementwise fusion patterns,
// as linalg-fuse-elementwise-ops applies them, except into linalg.contract
// ops, which the CPU pipeline hands to BLAS whole; cheap elementwise
// producers with several readers are recomputed in each.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Whether `op` is a linalg.generic of parallel loops whose body is a few
/// arithmetic ops: worth recomputing in each of its consumers, so that its
/// result need not be stored. Not one that reads a contraction's result:
/// the GEMM's epilogue (a bias, the rounding) takes that op whole.
static bool isCheapElementwise(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() != 0 ||
      llvm::any_of(generic.getDpsInputs(), [](Value input) {
        return isa_and_present<linalg::ContractOp>(input.getDefiningOp());
      }))
    return false;
  Block *body = generic.getBody();
  return body->getOperations().size() <= 5 &&
         llvm::all_of(body->without_terminator(), [](Operation &nested) {
           return nested.getDialect() &&
                  nested.getDialect()->getNamespace() == "arith";
         });
}

/// Upstream's control (a producer with one use; with `multiUse` also a
/// cheap elementwise one with several), except where the producer or the
/// consumer is a linalg.contract.
static bool isFusable(OpOperand *fusedOperand, bool multiUse) {
  Operation *producer = fusedOperand->get().getDefiningOp();
  if (!producer || isa<linalg::ContractOp>(producer) ||
      isa<linalg::ContractOp>(fusedOperand->getOwner()))
    return false;
  if (producer->hasOneUse())
    return true;
  // Several uses: recomputed in a consumer that computes (not a copy or
  // gather, which later passes match as such) and reads the result
  // element for element (a permutation: once per consumer element).
  auto consumer = dyn_cast<linalg::GenericOp>(fusedOperand->getOwner());
  return multiUse && consumer && isCheapElementwise(producer) &&
         consumer.getBody()->getOperations().size() > 1 &&
         consumer.getMatchingIndexingMap(fusedOperand).isPermutation();
}

namespace {
struct FuseElementwisePass
    : amp::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    bool fuseMultiUse = multiUse;
    linalg::ControlFusionFn shouldFuse = [fuseMultiUse](OpOperand *operand) {
      return isFusable(operand, fuseMultiUse);
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldFuse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, shouldFuse);
    // Top-down, as upstream, for compile time.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
