//===- ConvRecord.h - One convolution as cuDNN describes it -----*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The parameter record of a convolution library call: what
// amp-convolutions-to-dnn-records derives from an im2col convolution at
// compile time and what a runtime's `amp_conv` executes. The fields are a
// cuDNN convolution's (docs/Lowering.md, "Convolution records"), for
// channels-first tensors stored contiguously, the input already padded:
//   forward:         Y[n, g*M + m, o]  (+)= sum_{c, k} X[n, g*C + c, o*s + k*d]
//                                                       * W[g*M + m, c, k]
//   backward filter: dW[g*M + m, c, k] (+)= sum_{n, o} X[n, g*C + c, o*s + k*d]
//                                                       * dY[n, g*M + m, o]
//   backward data:   dX[n, g*C + c, o*s + k*d] (+)= sum_{m, k} dY[n, g*M + m,
//   o]
//                                                       * W[g*M + m, c, k]
// with o, k, s and d over three spatial dimensions (unused ones of size 1),
// the sizes, channels and paddings always the forward convolution's (X or
// dX the input, Y or dY the output),
// `=` with the overwrite flag (cuDNN's beta 0) and `+=` without it. The CPU
// runtime executes a record with loops over the same fields, so a wrong
// record shows on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_CONVRECORD_H
#define AMP_RUNTIME_CONVRECORD_H

#include "amp/Runtime/GemmRecord.h"

#include <climits>
#include <cstdint>

namespace mlir::amp::runtime {

/// The prefix of the entry points that execute a record:
/// `amp_conv_<X>_<F>_<R>(record, X, F, R)` with the first factor X (the
/// input forward and backward filter, dY backward data), the second factor
/// F (W forward and backward data, dY backward filter) and the result R
/// (Y, dW, dX), by
/// element type (f32, f16, bf16 or f64, spelled as the GEMM records'),
/// the record an i64 memref of kConvRecordFields and the operands
/// unranked memrefs.
inline constexpr const char *kConvEntryPrefix = "amp_conv_";

/// The most spatial dimensions a record describes (cuDNN's 3-d
/// convolutions).
inline constexpr int64_t kConvMaxSpatialRank = 3;

/// The fields of a record, in order.
enum ConvRecordField : unsigned {
  kConvMode,        ///< a ConvMode
  kConvSpatialRank, ///< 2 or 3: the dimensions cuDNN describes; the unused
                    ///< leading ones have size 1
  kConvBatch,
  kConvInChannels,  ///< all groups' (G * C)
  kConvOutChannels, ///< all groups' (G * M)
  kConvGroups,
  kConvInput,                                      ///< 3 input sizes
  kConvKernel = kConvInput + kConvMaxSpatialRank,  ///< 3 kernel sizes
  kConvOutput = kConvKernel + kConvMaxSpatialRank, ///< 3 output sizes
  kConvStride = kConvOutput + kConvMaxSpatialRank,
  kConvDilation = kConvStride + kConvMaxSpatialRank,
  /// 3 zeros before the input's elements, as if they were stored
  kConvPadBefore = kConvDilation + kConvMaxSpatialRank,
  kConvPadAfter = kConvPadBefore + kConvMaxSpatialRank, ///< 3 zeros after
  kConvTypeX = kConvPadAfter + kConvMaxSpatialRank,     ///< a GemmDataType
  kConvTypeFactor, ///< W's forward, dY's backward filter
  kConvTypeResult, ///< Y's forward, dW's backward filter
  kConvOverwrite,  ///< 1: the result is not read (beta 0)
  kConvRecordFields
};

/// What a record computes.
enum ConvMode : int64_t {
  kConvForward,
  kConvBackwardFilter,
  kConvBackwardData
};

/// What is wrong with `record` for an entry point of operand types `typeX`,
/// `typeFactor` and `typeResult` (GemmDataType), or null when nothing is.
inline const char *checkConvRecord(const int64_t *record, int64_t typeX,
                                   int64_t typeFactor, int64_t typeResult) {
  if (record[kConvTypeX] != typeX || record[kConvTypeFactor] != typeFactor ||
      record[kConvTypeResult] != typeResult)
    return "a convolution record's types differ from its entry point's";
  // One type throughout: f32, f64, or f16 and bf16 through an f32
  // accumulator rounded to their type (cuDNN's PSEUDO_HALF).
  if (typeFactor != typeX || typeResult != typeX ||
      (typeX != kGemmF32 && typeX != kGemmF64 && typeX != kGemmF16 &&
       typeX != kGemmBF16))
    return "a convolution record convolves f32, f64, f16 or bf16 into its "
           "own type";
  if (record[kConvMode] != kConvForward &&
      record[kConvMode] != kConvBackwardFilter &&
      record[kConvMode] != kConvBackwardData)
    return "a convolution record's mode must be 0 (forward), 1 (backward "
           "filter) or 2 (backward data)";
  if (record[kConvSpatialRank] != 2 && record[kConvSpatialRank] != 3)
    return "a convolution record describes 2 or 3 spatial dimensions";
  if (record[kConvOverwrite] != 0 && record[kConvOverwrite] != 1)
    return "a convolution record's overwrite flag must be 0 or 1";
  int64_t groups = record[kConvGroups];
  if (record[kConvBatch] < 1 || groups < 1 ||
      record[kConvInChannels] < groups || record[kConvOutChannels] < groups ||
      record[kConvInChannels] % groups || record[kConvOutChannels] % groups)
    return "a convolution record's batch, channels and groups must be "
           "positive, the channels multiples of the groups";
  for (int64_t i = 0; i < kConvMaxSpatialRank; ++i) {
    int64_t input = record[kConvInput + i], kernel = record[kConvKernel + i];
    int64_t output = record[kConvOutput + i];
    int64_t stride = record[kConvStride + i];
    int64_t dilation = record[kConvDilation + i];
    int64_t before = record[kConvPadBefore + i];
    int64_t after = record[kConvPadAfter + i];
    if (input < 1 || kernel < 1 || output < 1 || stride < 1 || dilation < 1)
      return "a convolution record's sizes, strides and dilations must be "
             "positive";
    if (before < 0 || after < 0 || before > INT_MAX || after > INT_MAX)
      return "a convolution record's paddings must be non-negative";
    if (i < kConvMaxSpatialRank - record[kConvSpatialRank] &&
        (input != 1 || kernel != 1 || output != 1 || before || after))
      return "a convolution record's unused spatial dimensions must have "
             "size 1";
    // Every window inside the padded input.
    if ((output - 1) * stride + (kernel - 1) * dilation >=
        before + input + after)
      return "a convolution record's windows reach past its input";
    if (input > INT_MAX)
      return "a convolution record's sizes exceed 32 bits";
    // cuDNN derives dX's sizes from dY's by the forward convolution's
    // output size.
    if (record[kConvMode] == kConvBackwardData &&
        output !=
            (before + input + after - (kernel - 1) * dilation - 1) / stride + 1)
      return "a backward-data record's dY sizes must be the forward "
             "convolution's output sizes";
  }
  return nullptr;
}

} // namespace mlir::amp::runtime

#endif // AMP_RUNTIME_CONVRECORD_H
