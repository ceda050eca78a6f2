//===- Einsum.h - Parsed Einsum equations -----------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// An ONNX Einsum equation ("bij,bjk->bik", with "..." and the implicit
// output of numpy's einsum) as label numbers per operand dimension, which
// the lowering and the cost model read.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_ONNXGRAPH_IR_EINSUM_H
#define AMP_DIALECT_ONNXGRAPH_IR_EINSUM_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::onnxg {

/// An Einsum equation for operands of known ranks. Labels are numbered:
/// the dimensions "..." stands for first (right-aligned across operands,
/// as they broadcast), then the letters in the order they first appear.
struct EinsumEquation {
  /// The labels of each operand's dimensions.
  llvm::SmallVector<llvm::SmallVector<unsigned>> operands;
  /// The labels of the output's dimensions.
  llvm::SmallVector<unsigned> output;
  unsigned numLabels = 0;

  /// Parses `equation` for operands of `ranks`; on failure, says why in
  /// `error` and returns nullopt.
  static std::optional<EinsumEquation> parse(llvm::StringRef equation,
                                             llvm::ArrayRef<int64_t> ranks,
                                             std::string &error);
};

} // namespace mlir::onnxg

#endif // AMP_DIALECT_ONNXGRAPH_IR_EINSUM_H
