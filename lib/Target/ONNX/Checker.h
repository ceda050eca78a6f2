//===- Checker.h - onnx.checker's full check on exported models -*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_CHECKER_H
#define AMP_LIB_TARGET_ONNX_CHECKER_H

#include "ChildProcess.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

namespace onnx {
class ModelProto;
} // namespace onnx

namespace mlir::onnxg {

/// libonnx's full check (what `onnx.checker.check_model(m, full_check=True)`
/// does: the checker, then strict shape inference with type checks) of an
/// exported model, in a child process that runs while the exporter
/// serializes the model.
class OutputCheck {
public:
  /// Starts checking `output`, whose external data (if any) lies in
  /// `outputDir`; `input` is the serialized ONNX model the output came from
  /// (empty when it came from MLIR), with its external data in `inputDir`.
  LogicalResult start(onnx::ModelProto &output, llvm::StringRef outputDir,
                      llvm::StringRef input, llvm::StringRef inputDir);
  /// The verdict. Fails, after an error at `loc`, when the output fails the
  /// check and the input passes it: amp-opt broke the model, and must not
  /// write it. Otherwise succeeds: with a warning when the output fails and
  /// the input did too (or there is no ONNX input), with a remark when the
  /// output is newer than libonnx knows.
  LogicalResult finish(Location loc);

private:
  ChildProcess child;
};

} // namespace mlir::onnxg

#endif // AMP_LIB_TARGET_ONNX_CHECKER_H
