//===- TestCostModel.cpp - Remarks from the cost model --------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// test-amp-cost-model: a remark per op with its modeled FP32 and low
// precision times and the cheaper of the two, so that lit tests can check
// the cost model (PAI's embedding case) before amp-assign-precision uses it.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/CostModel.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
struct TestCostModelPass : PassWrapper<TestCostModelPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestCostModelPass)

  TestCostModelPass() = default;
  TestCostModelPass(const TestCostModelPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-amp-cost-model"; }
  StringRef getDescription() const final {
    return "Remark the modeled FP32 and low-precision time of each op";
  }

  Option<std::string> device{*this, "device", llvm::cl::init("h100"),
                             llvm::cl::desc("h100, a100 or v100")};
  Option<std::string> casts{
      *this, "casts", llvm::cl::init("fused"),
      llvm::cl::desc("fused (casts inside neighbouring kernels) or kernels")};
  Option<std::string> precision{*this, "precision", llvm::cl::init("fp16"),
                                llvm::cl::desc("fp16 or bf16")};
  Option<int64_t> defaultDimSize{
      *this, "default-dim-size", llvm::cl::init(1),
      llvm::cl::desc("size assumed for dynamic dimensions without a dim")};
  ListOption<std::string> dimSizes{
      *this, "dim",
      llvm::cl::desc("sizes of named dynamic dimensions, <name>:<size>")};

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    std::optional<amp::CostModel> model =
        amp::CostModel::create(device, casts, defaultDimSize, dimSizes,
                               getOperation(), "test-amp-cost-model");
    if (!model)
      return signalPassFailure();
    FloatType low = amp::parseLowPrecision(ctx, precision);
    if (!low) {
      getOperation()->emitError()
          << "unknown precision '" << precision << "'; expected fp16 or bf16";
      return signalPassFailure();
    }
    amp::DimSizes &sizes = model->getSizes();
    if (!model->supports(low)) {
      getOperation()->emitError()
          << "device " << device << " has no " << precision;
      return signalPassFailure();
    }
    getOperation()->walk([&](amp::PrecisionOpInterface op) {
      sizes.resetGuesses();
      amp::CostModel::Comparison times = model->compare(op, low);
      double flops = op.estimateFlops(sizes);
      std::string text;
      llvm::raw_string_ostream os(text);
      os << llvm::format("flops %.3g, fp32 %.3g us, %s %.3g us + casts "
                         "%.3g us: ",
                         flops, times.fp32Us, precision.c_str(), times.lowUs,
                         times.lowCastUs)
         << (times.prefersLow() ? precision.getValue() : "fp32")
         << (sizes.getGuesses().empty() ? "" : " (guessed sizes of ")
         << llvm::join(sizes.getGuesses(), ", ")
         << (sizes.getGuesses().empty() ? "" : ")");
      op->emitRemark() << text;
    });
  }
};
} // namespace

namespace mlir::amp::test {
void registerTestCostModelPass() { PassRegistration<TestCostModelPass>(); }
} // namespace mlir::amp::test
