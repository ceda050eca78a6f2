//===- ExposeYield.cpp - ORTModule's YieldOp as the step's interface ------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The onnxg-expose-yield pass: in an ORTModule graph, com.microsoft YieldOp
// hands the module's outputs to PyTorch and takes back their gradients. As a
// function of its own, the step returns those outputs and takes the
// gradients as inputs, under the names YieldOp gives them.
//
//===----------------------------------------------------------------------===//

#include "NodeEmitter.h"

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::onnxg {
#define GEN_PASS_DEF_ONNXGRAPHEXPOSEYIELD
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"
} // namespace mlir::onnxg

using namespace mlir;
using namespace mlir::onnxg;

/// Makes `yield`'s inputs results of `func` and its outputs arguments.
static LogicalResult expose(func::FuncOp func, NodeOp yield) {
  Block &body = func.getBody().front();
  if (yield->getBlock() != &body)
    return yield.emitNodeError() << "YieldOp inside a subgraph cannot become "
                                    "the step's inputs and outputs";
  Builder builder(func.getContext());
  Operation *ret = body.getTerminator();
  llvm::StringSet<> returned;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (auto name = func.getResultAttrOfType<StringAttr>(
            i, ONNXGraphDialect::kNameAttrName))
      returned.insert(name.getValue());
  // The module's outputs, under their own names.
  for (Value output : yield.getInputs()) {
    StringRef name = getValueName(output);
    if (name.empty() || !returned.insert(name).second)
      continue;
    unsigned index = func.getNumResults();
    (void)func.insertResult(
        index, output.getType(),
        builder.getDictionaryAttr(builder.getNamedAttr(
            ONNXGraphDialect::kNameAttrName, builder.getStringAttr(name))));
    ret->insertOperands(ret->getNumOperands(), output);
  }
  // Their gradients, as inputs.
  for (auto [i, gradient] : llvm::enumerate(yield.getOutputs())) {
    StringRef name = getValueName(gradient);
    auto type = dyn_cast<RankedTensorType>(gradient.getType());
    if (name.empty() || !type)
      return yield.emitNodeError()
             << "output " << i << " ('" << name
             << "') needs a name and a ranked type to become an input";
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, type, builder.getDictionaryAttr({}),
                              NameLoc::get(builder.getStringAttr(name)));
    gradient.replaceAllUsesWith(func.getArgument(index));
  }
  yield.erase();
  return success();
}

namespace {
struct ONNXGraphExposeYieldPass
    : public onnxg::impl::ONNXGraphExposeYieldBase<ONNXGraphExposeYieldPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (failed(expandNodes(
            func,
            [](NodeOp node) {
              return node.getDomain() == kMicrosoftDomain &&
                     node.getOpType() == "YieldOp";
            },
            [&](NodeOp node, OpBuilder &) { return expose(func, node); })))
      signalPassFailure();
  }
};
} // namespace
