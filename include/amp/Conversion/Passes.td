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
      accumulate in f32 whatever their input and output types (f64 for f64
      inputs).
    - Casts to FP8 clamp to the largest finite value first (ONNX
      `saturate=1`, and what the GPU's conversions do).
    - `amp.all_finite`, `amp.update_if_finite` and `amp.update_scale` lower
      to reductions and selects.
    - Random ops (Dropout in training mode, `com.microsoft` BitmaskDropout
      and BiasDropout) draw their masks from a counter-based generator keyed
      by a `tensor<2xi64>` (seed, step counter) argument that the pass
      appends to their function, named `amp.random_key` by its location;
      a node's `seed` attribute replaces the key's seed.

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

def CopyRepeatedResults
    : Pass<"amp-copy-repeated-results", "func::FuncOp"> {
  let summary = "Return a copy where a function returns one tensor twice";
  let description = [{
    Bufferization must not hand one buffer out as two results
    (buffer-results-to-out-params fails on it), but graphs do return one
    value twice once CSE has merged equal computations (the gradients of
    both operands of an Add). Each repeated result becomes a `linalg.copy`
    of the value into a new tensor, which carries its result number as
    `amp.result` so that a later CSE keeps the copies apart. The CPU
    pipeline runs it right before bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def VectorizeContractions
    : Pass<"amp-vectorize-contractions", "func::FuncOp"> {
  let summary = "Tile GEMM-like linalg.generic ops and vectorize the tiles";
  let description = [{
    The CPU pipeline's register blocking. Each linalg.generic that is a
    contraction (a multiply-accumulate body, possibly with casts; projected
    permutation maps; static shapes; at least two parallel loops, then the
    reduction loops) is tiled with scf.for to `m x n x k` tiles (the two
    innermost parallel loops and the innermost reduction loop; the other
    loops by 1) and each tile becomes a `vector.contract`, lowered to outer
    products and then to one `vector.fma` per row. Each tile size is the largest power of two up to
    the option that divides its loop, so no tile needs masking. Other ops
    are left alone. Convolutions reach this pass as GEMMs: the lowering
    builds them as im2col columns and one contraction.
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", "4", "most rows of a tile">,
    Option<"tileN", "tile-n", "int64_t", "16", "most columns of a tile">,
    Option<"tileK", "tile-k", "int64_t", "8",
           "most reduction depth of a tile">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::tensor::TensorDialect", "::mlir::affine::AffineDialect"
  ];
}

#endif // AMP_CONVERSION_PASSES_TD
