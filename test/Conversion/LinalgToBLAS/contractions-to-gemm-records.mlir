// RUN: amp-opt %s --amp-contractions-to-gemm-records | FileCheck %s
// RUN: amp-opt %s --amp-contractions-to-gemm-records=remarks=true -verify-diagnostics -o /dev/null
// RUN: amp-opt %S/Inputs/unrecorded-contraction.mlir --amp-contractions-to-gemm-records=warn-unrecorded=true -verify-diagnostics -o /dev/null

// Row-major C = A B is the column-major C^T = B^T A^T: the record swaps
// the operands (swapped=1). x's batch loop b indexes x and y only, an M
// loop: b and m collapse into one M of 16 (stride 32 in x, 16 in y).
// CHECK-DAG:   memref.global "private" constant @amp_gemm_record : memref<19xi64> = dense<[16, 16, 32, 1, 0, 0, 16, 32, 16, 0, 0, 0, 2, 2, 0, 1, 0, 0, 0]>
// CHECK-DAG:   func.func private @amp_gemm_bf16_bf16_f32(memref<*xi64>, memref<*xbf16>, memref<*xbf16>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:.*]]: memref<2x8x32xbf16>, %[[W:.*]]: memref<32x16xbf16>, %[[Y:.*]]: memref<2x8x16xf32>)
// CHECK:         %[[R:.*]] = memref.get_global @amp_gemm_record : memref<19xi64>
// CHECK:         %[[RU:.*]] = memref.cast %[[R]] : memref<19xi64> to memref<*xi64>
// CHECK:         %[[WU:.*]] = memref.cast %[[W]] : memref<32x16xbf16> to memref<*xbf16>
// CHECK:         %[[XU:.*]] = memref.cast %[[X]] : memref<2x8x32xbf16> to memref<*xbf16>
// CHECK:         %[[YU:.*]] = memref.cast %[[Y]] : memref<2x8x16xf32> to memref<*xf32>
// CHECK:         call @amp_gemm_bf16_bf16_f32(%[[RU]], %[[WU]], %[[XU]], %[[YU]])
// CHECK-NOT:     linalg.contract
#xa = affine_map<(b, m, n, k) -> (b, m, k)>
#wb = affine_map<(b, m, n, k) -> (k, n)>
#yc = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @linear(%x: memref<2x8x32xbf16>, %w: memref<32x16xbf16>, %y: memref<2x8x16xf32>) {
  // expected-remark @below {{GEMM record: m=16 n=16 k=32 batch=1 trans_a=0 trans_b=0 lda=16 ldb=32 ldd=16 stride_a=0 stride_b=0 stride_d=0 type_a=2 type_b=2 type_d=0 swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#xa, #wb, #yc] ins(%x, %w : memref<2x8x32xbf16>, memref<32x16xbf16>) outs(%y : memref<2x8x16xf32>)
  return
}

// Gemm with transB = 1: the weight is stored n x k, read transposed
// (trans_a=1, lda=k). Two identical contractions share one record.
// CHECK-LABEL: func.func @transposed_weight(
// CHECK-COUNT-2: call @amp_gemm_f32_f32_f32(
#a2 = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c2 = affine_map<(m, n, k) -> (m, n)>
func.func @transposed_weight(%x: memref<8x32xf32>, %w: memref<16x32xf32>, %y: memref<8x16xf32>) {
  // expected-remark @below {{GEMM record: m=16 n=8 k=32 batch=1 trans_a=1 trans_b=0 lda=32 ldb=32 ldd=16 stride_a=0 stride_b=0 stride_d=0 type_a=0 type_b=0 type_d=0 swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#a2, #bt, #c2] ins(%x, %w : memref<8x32xf32>, memref<16x32xf32>) outs(%y : memref<8x16xf32>)
  // expected-remark @below {{GEMM record: m=16 n=8 k=32 batch=1 trans_a=1 trans_b=0 lda=32 ldb=32 ldd=16}}
  linalg.contract indexing_maps = [#a2, #bt, #c2] ins(%x, %w : memref<8x32xf32>, memref<16x32xf32>) outs(%y : memref<8x16xf32>)
  return
}

// A batched product (attention's scores q k^T over 4 heads): one GEMM per
// batch, with batch strides; k is read transposed.
// CHECK-LABEL: func.func @batched(
// CHECK:         call @amp_gemm_f32_f32_f32(
#qa = affine_map<(b, m, n, k) -> (b, m, k)>
#kb = affine_map<(b, m, n, k) -> (b, n, k)>
#sc = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batched(%q: memref<4x8x16xf32>, %k: memref<4x8x16xf32>, %s: memref<4x8x8xf32>) {
  // expected-remark @below {{GEMM record: m=8 n=8 k=16 batch=4 trans_a=1 trans_b=0 lda=16 ldb=16 ldd=8 stride_a=128 stride_b=128 stride_d=64 type_a=0 type_b=0 type_d=0 swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#qa, #kb, #sc] ins(%q, %k : memref<4x8x16xf32>, memref<4x8x16xf32>) outs(%s : memref<4x8x8xf32>)
  return
}

// C with contiguous rows (a transposed output view): no swap.
// CHECK-LABEL: func.func @column_major_output(
// CHECK:         call @amp_gemm_f32_f32_f32(
#ct = affine_map<(m, n, k) -> (n, m)>
func.func @column_major_output(%x: memref<8x32xf32>, %w: memref<32x16xf32>, %y: memref<16x8xf32>) {
  // expected-remark @below {{GEMM record: m=8 n=16 k=32 batch=1 trans_a=1 trans_b=1 lda=32 ldb=16 ldd=8 stride_a=0 stride_b=0 stride_d=0 type_a=0 type_b=0 type_d=0 swapped=0 overwrite=0}}
  linalg.contract indexing_maps = [#a2, affine_map<(m, n, k) -> (k, n)>, #ct] ins(%x, %w : memref<8x32xf32>, memref<32x16xf32>) outs(%y : memref<16x8xf32>)
  return
}

// A convolution as a GEMM over images: the image loop i indexes x and y
// but does not collapse with the pixels p, so it becomes the batch, the
// weight shared by every batch (stride 0).
// CHECK-LABEL: func.func @shared_weight(
// CHECK:         call @amp_gemm_f32_f32_f32(
func.func @shared_weight(%w: memref<16x32xf32>, %x: memref<2x32x8xf32>, %y: memref<2x16x8xf32>) {
  // expected-remark @below {{GEMM record: m=8 n=16 k=32 batch=2 trans_a=0 trans_b=0 lda=8 ldb=32 ldd=8 stride_a=256 stride_b=0 stride_d=128 type_a=0 type_b=0 type_d=0 swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [affine_map<(i, m, p, k) -> (m, k)>, affine_map<(i, m, p, k) -> (i, k, p)>, affine_map<(i, m, p, k) -> (i, m, p)>] ins(%w, %x : memref<16x32xf32>, memref<2x32x8xf32>) outs(%y : memref<2x16x8xf32>)
  return
}

// No record: left for amp-contractions-to-blas.
// CHECK-LABEL: func.func @no_record(
// CHECK-COUNT-4: linalg.contract
// CHECK-NOT:     call
#split = affine_map<(m, n, k1, k2) -> (k1, m, k2)>
#split_w = affine_map<(m, n, k1, k2) -> (k1, k2, n)>
func.func @no_record(%x: memref<?x32xf32>, %w: memref<32x16xf32>, %y: memref<?x16xf32>,
                     %h: memref<8x32xf16>, %wh: memref<32x16xf16>, %yh: memref<8x16xf16>,
                     %xs: memref<4x8x2xf32>, %ws: memref<4x2x16xf32>,
                     %xo: memref<8x32xf32, strided<[64, 2]>>, %yo: memref<8x16xf32>) {
  // expected-remark @below {{no GEMM record: operand 0 has a dynamic shape or stride}}
  linalg.contract indexing_maps = [#a2, affine_map<(m, n, k) -> (k, n)>, #c2] ins(%x, %w : memref<?x32xf32>, memref<32x16xf32>) outs(%y : memref<?x16xf32>)
  // expected-remark @below {{no GEMM record: element types (an f32 accumulator over f32, f16 or bf16, or f64 throughout)}}
  linalg.contract indexing_maps = [#a2, affine_map<(m, n, k) -> (k, n)>, #c2] ins(%h, %wh : memref<8x32xf16>, memref<32x16xf16>) outs(%yh : memref<8x16xf16>)
  // expected-remark @below {{no GEMM record: the reduction loops are not contiguous in an operand}}
  linalg.contract indexing_maps = [#split, #split_w, affine_map<(m, n, k1, k2) -> (m, n)>] ins(%xs, %ws : memref<4x8x2xf32>, memref<4x2x16xf32>) outs(%yo : memref<8x16xf32>)
  // expected-remark @below {{no GEMM record: no column-major layout reads the operands in place}}
  linalg.contract indexing_maps = [#a2, affine_map<(m, n, k) -> (k, n)>, #c2] ins(%xo, %w : memref<8x32xf32, strided<[64, 2]>>, memref<32x16xf32>) outs(%yo : memref<8x16xf32>)
  return
}

// The zeroing of the output just before (through a reshape of the same
// buffer) becomes the record's overwrite flag (cuBLASLt's beta 0) and
// goes; a zeroing read before the GEMM, or a fill with another value,
// stays.
// CHECK-LABEL: func.func @zeroed_outputs(
// CHECK-SAME:    %[[X:.*]]: memref<8x32xf32>, %[[W:.*]]: memref<32x16xf32>, %[[OUT:.*]]: memref<128xf32>, %[[READ:.*]]: memref<8x16xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.fill
// CHECK:         linalg.copy
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.fill
// CHECK:         call @amp_gemm_f32_f32_f32(
#zx = affine_map<(m, n, k) -> (m, k)>
#zw = affine_map<(m, n, k) -> (k, n)>
#zy = affine_map<(m, n, k) -> (m, n)>
func.func @zeroed_outputs(%x: memref<8x32xf32>, %w: memref<32x16xf32>, %out: memref<128xf32>, %read: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8x16xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<8x16xf32> into memref<128xf32>
  linalg.fill ins(%zero : f32) outs(%flat : memref<128xf32>)
  // expected-remark @below {{swapped=1 overwrite=1}}
  linalg.contract indexing_maps = [#zx, #zw, #zy] ins(%x, %w : memref<8x32xf32>, memref<32x16xf32>) outs(%a : memref<8x16xf32>)
  linalg.copy ins(%flat : memref<128xf32>) outs(%out : memref<128xf32>)
  %b = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%zero : f32) outs(%b : memref<8x16xf32>)
  linalg.copy ins(%b : memref<8x16xf32>) outs(%read : memref<8x16xf32>)
  // expected-remark @below {{swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#zx, #zw, #zy] ins(%x, %w : memref<8x32xf32>, memref<32x16xf32>) outs(%b : memref<8x16xf32>)
  %c = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<8x16xf32>)
  // expected-remark @below {{swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#zx, #zw, #zy] ins(%x, %w : memref<8x32xf32>, memref<32x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// FP8: both inputs refilled from FP8 data, K innermost, just before the
// contraction (as amp-store-fp8-gemm-operands leaves them). The record is
// on the data: "TN" (trans_a=1, trans_b=0, lda = ldb = k), E5M2 weight
// gradient as A (swapped) and E4M3 activation as B, the factors after D in
// the same order; the dequantizations and their f32 buffers are gone.
// CHECK-LABEL: func.func @fp8(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf8E4M3FN>, %[[XS:[^:]*]]: memref<f32>, %[[G:[^:]*]]: memref<64x32xf8E5M2>, %[[GS:[^:]*]]: memref<f32>, %[[Y:[^:]*]]: memref<16x64xf32>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.alloc
// CHECK-DAG:     %[[GU:.*]] = memref.cast %[[G]] : memref<64x32xf8E5M2> to memref<*xf8E5M2>
// CHECK-DAG:     %[[XU:.*]] = memref.cast %[[X]] : memref<16x32xf8E4M3FN> to memref<*xf8E4M3FN>
// CHECK-DAG:     %[[YU:.*]] = memref.cast %[[Y]] : memref<16x64xf32> to memref<*xf32>
// CHECK-DAG:     %[[GSU:.*]] = memref.cast %[[GS]] : memref<f32> to memref<*xf32>
// CHECK-DAG:     %[[XSU:.*]] = memref.cast %[[XS]] : memref<f32> to memref<*xf32>
// CHECK:         call @amp_gemm_f8e5m2_f8e4m3_f32(%{{.*}}, %[[GU]], %[[XU]], %[[YU]], %[[GSU]], %[[XSU]])
// CHECK-NOT:     linalg.generic
// CHECK:         return
#q = affine_map<(m, k) -> (m, k)>
#qt = affine_map<(m, k) -> (k, m)>
#qs = affine_map<(m, k) -> ()>
#fa = affine_map<(m, n, k) -> (m, k)>
#fb = affine_map<(m, n, k) -> (n, k)>
#fc = affine_map<(m, n, k) -> (m, n)>
func.func @fp8(%x: memref<16x32xf8E4M3FN>, %xs: memref<f32>, %g: memref<64x32xf8E5M2>, %gs: memref<f32>, %y: memref<16x64xf32>) {
  %a = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#q, #qs, #q], iterator_types = ["parallel", "parallel"]} ins(%x, %xs : memref<16x32xf8E4M3FN>, memref<f32>) outs(%a : memref<16x32xf32>) {
  ^bb0(%in: f8E4M3FN, %s: f32, %o: f32):
    %wide = arith.extf %in : f8E4M3FN to f32
    %dq = arith.mulf %wide, %s : f32
    linalg.yield %dq : f32
  }
  %b = memref.alloc() : memref<64x32xf32>
  linalg.generic {indexing_maps = [#q, #qs, #q], iterator_types = ["parallel", "parallel"]} ins(%g, %gs : memref<64x32xf8E5M2>, memref<f32>) outs(%b : memref<64x32xf32>) {
  ^bb0(%in: f8E5M2, %s: f32, %o: f32):
    %wide = arith.extf %in : f8E5M2 to f32
    %dq = arith.mulf %s, %wide : f32
    linalg.yield %dq : f32
  }
  // expected-remark @below {{GEMM record: m=64 n=16 k=32 batch=1 trans_a=1 trans_b=0 lda=32 ldb=32 ldd=64 stride_a=0 stride_b=0 stride_d=0 type_a=5 type_b=4 type_d=0 swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#fa, #fb, #fc] ins(%a, %b : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  memref.dealloc %a : memref<16x32xf32>
  memref.dealloc %b : memref<64x32xf32>
  return
}

// FP8 data whose K is not innermost cannot be read in cuBLASLt's TN
// layout: the contraction keeps its f32 operands and gets an f32 record,
// the dequantizations stay. Two E5M2 operands have no FP8 GEMM.
// CHECK-LABEL: func.func @fp8_refused(
// CHECK-COUNT-2: linalg.generic
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.generic
// CHECK:         call @amp_gemm_f32_f32_f32(
func.func @fp8_refused(%xt: memref<32x16xf8E4M3FN>, %xs: memref<f32>, %g: memref<64x32xf8E5M2>, %gs: memref<f32>, %y: memref<16x64xf32>, %g2: memref<16x32xf8E5M2>) {
  %a = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#qt, #qs, #q], iterator_types = ["parallel", "parallel"]} ins(%xt, %xs : memref<32x16xf8E4M3FN>, memref<f32>) outs(%a : memref<16x32xf32>) {
  ^bb0(%in: f8E4M3FN, %s: f32, %o: f32):
    %wide = arith.extf %in : f8E4M3FN to f32
    %dq = arith.mulf %wide, %s : f32
    linalg.yield %dq : f32
  }
  %b = memref.alloc() : memref<64x32xf32>
  linalg.generic {indexing_maps = [#q, #qs, #q], iterator_types = ["parallel", "parallel"]} ins(%g, %gs : memref<64x32xf8E5M2>, memref<f32>) outs(%b : memref<64x32xf32>) {
  ^bb0(%in: f8E5M2, %s: f32, %o: f32):
    %wide = arith.extf %in : f8E5M2 to f32
    %dq = arith.mulf %wide, %s : f32
    linalg.yield %dq : f32
  }
  // expected-remark @below {{no FP8 GEMM record: an FP8 GEMM record is not in the TN layout}}
  // expected-remark @below {{GEMM record: m=64 n=16 k=32 batch=1 trans_a=1 trans_b=0 lda=32 ldb=32 ldd=64 stride_a=0 stride_b=0 stride_d=0 type_a=0 type_b=0 type_d=0 swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#fa, #fb, #fc] ins(%a, %b : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  %c = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#q, #qs, #q], iterator_types = ["parallel", "parallel"]} ins(%g2, %gs : memref<16x32xf8E5M2>, memref<f32>) outs(%c : memref<16x32xf32>) {
  ^bb0(%in: f8E5M2, %s: f32, %o: f32):
    %wide = arith.extf %in : f8E5M2 to f32
    %dq = arith.mulf %wide, %s : f32
    linalg.yield %dq : f32
  }
  // expected-remark @below {{no FP8 GEMM record: an FP8 GEMM record multiplies two E5M2 operands}}
  // expected-remark @below {{GEMM record:}}
  linalg.contract indexing_maps = [#fa, #fb, #fc] ins(%c, %b : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  return
}

// A bias added to a zeroed GEMM result right after it (a Linear's forward):
// cuBLASLt's BIAS epilogue. The record (bias=1) writes the addition's
// output, through the same layout (a reshape of D), with the bias on D's
// column-major rows (the output's last dim, m); the addition and D go.
// Left alone: a result read again after the addition, and an output that
// is read between the GEMM and the addition.
// CHECK-LABEL: func.func @bias(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf32>, %[[W:[^:]*]]: memref<64x32xf32>, %[[B:[^:]*]]: memref<64xf32>, %[[OUT:[^:]*]]: memref<2x8x64xf32>
// CHECK-NOT:     linalg.fill
// CHECK-DAG:     %[[OU:.*]] = memref.cast %[[OUT]] : memref<2x8x64xf32> to memref<*xf32>
// CHECK-DAG:     %[[BU:.*]] = memref.cast %[[B]] : memref<64xf32> to memref<*xf32>
// CHECK:         call @amp_gemm_bias_f32_f32_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[OU]], %[[BU]])
// CHECK-NOT:     linalg.generic
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.generic
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.generic
// CHECK:         return
#bx = affine_map<(m, n, k) -> (m, k)>
#bw = affine_map<(m, n, k) -> (n, k)>
#by = affine_map<(m, n, k) -> (m, n)>
#b3 = affine_map<(a, b, c) -> (a, b, c)>
#b1 = affine_map<(a, b, c) -> (c)>
#by2 = affine_map<(a, b) -> (a, b)>
func.func @bias(%x: memref<16x32xf32>, %w: memref<64x32xf32>, %b: memref<64xf32>, %out: memref<2x8x64xf32>, %out2: memref<2x8x64xf32>, %seen: memref<2x8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=1}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d : memref<16x64xf32>)
  %v = memref.expand_shape %d [[0, 1], [2]] output_shape [2, 8, 64] : memref<16x64xf32> into memref<2x8x64xf32>
  linalg.generic {indexing_maps = [#b3, #b1, #b3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v, %b : memref<2x8x64xf32>, memref<64xf32>) outs(%out : memref<2x8x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    linalg.yield %sum : f32
  }
  memref.dealloc %d : memref<16x64xf32>
  %d2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d2 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d2 : memref<16x64xf32>)
  %v2 = memref.expand_shape %d2 [[0, 1], [2]] output_shape [2, 8, 64] : memref<16x64xf32> into memref<2x8x64xf32>
  linalg.generic {indexing_maps = [#b3, #b1, #b3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v2, %b : memref<2x8x64xf32>, memref<64xf32>) outs(%out2 : memref<2x8x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    linalg.yield %sum : f32
  }
  memref.copy %v2, %seen : memref<2x8x64xf32> to memref<2x8x64xf32>
  %d3 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d3 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d3 : memref<16x64xf32>)
  memref.copy %out2, %seen : memref<2x8x64xf32> to memref<2x8x64xf32>
  %v3 = memref.expand_shape %d3 [[0, 1], [2]] output_shape [2, 8, 64] : memref<16x64xf32> into memref<2x8x64xf32>
  linalg.generic {indexing_maps = [#b3, #b1, #b3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v3, %b : memref<2x8x64xf32>, memref<64xf32>) outs(%out2 : memref<2x8x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    linalg.yield %sum : f32
  }
  return
}

// A ReLU after the bias (a Linear layer and its activation), or alone:
// cuBLASLt's RELU_BIAS and RELU epilogues (activation=1, with bias=1 or
// 0). The record writes the generic's output, or D itself when the
// generic works in place; the generic goes. Left alone: max with another
// constant than +0.0, and a body that does more than the ReLU.
// CHECK-LABEL: func.func @relu(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf32>, %[[W:[^:]*]]: memref<64x32xf32>, %[[B:[^:]*]]: memref<64xf32>, %[[OUT:[^:]*]]: memref<16x64xf32>, %[[Y:[^:]*]]: memref<16x64xf32>
// CHECK-DAG:     %[[OU:.*]] = memref.cast %[[OUT]] : memref<16x64xf32> to memref<*xf32>
// CHECK-DAG:     %[[BU:.*]] = memref.cast %[[B]] : memref<64xf32> to memref<*xf32>
// CHECK:         call @amp_gemm_bias_f32_f32_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[OU]], %[[BU]])
// CHECK-NOT:     linalg.generic
// CHECK:         %[[YU:.*]] = memref.cast %[[Y]] : memref<16x64xf32> to memref<*xf32>
// CHECK:         call @amp_gemm_f32_f32_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[YU]])
// CHECK-NOT:     linalg.generic
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         arith.maximumf
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         arith.maximumf
// CHECK:         return
#r2 = affine_map<(a, b) -> (a, b)>
#r1 = affine_map<(a, b) -> (b)>
func.func @relu(%x: memref<16x32xf32>, %w: memref<64x32xf32>, %b: memref<64xf32>, %out: memref<16x64xf32>, %y: memref<16x64xf32>, %out2: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=1 activation=1}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d, %b : memref<16x64xf32>, memref<64xf32>) outs(%out : memref<16x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %bias, %in : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  }
  memref.dealloc %d : memref<16x64xf32>
  // In place, the constant inside the body and first.
  linalg.fill ins(%zero : f32) outs(%y : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=1}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%y : memref<16x64xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %c0 = arith.constant 0.0 : f32
    %relu = arith.maximumf %c0, %in : f32
    linalg.yield %relu : f32
  }
  // max(x, -0.0) is not max(x, +0.0) for x = +0.0.
  %negzero = arith.constant -0.0 : f32
  %d2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d2 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d2 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%d2 : memref<16x64xf32>) outs(%out2 : memref<16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %relu = arith.maximumf %in, %negzero : f32
    linalg.yield %relu : f32
  }
  // The sum used twice.
  %d3 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d3 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d3 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d3, %b : memref<16x64xf32>, memref<64xf32>) outs(%out2 : memref<16x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    %relu = arith.maximumf %sum, %zero : f32
    %both = arith.addf %relu, %sum : f32
    linalg.yield %both : f32
  }
  return
}

// An AMP Linear layer: an f16 GEMM whose f32 result the next kernel adds
// the bias to (rounded to f16 as the layer's f16 Add reads it), rounds,
// and passes through a ReLU, rounding again. The record writes the f16
// output (type_d=1) with cuBLASLt's bias and ReLU epilogue in f32 before
// the one rounding: the same bits, as a rounding keeps order and sign.
// cuBLASLt's bias has D's type, so a new kernel rounds the f32 bias into
// an f16 copy first; an f16 bias is read as it is. Left alone: an f32
// bias added unrounded (cuBLASLt would round it).
// CHECK-LABEL: func.func @rounded_bias(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf16>, %[[W:[^:]*]]: memref<64x32xf16>, %[[B:[^:]*]]: memref<64xf32>, %[[B16:[^:]*]]: memref<64xf16>, %[[OUT:[^:]*]]: memref<16x64xf16>
// CHECK:         %[[COPY:.*]] = memref.alloc() : memref<64xf16>
// CHECK:         linalg.generic {{.*}} ins(%[[B]] : memref<64xf32>) outs(%[[COPY]] : memref<64xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK-DAG:     %[[OU:.*]] = memref.cast %[[OUT]] : memref<16x64xf16> to memref<*xf16>
// CHECK-DAG:     %[[CU:.*]] = memref.cast %[[COPY]] : memref<64xf16> to memref<*xf16>
// CHECK:         call @amp_gemm_bias_f16_f16_f16(%{{.*}}, %{{.*}}, %{{.*}}, %[[OU]], %[[CU]])
// CHECK:         memref.dealloc %[[COPY]]
// CHECK-NOT:     linalg.generic
// CHECK:         %[[B16U:.*]] = memref.cast %[[B16]] : memref<64xf16> to memref<*xf16>
// CHECK:         call @amp_gemm_bias_f16_f16_f16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[B16U]])
// CHECK-NOT:     linalg.generic
// CHECK:         call @amp_gemm_f16_f16_f32(
// CHECK:         linalg.generic
// CHECK:         return
func.func @rounded_bias(%x: memref<16x32xf16>, %w: memref<64x32xf16>, %b: memref<64xf32>, %b16: memref<64xf16>, %out: memref<16x64xf16>) {
  %zero = arith.constant 0.0 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{type_d=1 swapped=1 overwrite=1 bias=1 activation=1}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%d : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d, %b : memref<16x64xf32>, memref<64xf32>) outs(%out : memref<16x64xf16>) {
  ^bb0(%in: f32, %bias: f32, %o: f16):
    %bias16 = arith.truncf %bias : f32 to f16
    %bias32 = arith.extf %bias16 : f16 to f32
    %sum = arith.addf %in, %bias32 : f32
    %sum16 = arith.truncf %sum : f32 to f16
    %sum32 = arith.extf %sum16 : f16 to f32
    %relu = arith.maximumf %sum32, %zero : f32
    %relu16 = arith.truncf %relu : f32 to f16
    linalg.yield %relu16 : f16
  }
  memref.dealloc %d : memref<16x64xf32>
  %d2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d2 : memref<16x64xf32>)
  // expected-remark @below {{type_d=1 swapped=1 overwrite=1 bias=1 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%d2 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d2, %b16 : memref<16x64xf32>, memref<64xf16>) outs(%out : memref<16x64xf16>) {
  ^bb0(%in: f32, %bias: f16, %o: f16):
    %bias32 = arith.extf %bias : f16 to f32
    %sum = arith.addf %bias32, %in : f32
    %sum16 = arith.truncf %sum : f32 to f16
    linalg.yield %sum16 : f16
  }
  %d3 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d3 : memref<16x64xf32>)
  // expected-remark @below {{type_d=0 swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%d3 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d3, %b : memref<16x64xf32>, memref<64xf32>) outs(%out : memref<16x64xf16>) {
  ^bb0(%in: f32, %bias: f32, %o: f16):
    %sum = arith.addf %in, %bias : f32
    %sum16 = arith.truncf %sum : f32 to f16
    linalg.yield %sum16 : f16
  }
  return
}

// The same bias addition first in a kernel that goes on (a Linear layer
// and its GELU or residual addition): the GEMM adds the bias and writes D
// rounded (type_d=1 bias=1) into a new f16 buffer, which the kernel reads
// in place of the rounded sum. It keeps the kernel and adds the bias
// copy's, so only where D has at least rounded-bias-min-elements (2^20 by
// default): a 1024x1024 D, not a 16x64 one. Left alone too: a sum used
// unrounded.
// CHECK-LABEL: func.func @rounded_bias_in_kernel(
// CHECK-SAME:    %[[X:[^:]*]]: memref<1024x32xf16>, %[[W:[^:]*]]: memref<1024x32xf16>, %[[B:[^:]*]]: memref<1024xf32>
// CHECK:         %[[D:.*]] = memref.alloc() : memref<1024x1024xf16>
// CHECK:         %[[COPY:.*]] = memref.alloc() : memref<1024xf16>
// CHECK:         linalg.generic {{.*}} ins(%[[B]] : memref<1024xf32>) outs(%[[COPY]] : memref<1024xf16>)
// CHECK-DAG:     %[[DU:.*]] = memref.cast %[[D]] : memref<1024x1024xf16> to memref<*xf16>
// CHECK-DAG:     %[[CU:.*]] = memref.cast %[[COPY]] : memref<1024xf16> to memref<*xf16>
// CHECK:         call @amp_gemm_bias_f16_f16_f16(%{{.*}}, %{{.*}}, %{{.*}}, %[[DU]], %[[CU]])
// CHECK:         linalg.generic {{.*}} ins(%[[D]], %[[B]] : memref<1024x1024xf16>, memref<1024xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f16, %{{.*}}: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[WIDE:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT:      %[[SQUARE:.*]] = arith.mulf %[[WIDE]], %[[WIDE]] : f32
// CHECK:         call @amp_gemm_f16_f16_f32(
// CHECK:         arith.addf
// CHECK:         call @amp_gemm_f16_f16_f32(
// CHECK:         arith.addf
// CHECK:         return
func.func @rounded_bias_in_kernel(%x: memref<1024x32xf16>, %w: memref<1024x32xf16>, %b: memref<1024xf32>, %out: memref<1024x1024xf16>,
                                  %xs: memref<16x32xf16>, %ws: memref<64x32xf16>, %bs: memref<64xf32>, %outs: memref<16x64xf16>) {
  %zero = arith.constant 0.0 : f32
  %d = memref.alloc() : memref<1024x1024xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<1024x1024xf32>)
  // expected-remark @below {{type_d=1 swapped=1 overwrite=1 bias=1 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<1024x32xf16>, memref<1024x32xf16>) outs(%d : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d, %b : memref<1024x1024xf32>, memref<1024xf32>) outs(%out : memref<1024x1024xf16>) {
  ^bb0(%in: f32, %bias: f32, %o: f16):
    %bias16 = arith.truncf %bias : f32 to f16
    %bias32 = arith.extf %bias16 : f16 to f32
    %sum = arith.addf %in, %bias32 : f32
    %sum16 = arith.truncf %sum : f32 to f16
    %sum32 = arith.extf %sum16 : f16 to f32
    %square = arith.mulf %sum32, %sum32 : f32
    %square16 = arith.truncf %square : f32 to f16
    linalg.yield %square16 : f16
  }
  memref.dealloc %d : memref<1024x1024xf32>
  // The same on a 16x64 D.
  %d2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d2 : memref<16x64xf32>)
  // expected-remark @below {{type_d=0 swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%xs, %ws : memref<16x32xf16>, memref<64x32xf16>) outs(%d2 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d2, %bs : memref<16x64xf32>, memref<64xf32>) outs(%outs : memref<16x64xf16>) {
  ^bb0(%in: f32, %bias: f32, %o: f16):
    %bias16 = arith.truncf %bias : f32 to f16
    %bias32 = arith.extf %bias16 : f16 to f32
    %sum = arith.addf %in, %bias32 : f32
    %sum16 = arith.truncf %sum : f32 to f16
    %sum32 = arith.extf %sum16 : f16 to f32
    %square = arith.mulf %sum32, %sum32 : f32
    %square16 = arith.truncf %square : f32 to f16
    linalg.yield %square16 : f16
  }
  // A sum used unrounded.
  %d3 = memref.alloc() : memref<1024x1024xf32>
  linalg.fill ins(%zero : f32) outs(%d3 : memref<1024x1024xf32>)
  // expected-remark @below {{type_d=0 swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<1024x32xf16>, memref<1024x32xf16>) outs(%d3 : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d3, %b : memref<1024x1024xf32>, memref<1024xf32>) outs(%out : memref<1024x1024xf16>) {
  ^bb0(%in: f32, %bias: f32, %o: f16):
    %bias16 = arith.truncf %bias : f32 to f16
    %bias32 = arith.extf %bias16 : f16 to f32
    %sum = arith.addf %in, %bias32 : f32
    %square = arith.mulf %sum, %sum : f32
    %square16 = arith.truncf %square : f32 to f16
    linalg.yield %square16 : f16
  }
  return
}

// An f16 GEMM whose zeroed f32 result the next kernel only rounds to f16
// (an AMP Linear): the record writes D in f16 (type_d=1, cuBLASLt's output
// type) into a new buffer, and the kernel reads it without the truncation.
// Left alone: a rounding to another type than the inputs', and a result
// read again after the kernel.
// CHECK-LABEL: func.func @output_cast(
// CHECK:         %[[D:.*]] = memref.alloc() : memref<16x64xf16>
// CHECK:         %[[DU:.*]] = memref.cast %[[D]] : memref<16x64xf16> to memref<*xf16>
// CHECK:         call @amp_gemm_f16_f16_f16(%{{.*}}, %{{.*}}, %{{.*}}, %[[DU]])
// CHECK:         linalg.generic {{.*}} ins(%[[D]] : memref<16x64xf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[TWICE:.*]] = arith.addf %[[IN]], %[[IN]] : f16
// CHECK-NEXT:      linalg.yield %[[TWICE]]
// CHECK:         memref.dealloc %[[D]] : memref<16x64xf16>
// CHECK:         call @amp_gemm_f16_f16_f32(
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:         call @amp_gemm_f16_f16_f32(
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @output_cast(%x: memref<16x32xf16>, %w: memref<64x32xf16>, %out: memref<16x64xf16>, %out2: memref<16x64xbf16>, %seen: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{type_a=1 type_b=1 type_d=1 swapped=1 overwrite=1 bias=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%d : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#by2, #by2], iterator_types = ["parallel", "parallel"]} ins(%d : memref<16x64xf32>) outs(%out : memref<16x64xf16>) {
  ^bb0(%in: f32, %o: f16):
    %h = arith.truncf %in : f32 to f16
    %twice = arith.addf %h, %h : f16
    linalg.yield %twice : f16
  }
  memref.dealloc %d : memref<16x64xf32>
  %d2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d2 : memref<16x64xf32>)
  // expected-remark @below {{type_a=1 type_b=1 type_d=0 swapped=1 overwrite=1 bias=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%d2 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#by2, #by2], iterator_types = ["parallel", "parallel"]} ins(%d2 : memref<16x64xf32>) outs(%out2 : memref<16x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %h = arith.truncf %in : f32 to bf16
    linalg.yield %h : bf16
  }
  %d3 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d3 : memref<16x64xf32>)
  // expected-remark @below {{type_a=1 type_b=1 type_d=0 swapped=1 overwrite=1 bias=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%d3 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#by2, #by2], iterator_types = ["parallel", "parallel"]} ins(%d3 : memref<16x64xf32>) outs(%out : memref<16x64xf16>) {
  ^bb0(%in: f32, %o: f16):
    %h = arith.truncf %in : f32 to f16
    linalg.yield %h : f16
  }
  memref.copy %d3, %seen : memref<16x64xf32> to memref<16x64xf32>
  return
}

// A Linear layer's backward: the weight gradient dW[o, i] = sum_b dY[b, o]
// X[b, i] and the bias gradient db[o] = sum_b dY[b, o], a reduction of the
// GEMM's input dY over its k (b). The record computes it (cuBLASLt's
// BGRADB: dY is B of the column-major D = X^T dY, bias=3), whether the
// reduction comes after the GEMM (reading dY in f16, widened) or before
// it; the reduction and its zero fill go. Left alone: dY written between
// the two, and a reduction over the other dimension (not the GEMM's k).
// CHECK-LABEL: func.func @bias_gradient(
// CHECK-SAME:    %[[DY:[^:]*]]: memref<16x64xf16>, %[[X:[^:]*]]: memref<16x32xf16>, %[[DW:[^:]*]]: memref<64x32xf32>, %[[DB:[^:]*]]: memref<64xf32>
// CHECK:         %[[DBU:.*]] = memref.cast %[[DB]] : memref<64xf32> to memref<*xf32>
// CHECK:         call @amp_gemm_bgrad_f16_f16_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[DBU]])
// CHECK-NOT:     linalg.generic
// CHECK:         call @amp_gemm_bgrad_f32_f32_f32(
// CHECK-NOT:     linalg.generic
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.generic
// CHECK:         return
#gdy = affine_map<(o, i, b) -> (b, o)>
#gx = affine_map<(o, i, b) -> (b, i)>
#gw = affine_map<(o, i, b) -> (o, i)>
#g2 = affine_map<(b, o) -> (b, o)>
#go = affine_map<(b, o) -> (o)>
#gb = affine_map<(b, o) -> (b)>
func.func @bias_gradient(%dy: memref<16x64xf16>, %x: memref<16x32xf16>, %dw: memref<64x32xf32>, %db: memref<64xf32>,
                         %dy32: memref<16x64xf32>, %x32: memref<16x32xf32>, %db2: memref<64xf32>, %db3: memref<64xf32>, %rowsums: memref<16xf32>,
                         %dy3: memref<16x64xf32>, %dy4: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<64x32xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=3}}
  linalg.contract indexing_maps = [#gdy, #gx, #gw] ins(%dy, %x : memref<16x64xf16>, memref<16x32xf16>) outs(%dw : memref<64x32xf32>)
  linalg.fill ins(%zero : f32) outs(%db : memref<64xf32>)
  linalg.generic {indexing_maps = [#g2, #go], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<16x64xf16>) outs(%db : memref<64xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %wide = arith.extf %in : f16 to f32
    %sum = arith.addf %acc, %wide : f32
    linalg.yield %sum : f32
  }
  // Before the GEMM, in f32.
  linalg.fill ins(%zero : f32) outs(%db2 : memref<64xf32>)
  linalg.generic {indexing_maps = [#g2, #go], iterator_types = ["reduction", "parallel"]} ins(%dy32 : memref<16x64xf32>) outs(%db2 : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %in, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<64x32xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=3}}
  linalg.contract indexing_maps = [#gdy, #gx, #gw] ins(%dy32, %x32 : memref<16x64xf32>, memref<16x32xf32>) outs(%dw : memref<64x32xf32>)
  // dY written in between.
  linalg.fill ins(%zero : f32) outs(%dw : memref<64x32xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0}}
  linalg.contract indexing_maps = [#gdy, #gx, #gw] ins(%dy3, %x32 : memref<16x64xf32>, memref<16x32xf32>) outs(%dw : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#g2, #g2], iterator_types = ["parallel", "parallel"]} ins(%dy3 : memref<16x64xf32>) outs(%dy3 : memref<16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %twice = arith.addf %in, %in : f32
    linalg.yield %twice : f32
  }
  linalg.fill ins(%zero : f32) outs(%db3 : memref<64xf32>)
  linalg.generic {indexing_maps = [#g2, #go], iterator_types = ["reduction", "parallel"]} ins(%dy3 : memref<16x64xf32>) outs(%db3 : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %acc, %in : f32
    linalg.yield %sum : f32
  }
  // Sums over o, which the GEMM does not reduce.
  linalg.fill ins(%zero : f32) outs(%dw : memref<64x32xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0}}
  linalg.contract indexing_maps = [#gdy, #gx, #gw] ins(%dy4, %x32 : memref<16x64xf32>, memref<16x32xf32>) outs(%dw : memref<64x32xf32>)
  linalg.fill ins(%zero : f32) outs(%rowsums : memref<16xf32>)
  linalg.generic {indexing_maps = [#g2, #gb], iterator_types = ["parallel", "reduction"]} ins(%dy4 : memref<16x64xf32>) outs(%rowsums : memref<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %acc, %in : f32
    linalg.yield %sum : f32
  }
  return
}

// Attention's head transposes: V copied from [s, bh, d] to [bh, s, d] for
// the batched GEMM P V, whose result is copied back to [s, bh, d]. The GEMM
// reads V and writes `out` in place through permuted strides (batch stride
// 8, leading dimension 64), and both copies and their buffers go.
// CHECK-LABEL: func.func @transposes(
// CHECK-SAME:    %[[P:[^:]*]]: memref<8x16x16xf32>, %[[V:[^:]*]]: memref<16x8x8xf32>, %[[OUT:[^:]*]]: memref<16x8x8xf32>
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     memref.alloc
// CHECK:         %[[VU:.*]] = memref.cast %[[V]] : memref<16x8x8xf32> to memref<*xf32>
// CHECK:         %[[PU:.*]] = memref.cast %[[P]] : memref<8x16x16xf32> to memref<*xf32>
// CHECK:         %[[OU:.*]] = memref.cast %[[OUT]] : memref<16x8x8xf32> to memref<*xf32>
// CHECK:         call @amp_gemm_f32_f32_f32(%{{.*}}, %[[VU]], %[[PU]], %[[OU]])
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     memref.dealloc
// CHECK:         return
#tp = affine_map<(b, m, n, k) -> (b, m, k)>
#tv = affine_map<(b, m, n, k) -> (b, k, n)>
#to = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @transposes(%p: memref<8x16x16xf32>, %v: memref<16x8x8xf32>, %out: memref<16x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %vt = memref.alloc() : memref<8x16x8xf32>
  linalg.transpose ins(%v : memref<16x8x8xf32>) outs(%vt : memref<8x16x8xf32>) permutation = [1, 0, 2]
  %o = memref.alloc() : memref<8x16x8xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<8x16x8xf32>)
  // expected-remark @below {{GEMM record: m=8 n=16 k=16 batch=8 trans_a=0 trans_b=0 lda=64 ldb=16 ldd=64 stride_a=8 stride_b=256 stride_d=8 type_a=0 type_b=0 type_d=0 swapped=1 overwrite=1}}
  // expected-remark @below {{reads 1 transposed input(s) from their sources}}
  // expected-remark @below {{writes its result where 1 copies of it put it}}
  linalg.contract indexing_maps = [#tp, #tv, #to] ins(%p, %vt : memref<8x16x16xf32>, memref<8x16x8xf32>) outs(%o : memref<8x16x8xf32>)
  linalg.transpose ins(%o : memref<8x16x8xf32>) outs(%out : memref<16x8x8xf32>) permutation = [1, 0, 2]
  memref.dealloc %vt : memref<8x16x8xf32>
  memref.dealloc %o : memref<8x16x8xf32>
  return
}

// In AMP: P V in f16 rounded by the next kernel (an output cast: the GEMM
// writes f16, the kernel becomes a copy), then transposed. The GEMM writes
// the transpose's target in f16, and the copy, the transpose and both
// intermediate buffers go.
// CHECK-LABEL: func.func @rounded_transpose(
// CHECK-SAME:    %[[P:[^:]*]]: memref<8x16x16xf16>, %[[V:[^:]*]]: memref<8x16x8xf16>, %[[OUT:[^:]*]]: memref<16x8x8xf16>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.generic
// CHECK:         %[[OU:.*]] = memref.cast %[[OUT]] : memref<16x8x8xf16> to memref<*xf16>
// CHECK:         call @amp_gemm_f16_f16_f16(%{{.*}}, %{{.*}}, %{{.*}}, %[[OU]])
// CHECK-NOT:     linalg
// CHECK:         return
#rm = affine_map<(b, m, n) -> (b, m, n)>
func.func @rounded_transpose(%p: memref<8x16x16xf16>, %v: memref<8x16x8xf16>, %out: memref<16x8x8xf16>) {
  %zero = arith.constant 0.0 : f32
  %o = memref.alloc() : memref<8x16x8xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<8x16x8xf32>)
  // expected-remark @below {{GEMM record: m=8 n=16 k=16 batch=8 trans_a=0 trans_b=0 lda=8 ldb=16 ldd=64 stride_a=128 stride_b=256 stride_d=8 type_a=1 type_b=1 type_d=1 swapped=1 overwrite=1}}
  // expected-remark @below {{writes its result where 2 copies of it put it}}
  linalg.contract indexing_maps = [#tp, #tv, #to] ins(%p, %v : memref<8x16x16xf16>, memref<8x16x8xf16>) outs(%o : memref<8x16x8xf32>)
  %h = memref.alloc() : memref<8x16x8xf16>
  linalg.generic {indexing_maps = [#rm, #rm], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o : memref<8x16x8xf32>) outs(%h : memref<8x16x8xf16>) {
  ^bb0(%in: f32, %unused: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  }
  linalg.transpose ins(%h : memref<8x16x8xf16>) outs(%out : memref<16x8x8xf16>) permutation = [1, 0, 2]
  memref.dealloc %o : memref<8x16x8xf32>
  memref.dealloc %h : memref<8x16x8xf16>
  return
}

// Transposes that stay: one whose copy something else reads too; one
// whose source changes before the GEMM; one of a result that would split
// the GEMM's 16 rows into 2 batches of 8 (its two row loops do not collapse
// in the target); a result read before its transpose; a result the GEMM
// accumulates into (no zeroing: the transpose's target does not hold it).
// CHECK-LABEL: func.func @transposes_kept(
// CHECK:         linalg.transpose
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.copy
// CHECK:         linalg.transpose
// CHECK:         linalg.fill
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.transpose
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.copy
// CHECK:         linalg.transpose
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.transpose
#kx = affine_map<(m1, m2, n, k) -> (m1, m2, k)>
#kw = affine_map<(m1, m2, n, k) -> (k, n)>
#ky = affine_map<(m1, m2, n, k) -> (m1, m2, n)>
#k2x = affine_map<(m, n, k) -> (m, k)>
#k2w = affine_map<(m, n, k) -> (k, n)>
#k2y = affine_map<(m, n, k) -> (m, n)>
func.func @transposes_kept(%x: memref<8x2x32xf32>, %w: memref<32x16xf32>, %seen: memref<2x8x32xf32>, %y: memref<2x8x16xf32>, %yt: memref<8x2x16xf32>, %seen2: memref<2x8x16xf32>, %y2: memref<16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<2x8x32xf32>
  linalg.transpose ins(%x : memref<8x2x32xf32>) outs(%xt : memref<2x8x32xf32>) permutation = [1, 0, 2]
  // expected-remark @below {{swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#kx, #kw, #ky] ins(%xt, %w : memref<2x8x32xf32>, memref<32x16xf32>) outs(%y : memref<2x8x16xf32>)
  linalg.copy ins(%xt : memref<2x8x32xf32>) outs(%seen : memref<2x8x32xf32>)
  // W transposed, then W changed.
  %wt = memref.alloc() : memref<16x32xf32>
  linalg.transpose ins(%w : memref<32x16xf32>) outs(%wt : memref<16x32xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%w : memref<32x16xf32>)
  // expected-remark @below {{GEMM record: m=16 n=16 k=32 batch=1 trans_a=0 trans_b=0 lda=16 ldb=32 ldd=16}}
  linalg.contract indexing_maps = [#k2x, #k2w, #k2y] ins(%wt, %w : memref<16x32xf32>, memref<32x16xf32>) outs(%y2 : memref<16x16xf32>)
  // The rows would split in the target.
  %o = memref.alloc() : memref<2x8x16xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<2x8x16xf32>)
  // expected-remark @below {{GEMM record: m=16 n=16 k=32 batch=1 }}
  linalg.contract indexing_maps = [#kx, #kw, #ky] ins(%seen, %w : memref<2x8x32xf32>, memref<32x16xf32>) outs(%o : memref<2x8x16xf32>)
  linalg.transpose ins(%o : memref<2x8x16xf32>) outs(%yt : memref<8x2x16xf32>) permutation = [1, 0, 2]
  // Read before its transpose.
  %o2 = memref.alloc() : memref<2x8x16xf32>
  linalg.fill ins(%zero : f32) outs(%o2 : memref<2x8x16xf32>)
  // expected-remark @below {{swapped=1 overwrite=1}}
  linalg.contract indexing_maps = [#kx, #kw, #ky] ins(%seen, %w : memref<2x8x32xf32>, memref<32x16xf32>) outs(%o2 : memref<2x8x16xf32>)
  linalg.copy ins(%o2 : memref<2x8x16xf32>) outs(%seen2 : memref<2x8x16xf32>)
  linalg.transpose ins(%o2 : memref<2x8x16xf32>) outs(%yt : memref<8x2x16xf32>) permutation = [1, 0, 2]
  // Accumulated into.
  // expected-remark @below {{swapped=1 overwrite=0}}
  linalg.contract indexing_maps = [#kx, #kw, #ky] ins(%seen, %w : memref<2x8x32xf32>, memref<32x16xf32>) outs(%seen2 : memref<2x8x16xf32>)
  linalg.transpose ins(%seen2 : memref<2x8x16xf32>) outs(%yt : memref<8x2x16xf32>) permutation = [1, 0, 2]
  return
}

// GELU's tanh approximation after a Linear layer, however spelled
// (computesGELU evaluates the body): cuBLASLt's GELU epilogues. After a
// bias epilogue, with GELU's input read later (the backward's), the GEMM
// writes both: GELU_AUX_BIAS (activation=3), the input as the aux matrix.
// GELU of D plus a bias in one kernel (x sigmoid(2 inner), a bias
// widened): GELU_BIAS (activation=2). Without a bias, D read by nothing
// else (x^3 as powf): GELU (activation=2). After the GEMM of GELU's
// output gradient, dY times GELU's derivative at GELU's input (PyTorch's
// decomposition): DGELU (activation=4), the input the aux matrix it
// reads; the GEMM runs at that kernel, since an op in between reads the
// kernel's output.
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf32>, %[[W:[^:]*]]: memref<64x32xf32>, %[[B:[^:]*]]: memref<64xf32>, %[[OUT:[^:]*]]: memref<16x64xf32>, %[[KEEP:[^:]*]]: memref<16x64xf32>, %[[OUT2:[^:]*]]: memref<16x64xf32>, %[[OUT3:[^:]*]]: memref<16x64xf32>, %[[SEEN:[^:]*]]: memref<16x64xf32>
// CHECK:         %[[PRE:.*]] = memref.alloc() : memref<16x64xf32>
// CHECK-DAG:     %[[OU:.*]] = memref.cast %[[OUT]] : memref<16x64xf32> to memref<*xf32>
// CHECK-DAG:     %[[BU:.*]] = memref.cast %[[B]] : memref<64xf32> to memref<*xf32>
// CHECK-DAG:     %[[PU:.*]] = memref.cast %[[PRE]] : memref<16x64xf32> to memref<*xf32>
// CHECK:         call @amp_gemm_bias_aux_f32_f32_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[OU]], %[[BU]], %[[PU]])
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.copy ins(%[[PRE]] : memref<16x64xf32>) outs(%[[KEEP]] : memref<16x64xf32>)
// CHECK:         call @amp_gemm_bias_f32_f32_f32(
// CHECK-NOT:     linalg.generic
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.copy ins(%[[OUT3]] : memref<16x64xf32>) outs(%[[SEEN]] : memref<16x64xf32>)
// CHECK:         %[[O3U:.*]] = memref.cast %[[OUT3]] : memref<16x64xf32> to memref<*xf32>
// CHECK:         %[[P2U:.*]] = memref.cast %[[PRE]] : memref<16x64xf32> to memref<*xf32>
// CHECK:         call @amp_gemm_aux_f32_f32_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[O3U]], %[[P2U]])
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @gelu(%x: memref<16x32xf32>, %w: memref<64x32xf32>, %b: memref<64xf32>, %out: memref<16x64xf32>, %keep: memref<16x64xf32>, %out2: memref<16x64xf32>, %out3: memref<16x64xf32>, %seen: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %three = arith.constant 3.0 : f32
  %coefficient = arith.constant 0.044715 : f32
  %root = arith.constant 0.797884583 : f32
  %twice = arith.constant 1.59576917 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=1 activation=3}}
  // expected-remark @below {{writes GELU's input to the aux matrix}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d : memref<16x64xf32>)
  %pre = memref.alloc() : memref<16x64xf32>
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d, %b : memref<16x64xf32>, memref<64xf32>) outs(%pre : memref<16x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    linalg.yield %sum : f32
  }
  // x (1 + tanh(root (x + coefficient x^3))) / 2, as FastGelu lowers.
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%pre : memref<16x64xf32>) outs(%out : memref<16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %square = arith.mulf %in, %in : f32
    %cube = arith.mulf %square, %in : f32
    %scaled = arith.mulf %cube, %coefficient : f32
    %inner = arith.addf %in, %scaled : f32
    %u = arith.mulf %inner, %root : f32
    %t = math.tanh %u : f32
    %t1 = arith.addf %t, %one : f32
    %xt = arith.mulf %in, %t1 : f32
    %gelu = arith.mulf %xt, %half : f32
    linalg.yield %gelu : f32
  }
  linalg.copy ins(%pre : memref<16x64xf32>) outs(%keep : memref<16x64xf32>)
  // One kernel: x sigmoid(2 root (x + coefficient x^3)) of D + bias.
  %d2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d2 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=1 activation=2}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d2 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d2, %b : memref<16x64xf32>, memref<64xf32>) outs(%out2 : memref<16x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %v = arith.addf %bias, %in : f32
    %square = arith.mulf %v, %v : f32
    %cube = arith.mulf %v, %square : f32
    %scaled = arith.mulf %coefficient, %cube : f32
    %inner = arith.addf %scaled, %v : f32
    %z = arith.mulf %twice, %inner : f32
    %negated = arith.negf %z : f32
    %e = math.exp %negated : f32
    %denominator = arith.addf %one, %e : f32
    %gelu = arith.divf %v, %denominator : f32
    linalg.yield %gelu : f32
  }
  memref.dealloc %d2 : memref<16x64xf32>
  // No bias; x^3 as powf.
  %d3 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d3 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=2}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d3 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%d3 : memref<16x64xf32>) outs(%out2 : memref<16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %cube = math.powf %in, %three : f32
    %scaled = arith.mulf %cube, %coefficient : f32
    %inner = arith.addf %in, %scaled : f32
    %u = arith.mulf %inner, %root : f32
    %t = math.tanh %u : f32
    %t1 = arith.addf %t, %one : f32
    %halfx = arith.mulf %in, %half : f32
    %gelu = arith.mulf %halfx, %t1 : f32
    linalg.yield %gelu : f32
  }
  // GELU's backward: dY (the GEMM) times GELU's derivative at %pre.
  %dy = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%dy : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=4}}
  // expected-remark @below {{reads GELU's input from the aux matrix}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%dy : memref<16x64xf32>)
  linalg.copy ins(%out3 : memref<16x64xf32>) outs(%seen : memref<16x64xf32>)
  %slope = arith.constant 0.134145 : f32
  linalg.generic {indexing_maps = [#r2, #r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%dy, %pre : memref<16x64xf32>, memref<16x64xf32>) outs(%out3 : memref<16x64xf32>) {
  ^bb0(%g: f32, %in: f32, %o: f32):
    %square = arith.mulf %in, %in : f32
    %cube = arith.mulf %square, %in : f32
    %scaled = arith.mulf %cube, %coefficient : f32
    %inner = arith.addf %in, %scaled : f32
    %u = arith.mulf %inner, %root : f32
    %t = math.tanh %u : f32
    %s = arith.mulf %square, %slope : f32
    %s1 = arith.addf %s, %one : f32
    %du = arith.mulf %s1, %root : f32
    %t2 = arith.mulf %t, %t : f32
    %sech = arith.subf %one, %t2 : f32
    %halfx = arith.mulf %in, %half : f32
    %a = arith.mulf %halfx, %sech : f32
    %a1 = arith.mulf %a, %du : f32
    %t1 = arith.addf %t, %one : f32
    %b1 = arith.mulf %t1, %half : f32
    %derivative = arith.addf %b1, %a1 : f32
    %grad = arith.mulf %g, %derivative : f32
    linalg.yield %grad : f32
  }
  memref.dealloc %dy : memref<16x64xf32>
  return
}

// Left as kernels: exact GELU (erf, which cuBLASLt has not), a wrong
// coefficient (0.04), GELU whose input the backward reads with D's
// leading dimension 60 (cuBLASLt's aux matrix needs a multiple of 8), and
// GELU's derivative at an aux matrix written between the GEMM and it.
// CHECK-LABEL: func.func @gelu_refused(
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         math.erf
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         math.tanh
// CHECK:         call @amp_gemm_bias_f32_f32_f32(
// CHECK:         math.tanh
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         linalg.fill
// CHECK:         math.tanh
// CHECK:         return
func.func @gelu_refused(%x: memref<16x32xf32>, %w: memref<64x32xf32>, %w60: memref<60x32xf32>, %b60: memref<60xf32>, %out: memref<16x64xf32>, %out60: memref<16x60xf32>, %keep60: memref<16x60xf32>, %pre: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %coefficient = arith.constant 0.044715 : f32
  %wrong = arith.constant 0.04 : f32
  %root = arith.constant 0.797884583 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%d : memref<16x64xf32>) outs(%out : memref<16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %scaled = arith.mulf %in, %rsqrt2 : f32
    %e = math.erf %scaled : f32
    %e1 = arith.addf %e, %one : f32
    %xe = arith.mulf %in, %e1 : f32
    %gelu = arith.mulf %xe, %half : f32
    linalg.yield %gelu : f32
  }
  memref.dealloc %d : memref<16x64xf32>
  %d2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d2 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d2 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%d2 : memref<16x64xf32>) outs(%out : memref<16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %square = arith.mulf %in, %in : f32
    %cube = arith.mulf %square, %in : f32
    %scaled = arith.mulf %cube, %wrong : f32
    %inner = arith.addf %in, %scaled : f32
    %u = arith.mulf %inner, %root : f32
    %t = math.tanh %u : f32
    %t1 = arith.addf %t, %one : f32
    %xt = arith.mulf %in, %t1 : f32
    %gelu = arith.mulf %xt, %half : f32
    linalg.yield %gelu : f32
  }
  memref.dealloc %d2 : memref<16x64xf32>
  %d3 = memref.alloc() : memref<16x60xf32>
  linalg.fill ins(%zero : f32) outs(%d3 : memref<16x60xf32>)
  // expected-remark @below {{ldd=60 stride_a=0 stride_b=0 stride_d=0 type_a=0 type_b=0 type_d=0 swapped=1 overwrite=1 bias=1 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w60 : memref<16x32xf32>, memref<60x32xf32>) outs(%d3 : memref<16x60xf32>)
  %pre60 = memref.alloc() : memref<16x60xf32>
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d3, %b60 : memref<16x60xf32>, memref<60xf32>) outs(%pre60 : memref<16x60xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%pre60 : memref<16x60xf32>) outs(%out60 : memref<16x60xf32>) {
  ^bb0(%in: f32, %o: f32):
    %square = arith.mulf %in, %in : f32
    %cube = arith.mulf %square, %in : f32
    %scaled = arith.mulf %cube, %coefficient : f32
    %inner = arith.addf %in, %scaled : f32
    %u = arith.mulf %inner, %root : f32
    %t = math.tanh %u : f32
    %t1 = arith.addf %t, %one : f32
    %xt = arith.mulf %in, %t1 : f32
    %gelu = arith.mulf %xt, %half : f32
    linalg.yield %gelu : f32
  }
  linalg.copy ins(%pre60 : memref<16x60xf32>) outs(%keep60 : memref<16x60xf32>)
  %dy = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%dy : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%dy : memref<16x64xf32>)
  linalg.fill ins(%one : f32) outs(%pre : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%dy, %pre : memref<16x64xf32>, memref<16x64xf32>) outs(%out : memref<16x64xf32>) {
  ^bb0(%g: f32, %in: f32, %o: f32):
    %square = arith.mulf %in, %in : f32
    %cube = arith.mulf %square, %in : f32
    %scaled = arith.mulf %cube, %coefficient : f32
    %inner = arith.addf %in, %scaled : f32
    %u = arith.mulf %inner, %root : f32
    %t = math.tanh %u : f32
    %slope = arith.constant 0.134145 : f32
    %s = arith.mulf %square, %slope : f32
    %s1 = arith.addf %s, %one : f32
    %du = arith.mulf %s1, %root : f32
    %t2 = arith.mulf %t, %t : f32
    %sech = arith.subf %one, %t2 : f32
    %halfx = arith.mulf %in, %half : f32
    %a = arith.mulf %halfx, %sech : f32
    %a1 = arith.mulf %a, %du : f32
    %t1 = arith.addf %t, %one : f32
    %b1 = arith.mulf %t1, %half : f32
    %derivative = arith.addf %b1, %a1 : f32
    %grad = arith.mulf %g, %derivative : f32
    linalg.yield %grad : f32
  }
  memref.dealloc %dy : memref<16x64xf32>
  return
}

// In AMP: the bias epilogue writes f16 (the bias rounded first: a rounded
// copy), and GELU of it in f16 with constants rounded to f16 (within 16
// of f16's unit roundoffs of GELU) is GELU_AUX_BIAS writing f16 GELU and
// its f16 input.
// CHECK-LABEL: func.func @gelu_f16(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf16>, %[[W:[^:]*]]: memref<64x32xf16>, %[[B:[^:]*]]: memref<64xf32>, %[[OUT:[^:]*]]: memref<16x64xf16>
// CHECK:         %[[PRE:.*]] = memref.alloc() : memref<16x64xf16>
// CHECK:         %[[ROUNDED:.*]] = memref.alloc() : memref<64xf16>
// CHECK:         arith.truncf
// CHECK-DAG:     %[[OU:.*]] = memref.cast %[[OUT]] : memref<16x64xf16> to memref<*xf16>
// CHECK-DAG:     %[[BU:.*]] = memref.cast %[[ROUNDED]] : memref<64xf16> to memref<*xf16>
// CHECK-DAG:     %[[PU:.*]] = memref.cast %[[PRE]] : memref<16x64xf16> to memref<*xf16>
// CHECK:         call @amp_gemm_bias_aux_f16_f16_f16(%{{.*}}, %{{.*}}, %{{.*}}, %[[OU]], %[[BU]], %[[PU]])
// CHECK-NOT:     math.tanh
// CHECK:         return
func.func @gelu_f16(%x: memref<16x32xf16>, %w: memref<64x32xf16>, %b: memref<64xf32>, %out: memref<16x64xf16>, %later: memref<16x64xf16>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %root = arith.constant 0.797851563 : f32
  %coefficient = arith.constant 0.044708252 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{type_d=1 swapped=1 overwrite=1 bias=1 activation=3}}
  // expected-remark @below {{writes GELU's input to the aux matrix}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%d : memref<16x64xf32>)
  %pre = memref.alloc() : memref<16x64xf16>
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d, %b : memref<16x64xf32>, memref<64xf32>) outs(%pre : memref<16x64xf16>) {
  ^bb0(%in: f32, %bias: f32, %o: f16):
    %0 = arith.truncf %bias : f32 to f16
    %1 = arith.extf %0 : f16 to f32
    %2 = arith.addf %in, %1 : f32
    %3 = arith.truncf %2 : f32 to f16
    linalg.yield %3 : f16
  }
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%pre : memref<16x64xf16>) outs(%out : memref<16x64xf16>) {
  ^bb0(%in: f16, %o: f16):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.mulf %0, %0 : f32
    %2 = arith.truncf %1 : f32 to f16
    %3 = arith.extf %2 : f16 to f32
    %4 = arith.mulf %0, %3 : f32
    %5 = arith.mulf %4, %coefficient : f32
    %6 = arith.addf %0, %5 : f32
    %7 = arith.mulf %6, %root : f32
    %8 = math.tanh %7 : f32
    %9 = arith.addf %8, %one : f32
    %10 = arith.mulf %0, %9 : f32
    %11 = arith.mulf %10, %half : f32
    %12 = arith.truncf %11 : f32 to f16
    linalg.yield %12 : f16
  }
  linalg.copy ins(%pre : memref<16x64xf16>) outs(%later : memref<16x64xf16>)
  return
}

// ReLU's backward, `select(y > 0, dY, 0)` (or `y <= 0`'s form) right
// after the GEMM of dY, where y is a RELU_BIAS GEMM's output that nothing
// wrote since: that forward GEMM also writes the bit mask of y > 0
// (RELU_AUX_BIAS, activation=5; a new i8 buffer of 256 bytes: 64 rows
// padded to 128 bits, times 16 columns) and the backward GEMM applies it
// (DRELU, activation=6), at the kernel: the copy in between reads the
// kernel's output buffer. The mask goes after it.
// CHECK-LABEL: func.func @relu_gradient(
// CHECK-SAME:    %[[X:[^:]*]]: memref<16x32xf32>, %[[W:[^:]*]]: memref<64x32xf32>, %[[B:[^:]*]]: memref<64xf32>, %[[Y:[^:]*]]: memref<16x64xf32>, %[[DX:[^:]*]]: memref<16x64xf32>
// CHECK:         %[[MASK:.*]] = memref.alloc() : memref<256xi8>
// CHECK:         %[[MU:.*]] = memref.cast %[[MASK]] : memref<256xi8> to memref<*xi8>
// CHECK:         call @amp_gemm_bias_mask_f32_f32_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MU]])
// CHECK:         linalg.copy ins(%[[DX]] : memref<16x64xf32>)
// CHECK:         %[[M2U:.*]] = memref.cast %[[MASK]] : memref<256xi8> to memref<*xi8>
// CHECK:         call @amp_gemm_mask_f32_f32_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[M2U]])
// CHECK-NEXT:    memref.dealloc %[[MASK]] : memref<256xi8>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @relu_gradient(%x: memref<16x32xf32>, %w: memref<64x32xf32>, %b: memref<64xf32>, %y: memref<16x64xf32>, %dx: memref<16x64xf32>, %seen: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=1 activation=1}}
  // expected-remark @below {{writes its ReLU's mask for a backward GEMM (activation=5)}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d, %b : memref<16x64xf32>, memref<64xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  }
  memref.dealloc %d : memref<16x64xf32>
  %dy = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%dy : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=6}}
  // expected-remark @below {{reads the ReLU mask that its forward's GEMM writes}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%dy : memref<16x64xf32>)
  linalg.copy ins(%dx : memref<16x64xf32>) outs(%seen : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%y, %dy : memref<16x64xf32>, memref<16x64xf32>) outs(%dx : memref<16x64xf32>) {
  ^bb0(%out: f32, %g: f32, %o: f32):
    %positive = arith.cmpf ogt, %out, %zero : f32
    %grad = arith.select %positive, %g, %zero : f32
    linalg.yield %grad : f32
  }
  memref.dealloc %dy : memref<16x64xf32>
  return
}

// Left as kernels: ReLU's backward at a y written since its forward GEMM
// (which then keeps RELU_BIAS, no mask); at a y2 that nothing wrote since
// its forward, with a threshold other than 0, and (in `y <= 0`'s form)
// written into dY, the backward GEMM's own input (cuBLASLt cannot write
// where it reads).
// CHECK-LABEL: func.func @relu_gradient_refused(
// CHECK-NOT:     xi8>
// CHECK:         call @amp_gemm_bias_f32_f32_f32(
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         arith.select
// CHECK:         call @amp_gemm_bias_f32_f32_f32(
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         arith.select
// CHECK:         call @amp_gemm_f32_f32_f32(
// CHECK:         arith.select
// CHECK:         return
func.func @relu_gradient_refused(%x: memref<16x32xf32>, %w: memref<64x32xf32>, %b: memref<64xf32>, %y: memref<16x64xf32>, %y2: memref<16x64xf32>, %dx: memref<16x64xf32>, %x64: memref<16x64xf32>, %w64: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=1 activation=1}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d, %b : memref<16x64xf32>, memref<64xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  }
  memref.dealloc %d : memref<16x64xf32>
  linalg.copy ins(%y2 : memref<16x64xf32>) outs(%y : memref<16x64xf32>)
  %dy = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%dy : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%dy : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%y, %dy : memref<16x64xf32>, memref<16x64xf32>) outs(%dx : memref<16x64xf32>) {
  ^bb0(%out: f32, %g: f32, %o: f32):
    %positive = arith.cmpf ogt, %out, %zero : f32
    %grad = arith.select %positive, %g, %zero : f32
    linalg.yield %grad : f32
  }
  memref.dealloc %dy : memref<16x64xf32>
  %d2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d2 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=1 activation=1}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%d2 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d2, %b : memref<16x64xf32>, memref<64xf32>) outs(%y2 : memref<16x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %sum = arith.addf %in, %bias : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  }
  memref.dealloc %d2 : memref<16x64xf32>
  %dy2 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%dy2 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf32>, memref<64x32xf32>) outs(%dy2 : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%y2, %dy2 : memref<16x64xf32>, memref<16x64xf32>) outs(%dx : memref<16x64xf32>) {
  ^bb0(%out: f32, %g: f32, %o: f32):
    %positive = arith.cmpf ogt, %out, %half : f32
    %grad = arith.select %positive, %g, %zero : f32
    linalg.yield %grad : f32
  }
  memref.dealloc %dy2 : memref<16x64xf32>
  %dy3 = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%dy3 : memref<16x64xf32>)
  // expected-remark @below {{swapped=1 overwrite=1 bias=0 activation=0}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x64, %w64 : memref<16x64xf32>, memref<64x64xf32>) outs(%dy3 : memref<16x64xf32>)
  linalg.copy ins(%x64 : memref<16x64xf32>) outs(%dx : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%y2, %dy3 : memref<16x64xf32>, memref<16x64xf32>) outs(%x64 : memref<16x64xf32>) {
  ^bb0(%out: f32, %g: f32, %o: f32):
    %nonpositive = arith.cmpf ole, %out, %zero : f32
    %grad = arith.select %nonpositive, %zero, %g : f32
    linalg.yield %grad : f32
  }
  memref.dealloc %dy3 : memref<16x64xf32>
  return
}

// In AMP: y and the gradient are f16, the backward rounds dY to f16 and
// back before selecting (redundant before its final rounding): the f16
// forms of RELU_AUX_BIAS and DRELU.
// CHECK-LABEL: func.func @relu_gradient_f16(
// CHECK:         %[[MASK:.*]] = memref.alloc() : memref<256xi8>
// CHECK:         call @amp_gemm_bias_mask_f16_f16_f16(
// CHECK:         call @amp_gemm_mask_f16_f16_f16(
// CHECK-NEXT:    memref.dealloc %[[MASK]] : memref<256xi8>
// CHECK-NOT:     arith.select
// CHECK:         return
func.func @relu_gradient_f16(%x: memref<16x32xf16>, %w: memref<64x32xf16>, %b: memref<64xf16>, %y: memref<16x64xf16>, %dx: memref<16x64xf16>) {
  %zero = arith.constant 0.0 : f32
  %d = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x64xf32>)
  // expected-remark @below {{type_d=1 swapped=1 overwrite=1 bias=1 activation=1}}
  // expected-remark @below {{writes its ReLU's mask for a backward GEMM (activation=5)}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%d : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r1, #r2], iterator_types = ["parallel", "parallel"]} ins(%d, %b : memref<16x64xf32>, memref<64xf16>) outs(%y : memref<16x64xf16>) {
  ^bb0(%in: f32, %bias: f16, %o: f16):
    %wide = arith.extf %bias : f16 to f32
    %sum = arith.addf %in, %wide : f32
    %relu = arith.maximumf %sum, %zero : f32
    %rounded = arith.truncf %relu : f32 to f16
    linalg.yield %rounded : f16
  }
  memref.dealloc %d : memref<16x64xf32>
  %dy = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%dy : memref<16x64xf32>)
  // expected-remark @below {{type_d=1 swapped=1 overwrite=1 bias=0 activation=6}}
  // expected-remark @below {{reads the ReLU mask that its forward's GEMM writes}}
  linalg.contract indexing_maps = [#bx, #bw, #by] ins(%x, %w : memref<16x32xf16>, memref<64x32xf16>) outs(%dy : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#r2, #r2, #r2], iterator_types = ["parallel", "parallel"]} ins(%y, %dy : memref<16x64xf16>, memref<16x64xf32>) outs(%dx : memref<16x64xf16>) {
  ^bb0(%out: f16, %g: f32, %o: f16):
    %narrow = arith.truncf %g : f32 to f16
    %wide = arith.extf %out : f16 to f32
    %positive = arith.cmpf ogt, %wide, %zero : f32
    %gw = arith.extf %narrow : f16 to f32
    %grad = arith.select %positive, %gw, %zero : f32
    %rounded = arith.truncf %grad : f32 to f16
    linalg.yield %rounded : f16
  }
  memref.dealloc %dy : memref<16x64xf32>
  return
}
