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

//===----------------------------------------------------------------------===//
// Loss scaling
//===----------------------------------------------------------------------===//

// Scalars of the loss-scaling state, buildable so that formats can omit them.
def AMP_F32Scalar : 0DTensorOf<[F32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}
def AMP_I64Scalar : 0DTensorOf<[I64]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI64Type())";
}
def AMP_I1Scalar : 0DTensorOf<[I1]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI1Type())";
}

def AMP_ScaleLossOp : AMP_Op<"scale_loss", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Multiply the backward seed by the loss scale";
  let description = [{
    Multiplies the backward seed (the gradient of the loss with respect to
    itself, or a value linear in it) by the loss scale, a scalar FP32 tensor,
    so that small gradients stay representable in low precision.
    amp-insert-loss-scaling places it; `amp.unscale` divides the scale out of
    each gradient. ONNX export: `Mul(input, scale)`, with the scale cast to
    the input's type when that is not FP32.

    ```mlir
    %seed = amp.scale_loss %one by %scale : tensor<f32>, tensor<f32> to tensor<f32>
    ```
  }];
  let arguments = (ins TensorOf<[AnyFloat]>:$input, AMP_F32Scalar:$scale);
  let results = (outs TensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `by` $scale attr-dict `:` type($input) `,` type($scale) `to`
    type($result)
  }];
}

def AMP_AllFiniteOp : AMP_Op<"all_finite", [Pure]> {
  let summary = "Whether every element of every input is finite";
  let description = [{
    True when no element of any input is an infinity or a NaN: the overflow
    check of dynamic loss scaling, over all unscaled gradients. ONNX export:
    `Not(IsNaN(Sum(ReduceSum(Sub(g, g)) ...)))`: `g - g` is 0 for a finite
    element and NaN otherwise, and a sum of zeros is exactly 0.

    ```mlir
    %finite = amp.all_finite %g0, %g1 : tensor<8x4xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<TensorOf<[AnyFloat]>>:$inputs);
  let results = (outs AMP_I1Scalar:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def AMP_UpdateIfFiniteOp : AMP_Op<"update_if_finite",
    [Pure, AllTypesMatch<["updated", "result"]>]> {
  let summary = "The updated value after a clean step, the previous one after an overflow";
  let description = [{
    Returns `updated` when `finite` is true and `previous` otherwise: dynamic
    loss scaling skips a step whose gradients overflowed, so every parameter
    and optimizer state leaves the step unchanged. `previous` has the type of
    the result, or is a 0-d tensor of its element type that is broadcast (a
    zero, for a gradient handed to an optimizer outside the graph). ONNX
    export: `Where(finite, updated, previous)`.

    ```mlir
    %w = amp.update_if_finite %finite, %w_new, %w_old
        : tensor<8x4xf32>, tensor<8x4xf32>
    ```
  }];
  let arguments = (ins AMP_I1Scalar:$finite, AnyRankedTensor:$updated,
                       AnyRankedTensor:$previous);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $finite `,` $updated `,` $previous attr-dict `:` type($updated) `,`
    type($previous)
  }];
  let hasVerifier = 1;
}

def AMP_UpdateScaleOp : AMP_Op<"update_scale", [Pure]> {
  let summary = "The next loss scale and clean-step count of dynamic loss scaling";
  let description = [{
    After a step whose gradients were all finite, counts it; after
    `growth_interval` clean steps in a row, multiplies the scale by
    `growth_factor` (at most `max_scale`) and restarts the count. After an
    overflow, multiplies the scale by `backoff_factor` (at least `min_scale`)
    and restarts the count. PyTorch's GradScaler and ONNX Runtime's
    DynamicLossScaler use these rules; the defaults of
    amp-insert-loss-scaling are theirs. ONNX export: `Add`, `Less`, `Mul`,
    `Min`, `Max` and `Where` nodes.

    ```mlir
    %scale2, %count2 = amp.update_scale %scale, %count, %finite
        {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32,
         growth_interval = 2000 : i64, min_scale = 1.0 : f32,
         max_scale = 16777216.0 : f32}
    ```
  }];
  let arguments = (ins AMP_F32Scalar:$scale, AMP_I64Scalar:$count,
                       AMP_I1Scalar:$finite, F32Attr:$growth_factor,
                       F32Attr:$backoff_factor, I64Attr:$growth_interval,
                       F32Attr:$min_scale, F32Attr:$max_scale);
  let results = (outs AMP_F32Scalar:$new_scale,
                      AMP_I64Scalar:$new_count);
  let assemblyFormat = "$scale `,` $count `,` $finite attr-dict";
  let hasVerifier = 1;
}

#endif // AMP_DIALECT_AMP_IR_AMPOPS_TD
