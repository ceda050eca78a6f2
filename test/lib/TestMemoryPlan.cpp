//===- TestMemoryPlan.cpp - Remarks from the memory planner ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// test-amp-memory-plan: a remark per function with the planner's peak, the
// input bytes and the saved activations, and with `ops` one per op with the
// bytes live while it runs, so that lit tests check the liveness.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/CostModel.h"
#include "amp/Dialect/AMP/Transforms/MemoryPlan.h"
#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
struct TestMemoryPlanPass
    : PassWrapper<TestMemoryPlanPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestMemoryPlanPass)

  TestMemoryPlanPass() = default;
  TestMemoryPlanPass(const TestMemoryPlanPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-amp-memory-plan"; }
  StringRef getDescription() const final {
    return "Remark the memory planner's peak and saved activations";
  }

  Option<int64_t> defaultDimSize{
      *this, "default-dim-size", llvm::cl::init(1),
      llvm::cl::desc("size assumed for dynamic dimensions without a dim")};
  Option<bool> ops{*this, "ops", llvm::cl::init(false),
                   llvm::cl::desc("also remark the live bytes at each op")};

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    std::optional<amp::CostModel> model = amp::CostModel::create(
        "h100", "fused", defaultDimSize, {}, func, "test-amp-memory-plan");
    if (!model)
      return signalPassFailure();
    Block &body = func.getBody().front();
    amp::MemoryPlan plan(body, model->getSizes());
    if (ops)
      for (auto [op, live] : llvm::zip(body, plan.getLiveBytes()))
        op.emitRemark() << "live " << int64_t(live) << " bytes";
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "peak " << int64_t(plan.getPeakBytes()) << " bytes at '"
       << (plan.getPeakOp()
               ? amp::PrecisionPolicy::getNodeName(plan.getPeakOp())
               : StringRef())
       << "' (inputs " << int64_t(plan.getInputBytes()) << "); ";
    if (!plan.hasRegions())
      os << "no forward/backward regions";
    else
      os << plan.getSavedActivations().size() << " saved activations, "
         << int64_t(plan.getSavedBytes()) << " bytes";
    for (auto [position, holder] : llvm::enumerate(plan.getSavedActivations()))
      os << (position ? ", " : ": ") << onnxg::getValueName(holder.value) << " "
         << int64_t(holder.bytes);
    func.emitRemark() << text;
  }
};
} // namespace

namespace mlir::amp::test {
void registerTestMemoryPlanPass() { PassRegistration<TestMemoryPlanPass>(); }
} // namespace mlir::amp::test
