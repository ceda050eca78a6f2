// RUN: amp-opt %s --convert-onnxg-to-linalg -split-input-file -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --enable-var-scope

// Dropout in inference mode passes its input through, and needs no key.
// CHECK-LABEL: func.func @dropout_inference(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32> loc({{.*}})) -> tensor<4xf32>
// CHECK-NEXT:    return %[[X]]
func.func @dropout_inference(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = onnxg.node "Dropout"(%x) opset 13 : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Training-mode Dropout appends the (seed, counter) key argument and mixes
// it into the node's stream key in a generic of no loops (a kernel on the
// GPU: a compiled step reads no buffer on the host); the mask's generic
// takes the key and the ratio as 0-d inputs, draws one uniform per element
// from its row-major position (24 bits, compared with the ratio), and the
// output's scales the kept elements by 1 / (1 - ratio). The second random
// node gets stream 1.
// CHECK-LABEL: func.func @dropout_training(
// CHECK-SAME:    %{{.*}}: tensor<3x5xf16> loc({{.*}}), %[[KEY:[^:]*]]: tensor<2xi64> loc("amp.random_key"))
// CHECK:         %[[STREAM:.*]] = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%{{.*}} : tensor<i64>)
// CHECK:           %[[SEED:.*]] = tensor.extract %[[KEY]][%{{.*}}] : tensor<2xi64>
// CHECK:           arith.addi %[[SEED]], %{{.*}} : i64
// CHECK:           %[[COUNTER:.*]] = tensor.extract %[[KEY]][%{{.*}}] : tensor<2xi64>
// CHECK:           arith.xori %{{.*}}, %[[COUNTER]] : i64
// CHECK:         %[[MASK:.*]] = linalg.generic {{.*}} ins(%[[STREAM]], %[[RATIO:.*]] : tensor<i64>, tensor<f32>) outs(%{{.*}} : tensor<3x5xi1>)
// CHECK:           linalg.index 0
// CHECK:           linalg.index 1
// CHECK:           arith.shrui %{{.*}}, %{{.*}} : i64
// CHECK:           arith.uitofp %{{.*}} : i64 to f32
// CHECK:           arith.cmpf oge, %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[MASK]], %[[RATIO]] : tensor<3x5xf16>, tensor<3x5xi1>, tensor<f32>)
// CHECK:           %[[SCALE:.*]] = arith.divf
// CHECK:           arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK:           arith.select
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         linalg.generic {indexing_maps = [affine_map<() -> ()>]
// CHECK:           arith.constant 1 : i64
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x5xi1>)
func.func @dropout_training(%x: tensor<3x5xf16>) -> (tensor<3x5xf16>, tensor<3x5xi1>, tensor<3x5xf16>) {
  %r = onnxg.node "Constant"() opset 17 attributes {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %t = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0:2 = onnxg.node "Dropout"(%x, %r, %t) opset 17 : (tensor<3x5xf16>, tensor<f32>, tensor<i1>) -> (tensor<3x5xf16>, tensor<3x5xi1>)
  %1:2 = onnxg.node "Dropout"(%x, %r, %t) opset 17 : (tensor<3x5xf16>, tensor<f32>, tensor<i1>) -> (tensor<3x5xf16>, tensor<3x5xi1>)
  return %0#0, %0#1, %1#0 : tensor<3x5xf16>, tensor<3x5xi1>, tensor<3x5xf16>
}

// -----

// A node's seed attribute replaces the key's seed.
// CHECK-LABEL: func.func @dropout_seed(
// CHECK:         %[[SEED:.*]] = arith.constant 7 : i64
// CHECK:         arith.addi %[[SEED]], %{{.*}} : i64
func.func @dropout_seed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = onnxg.node "Constant"() opset 17 attributes {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %t = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = onnxg.node "Dropout"(%x, %r, %t) opset 17 attributes {seed = 7 : i64} : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// DropoutGrad: dY / (1 - ratio) where the mask kept the element, else 0.
// CHECK-LABEL: func.func @dropout_grad(
// CHECK-SAME:    -> tensor<4xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi1>, tensor<f32>)
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:           %[[KEPT:.*]] = arith.subf %[[ONE]], %{{.*}} : f32
// CHECK:           %[[SCALE:.*]] = arith.divf %[[ONE]], %[[KEPT]] : f32
// CHECK:           arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK:           arith.select
func.func @dropout_grad(%dy: tensor<4xf32>, %mask: tensor<4xi1>) -> tensor<4xf32> {
  %ratio = onnxg.node "Constant"() opset 17 attributes {value = dense<2.5e-01> : tensor<f32>} : () -> tensor<f32>
  %0 = onnxg.node "DropoutGrad"(%dy, %mask, %ratio) domain "com.microsoft" opset 1 : (tensor<4xf32>, tensor<4xi1>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// BitmaskDropout packs the keep bits into ceil(15 / 32) = 1 word: a
// [words, 32] generic that reduces over the bit, ORing in the bits of the
// elements that exist, declared uint32 word by word (a tensor.bitcast of a
// dynamic shape does not bufferize). BitmaskDropoutGrad reads bit i % 32 of
// word i / 32.
// CHECK-LABEL: func.func @bitmask_dropout(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x32xi32>, tensor<i64>, tensor<f32>) outs(%{{.*}} : tensor<?xi32>)
// CHECK:           arith.cmpi slt
// CHECK:           arith.andi
// CHECK:           arith.shli
// CHECK:           arith.ori
// CHECK:         %[[WORDS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?xi32>) outs(%{{.*}} : tensor<?xui32>)
// CHECK:           builtin.unrealized_conversion_cast %{{.*}} : i32 to ui32
// CHECK:         %[[SIGNLESS:.*]] = linalg.generic {{.*}} ins(%[[WORDS]] : tensor<?xui32>) outs(%{{.*}} : tensor<?xi32>)
// CHECK:           builtin.unrealized_conversion_cast %{{.*}} : ui32 to i32
// CHECK:         linalg.generic
// CHECK:           tensor.extract %[[SIGNLESS]]
// CHECK:           arith.remui
// CHECK:           arith.shrui
// CHECK:           arith.trunci %{{.*}} : i32 to i1
func.func @bitmask_dropout(%x: tensor<3x5xf32>, %dy: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %r = onnxg.node "Constant"() opset 17 attributes {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %t = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0:2 = onnxg.node "BitmaskDropout"(%x, %r, %t) domain "com.microsoft" opset 1 : (tensor<3x5xf32>, tensor<f32>, tensor<i1>) -> (tensor<3x5xf32>, tensor<?xui32>)
  %1 = onnxg.node "BitmaskDropoutGrad"(%dy, %0#1, %r, %t) domain "com.microsoft" opset 1 : (tensor<3x5xf32>, tensor<?xui32>, tensor<f32>, tensor<i1>) -> tensor<3x5xf32>
  return %0#0, %1 : tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// BiasDropout: dropout of data + bias, then the residual added.
// CHECK-LABEL: func.func @bias_dropout(
// CHECK:         %[[MASK:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xi1>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]], %[[MASK]], %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x4xi1>, tensor<f32>, tensor<2x4xf32>)
// CHECK:           arith.select
// CHECK-NEXT:      arith.addf
func.func @bias_dropout(%x: tensor<2x4xf32>, %bias: tensor<4xf32>, %residual: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = onnxg.node "Constant"() opset 17 attributes {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %t = onnxg.node "Constant"() opset 17 attributes {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0:2 = onnxg.node "BiasDropout"(%x, %bias, %residual, %r, %t) domain "com.microsoft" opset 1 : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x4xf32>, tensor<2x4xi1>)
  return %0#0 : tensor<2x4xf32>
}

// -----

// A ratio and a training_mode known only at run time are read from their
// tensors in a generic (not on the host); training_mode false selects ratio
// 0 (nothing drops, scale 1).
// CHECK-LABEL: func.func @dropout_runtime_mode(
// CHECK-SAME:    %{{[^:]*}}: tensor<4xf32> loc({{.*}}), %[[R:[^:]*]]: tensor<f32> loc({{.*}}), %[[T:[^:]*]]: tensor<i1> loc({{.*}})
// CHECK:         %[[RATIO:.*]] = linalg.generic {{.*}} ins(%[[T]], %[[R]] : tensor<i1>, tensor<f32>) outs(%{{.*}} : tensor<f32>)
// CHECK:           arith.select
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[RATIO]] : tensor<i64>, tensor<f32>) outs(%{{.*}} : tensor<4xi1>)
func.func @dropout_runtime_mode(%x: tensor<4xf32>, %r: tensor<f32>, %t: tensor<i1>) -> tensor<4xf32> {
  %0 = onnxg.node "Dropout"(%x, %r, %t) opset 17 : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// RandomUniform draws as many bits as the generated type's significand (11
// for f16, so that no draw rounds up to `high`) and maps [0, 1) to [low,
// high) in f32.
// CHECK-LABEL: func.func @random_uniform(
// CHECK-SAME:    %{{.*}}: tensor<2xi64> loc("amp.random_key"))
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf16>)
// CHECK:           %[[SHIFT:.*]] = arith.constant 53 : i64
// CHECK:           arith.shrui %{{.*}}, %[[SHIFT]] : i64
// CHECK:           %[[WIDTH:.*]] = arith.constant 5.000000e+00 : f32
// CHECK:           arith.mulf %[[WIDTH]], %{{.*}} : f32
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @random_uniform() -> tensor<2x3xf16> {
  %0 = onnxg.node "RandomUniform"() opset 1 attributes {shape = array<i64: 2, 3>, low = -2.0 : f32, high = 3.0 : f32, dtype = 10 : i64} : () -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// RandomNormalLike takes its input's shape (not its values): Box-Muller of
// two draws per element, scaled by `scale`, shifted by `mean`.
// CHECK-LABEL: func.func @random_normal_like(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x2xf32>)
// CHECK:           math.log
// CHECK:           math.sqrt
// CHECK:           math.cos
// CHECK-NEXT:      %[[Z:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           %[[MEAN:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:           %[[SCALE:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:           %[[SCALED:.*]] = arith.mulf %[[SCALE]], %[[Z]] : f32
// CHECK:           arith.addf %[[MEAN]], %[[SCALED]] : f32
func.func @random_normal_like(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = onnxg.node "RandomNormalLike"(%x) opset 1 attributes {mean = 1.0 : f32, scale = 2.0 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// Bernoulli: 1 where a uniform draw is below the probability, in the
// dtype it names.
// CHECK-LABEL: func.func @bernoulli(
// CHECK-SAME:    %[[P:[^:]*]]: tensor<6xf32>
// CHECK:         %[[DRAWS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[DRAWS]], %[[P]] : tensor<6xf32>, tensor<6xf32>) outs(%{{.*}} : tensor<6xi32>)
// CHECK:           arith.cmpf olt
// CHECK:           arith.extui %{{.*}} : i1 to i32
func.func @bernoulli(%p: tensor<6xf32>) -> tensor<6xi32> {
  %0 = onnxg.node "Bernoulli"(%p) opset 15 attributes {dtype = 6 : i64} : (tensor<6xf32>) -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// -----

// Multinomial by the Gumbel-max trick: one reduction over the classes
// (d2) of [batch, samples], carrying the best score (from -inf) and its
// class; the score is the log-probability plus -log(-log(u)), u drawn from
// the row-major position in [batch, samples, classes].
// CHECK-LABEL: func.func @multinomial(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x5xf16>
// CHECK-DAG:     %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[BEST:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-DAG:     %[[INDEX:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<2x3xi64>)
// CHECK:         %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]], %{{.*}} : tensor<2x5xf16>, tensor<i64>) outs(%[[BEST]], %[[INDEX]] : tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK:           math.log
// CHECK-NEXT:      arith.negf
// CHECK-NEXT:      math.log
// CHECK-NEXT:      arith.negf
// CHECK-NEXT:      arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      arith.cmpf ogt
// CHECK-NEXT:      linalg.index 2
// CHECK:         return %[[R]]#1 : tensor<2x3xi64>
func.func @multinomial(%x: tensor<2x5xf16>) -> tensor<2x3xi64> {
  %0 = onnxg.node "Multinomial"(%x) opset 7 attributes {dtype = 7 : i64, sample_size = 3 : i64} : (tensor<2x5xf16>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// The default dtype is int32.
// CHECK-LABEL: func.func @multinomial_int32(
// CHECK:         %[[R:.*]]:2 = linalg.generic
// CHECK:         %[[I32:.*]] = linalg.generic {{.*}} ins(%[[R]]#1 : tensor<4x1xi64>) outs(%{{.*}} : tensor<4x1xi32>)
// CHECK:           arith.trunci
// CHECK:         return %[[I32]] : tensor<4x1xi32>
func.func @multinomial_int32(%x: tensor<4x3xf32>) -> tensor<4x1xi32> {
  %0 = onnxg.node "Multinomial"(%x) opset 7 : (tensor<4x3xf32>) -> tensor<4x1xi32>
  return %0 : tensor<4x1xi32>
}
