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
include "amp/Interfaces/PrecisionOpInterface.td"

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

def AMP_UnscaleOp : AMP_Op<"unscale", [Pure, AllShapesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<AMP_PrecisionOpInterface>]> {
  let summary = "Divide a gradient by the loss scale: the FP32 barrier";
  let description = [{
    Multiplies a gradient by the reciprocal of the loss scale, a scalar FP32
    tensor, and returns it as FP32 whatever the gradient's precision.
    Precision propagation never crosses it: everything after it (gradient
    accumulation, clipping, the optimizer, the master weights) stays FP32.
    Its precision class is keep-fp32 and its input may be low precision.
    ONNX export: `Mul(Cast(input, to=FLOAT), Reciprocal(scale))`.

    ```mlir
    %g32 = amp.unscale %g16 by %scale
        : tensor<8x4xf16>, tensor<f32> to tensor<8x4xf32>
    ```
  }];
  let arguments = (ins TensorOf<[AnyFloat]>:$input, 0DTensorOf<[F32]>:$scale);
  let results = (outs TensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `by` $scale attr-dict `:` type($input) `,` type($scale) `to`
    type($result)
  }];
}

#endif // AMP_DIALECT_AMP_IR_AMPOPS_TD
