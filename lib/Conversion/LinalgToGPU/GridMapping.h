//===- GridMapping.h - Loops mapped to a GPU grid ---------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Helpers shared by the LinalgToGPU passes: scf.parallel loops mapped to
// blocks and threads for convert-parallel-loops-to-gpu, and the runtime's
// GEMM calls.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H
#define AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H

#include "amp/Runtime/ConvRecord.h"
#include "amp/Runtime/GemmRecord.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {

/// A grid of one block of one thread at the rewriter's insertion point; the
/// rewriter's insertion point moves into the thread's body.
LogicalResult createSingleThreadGrid(RewriterBase &rewriter, Location loc);

/// Whether `op` calls one of the runtime's library entry points (a GEMM,
/// amp_gemm_*, or a convolution, amp_conv_*), which read their record
/// (operand 0) on the host and run on the step's stream.
inline bool isLibraryCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && (call.getCallee().starts_with(runtime::kGemmEntryPrefix) ||
                  call.getCallee().starts_with(runtime::kConvEntryPrefix));
}

} // namespace mlir::amp

#endif // AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H
