//===- EliminateCasts.cpp - Remove exact cast round trips -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-eliminate-casts: a cast of a cast becomes one cast, or none, when the
// first cast is exact (it widens); lossy chains stay.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/APFloat.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPELIMINATECASTS
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

/// Whether every value of `from`, infinities included, is a value of `to`.
static bool isExactIn(FloatType from, FloatType to) {
  const llvm::fltSemantics &a = from.getFloatSemantics();
  const llvm::fltSemantics &b = to.getFloatSemantics();
  return llvm::APFloatBase::isRepresentableBy(a, b) &&
         (!llvm::APFloatBase::semanticsHasInf(a) ||
          llvm::APFloatBase::semanticsHasInf(b));
}

namespace {
/// cast(cast(x : A -> B) : B -> C) -> cast(x : A -> C) when A -> B is exact.
struct FoldExactCastChain : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<CastOp>();
    if (!inner || inner.getScale() || outer.getScale())
      return failure();
    auto from = cast<FloatType>(inner.getInput().getType().getElementType());
    auto via = cast<FloatType>(inner.getType().getElementType());
    if (!isExactIn(from, via))
      return rewriter.notifyMatchFailure(outer, "the first cast rounds");
    if (outer.getType() == inner.getInput().getType()) {
      rewriter.replaceOp(outer, inner.getInput());
      return success();
    }
    rewriter.replaceOpWithNewOp<CastOp>(outer, outer.getType(),
                                        inner.getInput(), FloatAttr());
    return success();
  }
};

class EliminateCastsPass
    : public amp::impl::AMPEliminateCastsBase<EliminateCastsPass> {
public:
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldExactCastChain>(&getContext());
    // Folding removes same-type casts; the driver erases unused ones.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
