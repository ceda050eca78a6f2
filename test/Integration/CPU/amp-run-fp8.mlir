// FP8 (E4M3FN) on the CPU: casts round to nearest even and saturate at 448,
// the MatMul accumulates in f32 and saturates once, the Mul rounds its f32
// product once (arithmetic through convert-arith-to-apfloat).
// RUN: %python -c "import numpy; numpy.save('%t.x.npy', numpy.array([0.3, 1.7, -5.1, 300.0, 1000.0, -0.01], numpy.float32)); numpy.save('%t.w.npy', numpy.array([[1, 0.5], [2, 0.5], [0.25, 1], [0.01, 0], [1, 0], [3, 3]], numpy.float32))"
// RUN: rm -rf %t.out && amp-run %s --steps 1 --input x=%t.x.npy --input w=%t.w.npy --save-outputs %t.out 2>/dev/null
// RUN: %python -c "import numpy; [print(list(numpy.load('%t.out/output%%d.npy' %% i))) for i in range(3)]" | FileCheck %s
// CHECK: [0.3125, 1.75, -5.0, 288.0, 448.0, -0.009765625]
// CHECK: [448.0, -4.0]
// CHECK: [0.09375, 3.0, 24.0, 448.0, 448.0, 0.0]

// What amp-run JIT-compiles: each loop nest a function of its own that LLVM
// does not inline (amp-outline-loop-nests), for compile time.
// RUN: amp-opt %s --amp-lower-to-cpu | FileCheck %s --check-prefix=LOWERED
// LOWERED:     llvm.func @main(
// LOWERED:       llvm.call @main_loop0(
// LOWERED:       llvm.call @main_loop1(
// LOWERED:     llvm.func internal @main_loop0({{.*}}) attributes {passthrough = ["noinline"]
func.func @main(%x: tensor<6xf32> loc("x"), %w: tensor<6x2xf32> loc("w")) -> (tensor<6xf32>, tensor<2xf32>, tensor<6xf32>) {
  %0 = onnxg.node "Cast"(%x) opset 19 attributes {to = 17 : i64} : (tensor<6xf32>) -> tensor<6xf8E4M3FN>
  %1 = onnxg.node "Cast"(%0) opset 19 attributes {to = 1 : i64} : (tensor<6xf8E4M3FN>) -> tensor<6xf32>
  %2 = onnxg.node "Cast"(%w) opset 19 attributes {to = 17 : i64} : (tensor<6x2xf32>) -> tensor<6x2xf8E4M3FN>
  %3 = onnxg.node "MatMul"(%0, %2) opset 19 : (tensor<6xf8E4M3FN>, tensor<6x2xf8E4M3FN>) -> tensor<2xf8E4M3FN>
  %4 = onnxg.node "Cast"(%3) opset 19 attributes {to = 1 : i64} : (tensor<2xf8E4M3FN>) -> tensor<2xf32>
  %5 = onnxg.node "Mul"(%0, %0) opset 19 : (tensor<6xf8E4M3FN>, tensor<6xf8E4M3FN>) -> tensor<6xf8E4M3FN>
  %6 = onnxg.node "Cast"(%5) opset 19 attributes {to = 1 : i64} : (tensor<6xf8E4M3FN>) -> tensor<6xf32>
  return %1, %4, %6 : tensor<6xf32>, tensor<2xf32>, tensor<6xf32>
}
