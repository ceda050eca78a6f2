//===- TestPolicy.cpp - Remarks from the precision policy -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// test-amp-policy: a remark per op with the class the precision policy gives
// it and where that came from, so that lit tests can check policy files and
// overrides before amp-assign-precision uses them.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct TestPolicyPass : PassWrapper<TestPolicyPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPolicyPass)

  TestPolicyPass() = default;
  TestPolicyPass(const TestPolicyPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-amp-policy"; }
  StringRef getDescription() const final {
    return "Remark the precision class the policy gives each op";
  }

  Option<std::string> policyFile{*this, "policy",
                                 llvm::cl::desc("JSON policy file")};
  ListOption<std::string> opClasses{
      *this, "op-class", llvm::cl::desc("op type overrides, name:class")};
  ListOption<std::string> nodeClasses{
      *this, "node-class", llvm::cl::desc("node overrides, name:class")};

  void runOnOperation() override {
    amp::PrecisionPolicy policy;
    if (failed(policy.addSources(policyFile, opClasses, nodeClasses,
                                 getOperation()->getLoc())))
      return signalPassFailure();
    getOperation()->walk([&](Operation *op) {
      if (isa<onnxg::NoneOp, onnxg::YieldOp, func::FuncOp, func::ReturnOp,
              ModuleOp>(op))
        return;
      amp::PolicySource source;
      amp::PrecisionClass precisionClass = policy.classify(op, &source);
      op->emitRemark() << amp::stringifyPrecisionClass(precisionClass) << " ("
                       << amp::stringifyPolicySource(source) << ")";
    });
  }
};
} // namespace

namespace mlir::amp::test {
void registerTestPolicyPass() { PassRegistration<TestPolicyPass>(); }
} // namespace mlir::amp::test
