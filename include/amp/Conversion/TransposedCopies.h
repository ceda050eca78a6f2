//===- TransposedCopies.h - Copies that permute dimensions ------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// A transpose around a library call is a kernel that only moves data:
// cuBLASLt and cuDNN read and write strided layouts, so the record passes
// fold such a copy into the call, which then reads the copy's source or
// writes its target through permuted strides.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_TRANSPOSEDCOPIES_H
#define AMP_CONVERSION_TRANSPOSEDCOPIES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::amp {

/// A copy of `source` into `target` with its dimensions permuted: target
/// dimension i is source dimension permutation[i].
struct TransposedCopy {
  Operation *op;
  Value source, target;
  SmallVector<int64_t> permutation;
};

/// Whether `generic` maps one input into one output over parallel loops,
/// the output indexed by the identity (the input's map is free: a gather,
/// a flip, a transpose, an elementwise op).
bool isOneToOneParallel(linalg::GenericOp generic);

/// Whether `generic`'s body yields its first argument and computes
/// nothing: with isOneToOneParallel, a copy.
bool yieldsItsInput(linalg::GenericOp generic);

/// `op` as a transposed copy: a linalg.transpose, or a copying
/// linalg.generic whose input map is a permutation.
std::optional<TransposedCopy> matchTransposedCopy(Operation *op);

} // namespace mlir::amp

#endif // AMP_CONVERSION_TRANSPOSEDCOPIES_H
