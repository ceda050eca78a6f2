"""Writes a function with `count` FP8 quantizations under delayed scaling
(each from a scale argument the step has not written) feeding GEMMs, for
store-fp8-gemm-operands' merged factor kernels."""
import sys

count = int(sys.argv[1])
scales = ", ".join(f"%s{i}: memref<f32>" for i in range(count))
print("#id = affine_map<(d0, d1) -> (d0, d1)>")
print("#scalar = affine_map<(d0, d1) -> ()>")
print("#xa = affine_map<(m, n, k) -> (m, k)>")
print("#wb = affine_map<(m, n, k) -> (n, k)>")
print("#yc = affine_map<(m, n, k) -> (m, n)>")
print(f"func.func @many(%x: memref<16x32xf32>, %w: memref<64x32xf32>, "
      f"%y: memref<16x64xf32>, {scales}) {{")
for i in range(count):
    source = "%w" if i == 0 else "%x"
    shape = "64x32" if i == 0 else "16x32"
    print(f"""  %q{i} = memref.alloc() : memref<{shape}xf32>
  linalg.generic {{indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}} ins({source}, %s{i} : memref<{shape}xf32>, memref<f32>) outs(%q{i} : memref<{shape}xf32>) {{
  ^bb0(%in: f32, %s: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %inv = arith.divf %one, %s : f32
    %fp8 = arith.truncf %in : f32 to f8E4M3FN
    %wide = arith.extf %fp8 : f8E4M3FN to f32
    %dq = arith.mulf %wide, %inv : f32
    linalg.yield %dq : f32
  }}""")
for i in range(1, count):
    print(f"  linalg.contract indexing_maps = [#xa, #wb, #yc] ins(%q{i}, %q0 : "
          f"memref<16x32xf32>, memref<64x32xf32>) outs(%y : memref<16x64xf32>)")
print("  return")
print("}")
