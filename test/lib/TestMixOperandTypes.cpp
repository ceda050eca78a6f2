//===- TestMixOperandTypes.cpp - Make a graph onnx.checker rejects --------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// test-onnxg-mix-operand-types: casts the second operand of the first f32
// Add, Sub, Mul or Div to f16, which the dialect's verifier allows and ONNX's
// type constraints do not. A correct pipeline never does this: the pass lets
// lit tests show that the exporter refuses to write a model that amp-opt broke.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct TestMixOperandTypesPass
    : PassWrapper<TestMixOperandTypesPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestMixOperandTypesPass)

  StringRef getArgument() const final { return "test-onnxg-mix-operand-types"; }
  StringRef getDescription() const final {
    return "Cast the second operand of the first f32 Add, Sub, Mul or Div to "
           "f16 (an invalid ONNX graph)";
  }

  void runOnOperation() override {
    getOperation()->walk([&](onnxg::NodeOp node) {
      if (!llvm::is_contained({"Add", "Sub", "Mul", "Div"}, node.getOpType()) ||
          node->getNumOperands() != 2)
        return WalkResult::advance();
      auto type = dyn_cast<RankedTensorType>(node->getOperand(1).getType());
      if (!type || !type.getElementType().isF32())
        return WalkResult::advance();
      OpBuilder builder(node);
      constexpr int64_t kOnnxFloat16 = 10;
      onnxg::NodeOp cast = onnxg::createNode(
          builder, "Cast", type.clone(builder.getF16Type()),
          node->getOperand(1), "test_mixed_cast", "test_mixed",
          {builder.getNamedAttr("to",
                                builder.getI64IntegerAttr(kOnnxFloat16))});
      node->setOperand(1, cast->getResult(0));
      return WalkResult::interrupt();
    });
  }
};
} // namespace

namespace mlir::amp::test {
void registerTestMixOperandTypesPass() {
  PassRegistration<TestMixOperandTypesPass>();
}
} // namespace mlir::amp::test
