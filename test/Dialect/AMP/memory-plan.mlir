// RUN: amp-opt %s --test-amp-memory-plan="ops=true" -split-input-file -o /dev/null 2>&1 | FileCheck %s

// The ops carry their ONNX names as locations (not file lines), so the
// remarks are checked on standard error, in the order the pass emits them:
// each op, then the function.

// Inputs (x 128 bytes, w 256) live throughout: 384. Each result lives from
// its op to its last reader; the loss and w.updated, returned, to the end;
// g, read by nobody, only while its op runs. The FP16 copy counts 2 bytes
// an element. The backward keeps r and its FP16 copy from the forward.
// CHECK: live 512 bytes
// CHECK: live 640 bytes
// CHECK: live 576 bytes
// CHECK: live 580 bytes
// CHECK: live 644 bytes
// CHECK: live 772 bytes
// CHECK: live 900 bytes
// CHECK: live 644 bytes
// CHECK: remark: peak 900 bytes at 'update' (inputs 384); 2 saved activations, 192 bytes: r 128, r.fp16 64
func.func @step(%x: tensor<4x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w"))
    -> (tensor<f32> {onnxg.name = "loss"}, tensor<8x8xf32> {onnxg.name = "w.updated"}) {
  %h = onnxg.node "MatMul"(%x, %w) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["mm", "h"])
  %r = onnxg.node "Relu"(%h) opset 17 {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"onnx.outputs">["relu", "r"])
  %hl = onnxg.node "Cast"(%r) opset 17 attributes {to = 10 : i64} {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<4x8xf16> loc(fused<"onnx.outputs">["cast", "r.fp16"])
  %loss = onnxg.node "ReduceSum"(%r) opset 17 attributes {keepdims = 0 : i64} {amp.region = "forward"} : (tensor<4x8xf32>) -> tensor<f32> loc(fused<"onnx.outputs">["sum", "loss"])
  %g = onnxg.node "Relu"(%hl) opset 17 {amp.region = "backward"} : (tensor<4x8xf16>) -> tensor<4x8xf16> loc(fused<"onnx.outputs">["relu_grad", "g"])
  %gw = onnxg.node "Gemm"(%x, %r) opset 17 attributes {transA = 1 : i64} {amp.region = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["gemm", "w.grad"])
  %wn = onnxg.node "Sub"(%w, %gw) opset 17 {amp.region = "optimizer"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(fused<"onnx.outputs">["update", "w.updated"])
  return %loss, %wn : tensor<f32>, tensor<8x8xf32>
}

// -----

// Without amp-analyze-training's regions there is no forward/backward
// boundary to keep activations across; dynamic dimensions take
// default-dim-size (1 here): 4 bytes each way.
// CHECK: live 8 bytes
// CHECK: live 8 bytes
// CHECK: remark: peak 8 bytes at 'neg' (inputs 4); no forward/backward regions
func.func @no_regions(%x: tensor<?xf32> loc("x")) -> tensor<?xf32> {
  %y = onnxg.node "Neg"(%x) opset 17 : (tensor<?xf32>) -> tensor<?xf32> loc(fused<"onnx.outputs">["neg", "y"])
  return %y : tensor<?xf32>
}
