//===- Passes.td - Conversions out of amp-opt's dialects ---*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_PASSES_TD
#define AMP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertONNXGraphToLinalg : Pass<"convert-onnxg-to-linalg", "ModuleOp"> {
  let summary = "Lower graph nodes and amp ops to linalg, tensor, arith and "
                "math";
  let description = [{
    Rewrites every `onnxg.node`, `onnxg.initializer`, `onnxg.none` and `amp`
    op of the module's functions into upstream ops on tensors, so that the
    CPU and CUDA pipelines can fuse, bufferize and compile the step
    (docs/Lowering.md lists the op types and their limits).

    - Elementwise ops broadcast ONNX-style and compute in the element type
      of their results; FP16, BF16 and FP8 operands are widened to f32 for
      each op and its result rounded back, which gives the same values as a
      native operation rounded once.
    - GEMMs, convolutions, reductions, softmax, normalizations and losses
      accumulate in f32 whatever their input and output types.
    - Casts to FP8 clamp to the largest finite value first (ONNX
      `saturate=1`, and what the GPU's conversions do).
    - `amp.all_finite`, `amp.update_if_finite` and `amp.update_scale` lower
      to reductions and selects.

    Runtime-only ops (`YieldOp`, `Send`, `Recv`), custom domains and
    attributes a lowering does not support are errors that name the node;
    nothing is left half-converted in that case.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // AMP_CONVERSION_PASSES_TD
