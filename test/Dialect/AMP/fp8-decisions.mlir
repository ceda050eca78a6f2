// amp-fp8's decisions (fp8=auto), as remarks: a large GEMM gains more than
// its quantizations cost and goes FP8, a small one stays; batched
// activations (attention) stay unless forced; ineligible GEMMs say why; a
// node policy forces FP8.
// RUN: amp-opt %s -split-input-file --amp-fp8="remarks=true" -verify-diagnostics -o /dev/null
// RUN: amp-opt %S/Inputs/fp8-named.mlir --amp-fp8="remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: amp-opt %S/Inputs/fp8-named.mlir --amp-fp8="remarks=true fp8-node=small:always" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCED

// AUTO: remark: loc(fused<"onnx.outputs">["small", "z"]): amp-fp8: stays bf16
// FORCED: remark: loc(fused<"onnx.outputs">["small", "z"]): amp-fp8: FP8: {{.*}} (policy always)
func.func @sizes(%x: tensor<8192x4096xbf16>, %w: tensor<4096x4096xbf16>, %s: tensor<16x32xbf16>, %v: tensor<32x32xbf16>) -> (tensor<8192x4096xbf16>, tensor<16x32xbf16>) {
  // expected-remark @below {{amp-fp8: FP8: 280.94 us in bf16, 141.90 us in FP8 plus 45.07 us quantizing its operands}}
  %y = onnxg.node "MatMul"(%x, %w) opset 17 {amp.precision = bf16, amp.reason = "always-list", amp.region = "forward"} : (tensor<8192x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<8192x4096xbf16>
  // expected-remark @below {{amp-fp8: stays bf16: 3.00 us in bf16, 3.00 us in FP8 plus 0.00 us quantizing its operands}}
  %z = onnxg.node "MatMul"(%s, %v) opset 17 {amp.precision = bf16, amp.reason = "always-list", amp.region = "forward"} : (tensor<16x32xbf16>, tensor<32x32xbf16>) -> tensor<16x32xbf16>
  return %y, %z : tensor<8192x4096xbf16>, tensor<16x32xbf16>
}

// -----

func.func @attention(%q: tensor<64x16x1024x128xbf16>, %k: tensor<64x16x128x1024xbf16>) -> tensor<64x16x1024x1024xbf16> {
  // expected-remark @below {{(batched activations, as attention)}}
  %s = onnxg.node "MatMul"(%q, %k) opset 17 {amp.precision = bf16, amp.reason = "always-list", amp.region = "forward"} : (tensor<64x16x1024x128xbf16>, tensor<64x16x128x1024xbf16>) -> tensor<64x16x1024x1024xbf16>
  return %s : tensor<64x16x1024x1024xbf16>
}

// -----

func.func @ineligible(%a: tensor<16x24xbf16>, %b: tensor<24x32xbf16>, %c: tensor<32x32xf32>, %d: tensor<32x32xf32>) -> (tensor<16x32xbf16>, tensor<32x32xf32>, tensor<32x32xf32>) {
  // expected-remark @below {{amp-fp8: not eligible: K = 24 and N = 32 are not static multiples of 16}}
  %0 = onnxg.node "MatMul"(%a, %b) opset 17 {amp.precision = bf16, amp.reason = "always-list", amp.region = "forward"} : (tensor<16x24xbf16>, tensor<24x32xbf16>) -> tensor<16x32xbf16>
  // expected-remark @below {{amp-fp8: not eligible: in the optimizer}}
  %1 = onnxg.node "MatMul"(%c, %d) opset 17 {amp.precision = f32, amp.reason = "barrier", amp.region = "optimizer"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  // expected-remark @below {{amp-fp8: not eligible: kept FP32 (policy)}}
  %2 = onnxg.node "MatMul"(%c, %d) opset 17 {amp.precision = f32, amp.reason = "policy", amp.region = "forward"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %0, %1, %2 : tensor<16x32xbf16>, tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// A weight read through a BF16 cast of its FP32 master copy: FP8 quantizes
// the master copy and the cast goes, which pays for the quantization. The
// same GEMM on a BF16 input pays for quantizing it and stays.
func.func @master_weight(%in: tensor<1024x768xbf16>, %w: tensor<768x3072xf32>, %v: tensor<768x3072xbf16>) -> (tensor<1024x3072xbf16>, tensor<1024x3072xbf16>) {
  // The activation is computed: its quantization is its producer's epilogue.
  %x = onnxg.node "Relu"(%in) opset 17 {amp.precision = bf16, amp.reason = "follow", amp.region = "forward"} : (tensor<1024x768xbf16>) -> tensor<1024x768xbf16>
  %wc = amp.cast %w : tensor<768x3072xf32> to tensor<768x3072xbf16>
  // expected-remark @below {{amp-fp8: FP8: 7.89 us in bf16, 5.82 us in FP8}}
  %y = onnxg.node "MatMul"(%x, %wc) opset 17 {amp.precision = bf16, amp.reason = "always-list", amp.region = "forward"} : (tensor<1024x768xbf16>, tensor<768x3072xbf16>) -> tensor<1024x3072xbf16>
  // expected-remark @below {{amp-fp8: stays bf16: 7.89 us in bf16, 5.82 us in FP8}}
  %z = onnxg.node "MatMul"(%x, %v) opset 17 {amp.precision = bf16, amp.reason = "always-list", amp.region = "forward"} : (tensor<1024x768xbf16>, tensor<768x3072xbf16>) -> tensor<1024x3072xbf16>
  return %y, %z : tensor<1024x3072xbf16>, tensor<1024x3072xbf16>
}
