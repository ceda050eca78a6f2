//===- PrecisionOpInterface.h - What AMP passes ask an op -------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONOPINTERFACE_H
#define AMP_INTERFACES_PRECISIONOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

#include "amp/Interfaces/PrecisionClass.h.inc"

namespace mlir::amp {

class PrecisionOpInterface;

/// Sizes for the dynamic dimensions of cost estimates: a size per symbolic
/// dimension name (`batch`, `seq`) and a default for the others. Estimates
/// that took the default are guesses, which the report names.
class DimSizes {
public:
  /// The symbolic name of dimension `dim` of `value`'s type, or "" when it
  /// has none. Dialects record names their own way (ONNX: `onnxg.dims`).
  using DimNameFn = std::function<llvm::StringRef(Value, unsigned)>;

  explicit DimSizes(int64_t defaultSize = 1,
                    llvm::StringMap<int64_t> namedSizes = {},
                    DimNameFn getDimName = nullptr)
      : defaultSize(defaultSize), namedSizes(std::move(namedSizes)),
        getDimName(std::move(getDimName)) {}

  /// The size a dynamic dimension without a named size takes.
  int64_t getDefaultSize() const { return defaultSize; }
  /// The size of dimension `dim` of `value`'s shaped type: itself, the size
  /// given for its name, or the default (a guess). 1 for other types.
  double getSize(Value value, unsigned dim);
  /// Elements of `value`'s shaped type (1 for other types).
  double getNumElements(Value value);
  /// Bytes of `value` when its float elements are `floatBits` wide (0: their
  /// own width).
  double getBytes(Value value, unsigned floatBits = 0);

  /// The dynamic dimensions that took the default size since the last
  /// resetGuesses, by name ("?" for unnamed ones), in order of first use.
  llvm::ArrayRef<std::string> getGuesses() const { return guesses; }
  void resetGuesses() { guesses.clear(); }

private:
  int64_t defaultSize;
  llvm::StringMap<int64_t> namedSizes;
  DimNameFn getDimName;
  llvm::SmallVector<std::string> guesses;
};

/// Whether `type` is a tensor of floats (any width), the only kind of value
/// a precision decision retypes.
bool isFloatTensor(Type type);

namespace detail {
double estimateElementwiseFlops(Operation *op, DimSizes &sizes);
RecomputeKind getDefaultRecomputeKind(PrecisionOpInterface op);
double estimateAllBytes(PrecisionOpInterface op, DimSizes &sizes,
                        unsigned dataBits);
} // namespace detail

} // namespace mlir::amp

#include "amp/Interfaces/PrecisionOpInterface.h.inc"

#endif // AMP_INTERFACES_PRECISIONOPINTERFACE_H
