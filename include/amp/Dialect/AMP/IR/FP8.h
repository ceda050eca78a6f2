//===- FP8.h - FP8 formats and scaling formulas -----------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The FP8 formats' limits and Transformer Engine's scaling formulas on
// scalars: the folders of the amp FP8 ops use them, and the CPU lowering
// builds the same arithmetic (docs/FP8.md).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_FP8_H
#define AMP_DIALECT_AMP_IR_FP8_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir::amp::fp8 {

/// Whether `type` is an FP8 type the FP8 ops take (f8E4M3FN, f8E5M2).
bool isFP8(Type type);

/// The largest finite value of `type`: 448 for f8E4M3FN, 57344 for f8E5M2.
float getMaxFinite(FloatType type);

/// The scale for `amax` (Transformer Engine's `DelayedScaling` and
/// `Float8CurrentScaling`): `(fp8Max / amax) / 2^margin`; an amax of 0,
/// infinity or NaN gives `previous` (1 without one); a quotient that
/// overflows FP32 gives the largest finite FP32; `pow2` rounds the scale
/// down to a power of two.
float computeScale(float amax, std::optional<float> previous, float fp8Max,
                   int64_t margin, bool pow2);

/// max(a, b), NaN when either is NaN: how amaxes combine (arith.maximumf).
float maxOrNaN(float a, float b);

/// How the amax history gives the amax a scale is computed from.
enum class AmaxAlgo { Max, MostRecent };

/// Parses "max" or "most_recent".
std::optional<AmaxAlgo> parseAmaxAlgo(StringRef name);

/// One step of delayed scaling on one tensor's `history` (slot 0 zero on
/// entry), in place: slot 0 takes `amax`; the scale comes from the history's
/// max (or slot 0) and `previous`; the history rolls by one toward the front
/// and slot 0 is cleared. Returns the new scale.
float updateHistory(MutableArrayRef<float> history, float amax, float previous,
                    float fp8Max, int64_t margin, AmaxAlgo algo);

/// The shape of the per-block values (scales, amaxes) of a tensor of
/// `shape` in blocks of `block` (same rank): each dimension divided by the
/// block's, rounded up; dynamic dimensions stay dynamic.
SmallVector<int64_t> getBlockGridShape(ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> block);

} // namespace mlir::amp::fp8

#endif // AMP_DIALECT_AMP_IR_FP8_H
