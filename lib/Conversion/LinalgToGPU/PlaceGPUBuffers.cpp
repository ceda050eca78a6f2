//===- PlaceGPUBuffers.cpp - Device or host-shared buffers ----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-place-gpu-buffers pass: the host code's allocations become
// gpu.alloc, in device memory unless host code touches them (then
// host_shared, CUDA managed memory); the constants that kernels or library
// calls read are copied into device buffers (host-shared ones when host
// code reads them too).
//
//===----------------------------------------------------------------------===//

#include "GridMapping.h"

#include "amp/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::amp {
#define GEN_PASS_DEF_PLACEGPUBUFFERS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Whether `value` only reaches library calls (`amp_gemm_*`, `amp_conv_*`)
/// as their record (operand 0), which the runtime reads on the host.
static bool isOnlyLibraryRecord(Value value) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (auto cast = dyn_cast<memref::CastOp>(user))
      return isOnlyLibraryRecord(cast.getResult());
    return amp::isLibraryCall(user) && user->getOperand(0) == value &&
           llvm::count(user->getOperands(), value) == 1;
  });
}

/// Whether `isUse` holds for a use of `buffer`, or of a view of it.
static bool hasUseThroughViews(Value buffer,
                               llvm::function_ref<bool(Operation *)> isUse) {
  return llvm::any_of(buffer.getUsers(), [&](Operation *user) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(user))
      return hasUseThroughViews(view->getResult(0), isUse);
    return isUse(user);
  });
}

/// Whether host code reads or writes `buffer`: any use but a kernel's, a
/// library call's, a copy's on the GPU or a free.
static bool isTouchedByHost(Value buffer) {
  return hasUseThroughViews(buffer, [](Operation *user) {
    return !isa<gpu::LaunchFuncOp, gpu::MemcpyOp, gpu::DeallocOp,
                memref::DeallocOp>(user) &&
           !amp::isLibraryCall(user);
  });
}

/// Whether a kernel or a library call reads or writes `buffer`.
static bool isUsedOnGPU(Value buffer) {
  return hasUseThroughViews(buffer, [](Operation *user) {
    return isa<gpu::LaunchFuncOp>(user) || amp::isLibraryCall(user);
  });
}

/// A gpu.alloc of `type` at the rewriter's insertion point.
static Value createAlloc(RewriterBase &rewriter, Location loc, MemRefType type,
                         ValueRange dynamicSizes, ValueRange symbols,
                         bool hostShared) {
  return gpu::AllocOp::create(rewriter, loc, type, /*asyncToken=*/Type(),
                              /*asyncDependencies=*/ValueRange(), dynamicSizes,
                              symbols, hostShared)
      .getMemref();
}

/// Copies the constant `global` into a buffer that replaces it, freed
/// before each of `returns`: a device buffer, or a host-shared one when host
/// code reads it too.
static void copyToGPU(RewriterBase &rewriter, memref::GetGlobalOp global,
                      ArrayRef<func::ReturnOp> returns) {
  Location loc = global.getLoc();
  bool hostShared = isTouchedByHost(global.getResult());
  rewriter.setInsertionPointAfter(global);
  Value buffer =
      createAlloc(rewriter, loc, global.getType(), {}, {}, hostShared);
  rewriter.replaceAllUsesWith(global.getResult(), buffer);
  if (hostShared)
    memref::CopyOp::create(rewriter, loc, global.getResult(), buffer);
  else
    gpu::MemcpyOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange(),
                          buffer, global.getResult());
  for (func::ReturnOp ret : returns) {
    rewriter.setInsertionPoint(ret);
    gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange(), buffer);
  }
}

namespace {
struct PlaceGPUBuffersPass
    : amp::impl::PlaceGPUBuffersBase<PlaceGPUBuffersPass> {
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
                 global && isUsedOnGPU(global.getResult()) &&
                 !isOnlyLibraryRecord(global.getResult()))
          globals.push_back(global);
        else if (auto ret = dyn_cast<func::ReturnOp>(op))
          returns.push_back(ret);
      });
      for (memref::AllocOp alloc : allocs) {
        rewriter.setInsertionPoint(alloc);
        rewriter.replaceOp(alloc,
                           createAlloc(rewriter, alloc.getLoc(),
                                       alloc.getType(), alloc.getDynamicSizes(),
                                       alloc.getSymbolOperands(),
                                       isTouchedByHost(alloc.getMemref())));
      }
      for (memref::DeallocOp dealloc : deallocs) {
        rewriter.setInsertionPoint(dealloc);
        rewriter.replaceOpWithNewOp<gpu::DeallocOp>(
            dealloc, Type(), ValueRange(), dealloc.getMemref());
      }
      for (memref::GetGlobalOp global : globals)
        copyToGPU(rewriter, global, returns);
    }
  }
};
} // namespace
