// The FP8 scaling ops fold on constants to Transformer Engine's formulas:
// scale = (fp8_max / amax) / 2^margin; an amax of 0, Inf or NaN keeps the
// previous scale (1 without one); a scale that overflows FP32 is clamped;
// the amax history rolls toward the front and clears slot 0.
// RUN: amp-opt %s --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @compute_scale(
// 448 / 2 = 224; with margin 1, 112; 57344 / 2 = 28672.
// CHECK-DAG:     arith.constant dense<2.240000e+02> : tensor<f32>
// CHECK-DAG:     arith.constant dense<1.120000e+02> : tensor<f32>
// CHECK-DAG:     arith.constant dense<2.867200e+04> : tensor<f32>
// 0, Inf and NaN keep the previous scale 3; current scaling gives 1.
// CHECK-DAG:     arith.constant dense<3.000000e+00> : tensor<3xf32>
// CHECK-DAG:     arith.constant dense<1.000000e+00> : tensor<3xf32>
// 448 / 1e-38 overflows FP32: the largest finite FP32.
// CHECK-DAG:     arith.constant dense<3.40282347E+38> : tensor<f32>
// 448 / 3 = 149.33, rounded down to a power of two: 128.
// CHECK-DAG:     arith.constant dense<1.280000e+02> : tensor<f32>
// CHECK-NOT:     amp.compute_scale
func.func @compute_scale() -> (tensor<f32>, tensor<f32>, tensor<f32>,
                               tensor<3xf32>, tensor<3xf32>, tensor<f32>,
                               tensor<f32>) {
  %two = arith.constant dense<2.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %bad = arith.constant dense<[0.0, 0x7F800000, 0x7FC00000]> : tensor<3xf32>
  %prev = arith.constant dense<3.0> : tensor<3xf32>
  %tiny = arith.constant dense<1.0e-38> : tensor<f32>
  %three = arith.constant dense<3.0> : tensor<f32>
  %0 = amp.compute_scale %two previous %one {max = 448.0 : f32} : tensor<f32>, tensor<f32>
  %1 = amp.compute_scale %two {max = 448.0 : f32, margin = 1 : i64} : tensor<f32>
  %2 = amp.compute_scale %two {max = 57344.0 : f32} : tensor<f32>
  %3 = amp.compute_scale %bad previous %prev {max = 448.0 : f32} : tensor<3xf32>, tensor<3xf32>
  %4 = amp.compute_scale %bad {max = 448.0 : f32} : tensor<3xf32>
  %5 = amp.compute_scale %tiny {max = 448.0 : f32} : tensor<f32>
  %6 = amp.compute_scale %three {max = 448.0 : f32, pow2} : tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<f32>, tensor<f32>, tensor<f32>,
      tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @amax(
// CHECK-DAG:     arith.constant dense<6.000000e+00> : tensor<f32>
// Blocks of 1x2 over a 2x3 tensor: [[|1|,|-2|], [|3|]], [[|-4|,|5|], [|-6|]].
// CHECK-DAG:     arith.constant dense<{{\[}}[2.000000e+00, 3.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<2x2xf32>
// A NaN anywhere makes the amax NaN.
// CHECK-DAG:     arith.constant dense<0x7FC00000> : tensor<f32>
// CHECK-NOT:     amp.amax
func.func @amax() -> (tensor<f32>, tensor<2x2xf32>, tensor<f32>) {
  %x = arith.constant dense<[[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]> : tensor<2x3xf32>
  %n = arith.constant dense<[1.0, 0x7FC0, 0x7F80]> : tensor<3xbf16>
  %0 = amp.amax %x : tensor<2x3xf32> to tensor<f32>
  %1 = amp.amax %x {block = array<i64: 1, 2>} : tensor<2x3xf32> to tensor<2x2xf32>
  %2 = amp.amax %n : tensor<3xbf16> to tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<2x2xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @update(
// max: slot 0 takes 3, the max of [3, 1, 4, 2] is 4: 448 / 4 = 112; the
// history rolls to [1, 4, 2, 3] and slot 0 clears.
// CHECK-DAG:     arith.constant dense<[0.000000e+00, 4.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>
// CHECK-DAG:     arith.constant dense<1.120000e+02> : tensor<f32>
// most_recent: 448 / 3.
// CHECK-DAG:     arith.constant dense<149.333328> : tensor<f32>
// An Inf amax keeps the previous scale 5, and enters the history.
// CHECK-DAG:     arith.constant dense<[0.000000e+00, 4.000000e+00, 2.000000e+00, 0x7F800000]> : tensor<4xf32>
// CHECK-DAG:     arith.constant dense<5.000000e+00> : tensor<f32>
// CHECK-NOT:     amp.fp8_update
func.func @update() -> (tensor<4xf32>, tensor<f32>, tensor<f32>,
                        tensor<4xf32>, tensor<f32>) {
  %h = arith.constant dense<[0.0, 1.0, 4.0, 2.0]> : tensor<4xf32>
  %a = arith.constant dense<3.0> : tensor<f32>
  %inf = arith.constant dense<0x7F800000> : tensor<f32>
  %s = arith.constant dense<1.0> : tensor<f32>
  %s5 = arith.constant dense<5.0> : tensor<f32>
  %h1, %s1 = amp.fp8_update histories(%h) amaxes(%a) scales(%s)
      {maxes = array<f32: 448.0>} : tensor<4xf32>
  %h2, %s2 = amp.fp8_update histories(%h) amaxes(%a) scales(%s)
      {maxes = array<f32: 448.0>, algo = "most_recent"} : tensor<4xf32>
  %h3, %s3 = amp.fp8_update histories(%h) amaxes(%inf) scales(%s5)
      {maxes = array<f32: 448.0>} : tensor<4xf32>
  return %h1, %s1, %s2, %h3, %s3 : tensor<4xf32>, tensor<f32>, tensor<f32>,
      tensor<4xf32>, tensor<f32>
}
