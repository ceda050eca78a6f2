//===- amp-import-fuzzer.cpp - libFuzzer target for the importer -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the ONNX importer, and exports what imports. Any
// crash, hang or sanitizer report is a bug: bad input must only produce
// diagnostics.
//
//===----------------------------------------------------------------------===//

#include "amp/InitAll.h"
#include "amp/Target/ONNX/Export.h"
#include "amp/Target/ONNX/Import.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::DialectRegistry registry;
  mlir::amp::registerAllAMPDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics are the expected outcome for most inputs; keep them quiet.
  context.getDiagEngine().registerHandler(
      [](mlir::Diagnostic &) { return mlir::success(); });
  auto module = mlir::onnxg::importOnnxModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx",
      &context);
  if (module) {
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    (void)mlir::onnxg::exportOnnxModel(*module, os);
  }
  return 0;
}
