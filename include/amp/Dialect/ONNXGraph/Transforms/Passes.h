//===- Passes.h - ONNX graph dialect passes ---------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_H
#define AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::onnxg {

#define GEN_PASS_DECL
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"

} // namespace mlir::onnxg

#endif // AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_H
