//===- OutputCasts.h - A library call's result rounded by its reader -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Mixed precision lowers an f16 GEMM or convolution as an f32 accumulator
// that the next kernel rounds to f16 (`arith.truncf`) before it does
// anything else with it. cuBLASLt and cuDNN round their f32 accumulator to
// an f16 or bf16 result themselves (cuBLASLt's output type, cuDNN's
// PSEUDO_HALF configuration): the call can write the rounded values, in
// half the bytes, and its reader reads them without the truncation.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_OUTPUTCASTS_H
#define AMP_CONVERSION_OUTPUTCASTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::amp {

/// The readers of a result that round it to `type`: each reader's input
/// (the pair's index) views the result; a body that uses it otherwise too
/// (adds a bias first) reads the rounded value widened back to f32.
struct OutputCast {
  SmallVector<std::pair<linalg::GenericOp, unsigned>> readers;
  FloatType type;
};

/// The linalg.generic ops that access `buffer` after `writer` until it is
/// written again or freed, with the operand through which each reads it:
/// `buffer` a new f32 buffer (an alloc of static shape in `writer`'s
/// block), read by each generic as one input, a reshape of it, through no
/// other operand, and by nothing else. Nullopt otherwise.
std::optional<SmallVector<std::pair<linalg::GenericOp, unsigned>>>
getReadersOfNewResult(Operation *writer, Value buffer);

/// The one linalg.generic that getReadersOfNewResult finds, or nullopt.
std::optional<std::pair<linalg::GenericOp, unsigned>>
getReaderOfNewResult(Operation *writer, Value buffer);

/// The output cast of `result` to `type` (f16 or bf16, the writer's input
/// type), which `writer` overwrites (every element, none read): `result`
/// is a reshape of a new f32 buffer whose readers (getReadersOfNewResult;
/// a gradient's finite check and its update, say) only round it to
/// `type`. Nullopt otherwise.
std::optional<OutputCast> matchOutputCast(Operation *writer, Value result,
                                          Type type);

/// The readers of `result` as matchOutputCast has them, of which one or
/// more add a bias to the element (in f32) before they only round the sum
/// to `type` (f16 or bf16): the writer rounds to `type`, and those readers
/// widen the rounded value back. For a convolution with a
/// bias whose graph op has an f16 or bf16 result: cuDNN's PSEUDO_HALF
/// configuration rounds before the bias, as PyTorch's cuDNN path does.
std::optional<OutputCast> matchWidenedOutput(Operation *writer, Value result,
                                             Type type);

/// Rewrites `outputCast` (from matchOutputCast on `result`): a new buffer
/// of `outputCast.type` next to `result`'s, read by the readers without
/// their truncations (widened back to f32 where they do more). Returns the view
/// of the new buffer that stands for `result`, for the writer's replacement to
/// write; once the writer is replaced, eraseIfUnaccessed takes the f32 buffer.
Value applyOutputCast(const OutputCast &outputCast, Value result);

/// A new buffer holding `source` (a memref of any rank) rounded to
/// `narrow`, written by a generic at the builder; the caller frees it.
Value createRoundedCopy(OpBuilder &builder, Location loc, Value source,
                        FloatType narrow);

} // namespace mlir::amp

#endif // AMP_CONVERSION_OUTPUTCASTS_H
