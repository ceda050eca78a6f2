// amp.unscale exports as Mul(Cast(g, to=FLOAT), Reciprocal(scale)); the Cast
// only for a low-precision gradient.
// RUN: amp-opt %s -o %t.onnx
// RUN: %onnx_info %t.onnx | FileCheck %s

// CHECK:      graph 'main'
// CHECK:        node 'g32/cast' Cast(g16) -> (g32/cast) to=1
// CHECK-NEXT:   node 'g32/reciprocal' Reciprocal(scale) -> (g32/reciprocal)
// CHECK-NEXT:   node 'g32' Mul(g32/cast, g32/reciprocal) -> (g32)
// CHECK-NEXT:   node 'w32/reciprocal' Reciprocal(scale) -> (w32/reciprocal)
// CHECK-NEXT:   node 'w32' Mul(w, w32/reciprocal) -> (w32)
// CHECK:        output g32: FLOAT[8,4]
// CHECK-NEXT:   output w32: FLOAT[4]
module attributes {onnxg.opset_imports = [["", 17]]} {
  func.func @main(%g16: tensor<8x4xf16> loc("g16"), %w: tensor<4xf32> loc("w"),
                  %scale: tensor<f32> loc("scale"))
      -> (tensor<8x4xf32> {onnxg.name = "g32"},
          tensor<4xf32> {onnxg.name = "w32"}) {
    %0 = amp.unscale %g16 by %scale : tensor<8x4xf16>, tensor<f32> to tensor<8x4xf32> loc("g32")
    %1 = amp.unscale %w by %scale : tensor<4xf32>, tensor<f32> to tensor<4xf32> loc("w32")
    return %0, %1 : tensor<8x4xf32>, tensor<4xf32>
  }
}
