// RUN: amp-opt %s --amp-contractions-to-blas | FileCheck %s

#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>

// One declaration per entry point, with the C interface.
// CHECK-DAG: func.func private @amp_contract_bf16_bf16_f32(i64, memref<*xbf16>, memref<*xbf16>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @amp_contract_f32_f32_f32(i64, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}

// Each operand becomes a view over the 4 loops (b, m, n, k): its own
// strides on the loops it indexes, 0 on the others. roles = 3 bits per
// loop (A, B, C): b in A and C (5), m in A and C (5), n in B and C (6),
// k in A and B (3): 5 + 5 * 8 + 6 * 64 + 3 * 512 = 1965.
// CHECK-LABEL: func.func @batched_weight(
// CHECK-SAME:    %[[X:.*]]: memref<2x8x32xbf16>, %[[W:.*]]: memref<32x16xbf16>, %[[Y:.*]]: memref<2x8x16xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[ROLES:.*]] = arith.constant 1965 : i64
// CHECK:         %[[XBASE:.*]], %[[XOFF:.*]], %[[XSIZES:.*]]:3, %[[XSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[X]]
// CHECK:         %[[XVIEW:.*]] = memref.reinterpret_cast %[[XBASE]] to offset: [%[[XOFF]]], sizes: [%[[C2]], %[[C8]], %[[C16]], %[[C32]]], strides: [%[[XSTRIDES]]#0, %[[XSTRIDES]]#1, %[[C0]], %[[XSTRIDES]]#2]
// CHECK:         %[[XU:.*]] = memref.cast %[[XVIEW]] : memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>> to memref<*xbf16>
// CHECK:         %[[WBASE:.*]], %[[WOFF:.*]], %[[WSIZES:.*]]:2, %[[WSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[W]]
// CHECK:         memref.reinterpret_cast %[[WBASE]] to offset: [%[[WOFF]]], sizes: [%[[C2]], %[[C8]], %[[C16]], %[[C32]]], strides: [%[[WZ:[a-z0-9_]+]], %[[WZ]], %[[WSTRIDES]]#1, %[[WSTRIDES]]#0]
// CHECK:         %[[WU:.*]] = memref.cast
// CHECK:         %[[YU:.*]] = memref.cast {{.*}} to memref<*xf32>
// CHECK:         call @amp_contract_bf16_bf16_f32(%[[ROLES]], %[[XU]], %[[WU]], %[[YU]])
// CHECK-NOT:     linalg.contract
func.func @batched_weight(%x: memref<2x8x32xbf16>, %w: memref<32x16xbf16>, %y: memref<2x8x16xf32>) {
  linalg.contract indexing_maps = [#a, #b, #c] ins(%x, %w : memref<2x8x32xbf16>, memref<32x16xbf16>) outs(%y : memref<2x8x16xf32>)
  return
}

// Two contractions share one declaration; dynamic sizes come from the
// operands.
#a2 = affine_map<(m, n, k) -> (m, k)>
#b2 = affine_map<(m, n, k) -> (k, n)>
#c2 = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @dynamic(
// CHECK-COUNT-2: call @amp_contract_f32_f32_f32
func.func @dynamic(%x: memref<?x32xf32>, %w: memref<32x16xf32>, %y: memref<?x16xf32>) {
  linalg.contract indexing_maps = [#a2, #b2, #c2] ins(%x, %w : memref<?x32xf32>, memref<32x16xf32>) outs(%y : memref<?x16xf32>)
  linalg.contract indexing_maps = [#a2, #b2, #c2] ins(%x, %w : memref<?x32xf32>, memref<32x16xf32>) outs(%y : memref<?x16xf32>)
  return
}

// Left for convert-linalg-to-loops: types the runtime has no GEMM for, and
// contractions on tensors (before bufferization).
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-2: linalg.contract
// CHECK-NOT:     call
func.func @left_alone(%x: memref<8x32xf16>, %w: memref<32x16xf16>, %y: memref<8x16xf16>,
                      %tx: tensor<8x32xf32>, %tw: tensor<32x16xf32>, %ty: tensor<8x16xf32>) -> tensor<8x16xf32> {
  linalg.contract indexing_maps = [#a2, #b2, #c2] ins(%x, %w : memref<8x32xf16>, memref<32x16xf16>) outs(%y : memref<8x16xf16>)
  %r = linalg.contract indexing_maps = [#a2, #b2, #c2] ins(%tx, %tw : tensor<8x32xf32>, tensor<32x16xf32>) outs(%ty : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
