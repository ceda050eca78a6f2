// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-expand-fp8-casts))" -split-input-file | FileCheck %s

// f32 -> E4M3FN: the mantissa's 20 dropped bits rounded half to even
// (+ 0x7FFFF + the kept lowest bit), the exponent rebiased by
// (127 - 7) << 3 = 960, subnormals in units of 2^-9 rounded by adding
// 2^23; from 464 (448 plus half a step, f32 bits 0x43E80000) on, the NaN
// code 0x7F, which NaN gets too.
// CHECK-LABEL: func.func @truncate_e4m3(
// CHECK-SAME:    %[[X:.*]]: f32)
// CHECK-NOT:     arith.truncf
// CHECK:         arith.bitcast %[[X]] : f32 to i32
// CHECK-DAG:     arith.constant 524287 : i32
// CHECK-DAG:     arith.constant 960 : i32
// CHECK-DAG:     arith.constant 5.120000e+02 : f32
// CHECK-DAG:     arith.constant 0x4B000000 : f32
// CHECK:         arith.fptoui
// CHECK-DAG:     arith.constant 1139277824 : i32
// CHECK-DAG:     arith.constant 127 : i32
// CHECK:         %[[BYTE:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK:         %[[R:.*]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
// CHECK:         return %[[R]]
func.func @truncate_e4m3(%x: f32) -> f8E4M3FN {
  %0 = arith.truncf %x : f32 to f8E4M3FN
  return %0 : f8E4M3FN
}

// -----

// E5M2 overflows to infinity (0x7C) from 61440 (f32 bits 0x47700000) on;
// vectors and f16 sources (widened to f32 first) are expanded too.
// CHECK-LABEL: func.func @truncate_e5m2_vector(
// CHECK-SAME:    %[[X:.*]]: vector<8xf16>)
// CHECK:         %[[W:.*]] = arith.extf %[[X]] : vector<8xf16> to vector<8xf32>
// CHECK:         arith.bitcast %[[W]] : vector<8xf32> to vector<8xi32>
// CHECK-DAG:     arith.constant dense<1198522368> : vector<8xi32>
// CHECK-DAG:     arith.constant dense<124> : vector<8xi32>
// CHECK:         arith.trunci %{{.*}} : vector<8xi32> to vector<8xi8>
// CHECK:         arith.bitcast %{{.*}} : vector<8xi8> to vector<8xf8E5M2>
// CHECK-NOT:     arith.truncf
func.func @truncate_e5m2_vector(%x: vector<8xf16>) -> vector<8xf8E5M2> {
  %0 = arith.truncf %x : vector<8xf16> to vector<8xf8E5M2>
  return %0 : vector<8xf8E5M2>
}

// -----

// FP8 -> f32 decodes the fields; to bf16, the exact f32 is rounded.
// CHECK-LABEL: func.func @extend(
// CHECK-SAME:    %[[A:.*]]: f8E4M3FN, %[[B:.*]]: f8E5M2)
// CHECK:         %[[ABYTE:.*]] = arith.bitcast %[[A]] : f8E4M3FN to i8
// CHECK:         arith.extui %[[ABYTE]] : i8 to i32
// CHECK:         arith.uitofp
// CHECK:         %[[AF:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[BBYTE:.*]] = arith.bitcast %[[B]] : f8E5M2 to i8
// CHECK:         %[[BF:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[BB:.*]] = arith.truncf %[[BF]] : f32 to bf16
// CHECK:         return %[[AF]], %[[BB]]
func.func @extend(%a: f8E4M3FN, %b: f8E5M2) -> (f32, bf16) {
  %0 = arith.extf %a : f8E4M3FN to f32
  %1 = arith.extf %b : f8E5M2 to bf16
  return %0, %1 : f32, bf16
}

// -----

// Left to convert-arith-to-apfloat: f64 sources (f32 would round twice),
// other rounding modes, other FP8 formats, and casts between wider types.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NEXT:    arith.truncf %{{.*}} : f64 to f8E4M3FN
// CHECK-NEXT:    arith.truncf %{{.*}} toward_zero : f32 to f8E4M3FN
// CHECK-NEXT:    arith.truncf %{{.*}} : f32 to f8E4M3FNUZ
// CHECK-NEXT:    arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT:    arith.extf %{{.*}} : f8E4M3FN to f64
func.func @left_alone(%d: f64, %x: f32, %q: f8E4M3FN) -> (f8E4M3FN, f8E4M3FN, f8E4M3FNUZ, f16, f64) {
  %0 = arith.truncf %d : f64 to f8E4M3FN
  %1 = arith.truncf %x toward_zero : f32 to f8E4M3FN
  %2 = arith.truncf %x : f32 to f8E4M3FNUZ
  %3 = arith.truncf %x : f32 to f16
  %4 = arith.extf %q : f8E4M3FN to f64
  return %0, %1, %2, %3, %4 : f8E4M3FN, f8E4M3FN, f8E4M3FNUZ, f16, f64
}
