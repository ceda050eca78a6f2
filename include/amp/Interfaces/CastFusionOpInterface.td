//===- CastFusionOpInterface.td - Ops that absorb casts ----*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_CASTFUSIONOPINTERFACE
#define AMP_INTERFACES_CASTFUSIONOPINTERFACE

include "mlir/IR/OpBase.td"

def AMP_CastFusionOpInterface : OpInterface<"CastFusionOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    An op that can take over an `amp.cast` next to it (amp-fuse-casts):
    produce a result directly in another float type (a constant converted
    in place, a cast node retargeted), read an operand in the narrower
    type it was exactly widened from, or stand for a cast of the same value
    to the same type (an existing cast node, reused). Constants also tell amp-assign-precision
    whether their values survive a conversion (the range check).
  }];
  let methods = [
    InterfaceMethod<[{
        Whether result `index` can be produced directly as a tensor of
        `type`, holding exactly what casting the current result would give.
      }], "bool", "canWriteResultAs",
      (ins "unsigned":$index, "::mlir::FloatType":$type),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{
        Produces result `index` as `type`; canWriteResultAs must hold. The
        caller makes sure every user expects the new type.
      }], "void", "writeResultAs",
      (ins "unsigned":$index, "::mlir::FloatType":$type),
      /*methodBody=*/"", /*defaultImplementation=*/[{
        llvm_unreachable("writeResultAs without canWriteResultAs");
      }]>,
    InterfaceMethod<[{
        Whether operand `index`, an exact widening of a `type` value, can be
        read as that `type` value instead with the same results.
      }], "bool", "canReadOperandAs",
      (ins "unsigned":$index, "::mlir::FloatType":$type),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{
        Whether result `index` is operand `operand` converted to the
        result's element type with round-to-nearest-even, as an `amp.cast`
        of that operand would be: a cast of the same value to the same type
        can reuse the result instead.
      }], "bool", "isConversionOf",
      (ins "unsigned":$index, "unsigned":$operand),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{
        Whether result `index` is a constant with values that a conversion
        to `type` would turn into infinities or flush to zero.
      }], "bool", "hasValuesOutOfRange",
      (ins "unsigned":$index, "::mlir::FloatType":$type),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{
        The largest magnitude among the float values of result `index` when
        it is a constant whose data is at hand; nothing otherwise.
      }], "std::optional<double>", "getLargestMagnitude",
      (ins "unsigned":$index),
      /*methodBody=*/"", /*defaultImplementation=*/"return std::nullopt;">,
  ];
}

#endif // AMP_INTERFACES_CASTFUSIONOPINTERFACE
