//===- Passes.h - Conversions out of amp-opt's dialects ---------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_PASSES_H
#define AMP_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

/// The argument that convert-onnxg-to-linalg appends to a function with
/// random ops (Dropout in training mode, BitmaskDropout, BiasDropout): a
/// tensor<2xi64> (seed, step counter) named by its location. The caller
/// passes a new counter at each step to draw new masks.
inline constexpr llvm::StringLiteral kRandomKeyName = "amp.random_key";

#define GEN_PASS_DECL
#include "amp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Conversion/Passes.h.inc"

} // namespace mlir::amp

#endif // AMP_CONVERSION_PASSES_H
