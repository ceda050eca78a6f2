//===- FP8.cpp - FP8 formats and scaling formulas -------------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/FP8.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

using namespace mlir;
using namespace mlir::amp;

bool fp8::isFP8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

float fp8::getMaxFinite(FloatType type) {
  return llvm::APFloat::getLargest(type.getFloatSemantics()).convertToFloat();
}

float fp8::computeScale(float amax, std::optional<float> previous, float fp8Max,
                        int64_t margin, bool pow2) {
  if (!(amax > 0.0f) || !std::isfinite(amax))
    return previous.value_or(1.0f);
  float scale = std::ldexp(fp8Max / amax, -static_cast<int>(margin));
  if (std::isinf(scale))
    scale = FLT_MAX;
  if (pow2) {
    // Round down to a power of two: keep the exponent, clear the mantissa.
    int exponent;
    std::frexp(scale, &exponent);
    scale = std::ldexp(1.0f, exponent - 1);
  }
  return scale;
}

float fp8::maxOrNaN(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}

std::optional<fp8::AmaxAlgo> fp8::parseAmaxAlgo(StringRef name) {
  return llvm::StringSwitch<std::optional<AmaxAlgo>>(name)
      .Case("max", AmaxAlgo::Max)
      .Case("most_recent", AmaxAlgo::MostRecent)
      .Default(std::nullopt);
}

float fp8::updateHistory(MutableArrayRef<float> history, float amax,
                         float previous, float fp8Max, int64_t margin,
                         AmaxAlgo algo) {
  if (history.empty())
    return computeScale(amax, previous, fp8Max, margin, /*pow2=*/false);
  history[0] = amax;
  float chosen = history[0];
  if (algo == AmaxAlgo::Max)
    // A NaN anywhere keeps the previous scale.
    for (float value : history)
      chosen = maxOrNaN(chosen, value);
  float scale = computeScale(chosen, previous, fp8Max, margin, false);
  std::rotate(history.begin(), history.begin() + 1, history.end());
  history[0] = 0.0f;
  return scale;
}

SmallVector<int64_t> fp8::getBlockGridShape(ArrayRef<int64_t> shape,
                                            ArrayRef<int64_t> block) {
  SmallVector<int64_t> grid;
  for (auto [dim, size] : llvm::zip(shape, block))
    grid.push_back(ShapedType::isDynamic(dim) ? ShapedType::kDynamic
                                              : (dim + size - 1) / size);
  return grid;
}
