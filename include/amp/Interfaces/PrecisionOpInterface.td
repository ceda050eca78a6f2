//===- PrecisionOpInterface.td - What AMP passes ask an op -*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONOPINTERFACE
#define AMP_INTERFACES_PRECISIONOPINTERFACE

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def AMP_PrecisionClass : I32EnumAttr<"PrecisionClass",
    "how an op takes part in mixed precision (docs/PrecisionClasses.md)", [
      // Low precision whenever the cost model agrees; seeds low-precision
      // regions (MatMul, Gemm, Conv).
      I32EnumAttrCase<"Always", 0, "always">,
      // Takes the precision of its data producers; exact in any precision
      // (Relu, Reshape, MaxPool).
      I32EnumAttrCase<"Follow", 1, "follow">,
      // Low precision only between or after always ops (Add, Tanh).
      I32EnumAttrCase<"Infer", 2, "infer">,
      // Computes in FP32 and stops propagation (Softmax, reductions, losses).
      I32EnumAttrCase<"KeepFP32", 3, "keep-fp32">,
      // Not a float computation, or one whose types are fixed (Shape,
      // optimizers, unknown ops): no type changes and no casts.
      I32EnumAttrCase<"NeverTouch", 4, "never-touch">,
    ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

def AMP_RecomputeKind : I32EnumAttr<"RecomputeKind",
    "whether amp-recompute may clone an op into the backward "
    "(docs/Recompute.md)", [
      // Cheap to run again: elementwise, data movement, casts, norms.
      I32EnumAttrCase<"Cheap", 0, "cheap">,
      // GEMMs, convolutions, attention: cloned only when a budget needs it.
      I32EnumAttrCase<"ComputeIntensive", 1, "compute-intensive">,
      // Draws random numbers: a clone would draw others. Never cloned.
      I32EnumAttrCase<"Random", 2, "random">,
      // Side effects, state updates, optimizers, control flow, unknown ops.
      I32EnumAttrCase<"Never", 3, "never">,
    ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

def AMP_PrecisionOpInterface : OpInterface<"PrecisionOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    The mixed-precision passes query ops only through this interface: the
    op's precision class (always, follow, infer, keep-fp32, never-touch; see
    docs/PrecisionClasses.md) and which operands and results are float data
    whose element type a precision decision may change. Shape, index and
    fixed-FP32 slots (BatchNormalization's statistics, Dropout's ratio,
    Resize's scales) are not data: they never change type. The cost model
    asks for FLOPs and bytes per precision (docs/CostModel.md).
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
    InterfaceMethod<[{
        Whether a slot that would be float data has a type the passes cannot
        see (a value shape inference could not type): the op keeps its
        types, since its other slots could not be kept consistent with it.
      }], "bool", "hasUnknownDataType", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{
        Whether the op may hold its float data in `type` (an ONNX op's schema
        at its opset may not allow it: MatMul has bfloat16 from opset 13).
        An op that may not stays FP32.
      }], "bool", "supportsDataType", (ins "::mlir::FloatType":$type),
      /*methodBody=*/"", /*defaultImplementation=*/"return true;">,
    InterfaceMethod<[{
        Whether each data result is the elementwise product of the data
        operands (ONNX's Mul): a constant operand scales the others by its
        values.
      }], "bool", "isElementwiseProduct", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{
        Called by amp-materialize-casts after it gave the op's float data
        slots the element type `type`: updates what must agree with them,
        such as typed attributes (a clamp's bounds) or the arguments of a
        region that computes on the data.
      }], "void", "adaptToDataType", (ins "::mlir::FloatType":$type),
      /*methodBody=*/"", /*defaultImplementation=*/"return;">,
    InterfaceMethod<[{
        Whether amp-recompute may run the op again in the backward. By
        default: always ops are compute-intensive, other ops without memory
        effects or regions cheap, the rest never.
      }], "::mlir::amp::RecomputeKind", "getRecomputeKind", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::amp::detail::getDefaultRecomputeKind(
            ::llvm::cast<::mlir::amp::PrecisionOpInterface>(
                $_op.getOperation()));
      }]>,
    InterfaceMethod<[{
        Floating-point operations of one execution (a multiply-add counts
        two). Dynamic dimensions take their sizes from `sizes`.
      }], "double", "estimateFlops", (ins "::mlir::amp::DimSizes &":$sizes),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::amp::detail::estimateElementwiseFlops($_op, sizes);
      }]>,
    InterfaceMethod<[{
        Bytes read and written by one execution when the float data slots
        hold `dataBits`-bit floats (32 for the FP32 baseline); other slots
        count at their own width.
      }], "double", "estimateBytes",
      (ins "::mlir::amp::DimSizes &":$sizes, "unsigned":$dataBits),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::amp::detail::estimateAllBytes(
            ::llvm::cast<::mlir::amp::PrecisionOpInterface>(
                $_op.getOperation()), sizes, dataBits);
      }]>,
  ];
}

#endif // AMP_INTERFACES_PRECISIONOPINTERFACE
