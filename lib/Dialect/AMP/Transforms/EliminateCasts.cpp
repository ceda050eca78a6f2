//===- EliminateCasts.cpp - Remove exact cast round trips -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-eliminate-casts: a cast of a cast becomes one cast, or none, when that
// gives the same values (the first cast widens, or rounding twice is
// innocuous); lossy chains stay.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Interfaces/CastFusionOpInterface.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPELIMINATECASTS
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
/// cast(cast(x : A -> B) : B -> C) -> cast(x : A -> C) when that rounds
/// the same: A -> B is exact, or B is so much wider than C that rounding
/// twice is innocuous.
struct FoldExactCastChain : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<CastOp>();
    if (!inner)
      return failure();
    Type from = inner.getInput().getType().getElementType();
    auto via = cast<FloatType>(inner.getType().getElementType());
    auto to = cast<FloatType>(outer.getType().getElementType());
    if (!castsCompose(from, via, to))
      return rewriter.notifyMatchFailure(outer, "rounding twice differs");
    if (outer.getType() == inner.getInput().getType()) {
      rewriter.replaceOp(outer, inner.getInput());
      return success();
    }
    rewriter.replaceOpWithNewOp<CastOp>(outer, outer.getType(),
                                        inner.getInput());
    return success();
  }
};

class EliminateCastsPass
    : public amp::impl::AMPEliminateCastsBase<EliminateCastsPass> {
public:
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldExactCastChain>(&getContext());
    // Only casts: the driver would also erase other dead ops, and a graph
    // may define a name twice with the first definition unread.
    SmallVector<Operation *> casts;
    getOperation().walk([&](CastOp castOp) { casts.push_back(castOp); });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    // Folding removes same-type casts; the driver erases unused ones.
    if (failed(applyOpPatternsGreedily(casts, std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
