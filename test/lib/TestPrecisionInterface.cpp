//===- TestPrecisionInterface.cpp - Remarks from PrecisionOpInterface -----===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// test-amp-precision-interface: a remark per op that implements
// PrecisionOpInterface, with its class and data slots, so that lit tests can
// check the op table and its external models.
//
//===----------------------------------------------------------------------===//

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace {
struct TestPrecisionInterfacePass
    : PassWrapper<TestPrecisionInterfacePass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrecisionInterfacePass)

  StringRef getArgument() const final { return "test-amp-precision-interface"; }
  StringRef getDescription() const final {
    return "Remark the precision class and data slots of each op";
  }

  void runOnOperation() override {
    getOperation()->walk([](amp::PrecisionOpInterface op) {
      SmallVector<unsigned> operands, results;
      for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
        if (op.isPrecisionDataOperand(i))
          operands.push_back(i);
      for (unsigned i = 0, e = op->getNumResults(); i < e; ++i)
        if (op.isPrecisionDataResult(i))
          results.push_back(i);
      auto list = [](ArrayRef<unsigned> slots) {
        std::string text = "[";
        llvm::interleave(
            slots, [&](unsigned slot) { text += std::to_string(slot); },
            [&] { text += ", "; });
        return text + "]";
      };
      op->emitRemark() << amp::stringifyPrecisionClass(op.getPrecisionClass())
                       << ", data operands " << list(operands)
                       << ", data results " << list(results);
    });
  }
};
} // namespace

namespace mlir::amp::test {
void registerTestCostModelPass();
void registerTestMemoryPlanPass();
void registerTestMixOperandTypesPass();
void registerTestPolicyPass();
void registerTestPrecisionCutPass();

void registerTestPasses() {
  PassRegistration<TestPrecisionInterfacePass>();
  registerTestCostModelPass();
  registerTestMemoryPlanPass();
  registerTestMixOperandTypesPass();
  registerTestPolicyPass();
  registerTestPrecisionCutPass();
}
} // namespace mlir::amp::test
