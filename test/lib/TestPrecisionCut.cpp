//===- TestPrecisionCut.cpp - The min-cut against exhaustive search -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// test-amp-precision-cut: random assignment problems of up to 16 ops, with
// random times, pins and shared casts, solved by the min-cut and by trying
// every labeling. The cut must reach the least objective, respect the pins,
// and pick the labeling with the fewest low ops among the optimal ones.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/PrecisionCut.h"

#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace mlir;
using amp::PrecisionCut;

namespace {
struct TestPrecisionCutPass
    : PassWrapper<TestPrecisionCutPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrecisionCutPass)

  TestPrecisionCutPass() = default;
  TestPrecisionCutPass(const TestPrecisionCutPass &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-amp-precision-cut"; }
  StringRef getDescription() const final {
    return "Compare the precision min-cut with exhaustive enumeration on "
           "random problems";
  }

  Option<unsigned> seed{*this, "seed", llvm::cl::init(1),
                        llvm::cl::desc("random seed")};
  Option<unsigned> graphs{*this, "graphs", llvm::cl::init(500),
                          llvm::cl::desc("problems to solve")};
  Option<unsigned> maxOps{*this, "max-ops", llvm::cl::init(16),
                          llvm::cl::desc("ops per problem, at most")};

  void runOnOperation() override;
};
} // namespace

/// A random problem: times in whole microseconds (so that ties are exact),
/// some ops pinned, results shared by several consumers, fixed inputs.
static PrecisionCut makeProblem(std::mt19937 &random, unsigned numOps) {
  auto uniform = [&](unsigned bound) { return random() % bound; };
  PrecisionCut problem;
  for (unsigned op = 0; op < numOps; ++op) {
    unsigned pin = uniform(10);
    problem.addOp(uniform(12), uniform(12),
                  pin == 0   ? PrecisionCut::Pin::FP32
                  : pin == 1 ? PrecisionCut::Pin::Low
                             : PrecisionCut::Pin::None);
  }
  auto someConsumers = [&](unsigned after) {
    SmallVector<unsigned> consumers;
    for (unsigned op = after; op < numOps; ++op)
      if (uniform(3) == 0)
        consumers.push_back(op);
    return consumers;
  };
  for (unsigned op = 0; op < numOps; ++op)
    if (uniform(4) != 0)
      problem.addResult(op, someConsumers(op + 1), uniform(4) == 0, uniform(8),
                        uniform(8));
  for (unsigned input = uniform(4); input > 0; --input)
    problem.addInput(someConsumers(0), uniform(3) == 0, uniform(8),
                     uniform(2) == 0);
  return problem;
}

void TestPrecisionCutPass::runOnOperation() {
  if (maxOps < 1 || maxOps > 20) {
    getOperation()->emitError("test-amp-precision-cut: max-ops must be 1..20");
    return signalPassFailure();
  }
  std::mt19937 random(seed);
  unsigned mixed = 0, tied = 0, largest = 0;
  for (unsigned index = 0; index < graphs; ++index) {
    unsigned numOps = 1 + random() % maxOps;
    largest = std::max(largest, numOps);
    PrecisionCut problem = makeProblem(random, numOps);
    SmallVector<bool> cut = problem.solve();
    SmallVector<bool> pins = problem.getBaseline();
    double cutValue = problem.evaluate(cut);
    // Every labeling that respects the pins.
    double best = INFINITY;
    SmallVector<uint32_t> optima;
    SmallVector<bool> labels(numOps);
    for (uint32_t mask = 0; mask < (1u << numOps); ++mask) {
      bool feasible = true;
      for (unsigned op = 0; op < numOps; ++op) {
        labels[op] = mask >> op & 1;
        if (problem.isPinned(op))
          feasible &= labels[op] == pins[op];
      }
      if (!feasible)
        continue;
      double value = problem.evaluate(labels);
      if (value < best - 1e-9) {
        best = value;
        optima.clear();
      }
      if (std::fabs(value - best) <= 1e-9)
        optima.push_back(mask);
    }
    uint32_t cutMask = 0;
    for (unsigned op = 0; op < numOps; ++op) {
      cutMask |= uint32_t(cut[op]) << op;
      if (problem.isPinned(op) && cut[op] != pins[op]) {
        getOperation()->emitError()
            << "problem " << index << ": op " << op << " breaks its pin";
        return signalPassFailure();
      }
    }
    if (std::fabs(cutValue - best) > 1e-9) {
      getOperation()->emitError()
          << "problem " << index << " (" << numOps << " ops): the cut costs "
          << cutValue << ", the optimum " << best;
      return signalPassFailure();
    }
    // Fewest low ops: the cut's low set lies inside every optimum's.
    for (uint32_t optimum : optima)
      if ((cutMask & ~optimum) != 0) {
        getOperation()->emitError()
            << "problem " << index << ": the cut makes more ops low than an "
            << "equal optimum";
        return signalPassFailure();
      }
    mixed += cutMask != 0 && cutMask != (1u << numOps) - 1;
    tied += optima.size() > 1;
  }
  llvm::outs() << "test-amp-precision-cut: " << graphs << " problems of up to "
               << largest << " ops: every cut is optimal; " << mixed
               << " mix FP32 and low ops, " << tied << " have tied optima\n";
}

namespace mlir::amp::test {
void registerTestPrecisionCutPass() {
  PassRegistration<TestPrecisionCutPass>();
}
} // namespace mlir::amp::test
