//===- PrecisionOpInterface.td - What AMP passes ask an op -*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONOPINTERFACE
#define AMP_INTERFACES_PRECISIONOPINTERFACE

include "mlir/IR/OpBase.td"

def AMP_PrecisionOpInterface : OpInterface<"PrecisionOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    The mixed-precision passes query ops only through this interface: the
    op's precision class (always, follow, infer, keep-fp32, never-touch; see
    docs/PrecisionClasses.md) and which operands and results are float data
    whose element type a precision decision may change. Shape, index and
    fixed-FP32 slots (BatchNormalization's statistics, Dropout's ratio,
    Resize's scales) are not data: they never change type.
  }];
  let methods = [
    InterfaceMethod<"The op's precision class.",
      "::mlir::amp::PrecisionClass", "getPrecisionClass">,
    InterfaceMethod<[{
        Whether operand `index` is float data that may change precision.
      }], "bool", "isPrecisionDataOperand", (ins "unsigned":$index)>,
    InterfaceMethod<[{
        Whether result `index` is float data that may change precision.
      }], "bool", "isPrecisionDataResult", (ins "unsigned":$index)>,
  ];
}

#endif // AMP_INTERFACES_PRECISIONOPINTERFACE
