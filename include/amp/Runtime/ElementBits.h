//===- ElementBits.h - Narrow float elements as the runtimes see them -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The compiled code stores f16, bf16 and FP8 elements as raw bits; the
// runtimes' entry points take them as these structs, and the CPU runtime
// widens them to float (exactly) and rounds floats to them (to nearest,
// ties to even, as `arith.truncf` does).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_ELEMENTBITS_H
#define AMP_RUNTIME_ELEMENTBITS_H

#include "amp/Runtime/GemmRecord.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace mlir::amp::runtime {

struct F16Bits {
  uint16_t bits;
};
struct BF16Bits {
  uint16_t bits;
};
/// An FP8 element: OCP E4M3FN or E5M2.
struct F8E4M3Bits {
  uint8_t bits;
};
struct F8E5M2Bits {
  uint8_t bits;
};

/// The record's code (GemmDataType) of an element type as the entry points
/// take it; -1 for any other type, which no record matches.
template <typename T>
inline constexpr int64_t kGemmDataTypeOf =
    std::is_same_v<T, float>        ? kGemmF32
    : std::is_same_v<T, double>     ? kGemmF64
    : std::is_same_v<T, F16Bits>    ? kGemmF16
    : std::is_same_v<T, BF16Bits>   ? kGemmBF16
    : std::is_same_v<T, F8E4M3Bits> ? kGemmF8E4M3
    : std::is_same_v<T, F8E5M2Bits> ? kGemmF8E5M2
                                    : -1;

template <typename Acc, typename T>
inline Acc widen(T value) {
  return Acc(value);
}
template <>
inline float widen<float, F16Bits>(F16Bits value) {
  _Float16 half;
  std::memcpy(&half, &value.bits, sizeof(half));
  return float(half);
}
template <>
inline float widen<float, BF16Bits>(BF16Bits value) {
  uint32_t bits = uint32_t(value.bits) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}
template <>
inline float widen<float, F8E4M3Bits>(F8E4M3Bits value) {
  // Bias 7, no infinities, S.1111.111 is NaN, exponent 0 subnormal.
  int exponent = (value.bits >> 3) & 0xF, mantissa = value.bits & 0x7;
  float magnitude = exponent == 0xF && mantissa == 0x7 ? __builtin_nanf("")
                    : exponent == 0
                        ? std::ldexp(float(mantissa), -9)
                        : std::ldexp(float(8 + mantissa), exponent - 10);
  return value.bits & 0x80 ? -magnitude : magnitude;
}
template <>
inline float widen<float, F8E5M2Bits>(F8E5M2Bits value) {
  // E5M2 is the upper byte of an IEEE half.
  return widen<float>(F16Bits{uint16_t(value.bits << 8)});
}

template <typename T, typename Acc>
inline T narrow(Acc value) {
  return T(value);
}
template <>
inline F16Bits narrow<F16Bits, float>(float value) {
  _Float16 half = _Float16(value);
  F16Bits result;
  std::memcpy(&result.bits, &half, sizeof(half));
  return result;
}
template <>
inline BF16Bits narrow<BF16Bits, float>(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7FFFFFFF) > 0x7F800000) // NaN: quiet, sign kept
    return {uint16_t((bits >> 16) | 0x40)};
  return {uint16_t((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)};
}

} // namespace mlir::amp::runtime

#endif // AMP_RUNTIME_ELEMENTBITS_H
