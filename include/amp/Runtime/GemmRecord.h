//===- GemmRecord.h - One GEMM as cuBLASLt describes it ---------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The parameter record of a GEMM library call: what
// amp-contractions-to-gemm-records derives from a linalg.contract at
// compile time and what a runtime's `amp_gemm` executes. The fields are
// cuBLASLt's (docs/Lowering.md, "GEMM records"): a column-major
//   D[m x n] += op(A)[m x k] * op(B)[k x n]
// for each of `batch` batches, with op() a transpose or not, leading
// dimensions and batch strides in elements. The CPU runtime executes a
// record with OpenBLAS's column-major GEMM, which reads the same fields the
// same way, so a wrong layout shows on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_GEMMRECORD_H
#define AMP_RUNTIME_GEMMRECORD_H

#include <cstdint>

namespace mlir::amp::runtime {

/// The prefix of the entry points that execute a record:
/// `amp_gemm_<A>_<B>_<D>(record, A, B, D)` with the operands' element types
/// (f32, f16, bf16 or f64), the record an i64 memref of kGemmRecordFields
/// and the operands unranked memrefs (their base pointers and offsets; the
/// record has the rest).
inline constexpr const char *kGemmEntryPrefix = "amp_gemm_";

/// The fields of a record, in order.
enum GemmRecordField : unsigned {
  kGemmM,
  kGemmN,
  kGemmK,
  kGemmBatch,
  kGemmTransA, ///< 1: A is stored k x m (cuBLAS's OP_T)
  kGemmTransB, ///< 1: B is stored n x k
  kGemmLdA,
  kGemmLdB,
  kGemmLdD,
  kGemmBatchStrideA, ///< 0: one A for every batch
  kGemmBatchStrideB,
  kGemmBatchStrideD,
  kGemmTypeA, ///< a GemmDataType
  kGemmTypeB,
  kGemmTypeD,
  kGemmSwapped, ///< 1: A is the contraction's second operand (D = C^T)
  kGemmRecordFields
};

/// Element types of a record's operands.
enum GemmDataType : int64_t { kGemmF32, kGemmF16, kGemmBF16, kGemmF64 };

} // namespace mlir::amp::runtime

#endif // AMP_RUNTIME_GEMMRECORD_H
