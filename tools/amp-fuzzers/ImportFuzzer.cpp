//===- ImportFuzzer.cpp - libFuzzer target for the ONNX importer -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-import-fuzzer: feeds mutated models to the ONNX importer and exports
// what imports. Any crash, hang or sanitizer report is a bug: bad input must
// only produce diagnostics.
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  return amp::fuzz::mutateModel(data, size, maxSize, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  amp::fuzz::QuietContext context(amp::fuzz::getGraphRegistry());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      amp::fuzz::importModel(data, size, context);
  if (module)
    amp::fuzz::exportModel(*module);
  return 0;
}
