// amp-fp8: which GEMMs go FP8 (remarks), and what an FP8 GEMM becomes.
// RUN: amp-opt %s -split-input-file --amp-fp8="fp8=always" | FileCheck %s
// RUN: amp-opt %s -split-input-file --amp-fp8="fp8=always format=e4m3" | FileCheck %s --check-prefix=E4M3
// RUN: amp-opt %s -split-input-file --amp-fp8="fp8=always recipe=current" | FileCheck %s --check-prefix=CURRENT
// RUN: amp-opt %s -split-input-file --amp-fp8="fp8=always recipe=block" | FileCheck %s --check-prefix=BLOCK
// RUN: amp-opt %s -split-input-file --amp-fp8="fp8=always fp8-op=MatMul:never" | FileCheck %s --check-prefix=NEVER

// Delayed scaling (the default): each operand is quantized with the scale
// of the previous step, its amax recorded; one amp.fp8_update per step
// updates the histories and scales, threaded as state. The weight is
// quantized from its FP32 master copy (the BF16 cast goes). The input x is
// an activation and w a weight: E4M3 both. The gradient dy is E5M2 under
// the HYBRID format, E4M3 with format=e4m3.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %{{.*}}: tensor<1024xf32> {onnxg.initializer = dense<0.000000e+00> : tensor<1024xf32>}, %{{[a-z0-9]+}}: tensor<f32> {onnxg.initializer = dense<1.000000e+00> : tensor<f32>}
// CHECK-SAME:    -> (tensor<64x256xbf16>, tensor<64x128xbf16>, tensor<1024xf32> {onnxg.name = "amp.fp8.x.amax_history.updated"}, tensor<f32> {onnxg.name = "amp.fp8.x.scale.updated"}, {{.*}}"amp.fp8.w.scale.updated"}, {{.*}}"amp.fp8.dy.scale.updated"})
// CHECK-NOT:     amp.cast %
// CHECK-DAG:     %[[W8:.*]], %[[WI:.*]] = amp.quantize %{{.*}} by %{{.*}} {{.*}} : tensor<128x256xf32>, tensor<f32> to tensor<128x256xf8E4M3FN>
// CHECK-DAG:     %[[X8:.*]], %[[XI:.*]] = amp.quantize %{{.*}} by %{{.*}} {{.*}} : tensor<64x128xbf16>, tensor<f32> to tensor<64x128xf8E4M3FN>
// CHECK-DAG:     %[[G8:.*]], %[[GI:.*]] = amp.quantize %{{.*}} by %{{.*}} {{.*}} : tensor<64x256xbf16>, tensor<f32> to tensor<64x256xf8E5M2>
// CHECK:         amp.scaled_matmul %[[X8]], %[[XI]], %[[W8]], %[[WI]] {amp.fp8 = {a = "e4m3", b = "e4m3"
// CHECK:         amp.scaled_matmul %[[G8]], %[[GI]], %[[W8]], %[[WI]] {amp.fp8 = {a = "e5m2", b = "e4m3"
// CHECK-SAME:    transpose_b
// CHECK:         amp.fp8_update histories({{.*}}) amaxes({{.*}}) scales({{.*}}) {maxes = array<f32: 4.480000e+02, 4.480000e+02, 5.734400e+04>}
// E4M3: amp.scaled_matmul {{.*}} {amp.fp8 = {a = "e4m3", b = "e4m3"
// E4M3: amp.scaled_matmul {{.*}} {amp.fp8 = {a = "e4m3", b = "e4m3"
// E4M3-NOT: f8E5M2
// Current scaling: each scale from the tensor itself, no state.
// CURRENT-LABEL: func.func @linear(
// CURRENT-NOT:   amax_history
// CURRENT:       amp.amax
// CURRENT-NEXT:  amp.compute_scale %{{.*}} {max = 5.734400e+04 : f32} : tensor<f32>
// CURRENT-NEXT:  amp.quantize
// CURRENT-NOT:   amp.fp8_update
// Block scaling: 128x128 blocks for the weight, 1x128 along K for the
// activation and the gradient (K is its last dimension in dy x w^T), with
// power-of-two scales, E4M3 everywhere (format=auto, as TE).
// BLOCK-DAG:     amp.quantize {{.*}} block = array<i64: 128, 128>} : tensor<128x256xf32>, tensor<1x2xf32>
// BLOCK-DAG:     amp.quantize {{.*}} block = array<i64: 1, 128>} : tensor<64x128xbf16>, tensor<64x1xf32>
// BLOCK-DAG:     amp.quantize {{.*}} block = array<i64: 1, 128>} : tensor<64x256xbf16>, tensor<64x2xf32> to tensor<64x256xf8E4M3FN>
// BLOCK-DAG:     amp.compute_scale {{.*}} pow2
// A policy that forbids FP8 for an op type wins over fp8=always; the
// Gemm still goes FP8.
// NEVER:         onnxg.node "MatMul"
// NEVER:         amp.scaled_matmul {{.*}} op_type = "Gemm"
// NEVER-NOT:     amp.scaled_matmul
func.func @linear(%x: tensor<64x128xbf16> loc("x"), %w: tensor<128x256xf32> loc("w"), %dy: tensor<64x256xbf16> loc("dy"))
    -> (tensor<64x256xbf16>, tensor<64x128xbf16>)
    attributes {amp.training = {kind = "amp_opt.training_step", parameters = ["w"], seeds = ["dy"]}} {
  %wc = amp.cast %w : tensor<128x256xf32> to tensor<128x256xbf16>
  %y = onnxg.node "MatMul"(%x, %wc) opset 17 {amp.precision = bf16, amp.reason = "always-list", amp.region = "forward"} : (tensor<64x128xbf16>, tensor<128x256xbf16>) -> tensor<64x256xbf16> loc(fused<"onnx.outputs">["fc", "y"])
  %dx = onnxg.node "Gemm"(%dy, %wc) opset 17 attributes {transB = 1 : i64} {amp.precision = bf16, amp.reason = "always-list", amp.region = "backward"} : (tensor<64x256xbf16>, tensor<128x256xbf16>) -> tensor<64x128xbf16> loc(fused<"onnx.outputs">["fc_grad", "dx"])
  return %y, %dx : tensor<64x256xbf16>, tensor<64x128xbf16>
}
