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

#endif // AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_TD
