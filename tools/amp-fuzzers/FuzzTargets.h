//===- FuzzTargets.h - What amp-opt's fuzz targets share --------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// A context that swallows diagnostics (they are the expected outcome for
// most inputs) and the import every ONNX target starts with.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TOOLS_AMP_FUZZERS_FUZZTARGETS_H
#define AMP_TOOLS_AMP_FUZZERS_FUZZTARGETS_H

#include "ModelMutator.h"

#include "amp/InitAll.h"
#include "amp/Target/ONNX/Export.h"
#include "amp/Target/ONNX/Import.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace amp::fuzz {

/// The dialects an imported graph uses.
inline const mlir::DialectRegistry &getGraphRegistry() {
  static const mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry registry;
    mlir::amp::registerAllAMPDialects(registry);
    return registry;
  }();
  return registry;
}

/// A single-threaded context whose diagnostics go nowhere.
class QuietContext : public mlir::MLIRContext {
public:
  explicit QuietContext(const mlir::DialectRegistry &registry)
      : MLIRContext(registry, Threading::DISABLED) {
    getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
  }
};

/// Imports `data` as an ONNX model. Shape inference, which the tools run in
/// a child process (libonnx crashes on some malformed models), is skipped:
/// a process per input would cap the target at a few dozen runs a second.
inline mlir::OwningOpRef<mlir::ModuleOp>
importModel(const uint8_t *data, size_t size, mlir::MLIRContext &context) {
  mlir::onnxg::ImportOptions options;
  options.inferShapes = false;
  return mlir::onnxg::importOnnxModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx",
      &context, options);
}

/// Exports `module` to ONNX in memory, without the output check (which
/// forks: the targets cannot afford it per input).
inline void exportModel(mlir::ModuleOp module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  mlir::onnxg::ExportOptions options;
  options.check = false;
  (void)mlir::onnxg::exportOnnxModel(module, os, options);
}

} // namespace amp::fuzz

#endif // AMP_TOOLS_AMP_FUZZERS_FUZZTARGETS_H
