// Input of contractions-to-gemm-records.mlir's warn-unrecorded RUN line: a
// batched GEMM whose weights repeat over the outer of two batch loops (a
// grouped convolution's im2col GEMM): two batch strides in w, which
// cuBLASLt's strided batches do not have.
func.func @grouped(%w: memref<4x4x12xf16>, %cols: memref<6x4x12x16xf16>, %y: memref<6x4x4x16xf32>) {
  // expected-warning @below {{no GEMM record, so the contraction stays a kernel of the grid loops: the batch loops are not contiguous in an operand}}
  linalg.contract indexing_maps = [affine_map<(n, g, o, l, k) -> (g, o, k)>, affine_map<(n, g, o, l, k) -> (n, g, k, l)>, affine_map<(n, g, o, l, k) -> (n, g, o, l)>] ins(%w, %cols : memref<4x4x12xf16>, memref<6x4x12x16xf16>) outs(%y : memref<6x4x4x16xf32>)
  return
}
