//===- Contract.cpp - Contractions of strided views through OpenBLAS ------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp_contract_* entry points: C += sum over the K loops of A * B, with
// every operand a strided view over all loops of the contraction (stride 0
// on the loops it does not index). Loops are batch (A, B, C), M (A, C),
// N (B, C) or K (A, B); each batch index is one cblas_sgemm (cblas_dgemm
// for f64) of the collapsed M x K and K x N matrices. An operand whose
// layout BLAS cannot read, or whose type is not C's, is packed into a
// row-major matrix of C's type first (exact: f16 and bf16 widen to f32).
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/CPURuntime.h"
#include "amp/Runtime/ElementBits.h"
#include "amp/Runtime/GemmRecord.h"
#include "amp/Runtime/RecordMemRef.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

using namespace mlir::amp::runtime;

namespace {
[[noreturn]] void fail(const char *message) {
  std::fprintf(stderr, "amp_contract: %s\n", message);
  std::abort();
}

/// The offsets of a group of loops, their indices enumerated in row-major
/// order (the group's last loop fastest).
std::vector<int64_t> getGroupOffsets(const std::vector<unsigned> &loops,
                                     const int64_t *sizes,
                                     const int64_t *strides) {
  std::vector<int64_t> offsets = {0};
  for (unsigned loop : loops) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * sizes[loop]);
    for (int64_t offset : offsets)
      for (int64_t i = 0; i < sizes[loop]; ++i)
        next.push_back(offset + i * strides[loop]);
    offsets = std::move(next);
  }
  return offsets;
}

/// The common difference of `offsets` when they are i * stride (any stride
/// for a single offset), else 0.
int64_t getProgressionStride(const std::vector<int64_t> &offsets) {
  if (offsets.size() < 2)
    return 1;
  int64_t stride = offsets[1] - offsets[0];
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] != int64_t(i) * stride)
      return 0;
  return stride;
}

/// A GEMM operand as BLAS takes it.
template <typename Acc>
struct BLASOperand {
  const Acc *data;
  int64_t leadingDim;
  CBLAS_TRANSPOSE transpose;
};

/// One operand as a rows x cols matrix: its offsets, and how BLAS reads it
/// in place (leading dimension and transpose) when it can.
struct MatrixLayout {
  std::vector<int64_t> rowOffsets, colOffsets;
  bool direct = false;
  CBLAS_TRANSPOSE transpose = CblasNoTrans;
  int64_t leadingDim = 1;

  MatrixLayout(const std::vector<unsigned> &rowLoops,
               const std::vector<unsigned> &colLoops, const int64_t *sizes,
               const int64_t *strides, bool sameType)
      : rowOffsets(getGroupOffsets(rowLoops, sizes, strides)),
        colOffsets(getGroupOffsets(colLoops, sizes, strides)) {
    int64_t rows = getRows(), cols = getCols();
    int64_t rowStride = getProgressionStride(rowOffsets);
    int64_t colStride = getProgressionStride(colOffsets);
    if (!sameType || rowStride <= 0 || colStride <= 0)
      return;
    if ((cols == 1 || colStride == 1) && (rows == 1 || rowStride >= cols)) {
      direct = true;
      leadingDim = rows == 1 ? std::max<int64_t>(cols, 1) : rowStride;
    } else if ((rows == 1 || rowStride == 1) &&
               (cols == 1 || colStride >= rows)) {
      direct = true;
      transpose = CblasTrans;
      leadingDim = cols == 1 ? std::max<int64_t>(rows, 1) : colStride;
    }
  }
  int64_t getRows() const { return rowOffsets.size(); }
  int64_t getCols() const { return colOffsets.size(); }

  /// What BLAS reads for the matrix at `base`: the matrix in place, or a
  /// row-major copy widened into `packed`.
  template <typename Acc, typename T>
  BLASOperand<Acc> getOperand(const T *base, std::vector<Acc> &packed) const {
    if (direct)
      return {reinterpret_cast<const Acc *>(base), leadingDim, transpose};
    packed.resize(size_t(getRows()) * getCols());
    Acc *out = packed.data();
    for (int64_t row : rowOffsets)
      for (int64_t col : colOffsets)
        *out++ = widen<Acc>(base[row + col]);
    return {packed.data(), getCols(), CblasNoTrans};
  }
};

void gemm(CBLAS_TRANSPOSE transA, CBLAS_TRANSPOSE transB, int m, int n, int k,
          const float *a, int lda, const float *b, int ldb, float beta,
          float *c, int ldc, CBLAS_ORDER order = CblasRowMajor) {
  cblas_sgemm(order, transA, transB, m, n, k, 1.0f, a, lda, b, ldb, beta, c,
              ldc);
}
void gemm(CBLAS_TRANSPOSE transA, CBLAS_TRANSPOSE transB, int m, int n, int k,
          const double *a, int lda, const double *b, int ldb, double beta,
          double *c, int ldc, CBLAS_ORDER order = CblasRowMajor) {
  cblas_dgemm(order, transA, transB, m, n, k, 1.0, a, lda, b, ldb, beta, c,
              ldc);
}

template <typename Acc, typename TA, typename TB>
void contract(int64_t roles, const UnrankedMemRefType<TA> &aMemRef,
              const UnrankedMemRefType<TB> &bMemRef,
              const UnrankedMemRefType<Acc> &cMemRef) {
  DynamicMemRefType<TA> a(aMemRef);
  DynamicMemRefType<TB> b(bMemRef);
  DynamicMemRefType<Acc> c(cMemRef);
  if (a.rank != c.rank || b.rank != c.rank || c.rank > kMaxContractLoops)
    fail("the operands must be views over the same loops");
  const int64_t *sizes = c.sizes;
  std::vector<unsigned> batch, m, n, k;
  for (unsigned loop = 0; loop < c.rank; ++loop) {
    uint64_t role = (uint64_t(roles) >> (kRoleBits * loop)) & 7;
    if (role == (kInA | kInB | kInC))
      batch.push_back(loop);
    else if (role == (kInA | kInC))
      m.push_back(loop);
    else if (role == (kInB | kInC))
      n.push_back(loop);
    else if (role == (kInA | kInB))
      k.push_back(loop);
    else
      fail("a loop must index two or three of the operands");
  }
  MatrixLayout aLayout(m, k, sizes, a.strides, std::is_same_v<TA, Acc>);
  MatrixLayout bLayout(k, n, sizes, b.strides, std::is_same_v<TB, Acc>);
  MatrixLayout cLayout(m, n, sizes, c.strides, /*sameType=*/true);
  int64_t rows = cLayout.getRows(), cols = cLayout.getCols();
  int64_t depth = aLayout.getCols();
  if (rows == 0 || cols == 0 || depth == 0)
    return;
  if (rows > INT_MAX || cols > INT_MAX || depth > INT_MAX ||
      aLayout.leadingDim > INT_MAX || bLayout.leadingDim > INT_MAX ||
      cLayout.leadingDim > INT_MAX)
    fail("a matrix exceeds BLAS's 32-bit sizes");

  std::vector<int64_t> aBatch = getGroupOffsets(batch, sizes, a.strides);
  std::vector<int64_t> bBatch = getGroupOffsets(batch, sizes, b.strides);
  std::vector<int64_t> cBatch = getGroupOffsets(batch, sizes, c.strides);
  std::vector<Acc> aPacked, bPacked, cPacked;
  for (size_t i = 0; i < cBatch.size(); ++i) {
    const TA *aBase = a.data + a.offset + aBatch[i];
    const TB *bBase = b.data + b.offset + bBatch[i];
    Acc *cBase = c.data + c.offset + cBatch[i];
    BLASOperand<Acc> aOperand = aLayout.getOperand(aBase, aPacked);
    BLASOperand<Acc> bOperand = bLayout.getOperand(bBase, bPacked);
    auto product = [&](Acc beta, Acc *out, int64_t ldc) {
      gemm(aOperand.transpose, bOperand.transpose, rows, cols, depth,
           aOperand.data, aOperand.leadingDim, bOperand.data,
           bOperand.leadingDim, beta, out, ldc);
    };
    if (cLayout.direct && cLayout.transpose == CblasNoTrans) {
      product(Acc(1), cBase, cLayout.leadingDim);
      continue;
    }
    // C in a layout BLAS cannot write: a row-major product, added in.
    cPacked.assign(size_t(rows) * cols, Acc(0));
    product(Acc(0), cPacked.data(), cols);
    const Acc *sum = cPacked.data();
    for (int64_t row : cLayout.rowOffsets)
      for (int64_t col : cLayout.colOffsets)
        cBase[row + col] += *sum++;
  }
}
} // namespace

namespace {
/// A record operand widened to the accumulator's type, and the matrix it
/// was widened from (an operand shared by every batch is widened once).
template <typename Acc>
struct WidenedOperand {
  const void *source = nullptr;
  std::vector<Acc> data;
};

/// The `rows` x `cols` matrix op(X) at `base` as BLAS reads it: in place, or
/// widened to the accumulator's type (FP8: times its dequantization factor
/// `scale`, as the CPU path's dequantization computes it), with the same
/// layout, into `widened`.
template <typename Acc, typename T>
const Acc *getRecordOperand(const T *base, bool transposed, int64_t rows,
                            int64_t cols, int64_t leadingDim,
                            const float *scale, WidenedOperand<Acc> &widened) {
  if constexpr (std::is_same_v<T, Acc>)
    return base;
  if (widened.source == base)
    return widened.data.data();
  int64_t storedRows = transposed ? cols : rows;
  int64_t storedCols = transposed ? rows : cols;
  widened.data.resize(size_t(leadingDim) * (storedCols - 1) + storedRows);
  for (size_t i = 0; i < widened.data.size(); ++i)
    widened.data[i] =
        scale ? widen<Acc>(base[i]) * *scale : widen<Acc>(base[i]);
  widened.source = base;
  return widened.data.data();
}

/// Executes a GEMM record (GemmRecord.h) as cuBLASLt would: a column-major
/// D += op(A) op(B) per batch (D = op(A) op(B), D not read, with the
/// overwrite flag), every field checked first; FP8 operands times their
/// dequantization factors `scaleA` and `scaleB`; with a bias epilogue,
/// plus `bias[i]` on row i (after the product, as cuBLASLt's BIAS
/// epilogue) or, for a bias gradient, `bias` set to the sums of op(A)'s
/// rows or op(B)'s columns over k (BGRADA, BGRADB); then the activation
/// (RELU, GELU, GELU writing its input to `auxMemRef`, GELU's derivative
/// at `auxMemRef` times the sum, RELU writing whether D's element is
/// positive to the bit mask `maskMemRef`, or the sum where the mask's bit
/// is set); a D narrower than the accumulator gets the sums rounded to its
/// type.
template <typename Acc, typename TA, typename TB, typename TD = Acc,
          typename TBias = Acc>
void gemmRecord(const UnrankedMemRefType<int64_t> &recordMemRef,
                const UnrankedMemRefType<TA> &aMemRef,
                const UnrankedMemRefType<TB> &bMemRef,
                const UnrankedMemRefType<TD> &dMemRef,
                const float *scaleA = nullptr, const float *scaleB = nullptr,
                const UnrankedMemRefType<TBias> *biasMemRef = nullptr,
                bool isGradientEntry = false,
                const UnrankedMemRefType<TD> *auxMemRef = nullptr,
                const UnrankedMemRefType<uint8_t> *maskMemRef = nullptr) {
  static_assert(std::is_same_v<TBias, Acc> || std::is_same_v<TBias, TD>,
                "a bias has D's type");
  const int64_t *record = getRecordFields(recordMemRef, kGemmRecordFields);
  if (!record)
    fail("a GEMM record is a 1-d memref of kGemmRecordFields i64");
  int64_t m = record[kGemmM], n = record[kGemmN], k = record[kGemmK];
  int64_t batch = record[kGemmBatch];
  bool transA = record[kGemmTransA], transB = record[kGemmTransB];
  int64_t lda = record[kGemmLdA], ldb = record[kGemmLdB];
  int64_t ldd = record[kGemmLdD];
  if (const char *error =
          checkGemmRecord(record, kGemmDataTypeOf<TA>, kGemmDataTypeOf<TB>,
                          kGemmDataTypeOf<TD>))
    fail(error);
  if (const char *error =
          checkGemmBiasEntry(record, biasMemRef, isGradientEntry))
    fail(error);
  if (const char *error = checkGemmAuxEntry(record, auxMemRef, maskMemRef))
    fail(error);
  int64_t epilogue = record[kGemmBias];
  int64_t activation = record[kGemmActivation];
  TD *aux = nullptr;
  if (auxMemRef) {
    // Packed like D: row-major, its last dimension m, n * m elements.
    DynamicMemRefType<TD> ranked(*auxMemRef);
    int64_t elements = 1, stride = 1;
    bool packed = ranked.rank >= 1 && ranked.sizes[ranked.rank - 1] == m;
    for (int64_t dim = ranked.rank - 1; packed && dim >= 0; --dim) {
      packed = ranked.sizes[dim] == 1 || ranked.strides[dim] == stride;
      stride *= ranked.sizes[dim];
      elements *= ranked.sizes[dim];
    }
    if (!packed || elements != m * n || ldd != m)
      fail("a GEMM's aux matrix is a packed memref of n x m elements, like "
           "D");
    aux = ranked.data + ranked.offset;
  }
  uint8_t *mask = nullptr;
  int64_t maskLd = getGemmReLUMaskLd(m);
  if (maskMemRef) {
    DynamicMemRefType<uint8_t> ranked(*maskMemRef);
    if (ranked.rank != 1 || ranked.strides[0] != 1 ||
        ranked.sizes[0] < getGemmReLUMaskBytes(m, n))
      fail("a GEMM's ReLU mask is a packed 1-d i8 memref of at least "
           "getGemmReLUMaskBytes bytes");
    mask = ranked.data + ranked.offset;
  }
  TBias *bias = nullptr;
  if (biasMemRef) {
    DynamicMemRefType<TBias> ranked(*biasMemRef);
    int64_t size = epilogue == kGemmBiasGradB ? n : m;
    if (ranked.rank != 1 || ranked.sizes[0] != size || ranked.strides[0] != 1)
      fail(epilogue == kGemmBiasGradB
               ? "a GEMM's bias gradient of B is a packed 1-d memref of n "
                 "elements"
               : "a GEMM's bias is a packed 1-d memref of m elements");
    bias = ranked.data + ranked.offset;
  }
  DynamicMemRefType<TA> a(aMemRef);
  DynamicMemRefType<TB> b(bMemRef);
  DynamicMemRefType<TD> d(dMemRef);
  WidenedOperand<Acc> aWidened, bWidened;
  // A narrower D: the accumulator, rounded into D at the end.
  std::vector<Acc> accumulator;
  for (int64_t i = 0; i < batch; ++i) {
    const Acc *aData =
        getRecordOperand<Acc>(a.data + a.offset + i * record[kGemmBatchStrideA],
                              transA, m, k, lda, scaleA, aWidened);
    const Acc *bData =
        getRecordOperand<Acc>(b.data + b.offset + i * record[kGemmBatchStrideB],
                              transB, k, n, ldb, scaleB, bWidened);
    TD *dData = d.data + d.offset + i * record[kGemmBatchStrideD];
    Acc *sums;
    if constexpr (std::is_same_v<TD, Acc>) {
      sums = dData;
    } else {
      accumulator.assign(size_t(ldd) * n, Acc(0));
      if (!record[kGemmOverwrite])
        for (int64_t column = 0; column < n; ++column)
          for (int64_t row = 0; row < m; ++row)
            accumulator[column * ldd + row] =
                widen<Acc>(dData[column * ldd + row]);
      sums = accumulator.data();
    }
    gemm(transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
         m, n, k, aData, lda, bData, ldb, Acc(record[kGemmOverwrite] ? 0 : 1),
         sums, ldd, CblasColMajor);
    if (epilogue == kGemmBiasAdd)
      for (int64_t column = 0; column < n; ++column)
        for (int64_t row = 0; row < m; ++row)
          sums[column * ldd + row] += widen<Acc>(bias[row]);
    // max(x, +0) as arith.maximumf computes it: NaN stays, -0 becomes +0.
    if (activation == kGemmReLU || activation == kGemmReLUMask)
      for (int64_t column = 0; column < n; ++column)
        for (int64_t row = 0; row < m; ++row) {
          Acc &sum = sums[column * ldd + row];
          sum = sum <= Acc(0) ? Acc(0) : sum;
        }
    // The mask's bit of each element: whether its ReLU is positive (as D
    // holds it, rounded), or the sum only where it is set.
    if (activation == kGemmReLUMask || activation == kGemmDReLU)
      for (int64_t column = 0; column < n; ++column)
        for (int64_t row = 0; row < m; ++row) {
          Acc &sum = sums[column * ldd + row];
          int64_t bit = row + column * maskLd;
          uint8_t &byte = mask[bit >> 3];
          uint8_t flag = uint8_t(1u << (bit & 7));
          if (activation == kGemmDReLU)
            sum = byte & flag ? sum : Acc(0);
          else if (widen<Acc>(narrow<TD>(sum)) > Acc(0))
            byte |= flag;
          else
            byte &= uint8_t(~flag);
        }
    // GELU (its input into the aux matrix first), or GELU's derivative at
    // the aux matrix times the sum.
    auto tanh = [](Acc x) { return std::tanh(x); };
    if (activation == kGemmGELU || activation == kGemmGELUAux ||
        activation == kGemmDGELU)
      for (int64_t column = 0; column < n; ++column)
        for (int64_t row = 0; row < m; ++row) {
          Acc &sum = sums[column * ldd + row];
          if (activation == kGemmGELUAux)
            aux[column * ldd + row] = narrow<TD>(sum);
          sum = activation == kGemmDGELU
                    ? sum * gemmGELUDerivative(
                                widen<Acc>(aux[column * ldd + row]), tanh)
                    : gemmGELU(sum, tanh);
        }
    // op(A)'s rows or op(B)'s columns summed over p < k, in order: element
    // (i, p) at p + i * ld where k is contiguous, else at i + p * ld.
    auto sumOverK = [&](const Acc *data, bool isKContiguous, int64_t ld,
                        int64_t count) {
      for (int64_t i = 0; i < count; ++i) {
        Acc sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += isKContiguous ? data[p + i * ld] : data[i + p * ld];
        bias[i] = narrow<TBias>(sum);
      }
    };
    if (epilogue == kGemmBiasGradA)
      sumOverK(aData, transA, lda, m);
    if (epilogue == kGemmBiasGradB)
      sumOverK(bData, !transB, ldb, n);
    if constexpr (!std::is_same_v<TD, Acc>)
      for (int64_t column = 0; column < n; ++column)
        for (int64_t row = 0; row < m; ++row)
          dData[column * ldd + row] = narrow<TD>(sums[column * ldd + row]);
  }
}
} // namespace

// The entry points, through the C interface of memref arguments
// (llvm.emit_c_interface): `roles` then A, B and C as unranked memrefs.
#define AMP_CONTRACT(NAME, TA, TB, ACC)                                        \
  extern "C" void _mlir_ciface_amp_contract_##NAME(                            \
      int64_t roles, UnrankedMemRefType<TA> *a, UnrankedMemRefType<TB> *b,     \
      UnrankedMemRefType<ACC> *c) {                                            \
    contract<ACC, TA, TB>(roles, *a, *b, *c);                                  \
  }

AMP_CONTRACT(f32_f32_f32, float, float, float)
AMP_CONTRACT(f32_f16_f32, float, F16Bits, float)
AMP_CONTRACT(f32_bf16_f32, float, BF16Bits, float)
AMP_CONTRACT(f16_f32_f32, F16Bits, float, float)
AMP_CONTRACT(f16_f16_f32, F16Bits, F16Bits, float)
AMP_CONTRACT(f16_bf16_f32, F16Bits, BF16Bits, float)
AMP_CONTRACT(bf16_f32_f32, BF16Bits, float, float)
AMP_CONTRACT(bf16_f16_f32, BF16Bits, F16Bits, float)
AMP_CONTRACT(bf16_bf16_f32, BF16Bits, BF16Bits, float)
AMP_CONTRACT(f64_f64_f64, double, double, double)

// The GEMM record entry points: the record, then A, B and D.
#define AMP_GEMM(NAME, TA, TB, ACC)                                            \
  extern "C" void _mlir_ciface_amp_gemm_##NAME(                                \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<TA> *a,          \
      UnrankedMemRefType<TB> *b, UnrankedMemRefType<ACC> *d) {                 \
    gemmRecord<ACC, TA, TB>(*record, *a, *b, *d);                              \
  }

AMP_GEMM(f32_f32_f32, float, float, float)
AMP_GEMM(f32_f16_f32, float, F16Bits, float)
AMP_GEMM(f32_bf16_f32, float, BF16Bits, float)
AMP_GEMM(f16_f32_f32, F16Bits, float, float)
AMP_GEMM(f16_f16_f32, F16Bits, F16Bits, float)
AMP_GEMM(f16_bf16_f32, F16Bits, BF16Bits, float)
AMP_GEMM(bf16_f32_f32, BF16Bits, float, float)
AMP_GEMM(bf16_f16_f32, BF16Bits, F16Bits, float)
AMP_GEMM(bf16_bf16_f32, BF16Bits, BF16Bits, float)
AMP_GEMM(f64_f64_f64, double, double, double)

// GEMM records that round their f32 accumulator to a D of the inputs'
// type (cuBLASLt's output type): the record, A, B and D.
#define AMP_GEMM_ROUNDED(NAME, T)                                              \
  extern "C" void _mlir_ciface_amp_gemm_##NAME(                                \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<T> *a,           \
      UnrankedMemRefType<T> *b, UnrankedMemRefType<T> *d) {                    \
    gemmRecord<float, T, T, T>(*record, *a, *b, *d);                           \
  }

AMP_GEMM_ROUNDED(f16_f16_f16, F16Bits)
AMP_GEMM_ROUNDED(bf16_bf16_bf16, BF16Bits)

// GEMM records with a bias epilogue (amp_gemm_bias_*): the record, A, B, D,
// then the bias, of D's type (f32, or the inputs' f16 or bf16 where D is
// rounded to it); with a bias gradient (amp_gemm_bgrad_*): then the
// gradient, which they write. All accumulate in f32.
#define AMP_GEMM_BIAS(KIND, NAME, TA, TB, TD, IS_GRADIENT)                     \
  extern "C" void _mlir_ciface_amp_gemm_##KIND##_##NAME(                       \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<TA> *a,          \
      UnrankedMemRefType<TB> *b, UnrankedMemRefType<TD> *d,                    \
      UnrankedMemRefType<TD> *bias) {                                          \
    gemmRecord<float, TA, TB, TD, TD>(*record, *a, *b, *d, nullptr, nullptr,   \
                                      bias, IS_GRADIENT);                      \
  }

AMP_GEMM_BIAS(bias, f32_f32_f32, float, float, float, false)
AMP_GEMM_BIAS(bias, f16_f16_f32, F16Bits, F16Bits, float, false)
AMP_GEMM_BIAS(bias, bf16_bf16_f32, BF16Bits, BF16Bits, float, false)
AMP_GEMM_BIAS(bias, f16_f16_f16, F16Bits, F16Bits, F16Bits, false)
AMP_GEMM_BIAS(bias, bf16_bf16_bf16, BF16Bits, BF16Bits, BF16Bits, false)
AMP_GEMM_BIAS(bgrad, f32_f32_f32, float, float, float, true)
AMP_GEMM_BIAS(bgrad, f16_f16_f32, F16Bits, F16Bits, float, true)
AMP_GEMM_BIAS(bgrad, bf16_bf16_f32, BF16Bits, BF16Bits, float, true)

// GEMM records whose activation has an aux matrix of D's type (GELU's
// input) or a ReLU bit mask (i8): amp_gemm_<KIND>_* (the record, A, B, D,
// aux) and amp_gemm_bias_<KIND>_* (the record, A, B, D, bias, aux), KIND
// `aux` or `mask`; AUX and MASK are gemmRecord's last two arguments.
#define AMP_GEMM_WITH_AUX(KIND, NAME, TA, TB, TD, TAUX, AUX, MASK)             \
  extern "C" void _mlir_ciface_amp_gemm_##KIND##_##NAME(                       \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<TA> *a,          \
      UnrankedMemRefType<TB> *b, UnrankedMemRefType<TD> *d,                    \
      UnrankedMemRefType<TAUX> *aux) {                                         \
    gemmRecord<float, TA, TB, TD, TD>(*record, *a, *b, *d, nullptr, nullptr,   \
                                      nullptr, false, AUX, MASK);              \
  }                                                                            \
  extern "C" void _mlir_ciface_amp_gemm_bias_##KIND##_##NAME(                  \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<TA> *a,          \
      UnrankedMemRefType<TB> *b, UnrankedMemRefType<TD> *d,                    \
      UnrankedMemRefType<TD> *bias, UnrankedMemRefType<TAUX> *aux) {           \
    gemmRecord<float, TA, TB, TD, TD>(*record, *a, *b, *d, nullptr, nullptr,   \
                                      bias, false, AUX, MASK);                 \
  }

#define AMP_GEMM_AUX_AND_MASK(NAME, TA, TB, TD)                                \
  AMP_GEMM_WITH_AUX(aux, NAME, TA, TB, TD, TD, aux, nullptr)                   \
  AMP_GEMM_WITH_AUX(mask, NAME, TA, TB, TD, uint8_t, nullptr, aux)

AMP_GEMM_AUX_AND_MASK(f32_f32_f32, float, float, float)
AMP_GEMM_AUX_AND_MASK(f16_f16_f32, F16Bits, F16Bits, float)
AMP_GEMM_AUX_AND_MASK(bf16_bf16_f32, BF16Bits, BF16Bits, float)
AMP_GEMM_AUX_AND_MASK(f16_f16_f16, F16Bits, F16Bits, F16Bits)
AMP_GEMM_AUX_AND_MASK(bf16_bf16_bf16, BF16Bits, BF16Bits, BF16Bits)

// FP8 GEMM records: the record, A, B and D, then A's and B's factors (0-d).
#define AMP_GEMM_FP8(NAME, TA, TB)                                             \
  extern "C" void _mlir_ciface_amp_gemm_##NAME(                                \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<TA> *a,          \
      UnrankedMemRefType<TB> *b, UnrankedMemRefType<float> *d,                 \
      UnrankedMemRefType<float> *scaleA, UnrankedMemRefType<float> *scaleB) {  \
    DynamicMemRefType<float> factorA(*scaleA), factorB(*scaleB);               \
    if (factorA.rank != 0 || factorB.rank != 0)                                \
      fail("an FP8 GEMM's dequantization factors are 0-d memrefs");            \
    gemmRecord<float, TA, TB>(*record, *a, *b, *d,                             \
                              factorA.data + factorA.offset,                   \
                              factorB.data + factorB.offset);                  \
  }

AMP_GEMM_FP8(f8e4m3_f8e4m3_f32, F8E4M3Bits, F8E4M3Bits)
AMP_GEMM_FP8(f8e4m3_f8e5m2_f32, F8E4M3Bits, F8E5M2Bits)
AMP_GEMM_FP8(f8e5m2_f8e4m3_f32, F8E5M2Bits, F8E4M3Bits)
