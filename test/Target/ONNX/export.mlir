// Export of IR written by hand or produced by passes: values without ONNX
// names get fresh unique names, amp.cast becomes Cast, and a graph output that
// is a graph input goes through Identity. Added nodes get node names no
// imported node has.
// RUN: amp-opt %s -o %t.onnx
// RUN: %onnx_info %t.onnx | FileCheck %s

// CHECK:      ir_version 8 producer 'amp-opt'
// CHECK:      opset '' 17
// CHECK:      graph 'main'
// CHECK-NEXT:   input input_0: FLOAT[2,3]
// CHECK-NEXT:   input input_1: FLOAT[3,4]
// CHECK-NEXT:   initializer b: FLOAT[4]
// CHECK-NEXT:   node 'out' MatMul(input_0, input_1) -> (mm)
// CHECK-NEXT:   node 'out_1' Cast(mm) -> (out) to=10
// CHECK-NEXT:   node '' Identity(input_0) -> (passthrough)
// CHECK-NEXT:   value mm: FLOAT[2,4]
// CHECK-NEXT:   output out: FLOAT16[2,4]
// CHECK-NEXT:   output passthrough: FLOAT[2,3]
module attributes {onnxg.opset_imports = [["", 17]]} {
  func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>)
      -> (tensor<2x4xf16> {onnxg.name = "out"},
          tensor<2x3xf32> {onnxg.name = "passthrough"}) {
    %b = onnxg.initializer "b" dense<1.0> : tensor<4xf32>
    %m = onnxg.node "MatMul"(%x, %w) opset 17
        : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
        loc(fused<"onnx.outputs">["out", "mm"])
    %h = amp.cast %m : tensor<2x4xf32> to tensor<2x4xf16>
    return %h, %x : tensor<2x4xf16>, tensor<2x3xf32>
  }
}
