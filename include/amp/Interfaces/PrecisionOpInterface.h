//===- PrecisionOpInterface.h - What AMP passes ask an op -------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONOPINTERFACE_H
#define AMP_INTERFACES_PRECISIONOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

#include "amp/Interfaces/PrecisionClass.h.inc"

namespace mlir::amp {

class PrecisionOpInterface;

/// Sizes for the dynamic dimensions of cost estimates: one default size for
/// all of them. Estimates that used it are guesses, which the report says.
class DimSizes {
public:
  explicit DimSizes(int64_t defaultSize = 1) : defaultSize(defaultSize) {}

  /// The size of a dimension: itself, or the default when it is dynamic.
  double getSize(int64_t dim);
  /// Elements of a shaped `type` (1 for other types).
  double getNumElements(Type type);
  /// Bytes of `type` when its float elements are `floatBits` wide (0: their
  /// own width).
  double getBytes(Type type, unsigned floatBits = 0);

  bool usedGuess() const { return guessed; }
  void resetGuess() { guessed = false; }

private:
  int64_t defaultSize;
  bool guessed = false;
};

namespace detail {
double estimateElementwiseFlops(Operation *op, DimSizes &sizes);
double estimateAllBytes(PrecisionOpInterface op, DimSizes &sizes,
                        unsigned dataBits);
} // namespace detail

} // namespace mlir::amp

#include "amp/Interfaces/PrecisionOpInterface.h.inc"

#endif // AMP_INTERFACES_PRECISIONOPINTERFACE_H
