//===- UnshareFills.cpp - One linalg.fill per destination -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-unshare-fills pass: a filled tensor that several ops write into
// (their destination) is filled once for each of them, so that
// bufferization writes each in place instead of copying the filled buffer;
// and a tensor.empty keeps at most 16 uses, so that bufferization's analysis
// does not see one alias set of all the ops that write into it.
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

/// The most uses a tensor.empty keeps.
static constexpr size_t kUsesPerEmpty = 16;

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
    // Empty tensors: each run of kUsesPerEmpty uses (in program order) gets
    // a clone before its first, so that the ops of one run may still share
    // a buffer.
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (llvm::range_size(empty->getUses()) > kUsesPerEmpty)
        empties.push_back(empty);
    });
    for (tensor::EmptyOp empty : empties) {
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          empty->getUses(), [](OpOperand &use) { return &use; });
      llvm::sort(uses, [](OpOperand *a, OpOperand *b) {
        return a->getOwner()->isBeforeInBlock(b->getOwner());
      });
      Value clone;
      for (auto [index, use] : llvm::enumerate(uses)) {
        if (index < kUsesPerEmpty)
          continue;
        if (index % kUsesPerEmpty == 0) {
          builder.setInsertionPoint(use->getOwner());
          clone = builder.clone(*empty)->getResult(0);
        }
        use->set(clone);
      }
    }
  }
};
} // namespace
