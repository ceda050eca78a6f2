//===- GELUBodies.h - Elementwise bodies that compute GELU ------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// cuBLASLt's GELU epilogues compute GELU's tanh approximation (and its
// derivative) after a GEMM. Exporters spell that function in many ways:
// ONNX Gelu with approximate="tanh", com.microsoft FastGelu, or PyTorch's
// decomposition into Mul, Pow, Add, Tanh (or a sigmoid of twice the
// inner term), in any order of the products. Once fused into one
// linalg.generic, the body is a small scalar expression; these functions
// decide what it computes by evaluating it, in double precision with its
// roundings ignored, at sample points against the function itself (within
// the rounding of its constants, which AMP rounds to f16 or bf16). Only
// smooth arithmetic is evaluated (add, subtract, multiply, divide, negate,
// widen, round, tanh, exp, pow, sqrt, fma), so a body with a branch, a
// comparison or erf (exact GELU, which cuBLASLt does not have) never
// matches.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_GELUBODIES_H
#define AMP_CONVERSION_GELUBODIES_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"

namespace mlir::amp {

/// Whether `body` (a linalg.generic's block, one result) yields GELU's tanh
/// approximation of `x + bias` (`bias` null: of `x`), both block arguments
/// of it, and reads no other argument.
bool computesGELU(Block *body, Value x, Value bias);

/// Whether `body` yields `dy` times the derivative of GELU's tanh
/// approximation at `x`, both block arguments of it, and reads no other
/// argument.
bool computesGELUGradient(Block *body, Value dy, Value x);

} // namespace mlir::amp

#endif // AMP_CONVERSION_GELUBODIES_H
