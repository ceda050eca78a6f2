//===- BiasGradients.h - A GEMM input summed over k -----------*- C++ -*-===//
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The backward of a Linear layer computes the weight gradient as a
// contraction of the output gradient dY with the input over the batch, and
// the bias gradient as the sum of dY over that same batch: a reduction of
// one of the contraction's inputs over exactly the contraction's reduction
// loops. cuBLASLt computes that sum in the GEMM's epilogue (BGRADA,
// BGRADB), so the GEMM record takes the reduction over and the reduction's
// kernel goes.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_BIASGRADIENTS_H
#define AMP_CONVERSION_BIASGRADIENTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::amp {

/// Which input of `contraction` `reduction` sums into an f32 vector: the
/// reduction reads that input (the same value, a tensor or a memref) as its
/// only input, through a permutation of its loops; its body adds the
/// element (or its `arith.extf` to f32) to the accumulator; it reduces
/// exactly the input's dimensions that `contraction` reduces (unit ones
/// aside) and keeps one, which indexes the vector. Nullopt otherwise.
std::optional<unsigned> getBiasGradientInput(linalg::ContractOp contraction,
                                             linalg::GenericOp reduction);

/// Whether some linalg.contract reading `reduction`'s input takes it as its
/// bias gradient (getBiasGradientInput).
bool isBiasGradientOfAContraction(linalg::GenericOp reduction);

} // namespace mlir::amp

#endif // AMP_CONVERSION_BIASGRADIENTS_H
