//===- ParallelInOrder.h - Parallel work with ordered diagnostics -*- C++ -*-=//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_LINALGTOGPU_PARALLELINORDER_H
#define AMP_CONVERSION_LINALGTOGPU_PARALLELINORDER_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"

namespace mlir::amp {

/// `work(i)` for every i in [0, count) on `context`'s threads (one by one
/// with --mlir-disable-threading), its diagnostics reported in the order of
/// i; fails when one fails.
template <typename Work>
LogicalResult parallelForEachInOrder(MLIRContext *context, size_t count,
                                     Work &&work) {
  ParallelDiagnosticHandler diagnostics(context);
  return failableParallelForEachN(context, 0, count, [&](size_t index) {
    diagnostics.setOrderIDForThread(index);
    LogicalResult result = work(index);
    diagnostics.eraseOrderIDForThread();
    return result;
  });
}

} // namespace mlir::amp

#endif // AMP_CONVERSION_LINALGTOGPU_PARALLELINORDER_H
