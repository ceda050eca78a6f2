//===- AMPOps.td - AMP dialect ops ------------------------*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The `amp` dialect: the ops the mixed-precision passes introduce.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPOPS_TD
#define AMP_DIALECT_AMP_IR_AMPOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def AMP_Dialect : Dialect {
  let name = "amp";
  let cppNamespace = "::mlir::amp";
  let summary = "Mixed-precision training ops";
  let description = [{
    Ops that amp-opt's passes insert into a training graph: precision casts,
    loss scaling, FP8 scaling and recomputation markers.
  }];
}

class AMP_Op<string mnemonic, list<Trait> traits = []>
    : Op<AMP_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

def AMP_CastOp : AMP_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "Change the floating-point precision of a tensor";
  let description = [{
    Rounds each element to the result element type (round to nearest even).
    Casts to 8-bit floats carry a `scale` the input is multiplied by before
    rounding: `amp.cast %x {scale = 0.5 : f32} : ...`; other casts have none.
    A cast to the input type folds to its input.

    ```mlir
    %h = amp.cast %x : tensor<8xf32> to tensor<8xf16>
    ```
  }];
  let arguments = (ins TensorOf<[AnyFloat]>:$input,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs TensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // AMP_DIALECT_AMP_IR_AMPOPS_TD
