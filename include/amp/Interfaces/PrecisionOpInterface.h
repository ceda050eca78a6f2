//===- PrecisionOpInterface.h - What AMP passes ask an op -------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONOPINTERFACE_H
#define AMP_INTERFACES_PRECISIONOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

#include <optional>

namespace mlir::amp {

/// How an op takes part in mixed precision (docs/PrecisionClasses.md).
enum class PrecisionClass {
  /// Low precision whenever the cost model agrees; seeds low-precision
  /// regions (MatMul, Gemm, Conv).
  Always,
  /// Takes the precision of its data producers; exact in any precision
  /// (Relu, Reshape, MaxPool).
  Follow,
  /// Low precision only between or after always ops (Add, Tanh).
  Infer,
  /// Computes in FP32 and stops propagation (Softmax, reductions, losses).
  KeepFP32,
  /// Not a float computation, or one whose types are fixed (Shape,
  /// optimizers, unknown ops): no type changes and no casts.
  NeverTouch,
};

llvm::StringRef stringifyPrecisionClass(PrecisionClass precisionClass);
std::optional<PrecisionClass> symbolizePrecisionClass(llvm::StringRef name);

} // namespace mlir::amp

#include "amp/Interfaces/PrecisionOpInterface.h.inc"

#endif // AMP_INTERFACES_PRECISIONOPINTERFACE_H
