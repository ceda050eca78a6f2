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
include "mlir/Interfaces/InferTypeOpInterface.td"
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
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  // Folded FP8 scales and histories become arith.constant ops.
  let hasConstantMaterializer = 1;
}

class AMP_Op<string mnemonic, list<Trait> traits = []>
    : Op<AMP_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

def AMP_CastFloat : AnyTypeOf<[F16, BF16, F32, F64], "f16, bf16, f32 or f64">;

def AMP_CastOp : AMP_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "Change the floating-point precision of a tensor";
  let description = [{
    Rounds each element to the result element type (round to nearest even).
    The types are FP32, FP16, BF16 or FP64; FP8 data is made by
    `amp.quantize`, which scales and saturates. A cast to the input type
    folds to its input.

    ```mlir
    %h = amp.cast %x : tensor<8xf32> to tensor<8xf16>
    ```
  }];
  let arguments = (ins TensorOf<[AMP_CastFloat]>:$input);
  let results = (outs TensorOf<[AMP_CastFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
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

//===----------------------------------------------------------------------===//
// FP8
//===----------------------------------------------------------------------===//

def AMP_FP8 : AnyTypeOf<[F8E4M3FN, F8E5M2], "an FP8 type (f8E4M3FN or f8E5M2)">;
def AMP_HighFloat : AnyTypeOf<[F32, F16, BF16], "f32, f16 or bf16">;

def AMP_QuantizeOp : AMP_Op<"quantize", [Pure,
    AllShapesMatch<["input", "result"]>,
    AllTypesMatch<["scale", "scale_inv"]>]> {
  let summary = "Scale a tensor into FP8, saturating";
  let description = [{
    `result = saturate(round(input * scale))` in the result's FP8 type:
    values beyond its largest finite value (448 for f8E4M3FN, 57344 for
    f8E5M2) become that value, as CUDA's `.satfinite` conversions and ONNX's
    `Cast(saturate=1)` do; NaN stays NaN. Also returns `scale_inv = 1 /
    scale`, the dequantization factor that `amp.dequantize` and
    `amp.scaled_matmul` take. The data and its scale are separate values.

    `scale` is a 0-d FP32 tensor (per-tensor scaling) or, with `block`, one
    FP32 scale per block: `block` has the input's rank, and the scale's
    dimensions are the input's divided by the block's, rounded up (1x128 for
    activations and gradients, 128x128 for weights).

    The op only reads its scale: the amax that a recipe records is a
    separate `amp.amax`, and the history update is `amp.fp8_update`. A
    recomputed quantize (amp-recompute) clones this op alone, so it reuses
    the forward's scale and updates no history.

    ```mlir
    %q, %inv = amp.quantize %x by %scale
        : tensor<64x128xbf16>, tensor<f32> to tensor<64x128xf8E4M3FN>
    ```
  }];
  let arguments = (ins TensorOf<[AMP_HighFloat]>:$input,
                       TensorOf<[F32]>:$scale,
                       OptionalAttr<DenseI64ArrayAttr>:$block);
  let results = (outs TensorOf<[AMP_FP8]>:$result,
                      TensorOf<[F32]>:$scale_inv);
  let assemblyFormat = [{
    $input `by` $scale attr-dict `:` type($input) `,` type($scale) `to`
    type($result)
  }];
  let hasVerifier = 1;
}

def AMP_DequantizeOp : AMP_Op<"dequantize", [Pure,
    AllShapesMatch<["input", "result"]>]> {
  let summary = "Widen an FP8 tensor and multiply it by its dequantization factor";
  let description = [{
    `result = input * scale_inv`, computed in FP32 and rounded to the
    result type. `scale_inv` is what `amp.quantize` returned: 0-d, or one
    factor per block with `block` as there.

    ```mlir
    %x = amp.dequantize %q by %inv
        : tensor<64x128xf8E4M3FN>, tensor<f32> to tensor<64x128xbf16>
    ```
  }];
  let arguments = (ins TensorOf<[AMP_FP8]>:$input,
                       TensorOf<[F32]>:$scale_inv,
                       OptionalAttr<DenseI64ArrayAttr>:$block);
  let results = (outs TensorOf<[AMP_HighFloat]>:$result);
  let assemblyFormat = [{
    $input `by` $scale_inv attr-dict `:` type($input) `,` type($scale_inv)
    `to` type($result)
  }];
  let hasVerifier = 1;
}

def AMP_AmaxOp : AMP_Op<"amax", [Pure]> {
  let summary = "The largest magnitude of a tensor, or of each block";
  let description = [{
    `max(|input|)` as a 0-d FP32 tensor, or with `block` one per block (the
    result's dimensions are the input's divided by the block's, rounded
    up). A NaN anywhere makes the result NaN, an infinity makes it
    infinite, so that `amp.compute_scale` and `amp.fp8_update` keep the
    previous scale. Folds when the input is a constant.

    ```mlir
    %a = amp.amax %x : tensor<64x128xbf16> to tensor<f32>
    ```
  }];
  let arguments = (ins TensorOf<[AnyFloat]>:$input,
                       OptionalAttr<DenseI64ArrayAttr>:$block);
  let results = (outs TensorOf<[F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def AMP_ComputeScaleOp : AMP_Op<"compute_scale", [Pure,
    AllTypesMatch<["amax", "result"]>]> {
  let summary = "The FP8 scale for an amax (Transformer Engine's formula)";
  let description = [{
    Per element of `amax`: `scale = (max / amax) / 2^margin`, where `max`
    is the largest finite value of the FP8 type the scale is for (448 for
    E4M3, 57344 for E5M2). An amax of 0, infinity or NaN gives `previous`
    when it is there (delayed scaling) and 1 otherwise (current scaling);
    a quotient that overflows FP32 becomes the largest finite FP32.
    With `pow2`, the scale is rounded down to a power of two (block
    scaling). Folds when its operands are constants.

    ```mlir
    %s = amp.compute_scale %amax previous %s0
        {max = 448.0 : f32, margin = 0 : i64} : tensor<f32>, tensor<f32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$amax,
                       Optional<TensorOf<[F32]>>:$previous,
                       F32Attr:$max, DefaultValuedAttr<I64Attr, "0">:$margin,
                       UnitAttr:$pow2);
  let results = (outs TensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $amax (`previous` $previous^)? attr-dict `:` type($amax)
    (`,` type($previous)^)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def AMP_FP8UpdateOp : AMP_Op<"fp8_update", [Pure, SameVariadicOperandSize,
    SameVariadicResultSize, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "One step of delayed scaling for every FP8 tensor at once";
  let description = [{
    For each FP8 tensor `i` of the step, given its amax history
    (`histories[i]`, length L, slot 0 zero on entry), this step's amax
    (`amaxes[i]`, 0-d) and the scale this step used (`scales[i]`):
    1. slot 0 of the history takes this step's amax;
    2. `amax = max(history)` (`algo = "max"`) or `history[0]`
       (`"most_recent"`);
    3. the new scale is `amp.compute_scale` of that amax with `max =
       maxes[i]`, `margin` and the previous scale (0, infinity, NaN: kept);
    4. the history rolls by one toward the front (`new[i] = h[i + 1]`,
       `new[L - 1] = h[0]`) and slot 0 is cleared.
    Transformer Engine's `DelayedScaling` does the same in one kernel per
    step. The results are the new histories, then the new scales; they are
    the step's state (`amp.fp8.<tensor>.amax_history`,
    `amp.fp8.<tensor>.scale`). Never recomputed. Folds on constants.

    ```mlir
    %h2, %s2 = amp.fp8_update histories(%h) amaxes(%a) scales(%s)
        {maxes = array<f32: 448.0>, margin = 0 : i64, algo = "max"}
        : tensor<1024xf32>
    ```
  }];
  let arguments = (ins Variadic<TensorOf<[F32]>>:$histories,
                       Variadic<AMP_F32Scalar>:$amaxes,
                       Variadic<AMP_F32Scalar>:$scales,
                       DenseF32ArrayAttr:$maxes,
                       DefaultValuedAttr<I64Attr, "0">:$margin,
                       DefaultValuedAttr<StrAttr, "\"max\"">:$algo);
  let results = (outs Variadic<TensorOf<[F32]>>:$new_histories,
                      Variadic<AMP_F32Scalar>:$new_scales);
  let assemblyFormat = [{
    `histories` `(` $histories `)` `amaxes` `(` $amaxes `)` `scales` `(`
    $scales `)` attr-dict `:` type($histories)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def AMP_ScaledMatMulOp : AMP_Op<"scaled_matmul", [Pure]> {
  let summary = "A GEMM on FP8 operands with their dequantization factors";
  let description = [{
    `result = (a * a_scale_inv) x (b * b_scale_inv) + bias`, accumulated in
    FP32 and rounded to the result type (f32, f16 or bf16). `a` is
    `[..., M, K]` (`[..., K, M]` with `transpose_a`), `b` is `[K, N]`
    (`[N, K]` with `transpose_b`) or has `a`'s batch dimensions first; the
    result is `[..., M, N]`. The factors are 0-d, or per block with
    `a_block` / `b_block` as in `amp.quantize`. The optional `bias` is `[N]`.

    cuBLASLt's FP8 GEMMs need K and N to be multiples of 16 and reject two
    E5M2 operands; the verifier enforces both (HYBRID recipes pair an E5M2
    gradient with an E4M3 activation or weight).

    ```mlir
    %y = amp.scaled_matmul %a, %a_inv, %b, %b_inv
        : tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<128x256xf8E4M3FN>,
          tensor<f32> to tensor<64x256xbf16>
    ```
  }];
  let arguments = (ins TensorOf<[AMP_FP8]>:$a, TensorOf<[F32]>:$a_scale_inv,
                       TensorOf<[AMP_FP8]>:$b, TensorOf<[F32]>:$b_scale_inv,
                       Optional<TensorOf<[AMP_HighFloat]>>:$bias,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       OptionalAttr<DenseI64ArrayAttr>:$a_block,
                       OptionalAttr<DenseI64ArrayAttr>:$b_block);
  let results = (outs TensorOf<[AMP_HighFloat]>:$result);
  let assemblyFormat = [{
    $a `,` $a_scale_inv `,` $b `,` $b_scale_inv (`bias` $bias^)? attr-dict
    `:` type($a) `,` type($a_scale_inv) `,` type($b) `,` type($b_scale_inv)
    (`,` type($bias)^)? `to` type($result)
  }];
  let hasVerifier = 1;
}

#endif // AMP_DIALECT_AMP_IR_AMPOPS_TD
