//===- PipelineFuzzer.cpp - libFuzzer target for --amp-pipeline -*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-pipeline-fuzzer: runs --amp-pipeline on every mutated model that
// imports, then exports the result. The input's hash picks the pipeline's
// options, so each input always meets the same ones (libFuzzer replays
// inputs).
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/Hashing.h"

/// The pipelines a mutant meets, one per input.
static constexpr const char *kPipelines[] = {
    "builtin.module(amp-pipeline{precision=fp16})",
    "builtin.module(amp-pipeline{precision=bf16 assign=propagate})",
    "builtin.module(amp-pipeline{precision=fp8 fp8=always})",
    "builtin.module(amp-pipeline{precision=fp16 recompute=mincut})",
};

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  mlir::amp::registerAllAMPPasses();
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  return amp::fuzz::mutateModel(data, size, maxSize, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry registry;
    mlir::amp::registerAllToolDialects(registry);
    return registry;
  }();
  amp::fuzz::QuietContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      amp::fuzz::importModel(data, size, context);
  if (!module)
    return 0;
  size_t choice = llvm::hash_value(llvm::StringRef(
                      reinterpret_cast<const char *>(data), size)) %
                  std::size(kPipelines);
  mlir::PassManager pm(&context);
  if (failed(mlir::parsePassPipeline(kPipelines[choice], pm)))
    __builtin_trap();
  if (failed(pm.run(*module)))
    return 0;
  amp::fuzz::exportModel(*module);
  return 0;
}
