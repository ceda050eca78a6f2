//===- CopyRepeatedResults.cpp - One tensor per function result -----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-copy-repeated-results pass: a value a function returns a second
// time is returned as a copy, so that bufferization gives every result its
// own buffer.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Conversion/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_COPYREPEATEDRESULTS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp::lowering;

namespace {
struct CopyRepeatedResultsPass
    : amp::impl::CopyRepeatedResultsBase<CopyRepeatedResultsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Operation *terminator = func.getBody().front().getTerminator();
    OpBuilder builder(terminator);
    llvm::SmallPtrSet<Value, 8> returned;
    for (OpOperand &operand : terminator->getOpOperands()) {
      Value value = operand.get();
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type || returned.insert(value).second)
        continue;
      Location loc = value.getLoc();
      Value empty = createEmpty(builder, loc, getSizes(builder, loc, value),
                                type.getElementType());
      auto copy = linalg::CopyOp::create(builder, loc, value, empty);
      copy->setAttr("amp.result",
                    builder.getI64IntegerAttr(operand.getOperandNumber()));
      operand.set(copy.getResult(0));
    }
  }
};
} // namespace
