//===- OpTable.h - What amp-opt knows about each ONNX op type ---*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The one table of ONNX op types, keyed by (domain, op type). Rows live in
// OpTable.def; later passes add columns (precision class, data operands,
// cost formulas) there.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_ONNXGRAPH_IR_OPTABLE_H
#define AMP_DIALECT_ONNXGRAPH_IR_OPTABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::onnxg {

/// The family an op type belongs to; lowerings and lit tests are split by it.
enum class OpFamily {
  Elementwise,
  Activation,
  Comparison,
  Contraction,
  Convolution,
  Pooling,
  Normalization,
  Reduction,
  DataMovement,
  Shape,
  Constant,
  Random,
  Loss,
  Gradient,
  Optimizer,
  Runtime,
  Sequence,
  Custom,
};

/// One row of the op table.
struct OpInfo {
  llvm::StringLiteral domain; ///< "" for the default domain.
  llvm::StringLiteral opType;
  OpFamily family;
};

/// All rows, in table order.
llvm::ArrayRef<OpInfo> getOpTable();

/// The row for (domain, opType), or null for op types amp-opt does not know.
/// "ai.onnx" and "" name the same domain.
const OpInfo *lookupOp(llvm::StringRef domain, llvm::StringRef opType);

/// The family's name as used in docs and summaries ("contraction", ...).
llvm::StringRef stringifyOpFamily(OpFamily family);

} // namespace mlir::onnxg

#endif // AMP_DIALECT_ONNXGRAPH_IR_OPTABLE_H
