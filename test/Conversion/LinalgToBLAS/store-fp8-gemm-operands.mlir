// RUN: amp-opt %s --amp-store-fp8-gemm-operands | FileCheck %s
// RUN: amp-opt %s --amp-store-fp8-gemm-operands=remarks=true -verify-diagnostics -o /dev/null
// RUN: %python %S/Inputs/many-fp8-factors.py 101 > %t.mlir
// RUN: amp-opt %t.mlir --amp-store-fp8-gemm-operands | FileCheck %s --check-prefix=MANY

// 101 factors from delayed scaling (the large FP8 transformer has 266):
// one merged kernel would take 101 x 48 bytes of memref parameters, above
// the 4352 bytes an sm_80 kernel takes (ptxas refused the transformer's
// 12.8 KB), so they are merged 85 at a time (4080 bytes), the last 16 in
// a second kernel.
// MANY-LABEL: func.func @many(
// MANY:         linalg.generic {{.*}} outs({{(%[a-z0-9_]+, ){15}%[a-z0-9_]+}} :
// MANY:         linalg.generic {{.*}} outs({{(%[a-z0-9_]+, ){84}%[a-z0-9_]+}} :
// MANY-NOT:     outs({{(%[a-z0-9_]+, )+%[a-z0-9_]+}} : memref<f32>

// A fused quantize-dequantize feeding a Linear's forward GEMM (K = 32, x's
// last dim) and its weight gradient (K = 16, x's first dim): the generic
// stores the FP8 values once per layout, K innermost (16x32, and 32x16
// through a transposed map), the factor 1/scale goes into a 0-d buffer,
// and each contraction reads an f32 buffer dequantized just before it.
// Nothing else read the f32 output: it is dropped with its buffer.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf32>, %[[SCALE:[^:]*]]: memref<f32>
// CHECK-NOT:     memref.alloc() : memref<16x32xf32>
// CHECK:         %[[INV:.*]] = memref.alloc() {alignment = 64 : i64} : memref<f32>
// CHECK:         linalg.generic {{.*}} ins(%[[SCALE]] : memref<f32>) outs(%[[INV]] : memref<f32>)
// CHECK:           arith.divf
// CHECK:         %[[ROWS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf8E4M3FN>
// CHECK:         %[[COLS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x16xf8E4M3FN>
// CHECK:         linalg.generic {indexing_maps = [#[[ID:.*]], #[[SCALAR:.*]], #[[ID]], #[[T:.*]]], {{.*}} ins(%[[X]], %[[SCALE]] : {{.*}}) outs(%[[ROWS]], %[[COLS]] : memref<16x32xf8E4M3FN>, memref<32x16xf8E4M3FN>)
// CHECK-NOT:       arith.extf
// CHECK:           %[[FP8:.*]] = arith.truncf %{{.*}} : f32 to f8E4M3FN
// CHECK-NEXT:      linalg.yield %[[FP8]], %[[FP8]] : f8E4M3FN, f8E4M3FN
// CHECK:         %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], {{.*}} ins(%[[ROWS]], %[[INV]] : memref<16x32xf8E4M3FN>, memref<f32>) outs(%[[A]] : memref<16x32xf32>)
// CHECK-NEXT:    ^bb0(%[[Q:.*]]: f8E4M3FN, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[WIDE:.*]] = arith.extf %[[Q]] : f8E4M3FN to f32
// CHECK-NEXT:      %[[DQ:.*]] = arith.mulf %[[WIDE]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[DQ]] : f32
// CHECK:         linalg.contract {{.*}} ins(%[[A]], %{{.*}} : memref<16x32xf32>, memref<64x32xf32>)
// CHECK:         %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[T]], #[[SCALAR]], #[[ID]]], {{.*}} ins(%[[COLS]], %[[INV]] : memref<32x16xf8E4M3FN>, memref<f32>) outs(%[[B]] : memref<16x32xf32>)
// CHECK:         linalg.contract {{.*}} ins(%{{.*}}, %[[B]] : memref<16x64xf32>, memref<16x32xf32>)
// CHECK-DAG:     memref.dealloc %[[INV]] :
// CHECK-DAG:     memref.dealloc %[[ROWS]] :
// CHECK-DAG:     memref.dealloc %[[COLS]] :
// CHECK-DAG:     memref.dealloc %[[A]] :
// CHECK-DAG:     memref.dealloc %[[B]] :
// CHECK:         return
#id = affine_map<(m, k) -> (m, k)>
#scalar = affine_map<(m, k) -> ()>
#row = affine_map<(m, k) -> (m)>
#xa = affine_map<(m, n, k) -> (m, k)>
#wb = affine_map<(m, n, k) -> (n, k)>
#yc = affine_map<(m, n, k) -> (m, n)>
#dyw = affine_map<(n, k, m) -> (m, n)>
#xw = affine_map<(n, k, m) -> (m, k)>
#dw = affine_map<(n, k, m) -> (n, k)>
func.func @linear(%x: memref<16x32xf32>, %scale: memref<f32>, %w: memref<64x32xf32>, %y: memref<16x64xf32>, %dy: memref<16x64xf32>, %dwt: memref<64x32xf32>) {
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %one = arith.constant 1.0 : f32
  %q = memref.alloc() : memref<16x32xf32>
  // expected-remark @below {{FP8 GEMM operand 0 stored as 'memref<16x32xf8E4M3FN>' 'memref<32x16xf8E4M3FN>', f32 output dropped}}
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : memref<16x32xf32>, memref<f32>) outs(%q : memref<16x32xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %inv = arith.divf %one, %s : f32
    %scaled = arith.mulf %in, %s : f32
    %low = arith.minimumf %scaled, %max : f32
    %high = arith.maximumf %low, %min : f32
    %fp8 = arith.truncf %high : f32 to f8E4M3FN
    %wide = arith.extf %fp8 : f8E4M3FN to f32
    %dq = arith.mulf %wide, %inv : f32
    linalg.yield %dq : f32
  }
  linalg.contract indexing_maps = [#xa, #wb, #yc] ins(%q, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  linalg.contract indexing_maps = [#dyw, #xw, #dw] ins(%dy, %q : memref<16x64xf32>, memref<16x32xf32>) outs(%dwt : memref<64x32xf32>)
  memref.dealloc %q : memref<16x32xf32>
  return
}

// An E5M2 gradient written into the function's result buffer, which its
// caller reads: stored as FP8 for the GEMM, the f32 output kept. A later
// overwrite of a buffer ends what the generic wrote: readers after it do
// not count.
// CHECK-LABEL: func.func @kept(
// CHECK-SAME:    %[[G:[^:]*]]: memref<16x32xf32>, %{{.*}}: memref<f32>, %{{.*}}: memref<64x32xf32>, %{{.*}}: memref<16x64xf32>, %[[OUT:[^:]*]]: memref<16x32xf32>)
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]], %{{.*}} : memref<16x32xf32>, memref<16x32xf8E5M2>)
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, f8E5M2
func.func @kept(%g: memref<16x32xf32>, %scale: memref<f32>, %w: memref<64x32xf32>, %y: memref<16x64xf32>, %out: memref<16x32xf32>) {
  %one = arith.constant 1.0 : f32
  // expected-remark @below {{FP8 GEMM operand 0 stored as 'memref<16x32xf8E5M2>', f32 output kept}}
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %scale : memref<16x32xf32>, memref<f32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %inv = arith.divf %one, %s : f32
    %scaled = arith.mulf %in, %s : f32
    %fp8 = arith.truncf %scaled : f32 to f8E5M2
    %wide = arith.extf %fp8 : f8E5M2 to f32
    %dq = arith.mulf %inv, %wide : f32
    linalg.yield %dq : f32
  }
  linalg.contract indexing_maps = [#xa, #wb, #yc] ins(%out, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  return
}

// Left as they are: an output another op reads, one no contraction reads,
// and a per-row factor (block scaling: cuBLASLt's Hopper kernels take one
// factor per operand here).
// CHECK-LABEL: func.func @refused(
// CHECK-NOT:     f8E4M3FN>
// CHECK:         return
func.func @refused(%x: memref<16x32xf32>, %scale: memref<f32>, %rows: memref<16xf32>, %w: memref<64x32xf32>, %y: memref<16x64xf32>, %sum: memref<16x32xf32>) {
  %one = arith.constant 1.0 : f32
  %q = memref.alloc() : memref<16x32xf32>
  // expected-remark @below {{FP8 GEMM operand 0 stays f32: 'linalg.generic' reads it too}}
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : memref<16x32xf32>, memref<f32>) outs(%q : memref<16x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %inv = arith.divf %one, %s : f32
    %fp8 = arith.truncf %in : f32 to f8E4M3FN
    %wide = arith.extf %fp8 : f8E4M3FN to f32
    %dq = arith.mulf %wide, %inv : f32
    linalg.yield %dq : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%q : memref<16x32xf32>) outs(%sum : memref<16x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %add = arith.addf %in, %o : f32
    linalg.yield %add : f32
  }
  linalg.contract indexing_maps = [#xa, #wb, #yc] ins(%q, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  %unread = memref.alloc() : memref<16x32xf32>
  // expected-remark @below {{FP8 GEMM operand 0 stays f32: no contraction reads it}}
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : memref<16x32xf32>, memref<f32>) outs(%unread : memref<16x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %fp8 = arith.truncf %in : f32 to f8E4M3FN
    %wide = arith.extf %fp8 : f8E4M3FN to f32
    %dq = arith.mulf %wide, %s : f32
    linalg.yield %dq : f32
  }
  %blocks = memref.alloc() : memref<16x32xf32>
  // expected-remark @below {{FP8 GEMM operand 0 stays f32: its factor varies over the tensor (block scaling)}}
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %rows : memref<16x32xf32>, memref<16xf32>) outs(%blocks : memref<16x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %fp8 = arith.truncf %in : f32 to f8E4M3FN
    %wide = arith.extf %fp8 : f8E4M3FN to f32
    %dq = arith.mulf %wide, %s : f32
    linalg.yield %dq : f32
  }
  linalg.contract indexing_maps = [#xa, #wb, #yc] ins(%blocks, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  return
}

// Delayed scaling: every factor comes from a scale the step reads and
// has not written; they are computed by one generic at the function's
// start (one single-thread kernel, not one per FP8 tensor), the constant
// they use cloned in. A scale the step computes first (current scaling)
// keeps its own generic after that computation.
// CHECK-LABEL: func.func @factors(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf32>, %[[XS:[^:]*]]: memref<f32>, %[[W:[^:]*]]: memref<64x32xf32>, %[[WS:[^:]*]]: memref<f32>
// CHECK-NEXT:    %[[XI:.*]] = memref.alloc() {alignment = 64 : i64} : memref<f32>
// CHECK-NEXT:    %[[WI:.*]] = memref.alloc() {alignment = 64 : i64} : memref<f32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[XS]], %[[WS]] : memref<f32>, memref<f32>) outs(%[[XI]], %[[WI]] : memref<f32>, memref<f32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[AI:.*]] = arith.divf %[[ONE]], %[[A]] : f32
// CHECK-NEXT:      %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[BI:.*]] = arith.divf %[[ONE2]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[AI]], %[[BI]] : f32, f32
// CHECK:         linalg.generic {{.*}} outs(%[[GS:.*]] : memref<f32>)
// CHECK:         %[[GI:.*]] = memref.alloc() {alignment = 64 : i64} : memref<f32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[GS]] : memref<f32>) outs(%[[GI]] : memref<f32>)
func.func @factors(%x: memref<16x32xf32>, %xs: memref<f32>, %w: memref<64x32xf32>, %ws: memref<f32>, %y: memref<16x64xf32>, %g: memref<16x32xf32>) {
  %qx = memref.alloc() : memref<16x32xf32>
  // expected-remark @below {{FP8 GEMM operand 0 stored as 'memref<16x32xf8E4M3FN>', f32 output dropped}}
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %xs : memref<16x32xf32>, memref<f32>) outs(%qx : memref<16x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %inv = arith.divf %one, %s : f32
    %fp8 = arith.truncf %in : f32 to f8E4M3FN
    %wide = arith.extf %fp8 : f8E4M3FN to f32
    %dq = arith.mulf %wide, %inv : f32
    linalg.yield %dq : f32
  }
  %qw = memref.alloc() : memref<64x32xf32>
  // expected-remark @below {{FP8 GEMM operand 0 stored as 'memref<64x32xf8E4M3FN>', f32 output dropped}}
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%w, %ws : memref<64x32xf32>, memref<f32>) outs(%qw : memref<64x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %inv = arith.divf %one, %s : f32
    %fp8 = arith.truncf %in : f32 to f8E4M3FN
    %wide = arith.extf %fp8 : f8E4M3FN to f32
    %dq = arith.mulf %wide, %inv : f32
    linalg.yield %dq : f32
  }
  linalg.contract indexing_maps = [#xa, #wb, #yc] ins(%qx, %qw : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  %gs = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%gs : memref<f32>) {
  ^bb0(%o: f32):
    %two = arith.constant 2.0 : f32
    linalg.yield %two : f32
  }
  %qg = memref.alloc() : memref<16x32xf32>
  // expected-remark @below {{FP8 GEMM operand 0 stored as 'memref<16x32xf8E4M3FN>', f32 output dropped}}
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %gs : memref<16x32xf32>, memref<f32>) outs(%qg : memref<16x32xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %inv = arith.divf %one, %s : f32
    %fp8 = arith.truncf %in : f32 to f8E4M3FN
    %wide = arith.extf %fp8 : f8E4M3FN to f32
    %dq = arith.mulf %wide, %inv : f32
    linalg.yield %dq : f32
  }
  linalg.contract indexing_maps = [#xa, #wb, #yc] ins(%qg, %qw : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  return
}
