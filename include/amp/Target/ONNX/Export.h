//===- Export.h - MLIR to ONNX export ---------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Writes a module holding `func.func @main` over `onnxg` (and `amp`) ops back
// to an ONNX model.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_ONNX_EXPORT_H
#define AMP_TARGET_ONNX_EXPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::onnxg {

struct ExportOptions {
  /// Run onnx.checker's full check on the model before writing it
  /// (docs/Reliability.md): an output the check rejects is written with a
  /// warning, or refused when `input` passes the check.
  bool check = true;
  /// The serialized ONNX model the module was imported from; empty when it
  /// came from MLIR.
  llvm::StringRef input;
  /// The folder `input` came from, where its external data lies.
  llvm::StringRef inputDir;
  /// exportOnnxFile: write every tensor of 1 KiB or more to `<path>.data`
  /// (ONNX external data). Without it, that happens only when the model
  /// would not fit in a protobuf (2 GiB).
  bool externalData = false;
};

/// Serializes `module` as an ONNX model to `os`. Errors are emitted on the
/// module's context; nothing is written after an error.
LogicalResult exportOnnxModel(ModuleOp module, llvm::raw_ostream &os,
                              const ExportOptions &options = {});

/// Writes `module` to `path` through a temporary file renamed into place, so
/// that a failure leaves no partial file. Reports the time of each phase
/// under `timing`.
LogicalResult exportOnnxFile(ModuleOp module, llvm::StringRef path,
                             TimingScope &timing,
                             const ExportOptions &options = {});

/// Registers `--export-onnx` for mlir-translate-style tools.
void registerExportOnnxTranslation();

} // namespace mlir::onnxg

#endif // AMP_TARGET_ONNX_EXPORT_H
