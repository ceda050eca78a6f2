//===- AsyncGPUWork.cpp - A host function's GPU work on one stream --------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-async-gpu-work pass: launches, device allocations, copies and
// frees join one stream per block instead of each waiting for its own; the
// host waits for the stream only before it touches buffers, runs something
// unknown, or leaves the block.
//
//===----------------------------------------------------------------------===//

#include "GridMapping.h"

#include "amp/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::amp {
#define GEN_PASS_DEF_ASYNCGPUWORK
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Whether `op` is GPU work that can join a stream without waiting.
static bool isQueueable(Operation *op) {
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
    return !launch.getAsyncToken();
  if (auto alloc = dyn_cast<gpu::AllocOp>(op))
    return !alloc.getAsyncToken() && !alloc.getHostShared();
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op))
    return !copy.getAsyncToken();
  if (auto dealloc = dyn_cast<gpu::DeallocOp>(op))
    return !dealloc.getAsyncToken();
  return false;
}

/// Whether `op`'s regions hold GPU work.
static bool holdsGPUWork(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return isa<gpu::GPUDialect>(nested->getDialect())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether the host may run `op` while the stream still works: it touches
/// no buffer data itself (the runtime's GEMMs and convolutions are queued
/// on the stream).
static bool runsAlongside(Operation *op) {
  if (isa<func::CallOp>(op))
    return amp::isLibraryCall(op);
  if (op->getNumRegions() && holdsGPUWork(op))
    return false;
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return false;
  return llvm::none_of(*effects, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
  });
}

/// `op` (queueable) recreated on `stream`.
static void queue(RewriterBase &rewriter, Operation *op, Value stream) {
  rewriter.setInsertionPoint(op);
  Type token = rewriter.getType<gpu::AsyncTokenType>();
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    auto queued = gpu::LaunchFuncOp::create(
        rewriter, launch.getLoc(), launch.getKernelAttr(),
        launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
        launch.getDynamicSharedMemorySize(), launch.getKernelOperands(), token,
        ValueRange(stream),
        launch.hasClusterSize()
            ? std::optional(launch.getClusterSizeOperandValues())
            : std::nullopt);
    queued->setDiscardableAttrs(launch->getDiscardableAttrDictionary());
    rewriter.eraseOp(launch);
  } else if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
    rewriter.replaceOpWithNewOp<gpu::AllocOp>(
        alloc, alloc.getType(), token, ValueRange(stream),
        alloc.getDynamicSizes(), alloc.getSymbolOperands(),
        /*hostShared=*/false);
  } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
    rewriter.replaceOpWithNewOp<gpu::MemcpyOp>(copy, token, ValueRange(stream),
                                               copy.getDst(), copy.getSrc());
  } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
    rewriter.replaceOpWithNewOp<gpu::DeallocOp>(
        dealloc, token, ValueRange(stream), dealloc.getMemref());
  }
}

/// Queues the GPU work of `block` on streams of its own: one from the
/// block's start to each wait.
static void queueBlock(RewriterBase &rewriter, Block &block) {
  Type token = rewriter.getType<gpu::AsyncTokenType>();
  Value stream;
  auto wait = [&](Operation *before) {
    if (!stream)
      return;
    rewriter.setInsertionPoint(before);
    gpu::WaitOp::create(rewriter, before->getLoc(), Type(), stream);
    stream = nullptr;
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isQueueable(&op)) {
      if (!stream) {
        rewriter.setInsertionPoint(&op);
        stream = gpu::WaitOp::create(rewriter, op.getLoc(), token, ValueRange())
                     .getAsyncToken();
      }
      queue(rewriter, &op, stream);
      continue;
    }
    if (op.hasTrait<OpTrait::IsTerminator>() || !runsAlongside(&op))
      wait(&op);
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        queueBlock(rewriter, nested);
  }
}

namespace {
struct AsyncGPUWorkPass : amp::impl::AsyncGPUWorkBase<AsyncGPUWorkPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (Block &block : getOperation().getBody())
      queueBlock(rewriter, block);
  }
};
} // namespace
