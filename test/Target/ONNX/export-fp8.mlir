// The FP8 ops export in forms ONNX Runtime's CPU build runs (opset 19):
// quantize is a saturating Cast of x * scale, dequantize a Mul of the
// widened data, the scaled GEMM a MatMul of the dequantized operands (no
// DequantizeLinear -> MatMul, which ONNX Runtime rewrites into an integer
// kernel that rejects FP8); a dimension its block does not divide is padded
// to whole blocks; a model below opset 19 and a block layout over a dynamic
// dimension are errors.
// RUN: amp-opt %s -o %t.onnx
// RUN: %onnx_info %t.onnx | FileCheck %s
// RUN: amp-opt %S/Inputs/export-fp8-partial-block.mlir -o %t.partial.onnx
// RUN: %onnx_info %t.partial.onnx | FileCheck %S/Inputs/export-fp8-partial-block.mlir --check-prefix=PARTIAL
// RUN: rm -f %t.bad.onnx
// RUN: not amp-opt %S/Inputs/export-fp8-old-opset.mlir -o %t.bad.onnx 2>&1 | FileCheck %S/Inputs/export-fp8-old-opset.mlir --check-prefix=OPSET
// RUN: not amp-opt %S/Inputs/export-fp8-bad-block.mlir -o %t.bad.onnx 2>&1 | FileCheck %S/Inputs/export-fp8-bad-block.mlir --check-prefix=BLOCK
// RUN: not test -e %t.bad.onnx

// CHECK:      opset '' 19
// CHECK:        node 'q/scaled/float' Cast(x) -> (q/scaled/float) to=1
// CHECK-NEXT:   node 'q/scaled' Mul(q/scaled/float, s) -> (q/scaled)
// CHECK-NEXT:   node 'q' Cast(q/scaled) -> (q) to=17
// CHECK-NEXT:   node 'q_inv' Reciprocal(s) -> (q_inv)
// CHECK:        node 'y/a/float' Cast(q) -> (y/a/float) to=1
// CHECK-NEXT:   node 'y/a' Mul(y/a/float, q_inv) -> (y/a)
// CHECK:        node 'y/b' Mul(y/b/float, w_inv) -> (y/b)
// CHECK-NEXT:   node 'y/b_t' Transpose(y/b) -> (y/b_t) perm=[1, 0]
// CHECK-NEXT:   node 'y/product' MatMul(y/a, y/b_t) -> (y/product)
// CHECK-NEXT:   node 'y' Cast(y/product) -> (y) to=16
// CHECK-NOT:    DequantizeLinear
module attributes {onnxg.opset_imports = [["", 19]]} {
  func.func @main(%x: tensor<4x32xbf16> loc("x"), %s: tensor<f32> loc("s"),
                  %w: tensor<16x32xf8E4M3FN> loc("w"),
                  %wi: tensor<f32> loc("w_inv"))
      -> (tensor<4x16xbf16> {onnxg.name = "y"}) {
    %q, %i = amp.quantize %x by %s : tensor<4x32xbf16>, tensor<f32> to tensor<4x32xf8E4M3FN> loc(fused<"onnx.outputs">["quantize", "q", "q_inv"])
    %y = amp.scaled_matmul %q, %i, %w, %wi {transpose_b} : tensor<4x32xf8E4M3FN>, tensor<f32>, tensor<16x32xf8E4M3FN>, tensor<f32> to tensor<4x16xbf16> loc("y")
    return %y : tensor<4x16xbf16>
  }
}
