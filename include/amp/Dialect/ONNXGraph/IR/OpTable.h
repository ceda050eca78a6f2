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

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

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

/// A set of operand or result positions (bit i: position i; kAll: every
/// position, also of variadic ops).
using SlotMask = uint32_t;
inline constexpr SlotMask kNone = 0;
inline constexpr SlotMask kAll = ~SlotMask(0);
template <typename... Positions>
constexpr SlotMask slots(Positions... positions) {
  return ((SlotMask(1) << positions) | ...);
}
inline bool containsSlot(SlotMask mask, unsigned position) {
  return mask == kAll || (position < 32 && (mask >> position) & 1);
}

/// One row of the op table.
struct OpInfo {
  llvm::StringLiteral domain; ///< "" for the default domain.
  llvm::StringLiteral opType;
  OpFamily family;
  amp::PrecisionClass precision;
  /// The float data slots a precision decision may retype.
  SlotMask dataOperands;
  SlotMask dataResults;
  /// Seed linearity (docs/TrainingGraphs.md): the float results are linear
  /// in the backward seed when exactly one of `linearProduct` is and every
  /// present operand of `linearSum` is (or is a constant zero), and no
  /// other operand depends on the seed.
  SlotMask linearProduct;
  SlotMask linearSum;
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
