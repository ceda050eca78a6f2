// The roofline cost model: an op goes low precision only when its modeled
// time in low precision, with the casts its inputs need, beats FP32. The
// expected remarks time each cast as a kernel of its own (casts=kernels);
// FUSED checks the default, casts inside neighbouring kernels.
// RUN: amp-opt %s --test-amp-cost-model=casts=kernels -verify-diagnostics -split-input-file -o /dev/null
// RUN: amp-opt %s --test-amp-cost-model -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUSED
// RUN: not amp-opt %s --test-amp-cost-model="casts=inline" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-CASTS
// RUN: not amp-opt %s --test-amp-cost-model="device=v100 precision=bf16" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=V100
// RUN: not amp-opt %s --test-amp-cost-model="device=tpu" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: amp-opt %s --test-amp-cost-model="casts=kernels dim=batch:8192" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAMED
// RUN: not amp-opt %s --test-amp-cost-model="dim=batch" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-DIM
// RUN: not amp-opt %s --test-amp-cost-model="dim=batch:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-DIM
// RUN: not amp-opt %s --test-amp-cost-model="default-dim-size=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-DEFAULT

// V100: error: device v100 has no bf16
// DEVICE: error: test-amp-cost-model: unknown device 'tpu'; expected h100, a100 or v100
// BAD-DIM: error: test-amp-cost-model: bad dim 'batch{{.*}}'; expected <name>:<size> with a positive size
// BAD-DEFAULT: error: test-amp-cost-model: default-dim-size must be positive, not 0
// BAD-CASTS: error: test-amp-cost-model: unknown casts 'inline'; expected fused or kernels

// PAI's embedding case, N = 4096 lookups of D = 1024 on an H100. A V x D
// FP32 table with N << V stays FP32: the gather moves 2*N*D*4 bytes, while
// low precision moves 2*N*D*2 plus V*D*4 + V*D*2 to cast the whole table.
// Fused, the casts lose their launches (3 us) and keep their bytes.
// FUSED: remark: flops 4.19e+06, fp32 13 us, fp16 8.02 us + casts 91.7 us: fp32
func.func @embedding_large_table(%table: tensor<50000x1024xf32>,
                                 %ids: tensor<4096xi64>) {
  // expected-remark @+1 {{flops 4.19e+06, fp32 13 us, fp16 8.02 us + casts 94.7 us: fp32}}
  %0 = onnxg.node "Gather"(%table, %ids) opset 13
      : (tensor<50000x1024xf32>, tensor<4096xi64>) -> tensor<4096x1024xf32>
  return
}

// -----

// A small table is cheap to cast: low precision.
func.func @embedding_small_table(%table: tensor<64x1024xf32>,
                                 %ids: tensor<4096xi64>) {
  // expected-remark @+1 {{flops 4.19e+06, fp32 13 us, fp16 8.02 us + casts 3.12 us: fp16}}
  %0 = onnxg.node "Gather"(%table, %ids) opset 13
      : (tensor<64x1024xf32>, tensor<4096xi64>) -> tensor<4096x1024xf32>
  return
}

// -----

// A table already in FP16 needs no cast: low precision (FP32 would need one).
func.func @embedding_low_precision_table(%table: tensor<50000x1024xf16>,
                                         %ids: tensor<4096xi64>) {
  // expected-remark @+1 {{flops 4.19e+06, fp32 108 us, fp16 8.02 us + casts 0 us: fp16}}
  %0 = onnxg.node "Gather"(%table, %ids) opset 13
      : (tensor<50000x1024xf16>, tensor<4096xi64>) -> tensor<4096x1024xf16>
  return
}

// -----

// A large GEMM is compute bound in FP32 and gains from tensor cores; a tiny
// one loses to its casts.
// FUSED-LABEL: remark: flops 8.59e+09, fp32 131 us, fp16 11.7 us + casts 9.39 us: fp16
// FUSED: remark: flops 4.1e+03, fp32 3 us, fp16 3 us + casts 0.000688 us: fp32
func.func @gemms(%a: tensor<4096x1024xf32>, %w: tensor<1024x1024xf32>,
                 %x: tensor<8x16xf32>, %v: tensor<16x16xf32>) {
  // expected-remark @+1 {{flops 8.59e+09, fp32 131 us, fp16 11.7 us + casts 15.4 us: fp16}}
  %0 = onnxg.node "MatMul"(%a, %w) opset 13
      : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32>
  // expected-remark @+1 {{flops 4.1e+03, fp32 3 us, fp16 3 us + casts 6 us: fp32}}
  %1 = onnxg.node "MatMul"(%x, %v) opset 13
      : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  // Gemm with transA: K is A's first dimension.
  // expected-remark @+1 {{flops 8.59e+09, fp32 131 us, fp16 11.7 us + casts 15.4 us: fp16}}
  %2 = onnxg.node "Gemm"(%a, %w) opset 13 attributes {transA = 1 : i64}
      : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return
}

// -----

// Conv: 2 * output elements * (C_in / groups) * kernel elements.
func.func @conv(%x: tensor<8x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) {
  // expected-remark @+1 {{flops 1.85e+09, fp32 30.6 us, fp16 4.94 us + casts 8.94 us: fp16}}
  %0 = onnxg.node "Conv"(%x, %w) opset 11 attributes {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32>
  return
}

// -----

// Dynamic dimensions take the default size (1), and the estimate says so.
// Fused, the cast of the whole weight for one row still costs more than
// FP16 saves.
// FUSED-LABEL: remark: flops 2.1e+06, fp32 4.25 us, fp16 3.63 us + casts 1.88 us: fp32 (guessed sizes of ?)
// NAMED-LABEL: remark: flops 2.1e+06, fp32 4.25 us, fp16 3.63 us + casts 7.88 us: fp32 (guessed sizes of ?)
func.func @dynamic(%a: tensor<?x1024xf32>, %w: tensor<1024x1024xf32>) {
  // expected-remark @+1 {{flops 2.1e+06, fp32 4.25 us, fp16 3.63 us + casts 7.88 us: fp32 (guessed sizes of ?)}}
  %0 = onnxg.node "MatMul"(%a, %w) opset 13
      : (tensor<?x1024xf32>, tensor<1024x1024xf32>) -> tensor<?x1024xf32>
  return
}

// -----

// A named dimension (ONNX dim_param, kept in onnxg.dims) takes its size from
// `dim=<name>:<size>`: with batch = 8192 the MatMul is worth FP16, and the
// estimate no longer rests on a guess. Without a size it is guessed as 1.
func.func @named(%a: tensor<?x1024xf32> {onnxg.dims = ["batch", ""]},
                 %w: tensor<1024x1024xf32>) {
  // NAMED: remark: flops 1.72e+10, fp32 {{.*}}: fp16{{$}}
  // expected-remark @+1 {{flops 2.1e+06, fp32 4.25 us, fp16 3.63 us + casts 7.88 us: fp32 (guessed sizes of batch)}}
  %0 = onnxg.node "MatMul"(%a, %w) opset 13 {onnxg.dims = [["batch", ""]]}
      : (tensor<?x1024xf32>, tensor<1024x1024xf32>) -> tensor<?x1024xf32>
  return
}

// -----

// LSTM: each of the 16 steps multiplies a batch of 32 by W (4H x input)
// and R (4H x H): 2 * 16 * 32 * (2048 * 256 + 2048 * 512).
func.func @lstm(%x: tensor<16x32x256xf32>, %w: tensor<1x2048x256xf32>,
                %r: tensor<1x2048x512xf32>) {
  // expected-remark @+1 {{flops 1.61e+09,}}
  %y:3 = onnxg.node "LSTM"(%x, %w, %r) opset 14 attributes {hidden_size = 512 : i64}
      : (tensor<16x32x256xf32>, tensor<1x2048x256xf32>, tensor<1x2048x512xf32>)
      -> (tensor<16x1x32x512xf32>, tensor<1x32x512xf32>, tensor<1x32x512xf32>)
  return
}

// -----

// Attention (opset 23): Q·Kᵀ and the weights times V, 4 * |Q| * key length.
func.func @attention(%q: tensor<8x16x512x64xf32>, %k: tensor<8x16x512x64xf32>,
                     %v: tensor<8x16x512x64xf32>) {
  // expected-remark @+1 {{flops 8.59e+09,}}
  %y = onnxg.node "Attention"(%q, %k, %v) opset 23
      : (tensor<8x16x512x64xf32>, tensor<8x16x512x64xf32>, tensor<8x16x512x64xf32>)
      -> tensor<8x16x512x64xf32>
  return
}

// -----

// An ONNX Constant launches no kernel: it costs nothing at either label.
func.func @constant_costs_nothing() {
  // expected-remark @+1 {{flops 1.05e+06, fp32 0 us, fp16 0 us + casts 0 us: fp32}}
  %0 = onnxg.node "Constant"() opset 13 attributes {value = dense<1.0> : tensor<1024x1024xf32>}
      : () -> tensor<1024x1024xf32>
  return
}
