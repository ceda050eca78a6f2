// A small named GEMM: FP8 does not pay for it unless a policy forces it.
func.func @named(%s: tensor<16x32xbf16>, %v: tensor<32x32xbf16>) -> tensor<16x32xbf16> {
  %z = onnxg.node "MatMul"(%s, %v) opset 17 {amp.precision = bf16, amp.reason = "always-list", amp.region = "forward"} : (tensor<16x32xbf16>, tensor<32x32xbf16>) -> tensor<16x32xbf16> loc(fused<"onnx.outputs">["small", "z"])
  return %z : tensor<16x32xbf16>
}
