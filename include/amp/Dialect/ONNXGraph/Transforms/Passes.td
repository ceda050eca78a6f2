//===- Passes.td - ONNX graph dialect passes ---------------*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_TD
#define AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ONNXGraphPrintSummary : Pass<"onnxg-print-summary", "ModuleOp"> {
  let summary = "Print a summary of an imported ONNX graph";
  let description = [{
    Prints, to standard error, the graph's name, IR version and opsets, its
    inputs, outputs and initializers (count and bytes), and its nodes counted
    per domain and op type with the op table's family ("unknown" for op
    types outside the table) and precision class (PrecisionOpInterface).
    The IR is left unchanged.
  }];
}

def ONNXGraphExpandGradients
    : Pass<"onnxg-expand-gradients", "func::FuncOp"> {
  let summary = "Replace ONNX's Gradient nodes by the backward nodes they "
                "stand for";
  let description = [{
    An `ai.onnx.preview.training` Gradient node computes the gradient of the
    tensor its attribute `y` names with respect to the tensors `xs` names,
    from a seed of ones. This pass differentiates the nodes between them in
    reverse order and replaces each Gradient node's outputs by the result:
    ONNX nodes (Add, Mul, MatMul, Transpose, ReduceSum, ...) that lower like
    any other. A tensor that `y` does not depend on gets a zero gradient.

    Differentiable nodes: Add, Sub, Mul, Div (with ONNX broadcasting: the
    gradient is summed over the broadcast dimensions), Neg, Identity, Relu,
    Sigmoid, Tanh, Exp, Log, Sqrt, and MatMul of two operands of one rank of
    at least 2 with equal batch dimensions; of what `--amp-pipeline` adds,
    `amp.scale_loss` (the gradient is multiplied by the scale) and
    `amp.cast` (cast back). Any other op between `xs` and
    `y`, a `y` of unknown shape, and a broadcast over dimensions that are
    not static are errors that name the node. `amp-lower-to-cpu` runs this
    pass first.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_TD
