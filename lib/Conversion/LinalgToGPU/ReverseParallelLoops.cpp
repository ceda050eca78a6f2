//===- ReverseParallelLoops.cpp - Parallel loops run last to first --------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-reverse-parallel-loops pass: every scf.parallel visits its
// iterations in reverse order, so that a sequential run of a grid whose
// threads depend on one another gives other results than a run in order.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::amp {
#define GEN_PASS_DEF_REVERSEPARALLELLOOPS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// `lb + last` for a loop from `lb` to `ub` by `step`, where `last` is its
/// last value, `lb + ((ub - lb - 1) floordiv step) * step`: a constant when
/// the three are.
static Value getFirstPlusLast(OpBuilder &builder, Location loc, Value lb,
                              Value ub, Value step) {
  std::optional<int64_t> lbValue = getConstantIntValue(lb),
                         ubValue = getConstantIntValue(ub),
                         stepValue = getConstantIntValue(step);
  if (lbValue && ubValue && stepValue)
    return arith::ConstantIndexOp::create(
        builder, loc,
        2 * *lbValue +
            llvm::divideFloorSigned(*ubValue - *lbValue - 1, *stepValue) *
                *stepValue);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  Value span = arith::SubIOp::create(
      builder, loc, arith::SubIOp::create(builder, loc, ub, lb), one);
  Value offset = arith::MulIOp::create(
      builder, loc, arith::FloorDivSIOp::create(builder, loc, span, step),
      step);
  Value twice = arith::AddIOp::create(builder, loc, lb, lb);
  return arith::AddIOp::create(builder, loc, twice, offset);
}

/// Makes `loop` visit its iterations last to first: its body sees
/// `lb + last - iv` for each induction variable `iv`.
static void reverseIterations(scf::ParallelOp loop) {
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> firstPlusLast;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
    firstPlusLast.push_back(getFirstPlusLast(builder, loc, lb, ub, step));
  builder.setInsertionPointToStart(loop.getBody());
  for (auto [iv, sum] : llvm::zip(loop.getInductionVars(), firstPlusLast)) {
    auto reversed = arith::SubIOp::create(builder, loc, sum, iv);
    iv.replaceAllUsesExcept(reversed, reversed);
  }
}

namespace {
struct ReverseParallelLoopsPass
    : amp::impl::ReverseParallelLoopsBase<ReverseParallelLoopsPass> {
  void runOnOperation() override {
    getOperation()->walk([](scf::ParallelOp loop) { reverseIterations(loop); });
  }
};
} // namespace
