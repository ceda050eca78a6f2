//===- Convolution.cpp - Convolution records as direct loops --------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp_conv_* entry points of the CPU runtime: a convolution record
// (ConvRecord.h) executed as cuDNN would, with direct loops over the
// record's fields rather than the im2col GEMM the compiler built, so that a
// record that describes another convolution than the IR's gives other
// numbers. Every operand is a packed channels-first tensor whose element
// count the record fixes; each is checked first.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/ConvRecord.h"
#include "amp/Runtime/ElementBits.h"
#include "amp/Runtime/RecordMemRef.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdio>
#include <cstdlib>
#include <type_traits>

using namespace mlir::amp::runtime;

namespace {

[[noreturn]] void fail(const char *message) {
  std::fprintf(stderr, "amp_conv: %s\n", message);
  std::abort();
}

/// The elements of a packed `memref` of `count` elements; fails otherwise.
template <typename T>
T *getPacked(const UnrankedMemRefType<T> &memref, int64_t count) {
  DynamicMemRefType<T> ranked(memref);
  int64_t size = 1;
  for (int64_t i = ranked.rank - 1; i >= 0; --i) {
    if (ranked.sizes[i] != 1 && ranked.strides[i] != size)
      fail("a convolution operand is not packed");
    size *= ranked.sizes[i];
  }
  if (size != count)
    fail("a convolution operand's size differs from its record's");
  return ranked.data + ranked.offset;
}

/// Executes a convolution record: forward Y (+)= conv(X, W), backward
/// filter dW (+)= sum over images and positions of X's windows times dY,
/// or backward data dX (+)= the sum of dY times W over the windows that
/// cover each element; the sums in `Acc` (f32 for f16 and bf16 data),
/// rounded to T.
template <typename T, typename Acc = T>
void convolutionRecord(const UnrankedMemRefType<int64_t> &recordMemRef,
                       const UnrankedMemRefType<T> &firstMemRef,
                       const UnrankedMemRefType<T> &factorMemRef,
                       const UnrankedMemRefType<T> &resultMemRef) {
  const int64_t *record = getRecordFields(recordMemRef, kConvRecordFields);
  if (!record)
    fail("a convolution record is a 1-d memref of kConvRecordFields i64");
  constexpr int64_t type = kGemmDataTypeOf<T>;
  if (const char *error = checkConvRecord(record, type, type, type))
    fail(error);
  const int64_t *in = record + kConvInput, *kernel = record + kConvKernel;
  const int64_t *out = record + kConvOutput, *stride = record + kConvStride;
  const int64_t *dilation = record + kConvDilation;
  const int64_t *padBefore = record + kConvPadBefore;
  int64_t batch = record[kConvBatch], groups = record[kConvGroups];
  int64_t channels = record[kConvInChannels] / groups;
  int64_t outChannels = record[kConvOutChannels] / groups;
  int64_t inVolume = in[0] * in[1] * in[2];
  int64_t kernelVolume = kernel[0] * kernel[1] * kernel[2];
  int64_t outVolume = out[0] * out[1] * out[2];
  auto mode = static_cast<ConvMode>(record[kConvMode]);
  bool overwrite = record[kConvOverwrite];

  // The operands by role: X, W and Y or their gradients.
  int64_t inputs = batch * groups * channels * inVolume;
  int64_t weights = groups * outChannels * channels * kernelVolume;
  int64_t outputs = batch * groups * outChannels * outVolume;
  int64_t counts[3][3] = {{inputs, weights, outputs},
                          {inputs, outputs, weights},
                          {outputs, weights, inputs}};
  const T *first = getPacked(firstMemRef, counts[mode][0]);
  const T *factor = getPacked(factorMemRef, counts[mode][1]);
  T *result = getPacked(resultMemRef, counts[mode][2]);
  auto store = [&](T &element, Acc sum) {
    element = narrow<T>(overwrite ? sum : widen<Acc>(element) + sum);
  };
  auto unflatten = [](int64_t index, const int64_t *sizes, int64_t *indices) {
    for (int64_t i = kConvMaxSpatialRank - 1; i >= 0; --i) {
      indices[i] = index % sizes[i];
      index /= sizes[i];
    }
  };
  int64_t o[kConvMaxSpatialRank], k[kConvMaxSpatialRank];

  if (mode == kConvBackwardData) {
    // dX[n, g*C + c, x] sums dY[n, g*M + m, o] * W[g*M + m, c, k] over the
    // m, k and o with o*s + k*d - p = x: by m, then the taps last to first
    // (the order of the convolution of the upsampled dY by the flipped
    // kernel that the graph lowering builds).
    const T *dy = first, *w = factor;
    int64_t x[kConvMaxSpatialRank];
    // dY's flat position for dX position x and tap k, or -1.
    auto source = [&]() {
      int64_t offset = 0;
      for (int64_t i = 0; i < kConvMaxSpatialRank; ++i) {
        int64_t strided = x[i] + padBefore[i] - k[i] * dilation[i];
        if (strided < 0 || strided % stride[i] || strided / stride[i] >= out[i])
          return int64_t(-1);
        offset = offset * out[i] + strided / stride[i];
      }
      return offset;
    };
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t g = 0; g < groups; ++g) {
        for (int64_t c = 0; c < channels; ++c) {
          T *dx = result + ((n * groups + g) * channels + c) * inVolume;
          for (int64_t position = 0; position < inVolume; ++position) {
            unflatten(position, in, x);
            Acc sum = 0;
            for (int64_t m = 0; m < outChannels; ++m) {
              int64_t filter = g * outChannels + m;
              const T *grad =
                  dy + (n * groups * outChannels + filter) * outVolume;
              const T *taps = w + (filter * channels + c) * kernelVolume;
              for (int64_t tap = kernelVolume - 1; tap >= 0; --tap) {
                unflatten(tap, kernel, k);
                int64_t from = source();
                if (from >= 0)
                  sum += widen<Acc>(grad[from]) * widen<Acc>(taps[tap]);
              }
            }
            store(dx[position], sum);
          }
        }
      }
    }
    return;
  }

  // sum over c and k of X[n, g*C + c, o*s + k*d - p] * W[g*M + m, c, k],
  // or of X's window times dY[n, g*M + m, o] over n and o for
  // dW[g*M + m, c, k]; X is 0 in its padding.
  const T *x = first;
  auto window = [&](int64_t n, int64_t g, int64_t c) {
    int64_t offset = (n * groups + g) * channels + c;
    for (int64_t i = 0; i < kConvMaxSpatialRank; ++i) {
      int64_t position = o[i] * stride[i] + k[i] * dilation[i] - padBefore[i];
      if (position < 0 || position >= in[i])
        return Acc(0);
      offset = offset * in[i] + position;
    }
    return widen<Acc>(x[offset]);
  };
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t m = 0; m < outChannels; ++m) {
      int64_t filter = g * outChannels + m;
      if (mode == kConvForward) {
        for (int64_t n = 0; n < batch; ++n) {
          T *y = result + (n * groups * outChannels + filter) * outVolume;
          for (int64_t position = 0; position < outVolume; ++position) {
            unflatten(position, out, o);
            Acc sum = 0;
            for (int64_t c = 0; c < channels; ++c) {
              const T *taps = factor + (filter * channels + c) * kernelVolume;
              for (int64_t tap = 0; tap < kernelVolume; ++tap) {
                unflatten(tap, kernel, k);
                sum += window(n, g, c) * widen<Acc>(taps[tap]);
              }
            }
            store(y[position], sum);
          }
        }
        continue;
      }
      for (int64_t c = 0; c < channels; ++c) {
        T *dw = result + (filter * channels + c) * kernelVolume;
        for (int64_t tap = 0; tap < kernelVolume; ++tap) {
          unflatten(tap, kernel, k);
          Acc sum = 0;
          for (int64_t n = 0; n < batch; ++n) {
            const T *grad =
                factor + (n * groups * outChannels + filter) * outVolume;
            for (int64_t position = 0; position < outVolume; ++position) {
              unflatten(position, out, o);
              sum += window(n, g, c) * widen<Acc>(grad[position]);
            }
          }
          store(dw[tap], sum);
        }
      }
    }
  }
}
} // namespace

// The entry points, through the C interface of memref arguments: the
// record, then the first factor (X, or dY backward data), the second factor
// and the result.
#define AMP_CONV(NAME, T, ACC)                                                 \
  extern "C" void _mlir_ciface_amp_conv_##NAME(                                \
      UnrankedMemRefType<int64_t> *record, UnrankedMemRefType<T> *first,       \
      UnrankedMemRefType<T> *factor, UnrankedMemRefType<T> *result) {          \
    convolutionRecord<T, ACC>(*record, *first, *factor, *result);              \
  }

AMP_CONV(f32_f32_f32, float, float)
AMP_CONV(f64_f64_f64, double, double)
// f16 and bf16 through an f32 accumulator (cuDNN's PSEUDO_HALF).
AMP_CONV(f16_f16_f16, F16Bits, float)
AMP_CONV(bf16_bf16_bf16, BF16Bits, float)
