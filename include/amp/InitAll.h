//===- InitAll.h - Register all amp-opt dialects and passes -----*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INITALL_H
#define AMP_INITALL_H

#include "amp/Conversion/Passes.h"
#include "amp/Dialect/AMP/IR/AMPDialect.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/Linalg/ExternalModels.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"
#include "amp/Dialect/Tosa/ExternalModels.h"
#include "amp/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace mlir::amp {

/// Adds amp-opt's own dialects to `registry`.
inline void registerAllAMPDialects(DialectRegistry &registry) {
  registry
      .insert<amp::AMPDialect, onnxg::ONNXGraphDialect, func::FuncDialect>();
}

/// Attaches amp-opt's interfaces to upstream dialects (TOSA, linalg), so
/// that its passes run on them.
inline void registerAllAMPExternalModels(DialectRegistry &registry) {
  amp::registerLinalgExternalModels(registry);
  amp::registerTosaExternalModels(registry);
}

/// What amp-opt, amp-run and amp-compile load: upstream's dialects and
/// extensions, amp-opt's dialects and external models, and every LLVM IR
/// translation (gpu-module-to-binary translates kernels; the JIT and
/// amp-compile translate host code).
inline void registerAllToolDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllAMPDialects(registry);
  registerAllAMPExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

/// Registers amp-opt's own passes for the command line.
inline void registerAllAMPPasses() {
  onnxg::registerONNXGraphPasses();
  amp::registerAMPPasses();
  amp::registerAMPPipeline();
  amp::registerAMPConversionPasses();
  amp::registerAMPLoweringPipelines();
}

} // namespace mlir::amp

#endif // AMP_INITALL_H
