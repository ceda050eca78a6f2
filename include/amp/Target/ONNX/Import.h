//===- Import.h - ONNX to MLIR import ---------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Reads an ONNX model into a module holding `func.func @main` over `onnxg`
// ops. Import rules: docs/ImportRules.md.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_ONNX_IMPORT_H
#define AMP_TARGET_ONNX_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::onnxg {

/// How to import.
struct ImportOptions {
  /// Run ONNX shape inference to type values that have no value_info.
  bool inferShapes = true;
  /// Where to report the time of each import phase (--mlir-timing); none
  /// when null.
  TimingScope *timing = nullptr;
};

/// Imports the serialized model `bytes`. `fileName` names the model in
/// diagnostics and locates external data files. Errors are emitted on the
/// context; returns null after any error.
OwningOpRef<ModuleOp> importOnnxModel(llvm::StringRef bytes,
                                      llvm::StringRef fileName,
                                      MLIRContext *context,
                                      const ImportOptions &options = {});

/// True when `fileName` ends in `.onnx` or `bytes` does not look like MLIR
/// (text or bytecode).
bool isOnnxInput(llvm::StringRef fileName, llvm::StringRef bytes);

/// Registers `--import-onnx` for mlir-translate-style tools.
void registerImportOnnxTranslation();

} // namespace mlir::onnxg

#endif // AMP_TARGET_ONNX_IMPORT_H
