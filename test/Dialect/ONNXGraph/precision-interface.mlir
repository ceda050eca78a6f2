// onnxg.node answers PrecisionOpInterface from the op table: the class, and
// which operands and results are float data a precision decision may retype.
// RUN: amp-opt %s --test-amp-precision-interface -verify-diagnostics -o /dev/null

func.func @classes(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>,
                   %shape: tensor<2xi64>, %cond: tensor<4x8xi1>,
                   %img: tensor<1x8x4x4xf32>, %stat: tensor<8xf32>) {
  // expected-remark @+1 {{always, data operands [0, 1, 2], data results [0]}}
  %g = onnxg.node "Gemm"(%x, %w, %b) opset 17
      : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{infer, data operands [0, 1], data results [0]}}
  %a = onnxg.node "Add"(%g, %x) opset 14
      : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{keep-fp32, data operands [0], data results [0]}}
  %s = onnxg.node "Softmax"(%a) opset 13
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // The shape operand is never data.
  // expected-remark @+1 {{follow, data operands [0], data results [0]}}
  %r = onnxg.node "Reshape"(%s, %shape) opset 14
      : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<8x4xf32>
  // The boolean condition is not float data.
  // expected-remark @+1 {{follow, data operands [1, 2], data results [0]}}
  %w2 = onnxg.node "Where"(%cond, %x, %a) opset 16
      : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // Scale, bias and statistics are fixed FP32 slots, as are the updated
  // running statistics.
  // expected-remark @+1 {{follow, data operands [0], data results [0]}}
  %y, %mean, %var = onnxg.node "BatchNormalization"(%img, %stat, %stat, %stat, %stat)
      opset 15 attributes {training_mode = 1 : i64}
      : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
         tensor<8xf32>) -> (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>)
  // Before opset 15 (14 for scale and bias) the schema types every slot
  // like the input: they change together.
  // expected-remark @+1 {{follow, data operands [0, 1, 2, 3, 4], data results [0]}}
  %y9 = onnxg.node "BatchNormalization"(%img, %stat, %stat, %stat, %stat)
      opset 9
      : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
         tensor<8xf32>) -> tensor<1x8x4x4xf32>
  // expected-remark @+1 {{follow, data operands [0, 1, 2], data results [0]}}
  %y14 = onnxg.node "BatchNormalization"(%img, %stat, %stat, %stat, %stat)
      opset 14
      : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
         tensor<8xf32>) -> tensor<1x8x4x4xf32>
  // An int64 Concat has no float data although every slot is a data slot.
  // expected-remark @+1 {{follow, data operands [], data results []}}
  %c = onnxg.node "Concat"(%shape, %shape) opset 13 attributes {axis = 0 : i64}
      : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  // expected-remark @+1 {{never-touch, data operands [], data results []}}
  %shp = onnxg.node "Shape"(%x) opset 15 : (tensor<4x8xf32>) -> tensor<2xi64>
  // Clip's bounds are typed like its input and change with it.
  // expected-remark @+1 {{follow, data operands [0, 1, 2], data results [0]}}
  %clip = onnxg.node "Clip"(%x, %stat, %stat) opset 13
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // Pad's pads are indices; its constant value is data.
  // expected-remark @+1 {{follow, data operands [0, 2], data results [0]}}
  %pad = onnxg.node "Pad"(%x, %shape, %stat) opset 13
      : (tensor<4x8xf32>, tensor<2xi64>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

func.func @attribute_dependent(%data: tensor<8x4xf32>, %idx: tensor<2x4xi64>,
                               %upd: tensor<2x4xf32>) {
  // A scatter that adds accumulates: FP32.
  // expected-remark @+1 {{keep-fp32, data operands [0, 2], data results [0]}}
  %0 = onnxg.node "ScatterElements"(%data, %idx, %upd) opset 16
      attributes {reduction = "add"}
      : (tensor<8x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<8x4xf32>
  // expected-remark @+1 {{follow, data operands [0, 2], data results [0]}}
  %1 = onnxg.node "ScatterElements"(%data, %idx, %upd) opset 16
      : (tensor<8x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<8x4xf32>
  return
}

func.func @unknown_and_training(%x: tensor<4xf32>, %lr: tensor<f32>,
                                %t: tensor<i64>) {
  // Op types the table does not know are never touched.
  // expected-remark @+1 {{never-touch, data operands [], data results []}}
  %0 = onnxg.node "Mystery"(%x) domain "com.example" opset 1
      : (tensor<4xf32>) -> tensor<4xf32>
  // Optimizers stay FP32 after the unscale barrier.
  // expected-remark @+1 {{never-touch, data operands [], data results []}}
  %1, %2, %3 = onnxg.node "Adam"(%lr, %t, %x, %x, %x, %x)
      domain "ai.onnx.preview.training" opset 1
      : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
         tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // expected-remark @+1 {{always, data operands [0, 1], data results [0]}}
  %4 = onnxg.node "FusedMatMul"(%x, %x) domain "com.microsoft" opset 1
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// amp.unscale is the FP32 barrier: keep-fp32, reading a gradient of any
// precision.
func.func @unscale(%g: tensor<4xf16>, %s: tensor<f32>) {
  // expected-remark @+1 {{keep-fp32, data operands [0], data results []}}
  %0 = amp.unscale %g by %s : tensor<4xf16>, tensor<f32> to tensor<4xf32>
  return
}
