//===- GridMapping.h - Loops mapped to a GPU grid ---------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Helpers shared by the LinalgToGPU passes: scf.parallel loops mapped to
// blocks and threads for convert-parallel-loops-to-gpu (and, through
// amp/Conversion/BufferAccesses.h, which calls are the runtime's library
// calls).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H
#define AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H

#include "amp/Conversion/BufferAccesses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {

/// An scf.parallel over one point, from 0 to 1, at `builder`'s insertion
/// point: amp-linalg-to-grid-loops makes it a grid of one block of one
/// thread, or runs it in another grid.
scf::ParallelOp createOnePointLoop(OpBuilder &builder, Location loc);

} // namespace mlir::amp

#endif // AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H
