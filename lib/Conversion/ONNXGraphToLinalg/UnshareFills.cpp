//===- UnshareFills.cpp - One linalg.fill per destination -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-unshare-fills pass: a filled tensor that several ops write into
// (their destination) is filled once for each of them, so that
// bufferization writes each in place instead of copying the filled buffer.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::amp {
#define GEN_PASS_DEF_UNSHAREFILLS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct UnshareFillsPass : amp::impl::UnshareFillsBase<UnshareFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() &&
          fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    OpBuilder builder(&getContext());
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> destinations;
      bool read = false;
      for (OpOperand &use : fill->getResult(0).getUses()) {
        auto user = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
        if (user && user.isDpsInit(&use))
          destinations.push_back(&use);
        else
          read = true;
      }
      // Where nothing else reads the fill, one destination keeps it.
      size_t keep = read ? 0 : 1;
      if (destinations.size() <= keep)
        continue;
      auto empty = fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>();
      for (OpOperand *use : ArrayRef(destinations).drop_front(keep)) {
        builder.setInsertionPoint(use->getOwner());
        IRMapping mapping;
        mapping.map(empty.getResult(), builder.clone(*empty)->getResult(0));
        use->set(builder.clone(*fill, mapping)->getResult(0));
      }
    }
  }
};
} // namespace
