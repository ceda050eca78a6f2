// RUN: amp-opt %s --amp-convolutions-to-dnn-records | FileCheck %s
// RUN: amp-opt %s --amp-convolutions-to-dnn-records=remarks=true -verify-diagnostics -o /dev/null

#gather = affine_map<(n, g, c, k0, k1, o0, o1) -> (n, g * 3 + c, o0 + k0, o1 + k1)>
#gather2 = affine_map<(n, g, c, k0, k1, o0, o1) -> (n, g * 2 + c, o0 * 2 + k0, o1 * 2 + k1)>
#gather1d = affine_map<(n, g, c, k, o) -> (n, g * 2 + c, o + k * 2)>
#gather4 = affine_map<(n, g, c, k0, k1, o0, o1) -> (n, g * 4 + c, o0 + k0, o1 + k1)>
#flip = affine_map<(g, m, c, k0, k1) -> (g * 4 + c, m, 2 - k0, 2 - k1)>
#gatherwg = affine_map<(n, g, c, k0, k1, o0, o1) -> (n, g * 4 + c, o0 + k0 * 2, o1 + k1 * 2)>
#id7 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#w = affine_map<(n, g, m, o, ck) -> (g, m, ck)>
#col = affine_map<(n, g, m, o, ck) -> (n, g, ck, o)>
#y = affine_map<(n, g, m, o, ck) -> (n, g, m, o)>
#dy = affine_map<(g, m, ck, n, o) -> (n, g, m, o)>
#dcol = affine_map<(g, m, ck, n, o) -> (n, g, ck, o)>
#dw = affine_map<(g, m, ck, n, o) -> (g, m, ck)>

// A 3x3 convolution of a padded 2x3x6x6 input into 4 channels: the
// contraction reads the input itself through a forward record, its zeroed
// output becomes overwrite=1, and the gather and its columns go.
// CHECK-DAG:   memref.global "private" constant @amp_conv_record : memref<31xi64> = dense<[0, 2, 2, 3, 4, 1, 1, 6, 6, 1, 3, 3, 1, 4, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]>
// CHECK-DAG:   memref.global "private" constant @amp_conv_record{{.*}} : memref<31xi64> = dense<[2, 2, 2, 3, 4, 1, 1, 10, 10, 1, 3, 3, 1, 5, 5, 1, 2, 2, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1]>
// CHECK-DAG:   func.func private @amp_conv_f32_f32_f32(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: memref<2x3x6x6xf32>, %[[W:.*]]: memref<1x4x27xf32>, %[[Y:.*]]: memref<2x1x4x16xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.
// CHECK:         %[[R:.*]] = memref.get_global @amp_conv_record : memref<31xi64>
// CHECK:         %[[RU:.*]] = memref.cast %[[R]]
// CHECK:         %[[XU:.*]] = memref.cast %[[X]] : memref<2x3x6x6xf32> to memref<*xf32>
// CHECK:         %[[WU:.*]] = memref.cast %[[W]] : memref<1x4x27xf32> to memref<*xf32>
// CHECK:         %[[YU:.*]] = memref.cast %[[Y]] : memref<2x1x4x16xf32> to memref<*xf32>
// CHECK:         call @amp_conv_f32_f32_f32(%[[RU]], %[[XU]], %[[WU]], %[[YU]])
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @forward(%x: memref<2x3x6x6xf32>, %w: memref<1x4x27xf32>, %y: memref<2x1x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf32>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf32>) outs(%cols : memref<2x1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf32> into memref<2x1x27x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{convolution record: forward rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x6x6 kernel=1x3x3 output=1x4x4 stride=1x1x1 dilation=1x1x1 type=0 overwrite=1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf32>, memref<2x1x27x16xf32>) outs(%y : memref<2x1x4x16xf32>)
  memref.dealloc %cols : memref<2x1x3x3x3x4x4xf32>
  return
}

// The weight gradient of a 2-group, stride-2 convolution (dW[g, m, c*k]
// sums dY against the columns over images and positions): a backward
// filter record; dW is accumulated into (no fill: overwrite=0).
// CHECK-LABEL: func.func @backward_filter(
// CHECK:         call @amp_conv_f32_f32_f32(
// CHECK-NOT:     linalg.
func.func @backward_filter(%x: memref<2x4x7x7xf32>, %dy: memref<2x2x3x9xf32>, %dw: memref<2x3x18xf32>) {
  %cols = memref.alloc() : memref<2x2x2x3x3x3x3xf32>
  linalg.generic {indexing_maps = [#gather2, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x4x7x7xf32>) outs(%cols : memref<2x2x2x3x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x2x2x3x3x3x3xf32> into memref<2x2x18x9xf32>
  // expected-remark @below {{convolution record: backward-filter rank=2 batch=2 in_channels=4 out_channels=6 groups=2 input=1x7x7 kernel=1x3x3 output=1x3x3 stride=1x2x2 dilation=1x1x1 type=0 overwrite=0}}
  linalg.contract indexing_maps = [#dy, #dcol, #dw] ins(%dy, %flat : memref<2x2x3x9xf32>, memref<2x2x18x9xf32>) outs(%dw : memref<2x3x18xf32>)
  return
}

// A 1-d convolution with dilation 2 is a 2-d record whose first spatial
// dimension has size 1.
// CHECK-LABEL: func.func @dilated_1d(
// CHECK:         call @amp_conv_f32_f32_f32(
func.func @dilated_1d(%x: memref<1x2x9xf32>, %w: memref<1x4x6xf32>, %y: memref<1x1x4x5xf32>) {
  %cols = memref.alloc() : memref<1x1x2x3x5xf32>
  linalg.generic {indexing_maps = [#gather1d, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x9xf32>) outs(%cols : memref<1x1x2x3x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3], [4]] : memref<1x1x2x3x5xf32> into memref<1x1x6x5xf32>
  // expected-remark @below {{convolution record: forward rank=2 batch=1 in_channels=2 out_channels=4 groups=1 input=1x1x9 kernel=1x1x3 output=1x1x5 stride=1x1x1 dilation=1x1x2 type=0 overwrite=0}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x6xf32>, memref<1x1x6x5xf32>) outs(%y : memref<1x1x4x5xf32>)
  return
}

// One columns buffer written by two gathers (bufferization reuses it):
// each contraction reads the gather just before it; both become records,
// and the gathers and the buffer go.
// CHECK-LABEL: func.func @reused_columns(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.generic
// CHECK-COUNT-2: call @amp_conv_f32_f32_f32(
// CHECK-NOT:     linalg.
func.func @reused_columns(%x1: memref<2x3x6x6xf32>, %x2: memref<2x3x6x6xf32>, %w: memref<1x4x27xf32>, %y1: memref<2x1x4x16xf32>, %y2: memref<2x1x4x16xf32>) {
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf32>
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf32> into memref<2x1x27x16xf32>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x1 : memref<2x3x6x6xf32>) outs(%cols : memref<2x1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  // expected-remark @below {{convolution record: forward}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf32>, memref<2x1x27x16xf32>) outs(%y1 : memref<2x1x4x16xf32>)
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x2 : memref<2x3x6x6xf32>) outs(%cols : memref<2x1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  // expected-remark @below {{convolution record: forward}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf32>, memref<2x1x27x16xf32>) outs(%y2 : memref<2x1x4x16xf32>)
  return
}

// The columns have another reader: the contraction becomes a record, the
// gather stays for the copy.
// CHECK-LABEL: func.func @columns_read_elsewhere(
// CHECK:         linalg.generic
// CHECK:         call @amp_conv_f32_f32_f32(
// CHECK:         memref.copy
func.func @columns_read_elsewhere(%x: memref<2x3x6x6xf32>, %w: memref<1x4x27xf32>, %y: memref<2x1x4x16xf32>, %copy: memref<2x1x27x16xf32>) {
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf32>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf32>) outs(%cols : memref<2x1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf32> into memref<2x1x27x16xf32>
  // expected-remark @below {{convolution record: forward}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf32>, memref<2x1x27x16xf32>) outs(%y : memref<2x1x4x16xf32>)
  memref.copy %flat, %copy : memref<2x1x27x16xf32> to memref<2x1x27x16xf32>
  return
}

// f16 columns into an f32 accumulator (an AMP convolution) that the next
// kernel only rounds to f16: cuDNN writes the rounded result (PSEUDO_HALF)
// into a new f16 buffer, which the kernel reads through the same reshape
// without its truncation; the f32 buffer goes.
// CHECK-LABEL: func.func @f16_rounded(
// CHECK-NOT:     memref<2x1x4x16xf32>
// CHECK:         %[[Y:.*]] = memref.alloc() : memref<2x1x4x16xf16>
// CHECK:         %[[YU:.*]] = memref.cast %[[Y]] : memref<2x1x4x16xf16> to memref<*xf16>
// CHECK:         call @amp_conv_f16_f16_f16(%{{.*}}, %{{.*}}, %{{.*}}, %[[YU]])
// CHECK:         %[[VIEW:.*]] = memref.expand_shape %[[Y]] {{.*}} into memref<2x1x4x4x4xf16>
// CHECK:         linalg.generic {{.*}} ins(%[[VIEW]] : memref<2x1x4x4x4xf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT:      %[[WIDE:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT:      linalg.yield %[[WIDE]]
// CHECK:         memref.dealloc %[[Y]] : memref<2x1x4x16xf16>
// CHECK-NOT:     memref.dealloc
func.func @f16_rounded(%x: memref<2x3x6x6xf16>, %w: memref<1x4x27xf16>, %res: memref<2x1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf16>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf16>) outs(%cols : memref<2x1x3x3x3x4x4xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf16> into memref<2x1x27x16xf16>
  %y = memref.alloc() : memref<2x1x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{convolution record: forward rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x6x6 kernel=1x3x3 output=1x4x4 stride=1x1x1 dilation=1x1x1 type=1 overwrite=1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf16>, memref<2x1x27x16xf16>) outs(%y : memref<2x1x4x16xf32>)
  %view = memref.expand_shape %y [[0], [1], [2], [3, 4]] output_shape [2, 1, 4, 4, 4] : memref<2x1x4x16xf32> into memref<2x1x4x4x4xf32>
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%view : memref<2x1x4x4x4xf32>) outs(%res : memref<2x1x4x4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %h = arith.truncf %in : f32 to f16
    %e = arith.extf %h : f16 to f32
    linalg.yield %e : f32
  }
  memref.dealloc %cols : memref<2x1x3x3x3x4x4xf16>
  memref.dealloc %y : memref<2x1x4x16xf32>
  return
}

// The next kernel only rounds the sums into an f16 tensor (a Conv whose
// graph result is f16): with the rounding in the call, that kernel is a
// copy, and the call writes the tensor itself; neither buffer nor kernel
// stays.
// CHECK-LABEL: func.func @f16_rounded_into_result(
// CHECK-SAME:    %{{[^:]*}}: memref<2x3x6x6xf16>, %{{[^:]*}}: memref<1x4x27xf16>, %[[RES:[^:]*]]: memref<2x4x4x4xf16>)
// CHECK-NOT:     memref.alloc() : memref<2x1x4x16x
// CHECK:         %[[RESU:.*]] = memref.cast %[[RES]] : memref<2x4x4x4xf16> to memref<*xf16>
// CHECK:         call @amp_conv_f16_f16_f16(%{{.*}}, %{{.*}}, %{{.*}}, %[[RESU]])
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @f16_rounded_into_result(%x: memref<2x3x6x6xf16>, %w: memref<1x4x27xf16>, %res: memref<2x4x4x4xf16>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf16>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf16>) outs(%cols : memref<2x1x3x3x3x4x4xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf16> into memref<2x1x27x16xf16>
  %y = memref.alloc() : memref<2x1x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{convolution record: forward rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x6x6 kernel=1x3x3 output=1x4x4 stride=1x1x1 dilation=1x1x1 type=1 overwrite=1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf16>, memref<2x1x27x16xf16>) outs(%y : memref<2x1x4x16xf32>)
  %view = memref.expand_shape %y [[0], [1], [2], [3, 4]] output_shape [2, 1, 4, 4, 4] : memref<2x1x4x16xf32> into memref<2x1x4x4x4xf32>
  %nchw = memref.collapse_shape %view [[0, 1], [2], [3], [4]] : memref<2x1x4x4x4xf32> into memref<2x4x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nchw : memref<2x4x4x4xf32>) outs(%res : memref<2x4x4x4xf16>) {
  ^bb0(%in: f32, %o: f16):
    %h = arith.truncf %in : f32 to f16
    linalg.yield %h : f16
  }
  memref.dealloc %cols : memref<2x1x3x3x3x4x4xf16>
  memref.dealloc %y : memref<2x1x4x16xf32>
  return
}

// The next kernel adds a bias to the f32 sums before it rounds them (an
// ONNX Conv with B in f16): cuDNN rounds first (PSEUDO_HALF, as PyTorch's
// cuDNN path before its bias), and the kernel widens the rounded values
// back before its addition.
// CHECK-LABEL: func.func @f16_bias_then_rounded(
// CHECK:         %[[Y:.*]] = memref.alloc() : memref<2x1x4x16xf16>
// CHECK:         call @amp_conv_f16_f16_f16(
// CHECK:         linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : memref<2x1x4x16xf16>, memref<4x1xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f16, %[[B:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[WIDE:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[WIDE]], %[[B]] : f32
// CHECK-NEXT:      arith.truncf %[[SUM]] : f32 to f16
func.func @f16_bias_then_rounded(%x: memref<2x3x6x6xf16>, %w: memref<1x4x27xf16>, %bias: memref<4x1xf32>, %res: memref<2x1x4x16xf16>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf16>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf16>) outs(%cols : memref<2x1x3x3x3x4x4xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf16> into memref<2x1x27x16xf16>
  %y = memref.alloc() : memref<2x1x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{convolution record: forward rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x6x6 kernel=1x3x3 output=1x4x4 stride=1x1x1 dilation=1x1x1 type=1 overwrite=1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf16>, memref<2x1x27x16xf16>) outs(%y : memref<2x1x4x16xf32>)
  linalg.generic {indexing_maps = [#id4, affine_map<(n, g, c, l) -> (c, 0)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %bias : memref<2x1x4x16xf32>, memref<4x1xf32>) outs(%res : memref<2x1x4x16xf16>) {
  ^bb0(%in: f32, %b: f32, %o: f16):
    %s = arith.addf %in, %b : f32
    %h = arith.truncf %s : f32 to f16
    linalg.yield %h : f16
  }
  memref.dealloc %y : memref<2x1x4x16xf32>
  return
}

// The f32 accumulator is the caller's: cuDNN has no f16 x f16 -> f32
// configuration, the im2col GEMM stays.
// CHECK-LABEL: func.func @f16_inputs(
// CHECK:         linalg.generic
// CHECK:         linalg.contract
// CHECK-NOT:     call
func.func @f16_inputs(%x: memref<2x3x6x6xf16>, %w: memref<1x4x27xf16>, %y: memref<2x1x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf16>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf16>) outs(%cols : memref<2x1x3x3x3x4x4xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf16> into memref<2x1x27x16xf16>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{no convolution record: the f32 accumulator of an f16 or bf16 convolution is not overwritten, then only rounded to its type (after a bias)}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf16>, memref<2x1x27x16xf16>) outs(%y : memref<2x1x4x16xf32>)
  return
}

// The next kernel also reads the unrounded sums: no record.
// CHECK-LABEL: func.func @f16_read_unrounded(
// CHECK:         linalg.contract
// CHECK:         arith.truncf
func.func @f16_read_unrounded(%x: memref<2x3x6x6xf16>, %w: memref<1x4x27xf16>, %res: memref<2x1x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf16>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf16>) outs(%cols : memref<2x1x3x3x3x4x4xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf16> into memref<2x1x27x16xf16>
  %y = memref.alloc() : memref<2x1x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{no convolution record: the f32 accumulator of an f16 or bf16 convolution is not overwritten, then only rounded to its type (after a bias)}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf16>, memref<2x1x27x16xf16>) outs(%y : memref<2x1x4x16xf32>)
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<2x1x4x16xf32>) outs(%res : memref<2x1x4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %h = arith.truncf %in : f32 to f16
    %e = arith.extf %h : f16 to f32
    %d = arith.subf %in, %e : f32
    linalg.yield %d : f32
  }
  memref.dealloc %y : memref<2x1x4x16xf32>
  return
}

// Two kernels read the sums, each only rounding them first (a weight
// gradient's finite check and its update): cuDNN writes them rounded, and
// both read the f16 buffer without their truncations.
// CHECK-LABEL: func.func @f16_rounded_twice(
// CHECK:         %[[Y:.*]] = memref.alloc() : memref<2x1x4x16xf16>
// CHECK:         call @amp_conv_f16_f16_f16(
// CHECK:         linalg.generic {{.*}} ins(%[[Y]] : memref<2x1x4x16xf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT:      arith.extf %[[IN]] : f16 to f32
// CHECK:         linalg.generic {{.*}} ins(%[[Y]] : memref<2x1x4x16xf16>)
// CHECK-NEXT:    ^bb0(%[[IN2:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT:      arith.extf %[[IN2]] : f16 to f32
// CHECK-NOT:     arith.truncf
func.func @f16_rounded_twice(%x: memref<2x3x6x6xf16>, %w: memref<1x4x27xf16>, %sum: memref<f32>, %res: memref<2x1x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf16>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf16>) outs(%cols : memref<2x1x3x3x3x4x4xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf16> into memref<2x1x27x16xf16>
  %y = memref.alloc() : memref<2x1x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{convolution record: forward rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x6x6 kernel=1x3x3 output=1x4x4 stride=1x1x1 dilation=1x1x1 type=1 overwrite=1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf16>, memref<2x1x27x16xf16>) outs(%y : memref<2x1x4x16xf32>)
  linalg.generic {indexing_maps = [#id4, affine_map<(n, g, c, l) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%y : memref<2x1x4x16xf32>) outs(%sum : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %h = arith.truncf %in : f32 to f16
    %e = arith.extf %h : f16 to f32
    %d = arith.subf %e, %e : f32
    %a = arith.addf %acc, %d : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<2x1x4x16xf32>) outs(%res : memref<2x1x4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %h = arith.truncf %in : f32 to f16
    %e = arith.extf %h : f16 to f32
    %u = arith.addf %o, %e : f32
    linalg.yield %u : f32
  }
  memref.dealloc %y : memref<2x1x4x16xf32>
  return
}

// The second reader also reads the unrounded sums: no record.
// CHECK-LABEL: func.func @f16_read_unrounded_later(
// CHECK:         linalg.contract
func.func @f16_read_unrounded_later(%x: memref<2x3x6x6xf16>, %w: memref<1x4x27xf16>, %sum: memref<f32>, %res: memref<2x1x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf16>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf16>) outs(%cols : memref<2x1x3x3x3x4x4xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf16> into memref<2x1x27x16xf16>
  %y = memref.alloc() : memref<2x1x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{no convolution record: the f32 accumulator of an f16 or bf16 convolution is not overwritten, then only rounded to its type (after a bias)}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf16>, memref<2x1x27x16xf16>) outs(%y : memref<2x1x4x16xf32>)
  linalg.generic {indexing_maps = [#id4, affine_map<(n, g, c, l) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%y : memref<2x1x4x16xf32>) outs(%sum : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %h = arith.truncf %in : f32 to f16
    %e = arith.extf %h : f16 to f32
    %a = arith.addf %acc, %e : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<2x1x4x16xf32>) outs(%res : memref<2x1x4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %y : memref<2x1x4x16xf32>
  return
}

// The input changes after the gather: a record would read the new values.
// CHECK-LABEL: func.func @input_written_between(
// CHECK:         linalg.contract
func.func @input_written_between(%x: memref<2x3x6x6xf32>, %w: memref<1x4x27xf32>, %y: memref<2x1x4x16xf32>) {
  %one = arith.constant 1.0 : f32
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf32>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf32>) outs(%cols : memref<2x1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%one : f32) outs(%x : memref<2x3x6x6xf32>)
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf32> into memref<2x1x27x16xf32>
  // expected-remark @below {{no convolution record: the gathered input changes before the contraction}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf32>, memref<2x1x27x16xf32>) outs(%y : memref<2x1x4x16xf32>)
  return
}

// A gather that computes (a cast on the way) is no im2col copy.
// CHECK-LABEL: func.func @computing_gather(
// CHECK:         linalg.contract
func.func @computing_gather(%x: memref<2x3x6x6xf32>, %w: memref<1x4x27xf32>, %y: memref<2x1x4x16xf32>) {
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf32>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf32>) outs(%cols : memref<2x1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %twice = arith.addf %in, %in : f32
    linalg.yield %twice : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf32> into memref<2x1x27x16xf32>
  // expected-remark @below {{no convolution record: the gather computes instead of copying}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf32>, memref<2x1x27x16xf32>) outs(%y : memref<2x1x4x16xf32>)
  return
}

// A plain GEMM has no columns.
// CHECK-LABEL: func.func @plain_gemm(
// CHECK:         linalg.contract
#a2 = affine_map<(m, n, k) -> (m, k)>
#b2 = affine_map<(m, n, k) -> (k, n)>
#c2 = affine_map<(m, n, k) -> (m, n)>
func.func @plain_gemm(%a: memref<8x32xf32>, %b: memref<32x16xf32>, %c: memref<8x16xf32>) {
  // expected-remark @below {{no convolution record: no operand is a collapsed im2col buffer}}
  linalg.contract indexing_maps = [#a2, #b2, #c2] ins(%a, %b : memref<8x32xf32>, memref<32x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// The lowering's zero padding: a zero-filled buffer with the input copied
// into its interior. cuDNN pads by itself: both records (forward, and the
// weight gradient that reads the same padded input) read the 2x3x4x4 input
// with pad_before=0x1x1 pad_after=0x1x1, and the fill, the copy and the
// padded buffer go. A window with strides (dY upsampled for a strided data
// gradient) is no padding: without the flipped weights of a data gradient
// (below), that record reads the buffer as it is.
// CHECK-LABEL: func.func @padded(
// CHECK-SAME:    %[[X:[^:]*]]: memref<2x3x4x4xf32>
// CHECK-NOT:     linalg.map
// CHECK-NOT:     memref.copy
// CHECK:         %[[XU:.*]] = memref.cast %[[X]] : memref<2x3x4x4xf32> to memref<*xf32>
// CHECK:         call @amp_conv_f32_f32_f32(%{{.*}}, %[[XU]],
// CHECK:         %[[XU2:.*]] = memref.cast %[[X]] : memref<2x3x4x4xf32> to memref<*xf32>
// CHECK:         call @amp_conv_f32_f32_f32(%{{.*}}, %[[XU2]],
// CHECK:         %[[UP:.*]] = memref.alloc() : memref<2x3x6x6xf32>
// CHECK:         linalg.map
// CHECK:         memref.copy
// CHECK:         %[[UPU:.*]] = memref.cast %[[UP]] : memref<2x3x6x6xf32> to memref<*xf32>
// CHECK:         call @amp_conv_f32_f32_f32(%{{.*}}, %[[UPU]],
// CHECK-NOT:     memref.alloc() : memref<2x3x6x6xf32>
// CHECK:         return
func.func @padded(%x: memref<2x3x4x4xf32>, %w: memref<1x4x27xf32>, %y: memref<2x1x4x16xf32>, %dy: memref<2x1x4x16xf32>, %dw: memref<1x4x27xf32>, %small: memref<2x3x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x3x6x6xf32>
  linalg.map outs(%padded : memref<2x3x6x6xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior = memref.subview %padded[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1] : memref<2x3x6x6xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  memref.copy %x, %interior : memref<2x3x4x4xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  %cols = memref.alloc() : memref<2x1x3x3x3x4x4xf32>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<2x3x6x6xf32>) outs(%cols : memref<2x1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf32> into memref<2x1x27x16xf32>
  // expected-remark @below {{input=1x4x4 kernel=1x3x3 output=1x4x4 stride=1x1x1 dilation=1x1x1 type=0 overwrite=0 pad_before=0x1x1 pad_after=0x1x1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat : memref<1x4x27xf32>, memref<2x1x27x16xf32>) outs(%y : memref<2x1x4x16xf32>)
  // expected-remark @below {{convolution record: backward-filter rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x4x4 kernel=1x3x3 output=1x4x4 stride=1x1x1 dilation=1x1x1 type=0 overwrite=0 pad_before=0x1x1 pad_after=0x1x1}}
  linalg.contract indexing_maps = [#dy, #dcol, #dw] ins(%dy, %flat : memref<2x1x4x16xf32>, memref<2x1x27x16xf32>) outs(%dw : memref<1x4x27xf32>)
  memref.dealloc %cols : memref<2x1x3x3x3x4x4xf32>
  memref.dealloc %padded : memref<2x3x6x6xf32>
  %up = memref.alloc() : memref<2x3x6x6xf32>
  linalg.map outs(%up : memref<2x3x6x6xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %every2 = memref.subview %up[0, 0, 0, 0] [2, 3, 3, 3] [1, 1, 2, 2] : memref<2x3x6x6xf32> to memref<2x3x3x3xf32, strided<[108, 36, 12, 2]>>
  memref.copy %small, %every2 : memref<2x3x3x3xf32> to memref<2x3x3x3xf32, strided<[108, 36, 12, 2]>>
  %cols2 = memref.alloc() : memref<2x1x3x3x3x4x4xf32>
  linalg.generic {indexing_maps = [#gather, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%up : memref<2x3x6x6xf32>) outs(%cols2 : memref<2x1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat2 = memref.collapse_shape %cols2 [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x3x3x3x4x4xf32> into memref<2x1x27x16xf32>
  // expected-remark @below {{input=1x6x6 kernel=1x3x3 output=1x4x4 stride=1x1x1 dilation=1x1x1 type=0 overwrite=0 pad_before=0x0x0 pad_after=0x0x0}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%w, %flat2 : memref<1x4x27xf32>, memref<2x1x27x16xf32>) outs(%y : memref<2x1x4x16xf32>)
  memref.dealloc %cols2 : memref<2x1x3x3x3x4x4xf32>
  memref.dealloc %up : memref<2x3x6x6xf32>
  return
}

// A transposed convolution as the graph lowering builds it (ConvTranspose
// of a 2x4x5x5 dY by W 4x3x3x3, strides 2, pads 1, output padding 1): dY
// upsampled to 9x9, padded by 1 and 2 to 12x12, and convolved with the
// kernel flipped and regrouped. That is cuDNN's backward data of dY and W
// into dX 10x10 (pads 1 and 0: the output padding fits in the stride):
// the record reads dY and W, and the upsampling, the padding, the gather
// and the flip go. (Its record is checked at the top, where the globals
// are.)
// CHECK-LABEL: func.func @backward_data(
// CHECK-SAME:    %[[DY:[^:]*]]: memref<2x4x5x5xf32>, %[[W:[^:]*]]: memref<4x3x3x3xf32>, %[[DX:[^:]*]]: memref<2x1x3x100xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.
// CHECK-NOT:     memref.copy
// CHECK:         %[[DYU:.*]] = memref.cast %[[DY]] : memref<2x4x5x5xf32> to memref<*xf32>
// CHECK:         %[[WU:.*]] = memref.cast %[[W]] : memref<4x3x3x3xf32> to memref<*xf32>
// CHECK:         %[[DXU:.*]] = memref.cast %[[DX]] : memref<2x1x3x100xf32> to memref<*xf32>
// CHECK:         call @amp_conv_f32_f32_f32(%{{.*}}, %[[DYU]], %[[WU]], %[[DXU]])
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @backward_data(%dy: memref<2x4x5x5xf32>, %w: memref<4x3x3x3xf32>, %dx: memref<2x1x3x100xf32>) {
  %zero = arith.constant 0.0 : f32
  %up = memref.alloc() : memref<2x4x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%up : memref<2x4x9x9xf32>)
  %every2 = memref.subview %up[0, 0, 0, 0] [2, 4, 5, 5] [1, 1, 2, 2] : memref<2x4x9x9xf32> to memref<2x4x5x5xf32, strided<[324, 81, 18, 2]>>
  memref.copy %dy, %every2 : memref<2x4x5x5xf32> to memref<2x4x5x5xf32, strided<[324, 81, 18, 2]>>
  %padded = memref.alloc() : memref<2x4x12x12xf32>
  linalg.map outs(%padded : memref<2x4x12x12xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior = memref.subview %padded[0, 0, 1, 1] [2, 4, 9, 9] [1, 1, 1, 1] : memref<2x4x12x12xf32> to memref<2x4x9x9xf32, strided<[576, 144, 12, 1], offset: 13>>
  memref.copy %up, %interior : memref<2x4x9x9xf32> to memref<2x4x9x9xf32, strided<[576, 144, 12, 1], offset: 13>>
  %cols = memref.alloc() : memref<2x1x4x3x3x10x10xf32>
  linalg.generic {indexing_maps = [#gather4, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<2x4x12x12xf32>) outs(%cols : memref<2x1x4x3x3x10x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x4x3x3x10x10xf32> into memref<2x1x36x100xf32>
  %flipped = memref.alloc() : memref<1x3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%w : memref<4x3x3x3xf32>) outs(%flipped : memref<1x3x4x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %matrix = memref.collapse_shape %flipped [[0], [1], [2, 3, 4]] : memref<1x3x4x3x3xf32> into memref<1x3x36xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x1x3x100xf32>)
  // expected-remark @below {{convolution record: backward-data rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x10x10 kernel=1x3x3 output=1x5x5 stride=1x2x2 dilation=1x1x1 type=0 overwrite=1 pad_before=0x1x1 pad_after=0x0x0}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%matrix, %flat : memref<1x3x36xf32>, memref<2x1x36x100xf32>) outs(%dx : memref<2x1x3x100xf32>)
  memref.dealloc %cols : memref<2x1x4x3x3x10x10xf32>
  memref.dealloc %flipped : memref<1x3x4x3x3xf32>
  memref.dealloc %padded : memref<2x4x12x12xf32>
  memref.dealloc %up : memref<2x4x9x9xf32>
  return
}

// The same in FP16 with an FP32 W: the flip also rounds W to f16. The
// backward-data call reads a copy of W rounded in W's own layout (a new
// generic just before the call, freed after it), and the flip goes; the
// f32 accumulator, only rounded by its reader, is written rounded.
// CHECK-LABEL: func.func @backward_data_rounded_weights(
// CHECK-SAME:    %[[DY:[^:]*]]: memref<2x4x5x5xf16>, %[[W:[^:]*]]: memref<4x3x3x3xf32>
// CHECK:         %[[WH:.*]] = memref.alloc() : memref<4x3x3x3xf16>
// CHECK:         linalg.generic {{.*}} ins(%[[W]] : memref<4x3x3x3xf32>) outs(%[[WH]] : memref<4x3x3x3xf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[IN]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[R]]
// CHECK:         %[[WHU:.*]] = memref.cast %[[WH]] : memref<4x3x3x3xf16> to memref<*xf16>
// CHECK:         call @amp_conv_f16_f16_f16(%{{.*}}, %{{.*}}, %[[WHU]], %{{.*}})
// CHECK-NEXT:    memref.dealloc %[[WH]] : memref<4x3x3x3xf16>
// CHECK-NOT:     memref<1x3x4x3x3xf16>
// CHECK:         return
func.func @backward_data_rounded_weights(%dy: memref<2x4x5x5xf16>, %w: memref<4x3x3x3xf32>, %dx: memref<2x1x3x100xf32>) {
  %zero = arith.constant 0.0 : f16
  %zero32 = arith.constant 0.0 : f32
  %up = memref.alloc() : memref<2x4x9x9xf16>
  linalg.fill ins(%zero : f16) outs(%up : memref<2x4x9x9xf16>)
  %every2 = memref.subview %up[0, 0, 0, 0] [2, 4, 5, 5] [1, 1, 2, 2] : memref<2x4x9x9xf16> to memref<2x4x5x5xf16, strided<[324, 81, 18, 2]>>
  memref.copy %dy, %every2 : memref<2x4x5x5xf16> to memref<2x4x5x5xf16, strided<[324, 81, 18, 2]>>
  %padded = memref.alloc() : memref<2x4x12x12xf16>
  linalg.map outs(%padded : memref<2x4x12x12xf16>)
    (%init: f16) {
      linalg.yield %zero : f16
    }
  %interior = memref.subview %padded[0, 0, 1, 1] [2, 4, 9, 9] [1, 1, 1, 1] : memref<2x4x12x12xf16> to memref<2x4x9x9xf16, strided<[576, 144, 12, 1], offset: 13>>
  memref.copy %up, %interior : memref<2x4x9x9xf16> to memref<2x4x9x9xf16, strided<[576, 144, 12, 1], offset: 13>>
  %cols = memref.alloc() : memref<2x1x4x3x3x10x10xf16>
  linalg.generic {indexing_maps = [#gather4, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<2x4x12x12xf16>) outs(%cols : memref<2x1x4x3x3x10x10xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x4x3x3x10x10xf16> into memref<2x1x36x100xf16>
  %flipped = memref.alloc() : memref<1x3x4x3x3xf16>
  linalg.generic {indexing_maps = [#flip, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%w : memref<4x3x3x3xf32>) outs(%flipped : memref<1x3x4x3x3xf16>) {
  ^bb0(%in: f32, %out: f16):
    %h = arith.truncf %in : f32 to f16
    linalg.yield %h : f16
  }
  %matrix = memref.collapse_shape %flipped [[0], [1], [2, 3, 4]] : memref<1x3x4x3x3xf16> into memref<1x3x36xf16>
  %acc = memref.alloc() : memref<2x1x3x100xf32>
  linalg.fill ins(%zero32 : f32) outs(%acc : memref<2x1x3x100xf32>)
  // expected-remark @below {{convolution record: backward-data rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x10x10 kernel=1x3x3 output=1x5x5 stride=1x2x2 dilation=1x1x1 type=1 overwrite=1 pad_before=0x1x1 pad_after=0x0x0}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%matrix, %flat : memref<1x3x36xf16>, memref<2x1x36x100xf16>) outs(%acc : memref<2x1x3x100xf32>)
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc : memref<2x1x3x100xf32>) outs(%dx : memref<2x1x3x100xf32>) {
  ^bb0(%in: f32, %o: f32):
    %h = arith.truncf %in : f32 to f16
    %e = arith.extf %h : f16 to f32
    linalg.yield %e : f32
  }
  memref.dealloc %acc : memref<2x1x3x100xf32>
  memref.dealloc %cols : memref<2x1x4x3x3x10x10xf16>
  memref.dealloc %flipped : memref<1x3x4x3x3xf16>
  memref.dealloc %padded : memref<2x4x12x12xf16>
  memref.dealloc %up : memref<2x4x9x9xf16>
  return
}

// Left as convolutions of the buffers they read: padded by 4 after, the
// output padding (2) is not below the stride and cuDNN's backward data
// cannot give dX's 12 rows, so a forward record reads the upsampled dY
// and the flipped W; and with dY rewritten after its upsampling, the
// record is a backward data of the upsampled buffer (stride 1), which
// stays.
// CHECK-LABEL: func.func @backward_data_left(
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<2x4x5x5xf32> to memref<2x4x5x5xf32, strided<[324, 81, 18, 2]>>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : memref<4x3x3x3xf32>)
// CHECK:         call @amp_conv_f32_f32_f32(
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<2x4x5x5xf32> to memref<2x4x5x5xf32, strided<[324, 81, 18, 2]>>
// CHECK-NOT:     linalg.generic
// CHECK:         call @amp_conv_f32_f32_f32(
func.func @backward_data_left(%dy: memref<2x4x5x5xf32>, %w: memref<4x3x3x3xf32>, %dx: memref<2x1x3x144xf32>, %dx2: memref<2x1x3x100xf32>) {
  %zero = arith.constant 0.0 : f32
  %up = memref.alloc() : memref<2x4x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%up : memref<2x4x9x9xf32>)
  %every2 = memref.subview %up[0, 0, 0, 0] [2, 4, 5, 5] [1, 1, 2, 2] : memref<2x4x9x9xf32> to memref<2x4x5x5xf32, strided<[324, 81, 18, 2]>>
  memref.copy %dy, %every2 : memref<2x4x5x5xf32> to memref<2x4x5x5xf32, strided<[324, 81, 18, 2]>>
  %padded = memref.alloc() : memref<2x4x14x14xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x4x14x14xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [2, 4, 9, 9] [1, 1, 1, 1] : memref<2x4x14x14xf32> to memref<2x4x9x9xf32, strided<[784, 196, 14, 1], offset: 15>>
  memref.copy %up, %interior : memref<2x4x9x9xf32> to memref<2x4x9x9xf32, strided<[784, 196, 14, 1], offset: 15>>
  %cols = memref.alloc() : memref<2x1x4x3x3x12x12xf32>
  linalg.generic {indexing_maps = [#gather4, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<2x4x14x14xf32>) outs(%cols : memref<2x1x4x3x3x12x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x4x3x3x12x12xf32> into memref<2x1x36x144xf32>
  %flipped = memref.alloc() : memref<1x3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%w : memref<4x3x3x3xf32>) outs(%flipped : memref<1x3x4x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %matrix = memref.collapse_shape %flipped [[0], [1], [2, 3, 4]] : memref<1x3x4x3x3xf32> into memref<1x3x36xf32>
  // expected-remark @below {{convolution record: forward rank=2 batch=2 in_channels=4 out_channels=3 groups=1 input=1x9x9 kernel=1x3x3 output=1x12x12 stride=1x1x1 dilation=1x1x1 type=0 overwrite=0 pad_before=0x1x1 pad_after=0x4x4}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%matrix, %flat : memref<1x3x36xf32>, memref<2x1x36x144xf32>) outs(%dx : memref<2x1x3x144xf32>)
  memref.dealloc %cols : memref<2x1x4x3x3x12x12xf32>
  memref.dealloc %padded : memref<2x4x14x14xf32>

  %up2 = memref.alloc() : memref<2x4x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%up2 : memref<2x4x9x9xf32>)
  %every2b = memref.subview %up2[0, 0, 0, 0] [2, 4, 5, 5] [1, 1, 2, 2] : memref<2x4x9x9xf32> to memref<2x4x5x5xf32, strided<[324, 81, 18, 2]>>
  memref.copy %dy, %every2b : memref<2x4x5x5xf32> to memref<2x4x5x5xf32, strided<[324, 81, 18, 2]>>
  linalg.fill ins(%zero : f32) outs(%dy : memref<2x4x5x5xf32>)
  %padded2 = memref.alloc() : memref<2x4x12x12xf32>
  linalg.fill ins(%zero : f32) outs(%padded2 : memref<2x4x12x12xf32>)
  %interior2 = memref.subview %padded2[0, 0, 1, 1] [2, 4, 9, 9] [1, 1, 1, 1] : memref<2x4x12x12xf32> to memref<2x4x9x9xf32, strided<[576, 144, 12, 1], offset: 13>>
  memref.copy %up2, %interior2 : memref<2x4x9x9xf32> to memref<2x4x9x9xf32, strided<[576, 144, 12, 1], offset: 13>>
  %cols2 = memref.alloc() : memref<2x1x4x3x3x10x10xf32>
  linalg.generic {indexing_maps = [#gather4, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded2 : memref<2x4x12x12xf32>) outs(%cols2 : memref<2x1x4x3x3x10x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %flat2 = memref.collapse_shape %cols2 [[0], [1], [2, 3, 4], [5, 6]] : memref<2x1x4x3x3x10x10xf32> into memref<2x1x36x100xf32>
  // expected-remark @below {{convolution record: backward-data rank=2 batch=2 in_channels=3 out_channels=4 groups=1 input=1x10x10 kernel=1x3x3 output=1x9x9 stride=1x1x1 dilation=1x1x1 type=0 overwrite=0 pad_before=0x1x1 pad_after=0x0x0}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%matrix, %flat2 : memref<1x3x36xf32>, memref<2x1x36x100xf32>) outs(%dx2 : memref<2x1x3x100xf32>)
  memref.dealloc %cols2 : memref<2x1x4x3x3x10x10xf32>
  memref.dealloc %padded2 : memref<2x4x12x12xf32>
  memref.dealloc %up : memref<2x4x9x9xf32>
  memref.dealloc %up2 : memref<2x4x9x9xf32>
  memref.dealloc %flipped : memref<1x3x4x3x3xf32>
  return
}

// A weight gradient as PyTorch's decomposition (and our exporter) writes
// it: X [4, 8, 8, 8] and dY [4, 16, 4, 4] of a stride-2, pad-1
// convolution, each transposed to batch-last channels-first ([C, N, ...],
// [M, N, ...]), convolved with the forward stride as the dilation, and the
// [C, M, 4, 4] result transposed back into dW [M, C, 4, 4] (which the
// step then slices to the 3x3 kernel). That is cuDNN's backward filter of
// X and dY into dW: the record reads X and dY and writes dW, and the
// three transposes go.
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4x8x8x8xf32>, %[[DY:[^:]*]]: memref<4x16x4x4xf32>
// CHECK-NOT:     linalg.
// CHECK:         %[[DW:.*]] = memref.alloc() : memref<16x8x4x4xf32>
// CHECK-NOT:     linalg.
// CHECK:         %[[XU:.*]] = memref.cast %[[X]] : memref<4x8x8x8xf32> to memref<*xf32>
// CHECK:         %[[DYU:.*]] = memref.cast %[[DY]] : memref<4x16x4x4xf32> to memref<*xf32>
// CHECK:         %[[DWU:.*]] = memref.cast %[[DW]] : memref<16x8x4x4xf32> to memref<*xf32>
// CHECK:         call @amp_conv_f32_f32_f32(%{{.*}}, %[[XU]], %[[DYU]], %[[DWU]])
// CHECK-NOT:     linalg.
// CHECK:         memref.copy
func.func @weight_gradient(%x: memref<4x8x8x8xf32>, %dy: memref<4x16x4x4xf32>, %out: memref<16x8x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<8x4x8x8xf32>
  linalg.transpose ins(%x : memref<4x8x8x8xf32>) outs(%xt : memref<8x4x8x8xf32>) permutation = [1, 0, 2, 3]
  %dyt = memref.alloc() : memref<16x4x4x4xf32>
  linalg.transpose ins(%dy : memref<4x16x4x4xf32>) outs(%dyt : memref<16x4x4x4xf32>) permutation = [1, 0, 2, 3]
  %padded = memref.alloc() : memref<8x4x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<8x4x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [8, 4, 8, 8] [1, 1, 1, 1] : memref<8x4x10x10xf32> to memref<8x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  memref.copy %xt, %interior : memref<8x4x8x8xf32> to memref<8x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  %cols = memref.alloc() : memref<8x1x4x4x4x4x4xf32>
  linalg.generic {indexing_maps = [#gatherwg, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<8x4x10x10xf32>) outs(%cols : memref<8x1x4x4x4x4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<8x1x4x4x4x4x4xf32> into memref<8x1x64x16xf32>
  %dyflat = memref.collapse_shape %dyt [[0, 1, 2, 3]] : memref<16x4x4x4xf32> into memref<1024xf32>
  %matrix = memref.expand_shape %dyflat [[0, 1, 2]] output_shape [1, 16, 64] : memref<1024xf32> into memref<1x16x64xf32>
  %res = memref.alloc() : memref<8x1x16x16xf32>
  linalg.fill ins(%zero : f32) outs(%res : memref<8x1x16x16xf32>)
  // expected-remark @below {{convolution record: backward-filter rank=2 batch=4 in_channels=8 out_channels=16 groups=1 input=1x8x8 kernel=1x4x4 output=1x4x4 stride=1x2x2 dilation=1x1x1 type=0 overwrite=1 pad_before=0x1x1 pad_after=0x1x1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%matrix, %flat : memref<1x16x64xf32>, memref<8x1x64x16xf32>) outs(%res : memref<8x1x16x16xf32>)
  %res5 = memref.expand_shape %res [[0], [1], [2], [3, 4]] output_shape [8, 1, 16, 4, 4] : memref<8x1x16x16xf32> into memref<8x1x16x4x4xf32>
  %dw = memref.alloc() : memref<16x8x4x4xf32>
  %dw5 = memref.expand_shape %dw [[0, 1], [2], [3], [4]] output_shape [1, 16, 8, 4, 4] : memref<16x8x4x4xf32> into memref<1x16x8x4x4xf32>
  linalg.transpose ins(%res5 : memref<8x1x16x4x4xf32>) outs(%dw5 : memref<1x16x8x4x4xf32>) permutation = [1, 2, 0, 3, 4]
  %kernel = memref.subview %dw[0, 0, 0, 0] [16, 8, 3, 3] [1, 1, 1, 1] : memref<16x8x4x4xf32> to memref<16x8x3x3xf32, strided<[128, 16, 4, 1]>>
  memref.copy %kernel, %out : memref<16x8x3x3xf32, strided<[128, 16, 4, 1]>> to memref<16x8x3x3xf32>
  memref.dealloc %xt : memref<8x4x8x8xf32>
  memref.dealloc %dyt : memref<16x4x4x4xf32>
  memref.dealloc %padded : memref<8x4x10x10xf32>
  memref.dealloc %cols : memref<8x1x4x4x4x4x4xf32>
  memref.dealloc %res : memref<8x1x16x16xf32>
  memref.dealloc %dw : memref<16x8x4x4xf32>
  return
}

// The same in FP16: f16 X and dY into an f32 accumulator that a kernel
// rounds to f16 before the transpose. The record writes dW rounded
// (PSEUDO_HALF); the rounding kernel, then only a copy, goes with the
// transpose back (those of X and dY stay: the next contraction reads
// them). With dW read between the contraction and the transpose back, it
// stays a forward record of the transposed operands, which writes the
// rounded buffer that the transpose reads (the rounding kernel, then only
// a copy, goes too).
// CHECK-LABEL: func.func @weight_gradient_rounded(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4x8x8x8xf16>, %[[DY:[^:]*]]: memref<4x16x4x4xf16>, %[[DW:[^:]*]]: memref<16x8x4x4xf16>
// CHECK:         linalg.transpose ins(%[[X]]
// CHECK:         linalg.transpose ins(%[[DY]]
// CHECK-NOT:     linalg.
// CHECK:         %[[XU:.*]] = memref.cast %[[X]] : memref<4x8x8x8xf16> to memref<*xf16>
// CHECK:         %[[DYU:.*]] = memref.cast %[[DY]] : memref<4x16x4x4xf16> to memref<*xf16>
// CHECK:         %[[DWU:.*]] = memref.cast %[[DW]] : memref<16x8x4x4xf16> to memref<*xf16>
// CHECK:         call @amp_conv_f16_f16_f16(%{{.*}}, %[[XU]], %[[DYU]], %[[DWU]])
// CHECK-NOT:     linalg.
// CHECK:         call @amp_conv_f16_f16_f16(
// CHECK:         memref.copy
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.transpose
func.func @weight_gradient_rounded(%x: memref<4x8x8x8xf16>, %dy: memref<4x16x4x4xf16>, %dw: memref<16x8x4x4xf16>, %dw2: memref<16x8x4x4xf16>, %seen: memref<16x8x4x4xf16>) {
  %zero = arith.constant 0.0 : f32
  %zero16 = arith.constant 0.0 : f16
  %xt = memref.alloc() : memref<8x4x8x8xf16>
  linalg.transpose ins(%x : memref<4x8x8x8xf16>) outs(%xt : memref<8x4x8x8xf16>) permutation = [1, 0, 2, 3]
  %dyt = memref.alloc() : memref<16x4x4x4xf16>
  linalg.transpose ins(%dy : memref<4x16x4x4xf16>) outs(%dyt : memref<16x4x4x4xf16>) permutation = [1, 0, 2, 3]
  %padded = memref.alloc() : memref<8x4x10x10xf16>
  linalg.fill ins(%zero16 : f16) outs(%padded : memref<8x4x10x10xf16>)
  %interior = memref.subview %padded[0, 0, 1, 1] [8, 4, 8, 8] [1, 1, 1, 1] : memref<8x4x10x10xf16> to memref<8x4x8x8xf16, strided<[400, 100, 10, 1], offset: 11>>
  memref.copy %xt, %interior : memref<8x4x8x8xf16> to memref<8x4x8x8xf16, strided<[400, 100, 10, 1], offset: 11>>
  %cols = memref.alloc() : memref<8x1x4x4x4x4x4xf16>
  linalg.generic {indexing_maps = [#gatherwg, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<8x4x10x10xf16>) outs(%cols : memref<8x1x4x4x4x4x4xf16>) {
  ^bb0(%in: f16, %o: f16):
    linalg.yield %in : f16
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<8x1x4x4x4x4x4xf16> into memref<8x1x64x16xf16>
  %dyflat = memref.collapse_shape %dyt [[0, 1, 2, 3]] : memref<16x4x4x4xf16> into memref<1024xf16>
  %matrix = memref.expand_shape %dyflat [[0, 1, 2]] output_shape [1, 16, 64] : memref<1024xf16> into memref<1x16x64xf16>
  %res = memref.alloc() : memref<8x1x16x16xf32>
  linalg.fill ins(%zero : f32) outs(%res : memref<8x1x16x16xf32>)
  // expected-remark @below {{convolution record: backward-filter rank=2 batch=4 in_channels=8 out_channels=16 groups=1 input=1x8x8 kernel=1x4x4 output=1x4x4 stride=1x2x2 dilation=1x1x1 type=1 overwrite=1 pad_before=0x1x1 pad_after=0x1x1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%matrix, %flat : memref<1x16x64xf16>, memref<8x1x64x16xf16>) outs(%res : memref<8x1x16x16xf32>)
  %res5 = memref.expand_shape %res [[0], [1], [2], [3, 4]] output_shape [8, 1, 16, 4, 4] : memref<8x1x16x16xf32> into memref<8x1x16x4x4xf32>
  %rounded = memref.alloc() : memref<8x1x16x4x4xf16>
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%res5 : memref<8x1x16x4x4xf32>) outs(%rounded : memref<8x1x16x4x4xf16>) {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  %dw5 = memref.expand_shape %dw [[0, 1], [2], [3], [4]] output_shape [1, 16, 8, 4, 4] : memref<16x8x4x4xf16> into memref<1x16x8x4x4xf16>
  linalg.transpose ins(%rounded : memref<8x1x16x4x4xf16>) outs(%dw5 : memref<1x16x8x4x4xf16>) permutation = [1, 2, 0, 3, 4]

  %res2 = memref.alloc() : memref<8x1x16x16xf32>
  linalg.fill ins(%zero : f32) outs(%res2 : memref<8x1x16x16xf32>)
  // expected-remark @below {{convolution record: forward rank=2 batch=8 in_channels=4 out_channels=16 groups=1 input=1x8x8 kernel=1x4x4 output=1x4x4 stride=1x1x1 dilation=1x2x2 type=1 overwrite=1 pad_before=0x1x1 pad_after=0x1x1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%matrix, %flat : memref<1x16x64xf16>, memref<8x1x64x16xf16>) outs(%res2 : memref<8x1x16x16xf32>)
  memref.copy %dw2, %seen : memref<16x8x4x4xf16> to memref<16x8x4x4xf16>
  %res25 = memref.expand_shape %res2 [[0], [1], [2], [3, 4]] output_shape [8, 1, 16, 4, 4] : memref<8x1x16x16xf32> into memref<8x1x16x4x4xf32>
  %rounded2 = memref.alloc() : memref<8x1x16x4x4xf16>
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%res25 : memref<8x1x16x4x4xf32>) outs(%rounded2 : memref<8x1x16x4x4xf16>) {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  %dw25 = memref.expand_shape %dw2 [[0, 1], [2], [3], [4]] output_shape [1, 16, 8, 4, 4] : memref<16x8x4x4xf16> into memref<1x16x8x4x4xf16>
  linalg.transpose ins(%rounded2 : memref<8x1x16x4x4xf16>) outs(%dw25 : memref<1x16x8x4x4xf16>) permutation = [1, 2, 0, 3, 4]
  memref.dealloc %xt : memref<8x4x8x8xf16>
  memref.dealloc %dyt : memref<16x4x4x4xf16>
  memref.dealloc %padded : memref<8x4x10x10xf16>
  memref.dealloc %cols : memref<8x1x4x4x4x4x4xf16>
  memref.dealloc %res : memref<8x1x16x16xf32>
  memref.dealloc %rounded : memref<8x1x16x4x4xf16>
  memref.dealloc %res2 : memref<8x1x16x16xf32>
  memref.dealloc %rounded2 : memref<8x1x16x4x4xf16>
  return
}

// An FP32 weight gradient whose dY is stored in bf16: transposed in bf16,
// then widened to f32. The record reads dY widened by a copy of that
// conversion, of dY itself, just before the call; the transposes and the
// old conversion go.
// CHECK-LABEL: func.func @weight_gradient_converted(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4x8x8x8xf32>, %[[DY:[^:]*]]: memref<4x16x4x4xbf16>
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[WIDE:.*]] = memref.alloc() : memref<4x16x4x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[DY]] : memref<4x16x4x4xbf16>) outs(%[[WIDE]] : memref<4x16x4x4xf32>)
// CHECK:           arith.extf
// CHECK:         %[[WIDEU:.*]] = memref.cast %[[WIDE]] : memref<4x16x4x4xf32> to memref<*xf32>
// CHECK:         call @amp_conv_f32_f32_f32(%{{.*}}, %{{.*}}, %[[WIDEU]], %{{.*}})
// CHECK:         memref.dealloc %[[WIDE]]
// CHECK-NOT:     linalg.
func.func @weight_gradient_converted(%x: memref<4x8x8x8xf32>, %dy: memref<4x16x4x4xbf16>, %dw: memref<16x8x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<8x4x8x8xf32>
  linalg.transpose ins(%x : memref<4x8x8x8xf32>) outs(%xt : memref<8x4x8x8xf32>) permutation = [1, 0, 2, 3]
  %dyt = memref.alloc() : memref<16x4x4x4xbf16>
  linalg.transpose ins(%dy : memref<4x16x4x4xbf16>) outs(%dyt : memref<16x4x4x4xbf16>) permutation = [1, 0, 2, 3]
  %dytw = memref.alloc() : memref<16x4x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dyt : memref<16x4x4x4xbf16>) outs(%dytw : memref<16x4x4x4xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  }
  %padded = memref.alloc() : memref<8x4x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<8x4x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [8, 4, 8, 8] [1, 1, 1, 1] : memref<8x4x10x10xf32> to memref<8x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  memref.copy %xt, %interior : memref<8x4x8x8xf32> to memref<8x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  %cols = memref.alloc() : memref<8x1x4x4x4x4x4xf32>
  linalg.generic {indexing_maps = [#gatherwg, #id7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<8x4x10x10xf32>) outs(%cols : memref<8x1x4x4x4x4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %cols [[0], [1], [2, 3, 4], [5, 6]] : memref<8x1x4x4x4x4x4xf32> into memref<8x1x64x16xf32>
  %dyflat = memref.collapse_shape %dytw [[0, 1, 2, 3]] : memref<16x4x4x4xf32> into memref<1024xf32>
  %matrix = memref.expand_shape %dyflat [[0, 1, 2]] output_shape [1, 16, 64] : memref<1024xf32> into memref<1x16x64xf32>
  %res = memref.alloc() : memref<8x1x16x16xf32>
  linalg.fill ins(%zero : f32) outs(%res : memref<8x1x16x16xf32>)
  // expected-remark @below {{convolution record: backward-filter rank=2 batch=4 in_channels=8 out_channels=16 groups=1 input=1x8x8 kernel=1x4x4 output=1x4x4 stride=1x2x2 dilation=1x1x1 type=0 overwrite=1 pad_before=0x1x1 pad_after=0x1x1}}
  linalg.contract indexing_maps = [#w, #col, #y] ins(%matrix, %flat : memref<1x16x64xf32>, memref<8x1x64x16xf32>) outs(%res : memref<8x1x16x16xf32>)
  %res5 = memref.expand_shape %res [[0], [1], [2], [3, 4]] output_shape [8, 1, 16, 4, 4] : memref<8x1x16x16xf32> into memref<8x1x16x4x4xf32>
  %dw5 = memref.expand_shape %dw [[0, 1], [2], [3], [4]] output_shape [1, 16, 8, 4, 4] : memref<16x8x4x4xf32> into memref<1x16x8x4x4xf32>
  linalg.transpose ins(%res5 : memref<8x1x16x4x4xf32>) outs(%dw5 : memref<1x16x8x4x4xf32>) permutation = [1, 2, 0, 3, 4]
  memref.dealloc %xt : memref<8x4x8x8xf32>
  memref.dealloc %dyt : memref<16x4x4x4xbf16>
  memref.dealloc %dytw : memref<16x4x4x4xf32>
  memref.dealloc %padded : memref<8x4x10x10xf32>
  memref.dealloc %cols : memref<8x1x4x4x4x4x4xf32>
  memref.dealloc %res : memref<8x1x16x16xf32>
  return
}
