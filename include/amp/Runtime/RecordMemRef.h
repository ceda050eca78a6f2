//===- RecordMemRef.h - A library call's record as it arrives ---*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The runtimes' entry points receive a GEMM or convolution record
// (GemmRecord.h, ConvRecord.h) as an unranked i64 memref; this is how each
// of them reads it.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_RECORDMEMREF_H
#define AMP_RUNTIME_RECORDMEMREF_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdint>

namespace mlir::amp::runtime {

/// The fields of `memref` when it is a 1-d memref of `fields` i64, else
/// null.
inline const int64_t *getRecordFields(const UnrankedMemRefType<int64_t> &memref,
                                      int64_t fields) {
  DynamicMemRefType<int64_t> ranked(memref);
  if (ranked.rank != 1 || ranked.sizes[0] != fields)
    return nullptr;
  return ranked.data + ranked.offset;
}

} // namespace mlir::amp::runtime

#endif // AMP_RUNTIME_RECORDMEMREF_H
