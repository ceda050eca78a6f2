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

/// The one reader of a result that only rounds it: `reader`'s input
/// `inputIndex` views the result, and the reader's body uses it only as
/// `arith.truncf` to `type`. With `widened`, the body uses it otherwise
/// too, and reads the rounded value widened back to f32.
struct OutputCast {
  linalg::GenericOp reader;
  unsigned inputIndex;
  FloatType type;
  bool widened = false;
};

/// The linalg.generic that next accesses `buffer` after `writer`, with the
/// operand through which it reads it: `buffer` a new f32 buffer (an alloc
/// of static shape in `writer`'s block), read by that generic as one
/// input, a reshape of it, through no other operand, and by nothing after
/// it. Nullopt otherwise.
std::optional<std::pair<linalg::GenericOp, unsigned>>
getReaderOfNewResult(Operation *writer, Value buffer);

/// The output cast of `result` to `type` (f16 or bf16, the writer's input
/// type), which `writer` overwrites (every element, none read): `result`
/// is a reshape of a new f32 buffer, the first op after `writer` to access
/// that buffer is a linalg.generic that reads it as one input and only
/// rounds it to `type`, and nothing reads it after that generic. Nullopt
/// otherwise.
std::optional<OutputCast> matchOutputCast(Operation *writer, Value result,
                                          Type type);

/// The one reader of `result` as matchOutputCast has it, whose body adds
/// a bias to the element (in f32) before it only rounds the sum to `type`
/// (f16 or bf16): the writer rounds to `type`, and the reader widens the
/// rounded value back (OutputCast::widened). For a convolution with a bias
/// whose graph op has an f16 or bf16 result: cuDNN's PSEUDO_HALF
/// configuration rounds before the bias, as PyTorch's cuDNN path does.
std::optional<OutputCast> matchWidenedOutput(Operation *writer, Value result,
                                             Type type);

/// Rewrites `outputCast` (from matchOutputCast on `result`): a new buffer
/// of `outputCast.type` next to `result`'s, read by the reader without its
/// truncations (widened back to f32 with `widened`). Returns the view of the
/// new buffer that stands for `result`, for the writer's replacement to write;
/// once the writer is replaced, eraseIfUnaccessed takes the f32 buffer.
Value applyOutputCast(const OutputCast &outputCast, Value result);

} // namespace mlir::amp

#endif // AMP_CONVERSION_OUTPUTCASTS_H
