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

#include "amp/Conversion/OutputFills.h"
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

/// Whether `op` is a linalg.generic over one input whose body converts it
/// (one cast: extf, truncf) or copies it.
static bool isConversion(Operation *op) {
  auto generic = dyn_cast_if_present<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1)
    return false;
  Block *body = generic.getBody();
  return body->getOperations().size() == 1 ||
         (body->getOperations().size() == 2 &&
          isa<CastOpInterface>(body->front()));
}

/// Whether `value` is a contraction's result (through reshapes and
/// conversions: a convolution's result, rounded to its AMP type), or that
/// of an op that reads one (a GEMM's bias addition, which the GEMM record
/// pass takes into the call as its epilogue when nothing else joins it).
static bool comesFromContraction(Value value) {
  for (value = amp::stripReshapes(value);
       Operation *def = value.getDefiningOp();
       value = amp::stripReshapes(def->getOperand(0))) {
    if (isa<linalg::ContractOp>(def))
      return true;
    auto generic = dyn_cast<linalg::GenericOp>(def);
    if (generic && llvm::any_of(generic.getDpsInputs(), [](Value input) {
          return isa_and_present<linalg::ContractOp>(
              amp::stripReshapes(input).getDefiningOp());
        }))
      return true;
    if (!isConversion(def))
      return false;
  }
  return false;
}

/// Whether `transpose` has one reader, a linalg.generic that computes
/// (more than a conversion): as a generic, the transpose then fuses into
/// it, which reads the transpose's input permuted. Other transposes stay,
/// and so does one of a contraction's result (comesFromContraction): the
/// record passes fold transposes around a contraction, alone or with a
/// conversion, into cuDNN's layouts (a weight gradient reads X and dY
/// transposed and writes dW transposed), and a GEMM's epilogue must not
/// fuse with the op after the transpose.
static bool foldsIntoReader(linalg::TransposeOp transpose) {
  if (!transpose->hasOneUse() || comesFromContraction(transpose.getInput()))
    return false;
  Operation *reader = *transpose->user_begin();
  return isa<linalg::GenericOp>(reader) && !isConversion(reader);
}

namespace {
struct FuseElementwisePass
    : amp::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // A transpose is an elementwise copy with a permuted map: as a generic
    // it fuses into the op that reads it (foldsIntoReader), one loop (a
    // kernel on the GPU) and one buffer fewer.
    IRRewriter rewriter(context);
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (foldsIntoReader(op))
        transposes.push_back(op);
    });
    for (linalg::TransposeOp transpose : transposes) {
      rewriter.setInsertionPoint(transpose);
      if (failed(linalg::generalizeNamedOp(rewriter, transpose)))
        return signalPassFailure();
    }
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
