//===- Passes.td - ONNX graph dialect passes ---------------*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_TD
#define AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ONNXGraphPrintSummary : Pass<"onnxg-print-summary", "ModuleOp"> {
  let summary = "Print a summary of an imported ONNX graph";
  let description = [{
    Prints, to standard error, the graph's name, IR version and opsets, its
    inputs, outputs and initializers (count and bytes), and its nodes counted
    per domain and op type with the op table's family ("unknown" for op
    types outside the table) and precision class (PrecisionOpInterface).
    The IR is left unchanged.
  }];
}

def ONNXGraphExpandGradients
    : Pass<"onnxg-expand-gradients", "func::FuncOp"> {
  let summary = "Replace ONNX's Gradient nodes by the backward nodes they "
                "stand for";
  let description = [{
    An `ai.onnx.preview.training` Gradient node computes the gradient of the
    tensor its attribute `y` names with respect to the tensors `xs` names,
    from a seed of ones. This pass differentiates the nodes between them in
    reverse order and replaces each Gradient node's outputs by the result:
    ONNX nodes (Add, Mul, MatMul, Transpose, ReduceSum, ...) that lower like
    any other. A tensor that `y` does not depend on gets a zero gradient.

        Differentiable nodes: Add, Sub, Mul, Div (with ONNX broadcasting: the
        gradient is summed over the broadcast dimensions), Neg, Identity, Sum,
    Mean, Relu, LeakyRelu, Sigmoid, Tanh, Softplus, Exp, Log, Sqrt, Abs,
    Erf, Sin, Cos, HardSigmoid, Clip (constant bounds), Dropout (in training mode through its
    mask; one without the mask output is replaced by one with it, since the
    mask cannot be drawn again), Where (to the branch each element took), Pow by a constant scalar exponent,
        MatMul of operands of rank 2 or more (summed over the batch
    dimensions an operand was broadcast along), Gemm (alpha, beta, either transpose, a broadcast C),
    ReduceSum and ReduceMean (constant axes, attribute or input, keepdims
    either way), ReduceMax and ReduceMin (the same; dy shared evenly by the
    elements equal to the result, as PyTorch's amax and amin do), Softmax and LogSoftmax (over one axis; before opset 13
                the last), NegativeLogLikelihoodLoss (each reduction, class weights,
    ignore_index), LayerNormalization and BatchNormalization (with batch
    statistics in training_mode, else its input statistics; scale and
        bias), Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand,
        Tile (constant repeats), Concat, Split (every part), Slice (constant bounds and steps), Pad
    (constant mode and pads) and Cast between float types (the shape ops and reductions with
    static shapes); and through the gradient ops of ONNX Runtime that
        amp-opt lowers: Conv and ConvTranspose (com.microsoft ConvGrad and
    ConvTransposeGrad), MaxPool (MaxPoolGrad,
    reading the Indices of the node or of a copy that returns them),
    AveragePool (AveragePoolGrad), Resize from opset 11 in modes nearest
    and linear (ResizeGrad), SoftmaxCrossEntropyLoss
    (SoftmaxCrossEntropyLossGrad, from the node's log_prob or a LogSoftmax
        of the scores), Gather of a differentiated table (GatherGrad) and
    GatherElements (GatherElementsGrad). Of a
    node with several results only the first may carry a gradient. Of
    what `--amp-pipeline` adds,
    `amp.scale_loss` (the gradient is multiplied by the scale) and
    `amp.cast` (cast back). Any other op between `xs` and
    `y`, a `y` of unknown shape, and a broadcast over dimensions that are
    not static are errors that name the node. `amp-lower-to-cpu` runs this
    pass before it converts to linalg (after `onnxg-expand-recurrent`).
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ONNXGraphExpandATen : Pass<"onnxg-expand-aten", "func::FuncOp"> {
  let summary = "Expand the ATen nodes that ORTModule exports, and their "
                "gradients, into ONNX and ONNX Runtime nodes";
  let description = [{
    ORTModule (ONNX Runtime's training of a PyTorch module) exports some
    PyTorch operators as `org.pytorch.aten` ATen nodes, which ONNX Runtime
    runs by calling PyTorch, and writes their gradients as ATen nodes too.
    This pass replaces each by the nodes that compute the same
    (`operator`, with or without its `aten::` prefix; no `overload_name`
    but those named below):

    | operator | becomes |
    |---|---|
    | `embedding` | Gather of the weight's rows |
    | `embedding_backward` | `com.microsoft` GatherGrad into [num_weights, D]; the `padding_idx` row gets no gradient (Where); `scale_grad_by_freq` divides each row's gradient by its index's count (a GatherGrad of ones) |
    | `max_pool2d_with_indices` | MaxPool (kernel_size, stride, padding, dilation, ceil_mode); its Indices minus each plane's offset, as PyTorch counts them |
    | `max_pool2d_with_indices_backward` | MaxPoolGrad through the indices plus each plane's offset |
    | `avg_pool2d`, `avg_pool2d_backward` | AveragePool, AveragePoolGrad (count_include_pad) |
    | `_adaptive_avg_pool2d`, `_adaptive_avg_pool2d_backward` | AveragePool, AveragePoolGrad with windows of input size / output size |
    | `numpy_T` | Transpose reversing the axes |
    | `bitwise_or` (overload `Tensor`) | Or (booleans), BitwiseOr (integers, opset 18) |
    | `multinomial` | Multinomial of the weights' Log (with replacement, or one draw per row) |
    | `argmax` | ArgMax (a missing dim: over the flattened input) |
    | `max`, `min` | ReduceMax, ReduceMin of every element (ORTModule differentiates them with ONNX nodes) |
    | `max`, `min` (overload `dim`) | ReduceMax or ReduceMin over the dim, and ArgMax or ArgMin (the first extreme) |
    | `value_selecting_reduction_backward` | `com.microsoft` GatherElementsGrad: the gradient at the indices along the dim |
    | `upsample_nearest1d`/`2d`/`3d` (overload `vec`), `..._backward` | Reshape, Expand, Reshape (each element into a block); the gradient a ReduceSum of each block |
    | `binary_cross_entropy_with_logits`, `..._backward` | (1 - t)·x + l·softplus(-x), l = 1 + (pos_weight - 1)·t, times weight, reduced; the gradient (l·sigmoid(x) - pos_weight·t)·weight·grad (over N for mean), in f32 |
    | `diagonal`, `diagonal_backward` | the two dims moved last and flattened: a Gather of the diagonal's positions; the gradient a GatherGrad back |
    | `unfold`, `unfold_backward` | a Gather of [windows, size] positions along the dimension, the window axis moved last; the gradient a GatherGrad |
    | `native_group_norm`, `native_group_norm_backward` | per sample and group mean and 1/sqrt(var + eps) (ReduceMean), the affine weight and bias; the gradient's dX, dweight and dbias from the group means of dY·w and dY·w·x̂ |

    The import types these nodes' outputs (ONNX Runtime's ATen rules,
    lib/Target/ONNX/ContribSchemas.cpp), so the nodes after them are typed
    too; gradients whose sizes ORTModule computes from shapes
    (`Gather(Shape(weight), 0)`, `Shape(X)`, `Slice(Shape(Y), 2, 4)`) get
    those sizes.

    Static shapes and constant arguments are needed. Errors name the node:
    other operators and overloads, `sparse` embedding gradients,
    `divisor_override`, adaptive pools whose output sizes do not divide the
    input's, upsampling by fractional ratios, group counts that do not
    divide the channels, a ceil_mode max pool whose last window starts in the padding
    (PyTorch drops it, ONNX keeps it), a ceil_mode average pool where
    ceil_mode adds a window. `amp-lower-to-cpu` and `amp-lower-to-cuda` run
    this pass after `onnxg-expose-yield`; files that `amp-opt` writes keep
    the ATen nodes.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ONNXGraphExposeYield : Pass<"onnxg-expose-yield", "func::FuncOp"> {
  let summary = "Make ORTModule's YieldOp the step's interface: the "
                "module's outputs become results, their gradients inputs";
  let description = [{
    In a graph that ORTModule writes, `com.microsoft` YieldOp hands the
    module's outputs to PyTorch, which computes the loss from them, and
    returns their gradients (the backward's seeds). ONNX Runtime runs it by
    pausing the graph; a step compiled on its own cannot. This pass removes
    each YieldOp: its inputs become function results under their names
    (unless returned already), its outputs function arguments under theirs
    (`output-0_grad`), which amp-run fills with ones (the seeds of the sum
    of the module's outputs: of its loss, when the module returns one) or
    with `--input`. A YieldOp in a subgraph, and an output without a name or
    a ranked type, are errors. `amp-lower-to-cpu` and `amp-lower-to-cuda`
    run this pass first (before the expansions replace the values YieldOp
    names); files that `amp-opt` writes keep the YieldOp.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ONNXGraphExpandRecurrent
    : Pass<"onnxg-expand-recurrent", "func::FuncOp"> {
  let summary = "Unroll RNN, GRU and LSTM nodes (and ONNX Runtime's "
                "training forms and gradients) into the ONNX nodes of their "
                "equations";
  let description = [{
    Replaces each default-domain RNN, GRU and LSTM node by the nodes of its
    equations (ONNX's operator specification), unrolled over the time steps:

    - one MatMul projects the inputs of every step at once (X·Wᵀ, plus the
      biases Wb + Rb);
    - each step multiplies the hidden state by the recurrence weights
      (MatMul by Rᵀ) and computes the gates with Add, Mul, Sub, Gather and
      the activation nodes;
    - Concat stacks the steps' hidden states into Y, and the last states
      into Y_h and Y_c.

    Every attribute expands: `direction` (forward, reverse,
    bidirectional), `layout`, `activations` (Relu, Tanh, Sigmoid, Affine,
    LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign,
    Softplus) with `activation_alpha` and `activation_beta` (missing values
    take the defaults of the ONNX op of that name), `clip`, LSTM's
    `input_forget` (f = 1 - i) and peepholes, GRU's `linear_before_reset`.
    A `sequence_lens` that is not a constant equal to the sequence length
    masks each step with Where: a sequence's state stops at its length, in
    both directions, and its outputs past it are zero.

    16-bit float nodes (after `--amp-pipeline`) keep their GEMMs in 16 bits
    and compute the gates and the cell state in FP32, as cuDNN's RNNs do with
    FP32 math; the states are rounded to the data type where they feed the
    next GEMM and the outputs.

    ONNX Runtime's training forms expand too (its graphs use them for
    `nn.LSTM` and `nn.GRU`): `com.microsoft` LSTMTraining and GRUTraining
    also return every step's states and activated gates (LSTM's i, o, f,
    c; GRU's z, r, h), and LSTMGrad and GRUGrad backpropagate through the
    unrolled steps from them: per step the gates' gradients and one GEMM by
    R, then one GEMM each for dX, dW and dR over all steps. As ONNX
    Runtime's kernels, the gradients take one forward direction, the default
    activations, no clip and full sequences; LSTMGrad has no peephole
    input, so its chain treats the cells they read as constants.

    The sequence length must be static (it is unrolled); an unknown hidden
    size, an unknown activation, and `sequence_lens` below opset 9 are errors
    that name the node. `amp-lower-to-cpu` and `amp-lower-to-cuda` run this
    pass first.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ONNXGraphExpandAttention
    : Pass<"onnxg-expand-attention", "func::FuncOp"> {
  let summary = "Expand opset 23's Attention and RotaryEmbedding into the "
                "ONNX nodes of their definitions";
  let description = [{
    Replaces each default-domain Attention node by the nodes that ONNX's
    reference implementation computes it with: 3-D Q, K and V split into
    `q_num_heads` and `kv_num_heads` heads (Reshape, Transpose);
    `past_key` and `past_value` concatenated before the present keys and
    values (the `present_key` and `present_value` outputs); group query
    attention's key and value heads repeated (Reshape, Expand); Q and Kᵀ
    each multiplied by the square root of `scale` (default 1 /
    sqrt(head size)) and multiplied (MatMul: BLAS and cuBLASLt); `softcap`
    (c·tanh(x / c)); `attn_mask` added (a bool mask as 0 or -inf, padded
    with -inf past its keys) and `is_causal`'s mask (query i sees keys up
    to the past length plus i); Softmax; MatMul by V. The scores, masks and
    softmax are f32 (the GEMMs keep the data type), as `softmax_precision`
    FLOAT asks; a 16-bit node after `--amp-pipeline` runs its GEMMs in 16
    bits.

    RotaryEmbedding becomes Slices of the rotated part of each head (halves,
    or even and odd elements with `interleaved`), the products with the
    cos and sin caches (gathered at `position_ids` when given) and
    Concats, in f32; `rotary_embedding_dim` rotates a prefix of each head.

    `qk_matmul_output`, opset 24's `nonpad_kv_seqlen`, dynamic sequence
    lengths with `is_causal`, and inputs of other ranks are errors that
    name the node. `amp-lower-to-cpu` and `amp-lower-to-cuda` run this pass
    after `onnxg-expand-recurrent`.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ONNXGraphUpgradeOpset : Pass<"onnxg-upgrade-opset", "ModuleOp"> {
  let summary = "Raise the model's default-domain ONNX opset";
  let description = [{
    Rewrites the nodes of the default ONNX domain for a newer opset and
    records that opset in `onnxg.opset_imports`, with the IR version ONNX's
    versioning table pairs with it in `onnxg.ir_version` (8 for opset 18, 9
    for opset 19), so that the exporter may write what only the newer opset
    has (FP8 types need opset 19 and IR version 9). The
    nodes whose meaning changed between opset 13 and 19 are rewritten as
    ONNX's version converter does (its adapters for 13 to 16, ONNX 1.13's
    and 1.14's changelogs after):

    - 14: a BatchNormalization with running-statistics outputs gets
      `training_mode = 1`; one with the saved mean and variance outputs
      (4 or 5 outputs) is an error, as in ONNX's converter;
    - 16: a RoiAlign without `coordinate_transformation_mode` keeps its old
      default, `output_half_pixel`;
    - 18: the `axes` attribute of ReduceMax, ReduceMin, ReduceMean,
      ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum and
      ReduceLogSumExp becomes an int64 Constant input.

    Every other change in between only adds types, attributes with the old
    behaviour as default, or new ops. A module at `opset` or later is left
    as it is; one older than 13 is an error that says to upgrade it to 17
    first with `onnx.version_converter.convert_version`. Each upgrade is
    reported as a remark. `--amp-pipeline="precision=fp8"` runs this pass
    first.
  }];
  let options = [
    Option<"opset", "opset", "int64_t", /*default=*/"19",
           "Opset to raise the default domain to (14 to 19)">,
  ];
}

#endif // AMP_DIALECT_ONNXGRAPH_TRANSFORMS_PASSES_TD
