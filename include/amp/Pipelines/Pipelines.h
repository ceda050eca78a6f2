//===- Pipelines.h - Lowering pipelines of amp-opt --------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The pipelines that take a (mixed-precision) graph to executable code:
// --amp-lower-to-cpu (graph -> linalg -> fused, bufferized loops -> LLVM).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_PIPELINES_H
#define AMP_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::amp {

/// Adds what takes a graph to linalg on tensors: onnxg-expand-gradients,
/// then convert-onnxg-to-linalg.
void addGraphToLinalgPasses(OpPassManager &pm);

/// Adds the CPU lowering to `pm` (docs/Lowering.md): addGraphToLinalgPasses
/// (unless `convertGraph` is false: the module is on linalg already),
/// elementwise fusion, one-shot bufferization with results turned into
/// out-parameters, loops, and the LLVM dialect (FP8 through
/// convert-arith-to-apfloat). `gemmRecords` runs the GEMMs that have a
/// record through amp-contractions-to-gemm-records (the CUDA backend's
/// cuBLASLt records, executed on the CPU). Returns failure when a pass
/// cannot be built.
LogicalResult buildCPULoweringPipeline(OpPassManager &pm,
                                       bool convertGraph = true,
                                       bool gemmRecords = false);

/// Registers --amp-lower-to-cpu.
void registerAMPLoweringPipelines();

} // namespace mlir::amp

#endif // AMP_PIPELINES_PIPELINES_H
