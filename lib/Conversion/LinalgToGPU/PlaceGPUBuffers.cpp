//===- HostSharedBuffers.cpp - Host buffers that kernels reach ------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-host-shared-buffers pass: the host code's allocations become
// gpu.alloc host_shared, and the constants that kernels or library calls
// read are copied into such allocations.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Runtime/GemmRecord.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_HOSTSHAREDBUFFERS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Whether `value` only reaches `amp_gemm_*` calls as their record (operand
/// 0), which the runtime reads on the host.
static bool isOnlyGemmRecord(Value value) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (auto cast = dyn_cast<memref::CastOp>(user))
      return isOnlyGemmRecord(cast.getResult());
    auto call = dyn_cast<func::CallOp>(user);
    return call &&
           call.getCallee().starts_with(amp::runtime::kGemmEntryPrefix) &&
           call.getNumOperands() > 0 && call.getOperand(0) == value &&
           llvm::count(call.getOperands(), value) == 1;
  });
}

/// Replaces `alloc` by a gpu.alloc host_shared of the same type.
static void allocateShared(RewriterBase &rewriter, memref::AllocOp alloc) {
  rewriter.setInsertionPoint(alloc);
  auto shared = gpu::AllocOp::create(
      rewriter, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
      /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
      alloc.getSymbolOperands(), /*hostShared=*/true);
  rewriter.replaceOp(alloc, shared.getMemref());
}

/// Frees `buffer` at the rewriter's insertion point. gpu-to-llvm lowers only
/// an asynchronous gpu.dealloc: it gets a stream of its own, waited on.
static void freeShared(RewriterBase &rewriter, Location loc, Value buffer) {
  Type tokenType = rewriter.getType<gpu::AsyncTokenType>();
  auto stream = gpu::WaitOp::create(rewriter, loc, tokenType, ValueRange());
  auto dealloc = gpu::DeallocOp::create(rewriter, loc, tokenType,
                                        stream.getAsyncToken(), buffer);
  gpu::WaitOp::create(rewriter, loc, Type(), dealloc.getAsyncToken());
}

/// Copies the constant `global` into a host-shared buffer that replaces it,
/// freed before each of `returns`.
static void copyToShared(RewriterBase &rewriter, memref::GetGlobalOp global,
                         ArrayRef<func::ReturnOp> returns) {
  Location loc = global.getLoc();
  MemRefType type = global.getType();
  rewriter.setInsertionPointAfter(global);
  auto shared = gpu::AllocOp::create(rewriter, loc, type, Type(), ValueRange(),
                                     ValueRange(), ValueRange(),
                                     /*hostShared=*/true);
  rewriter.replaceAllUsesWith(global.getResult(), shared.getMemref());
  memref::CopyOp::create(rewriter, loc, global.getResult(), shared.getMemref());
  for (func::ReturnOp ret : returns) {
    rewriter.setInsertionPoint(ret);
    freeShared(rewriter, loc, shared.getMemref());
  }
}

namespace {
struct HostSharedBuffersPass
    : amp::impl::HostSharedBuffersBase<HostSharedBuffersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      SmallVector<memref::AllocOp> allocs;
      SmallVector<memref::DeallocOp> deallocs;
      SmallVector<memref::GetGlobalOp> globals;
      SmallVector<func::ReturnOp> returns;
      func.walk([&](Operation *op) {
        if (auto alloc = dyn_cast<memref::AllocOp>(op))
          allocs.push_back(alloc);
        else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
          deallocs.push_back(dealloc);
        else if (auto global = dyn_cast<memref::GetGlobalOp>(op);
                 global && !isOnlyGemmRecord(global.getResult()))
          globals.push_back(global);
        else if (auto ret = dyn_cast<func::ReturnOp>(op))
          returns.push_back(ret);
      });
      for (memref::AllocOp alloc : allocs)
        allocateShared(rewriter, alloc);
      for (memref::DeallocOp dealloc : deallocs) {
        rewriter.setInsertionPoint(dealloc);
        freeShared(rewriter, dealloc.getLoc(), dealloc.getMemref());
        rewriter.eraseOp(dealloc);
      }
      for (memref::GetGlobalOp global : globals)
        copyToShared(rewriter, global, returns);
    }
  }
};
} // namespace
