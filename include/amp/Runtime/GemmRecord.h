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
// (D = ... with the overwrite flag: beta 0) for each of `batch` batches, with
// op() a transpose or not, leading dimensions and batch strides in elements,
// then an epilogue: a bias or bias gradient, and an activation.
// The CPU runtime executes a record with OpenBLAS's column-major GEMM, which
// reads the same fields the same way, so a wrong layout shows on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_GEMMRECORD_H
#define AMP_RUNTIME_GEMMRECORD_H

#include <climits>
#include <cstdint>

namespace mlir::amp::runtime {

/// The prefix of the entry points that execute a record:
/// `amp_gemm_<A>_<B>_<D>(record, A, B, D)` with the operands' element types
/// (f32, f16, bf16 or f64), the record an i64 memref of kGemmRecordFields
/// and the operands unranked memrefs (their base pointers and offsets; the
/// record has the rest). FP8 GEMMs (A and B f8e4m3 or f8e5m2, D f32) take
/// two more: `(record, A, B, D, scaleA, scaleB)`, 0-d f32 memrefs holding
/// the dequantization factors D = (scaleA * A) (scaleB * B) multiplies by,
/// as cuBLASLt's A and B scale pointers do.
inline constexpr const char *kGemmEntryPrefix = "amp_gemm_";
/// The prefix of the FP8 ones.
inline constexpr const char *kFP8GemmEntryPrefix = "amp_gemm_f8";
/// The prefix of those with a bias epilogue: `amp_gemm_bias_<A>_<B>_<D>(
/// record, A, B, D, bias)`, the bias a 1-d memref of m elements of D's type
/// (f32, or the inputs' f16 or bf16 where D has it).
inline constexpr const char *kBiasGemmEntryPrefix = "amp_gemm_bias_";
/// The prefix of those with a bias gradient epilogue: `amp_gemm_bgrad_<A>_
/// <B>_<D>(record, A, B, D, gradient)`, the gradient a 1-d memref of D's
/// type (m elements for kGemmBiasGradA, n for kGemmBiasGradB) that the call
/// writes too.
inline constexpr const char *kBiasGradGemmEntryPrefix = "amp_gemm_bgrad_";
/// The prefixes of those whose activation has an aux matrix (GELU's input,
/// which kGemmGELUAux writes and kGemmDGELU reads): `amp_gemm_aux_<A>_<B>_
/// <D>(record, A, B, D, aux)` and, with a bias, `amp_gemm_bias_aux_<A>_<B>_
/// <D>(record, A, B, D, bias, aux)`, the aux m x n of D's type and leading
/// dimension (cuBLASLt's default aux type; its leading dimension a
/// multiple of 8).
inline constexpr const char *kAuxGemmEntryPrefix = "amp_gemm_aux_";
inline constexpr const char *kBiasAuxGemmEntryPrefix = "amp_gemm_bias_aux_";
/// The prefixes of those whose activation has a ReLU bit mask (which
/// kGemmReLUMask writes and kGemmDReLU reads): `amp_gemm_mask_<A>_<B>_<D>(
/// record, A, B, D, mask)` and `amp_gemm_bias_mask_<A>_<B>_<D>(record, A,
/// B, D, bias, mask)`, the mask an i8 memref of at least
/// getGemmReLUMaskBytes bytes.
inline constexpr const char *kMaskGemmEntryPrefix = "amp_gemm_mask_";
inline constexpr const char *kBiasMaskGemmEntryPrefix = "amp_gemm_bias_mask_";

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
  kGemmSwapped,    ///< 1: A is the contraction's second operand (D = C^T)
  kGemmOverwrite,  ///< 1: D = op(A) op(B) (beta 0: D's zeros not read)
  kGemmBias,       ///< a GemmBiasEpilogue
  kGemmActivation, ///< a GemmActivation, after the bias
  kGemmRecordFields
};

/// A record's bias epilogue (its kGemmBias field), as cuBLASLt's.
enum GemmBiasEpilogue : int64_t {
  kGemmNoBias,
  /// D's row i plus bias[i] (BIAS).
  kGemmBiasAdd,
  /// bias[i] = the sum of op(A)'s row i over k (BGRADA).
  kGemmBiasGradA,
  /// bias[j] = the sum of op(B)'s column j over k (BGRADB).
  kGemmBiasGradB
};

/// A record's activation (its kGemmActivation field), as cuBLASLt's
/// epilogue applies it to D's elements after the bias.
enum GemmActivation : int64_t {
  kGemmNoActivation,
  /// max(x, 0) (RELU, or RELU_BIAS with a bias).
  kGemmReLU,
  /// GELU's tanh approximation, gemmGELU (GELU, GELU_BIAS).
  kGemmGELU,
  /// GELU, its input (the product, plus the bias) also written to the aux
  /// matrix (GELU_AUX, GELU_AUX_BIAS): the forward of a training step,
  /// whose backward reads that input.
  kGemmGELUAux,
  /// The product times GELU's derivative at the aux matrix's element,
  /// gemmGELUDerivative (DGELU): GELU's backward after the GEMM of dY.
  kGemmDGELU,
  /// max(x, 0), and whether x > 0 into the bit mask (RELU_AUX,
  /// RELU_AUX_BIAS): the forward of a training step, whose backward reads
  /// the mask.
  kGemmReLUMask,
  /// The product where the mask's bit is set, else 0 (DRELU): ReLU's
  /// backward after the GEMM of dY.
  kGemmDReLU
};

/// Whether `activation` has a ReLU bit mask (writes or reads it).
inline bool hasGemmReLUMask(int64_t activation) {
  return activation == kGemmReLUMask || activation == kGemmDReLU;
}

/// Whether `activation` has an aux matrix of D's type (writes or reads it).
inline bool hasGemmAux(int64_t activation) {
  return activation == kGemmGELUAux || activation == kGemmDGELU;
}

/// The leading dimension, in bits, of the ReLU bit mask of an m-row D
/// (cuBLASLt's EPILOGUE_AUX_LD rule for it: a multiple of 128), and the
/// mask's bytes for n columns. Bit i + j * ld is element (i, j)'s, bit
/// b & 7 of byte b >> 3: the CPU runtime's layout; cuBLASLt's own, which
/// only cuBLASLt reads, may differ in the bits but not in the size.
inline int64_t getGemmReLUMaskLd(int64_t m) { return (m + 127) / 128 * 128; }
inline int64_t getGemmReLUMaskBytes(int64_t m, int64_t n) {
  return getGemmReLUMaskLd(m) / 8 * n;
}

/// The GELU of cuBLASLt's epilogues, its tanh approximation:
/// x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2.
template <typename T, typename Tanh>
T gemmGELU(T x, Tanh tanh) {
  T inner = T(0.7978845608028654) * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + tanh(inner));
}

/// gemmGELU's derivative at x.
template <typename T, typename Tanh>
T gemmGELUDerivative(T x, Tanh tanh) {
  T t = tanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x));
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) *
                                   T(0.7978845608028654) *
                                   (T(1) + T(3 * 0.044715) * x * x);
}

/// Element types of a record's operands.
enum GemmDataType : int64_t {
  kGemmF32,
  kGemmF16,
  kGemmBF16,
  kGemmF64,
  kGemmF8E4M3,
  kGemmF8E5M2
};

inline bool isFP8GemmType(int64_t type) {
  return type == kGemmF8E4M3 || type == kGemmF8E5M2;
}

/// What is wrong with `record` for an entry point of operand types
/// `typeA`, `typeB` and `typeD` (GemmDataType), or null when nothing is.
inline const char *checkGemmRecord(const int64_t *record, int64_t typeA,
                                   int64_t typeB, int64_t typeD) {
  int64_t m = record[kGemmM], n = record[kGemmN], k = record[kGemmK];
  bool transA = record[kGemmTransA], transB = record[kGemmTransB];
  int64_t lda = record[kGemmLdA], ldb = record[kGemmLdB];
  int64_t ldd = record[kGemmLdD];
  if (record[kGemmTypeA] != typeA || record[kGemmTypeB] != typeB ||
      record[kGemmTypeD] != typeD)
    return "a GEMM record's types differ from its entry point's";
  if (m < 1 || n < 1 || k < 1 || record[kGemmBatch] < 1)
    return "a GEMM record's m, n, k and batch must be positive";
  if (record[kGemmOverwrite] != 0 && record[kGemmOverwrite] != 1)
    return "a GEMM record's overwrite flag must be 0 or 1";
  int64_t bias = record[kGemmBias];
  if (bias < kGemmNoBias || bias > kGemmBiasGradB)
    return "a GEMM record's bias epilogue must be 0 to 3";
  if (bias == kGemmBiasAdd && !record[kGemmOverwrite])
    return "a GEMM record with a bias overwrites D";
  if ((bias == kGemmBiasGradA || bias == kGemmBiasGradB) &&
      record[kGemmBatch] != 1)
    return "a GEMM record with a bias gradient has one batch";
  int64_t activation = record[kGemmActivation];
  if (activation < kGemmNoActivation || activation > kGemmDReLU)
    return "a GEMM record's activation must be 0 to 6";
  // cuBLASLt's activation epilogues: applied to the whole of D (beta 0),
  // with no bias gradient; DGELU without a bias (DGELU_BGRAD is a
  // gradient).
  if (activation && !record[kGemmOverwrite])
    return "a GEMM record with an activation overwrites D";
  if (activation && (bias == kGemmBiasGradA || bias == kGemmBiasGradB))
    return "a GEMM record has an activation or a bias gradient, not both";
  if ((activation == kGemmDGELU || activation == kGemmDReLU) &&
      bias != kGemmNoBias)
    return "a GEMM record with an activation's derivative has no bias";
  // The aux matrix: one batch, its leading dimension D's, a multiple of 8
  // (cuBLASLt's EPILOGUE_AUX_LD rule for GELU's input); the mask too has
  // one batch.
  if ((hasGemmAux(activation) || hasGemmReLUMask(activation)) &&
      record[kGemmBatch] != 1)
    return "a GEMM record with an aux matrix or mask has one batch";
  if (hasGemmAux(activation) && ldd % 8 != 0)
    return "a GEMM record's aux matrix needs a leading dimension that is a "
           "multiple of 8";
  // cuBLASLt's layout rule: a leading dimension spans its stored rows.
  if (lda < (transA ? k : m) || ldb < (transB ? n : k) || ldd < m)
    return "a GEMM record's leading dimension is below its matrix's rows";
  bool fp8A = isFP8GemmType(typeA), fp8B = isFP8GemmType(typeB);
  if (fp8A != fp8B)
    return "a GEMM record multiplies an FP8 operand with a wider one";
  // Hopper's cuBLASLt FP8 kernels: "TN" (K contiguous in A and B), leading
  // dimensions multiples of 16, an f32 accumulator, not two E5M2 operands.
  if (fp8A && (!transA || transB))
    return "an FP8 GEMM record is not in the TN layout";
  if (fp8A && (lda % 16 != 0 || ldb % 16 != 0))
    return "an FP8 GEMM record's leading dimensions are not multiples of 16";
  if (fp8A && typeD != kGemmF32)
    return "an FP8 GEMM record's result is not f32";
  if (fp8A && (bias || activation))
    return "an FP8 GEMM record has no bias or activation epilogue";
  if (fp8A && typeA == kGemmF8E5M2 && typeB == kGemmF8E5M2)
    return "an FP8 GEMM record multiplies two E5M2 operands";
  // An f16 or bf16 D: cuBLASLt rounds the f32 accumulator to the inputs'
  // type.
  bool narrowD = typeD == kGemmF16 || typeD == kGemmBF16;
  if (narrowD && (typeA != typeD || typeB != typeD))
    return "a GEMM record's f16 or bf16 result is not of its inputs' type";
  if (narrowD && bias != kGemmNoBias && bias != kGemmBiasAdd)
    return "a GEMM record with a bias gradient has an f32 result";
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX ||
      ldb > INT_MAX || ldd > INT_MAX || record[kGemmBatch] > INT_MAX)
    return "a matrix exceeds BLAS's 32-bit sizes";
  return nullptr;
}

/// What is wrong with `record`'s bias epilogue for an entry point that
/// takes a bias vector (`hasVector`), which it writes (`isGradientEntry`:
/// amp_gemm_bgrad_*) or reads (amp_gemm_bias_*), or null when nothing is.
inline const char *checkGemmBiasEntry(const int64_t *record, bool hasVector,
                                      bool isGradientEntry) {
  int64_t epilogue = record[kGemmBias];
  if ((epilogue != kGemmNoBias) != hasVector ||
      (hasVector && (epilogue == kGemmBiasAdd) == isGradientEntry))
    return "a GEMM record's bias epilogue differs from its entry point's";
  return nullptr;
}

/// What is wrong with `record`'s activation for an entry point that takes
/// an aux matrix (`hasAux`) or a ReLU mask (`hasMask`) or neither, or null
/// when nothing is.
inline const char *checkGemmAuxEntry(const int64_t *record, bool hasAux,
                                     bool hasMask) {
  if (hasGemmAux(record[kGemmActivation]) != hasAux ||
      hasGemmReLUMask(record[kGemmActivation]) != hasMask)
    return "a GEMM record's activation differs from its entry point's aux "
           "matrix or mask";
  return nullptr;
}

} // namespace mlir::amp::runtime

#endif // AMP_RUNTIME_GEMMRECORD_H
