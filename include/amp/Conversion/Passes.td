//===- Passes.td - Conversions out of amp-opt's dialects ---*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_PASSES_TD
#define AMP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertONNXGraphToLinalg : Pass<"convert-onnxg-to-linalg", "ModuleOp"> {
  let summary = "Lower graph nodes and amp ops to linalg, tensor, arith and "
                "math";
  let description = [{
    Rewrites every `onnxg.node`, `onnxg.initializer`, `onnxg.none` and `amp`
    op of the module's functions into upstream ops on tensors, so that the
    CPU and CUDA pipelines can fuse, bufferize and compile the step
    (docs/Lowering.md lists the op types and their limits).

    - Elementwise ops broadcast ONNX-style and compute in the element type
      of their results; FP16, BF16 and FP8 operands are widened to f32 for
      each op and its result rounded back, which gives the same values as a
      native operation rounded once.
    - GEMMs, convolutions, reductions, softmax, normalizations and losses
      accumulate in f32 whatever their input and output types (f64 for f64
      inputs).
    - Casts to FP8 clamp to the largest finite value first (ONNX
      `saturate=1`, and what the GPU's conversions do).
    - `amp.all_finite`, `amp.update_if_finite` and `amp.update_scale` lower
      to reductions and selects.
    - Random ops (Dropout in training mode, `com.microsoft` BitmaskDropout
      and BiasDropout) draw their masks from a counter-based generator keyed
      by a `tensor<2xi64>` (seed, step counter) argument that the pass
      appends to their function, named `amp.random_key` by its location;
      a node's `seed` attribute replaces the key's seed.

    - An If whose condition is a constant (a test of static shapes) becomes
      its branch's ops; another becomes an `scf.if` (`host-branches`). A
      Loop whose trip count and condition are constants unrolls (at most
      256 iterations), its body lowered once per iteration with the
      iteration number a constant; another becomes an `scf.while`
      (`host-branches`; no scan outputs). A Scan unrolls up to 256
      elements, each read by a slice of its scan inputs; a longer one
      becomes an `scf.for` (`host-branches`).

    Runtime-only ops (`YieldOp`, `Send`, `Recv`), custom domains and
    attributes a lowering does not support are errors that name the node;
    nothing is left half-converted in that case.
  }];
  let options = [
    Option<"hostBranches", "host-branches", "bool", "true",
           "lower an If or Loop whose condition is computed at run time to "
           "an scf.if or scf.while that the host evaluates, and a Scan too "
           "long to unroll to an scf.for; without it (the CUDA pipeline, "
           "whose buffers are in device memory) such a node is an error">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def CopyRepeatedResults
    : Pass<"amp-copy-repeated-results", "func::FuncOp"> {
  let summary = "Return a copy where a function returns one tensor twice";
  let description = [{
    Bufferization must not hand one buffer out as two results
    (buffer-results-to-out-params fails on it), but graphs do return one
    value twice once CSE has merged equal computations (the gradients of
    both operands of an Add). Each repeated result becomes a `linalg.copy`
    of the value into a new tensor, which carries its result number as
    `amp.result` so that a later CSE keeps the copies apart. The CPU
    pipeline runs it right before bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FreeDeadBuffers : Pass<"amp-free-dead-buffers", "func::FuncOp"> {
  let summary = "Free each buffer bufferization allocated after its last use";
  let description = [{
    `ownership-based-buffer-deallocation` frees the buffers of a block in
    one `bufferization.dealloc` at its end: a step holds all its
    temporaries until it returns, and `buffer-deallocation-simplification`
    checks every pair of that op's buffers for aliasing (30 s of a
    bidirectional LSTM step unrolled over 128 steps, 8000 buffers). This
    pass takes out of such an op (one that retains nothing) each
    `memref.alloc` of the same block that it frees unconditionally and
    whose memory nothing but views of it reaches (no region result or
    terminator, call result, tensor or other free takes it), and frees it
    with a `memref.dealloc` after the last op of the block that uses it or
    one of its views. Distinct allocations do not alias, so what the op
    keeps needs no check against them. `early=false` puts the frees where
    the op was: for the CUDA pipeline, whose `amp-plan-buffers` places the
    buffers by their accesses, and amp-run's `--gemm-records`, whose passes
    move a GEMM to its epilogue's op, past its operands' last use. The
    pipelines run it between `ownership-based-buffer-deallocation` and
    `buffer-deallocation-simplification`. `remarks=true` says per function
    how many buffers it freed, and the most bytes of them live at once
    against their total (what freeing them at the end holds).
  }];
  let options = [
    Option<"early", "early", "bool", "true",
           "free each buffer right after its last use (false: where the "
           "bufferization.dealloc was)">,
    Option<"emitRemarks", "remarks", "bool", "false",
           "a remark per function: buffers freed, and the most bytes of "
           "them live at once against their total (static shapes)">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def UnshareFills : Pass<"amp-unshare-fills", "func::FuncOp"> {
  let summary = "Give each op that writes into a filled or empty tensor its "
                "own";
  let description = [{
    CSE merges equal `tensor.empty` + `linalg.fill` pairs, so that one
    filled tensor (a zero) becomes the destination of several ops: the
    accumulators of GEMMs and reductions of one shape. Bufferization can
    write only one of them in place; every other gets a copy of the filled
    buffer (a `memref.copy` as large as its output: on the GPU, one more
    kernel and its traffic per GEMM). This pass clones the fill (and its
    `tensor.empty`) right before each destination after the first, or
    before every destination when something else also reads the fill.

    CSE also merges the `tensor.empty` destinations of all the elementwise
    ops of one shape. One-shot bufferization's analysis then sees them all
    in one alias set and checks each write against every read of it: its
    time grows with the cube of the ops in such a set (an LSTM unrolled
    over 512 steps: 65 s). Each run of 16 uses of a `tensor.empty` after
    the first 16 (in program order) gets a clone right before the run, so
    that the ops of a run may still share one buffer.

    The pipelines run it right before bufferization, after the last CSE.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def VectorizeContractions
    : Pass<"amp-vectorize-contractions", "func::FuncOp"> {
  let summary = "Tile GEMM-like linalg.generic ops and vectorize the tiles";
  let description = [{
    The CPU pipeline's register blocking. Each linalg.generic that is a
    contraction (a multiply-accumulate body, possibly with casts; projected
    permutation maps; static shapes; at least two parallel loops, then the
    reduction loops) is tiled with scf.for to `m x n x k` tiles (the two
    innermost parallel loops and the innermost reduction loop; the other
    loops by 1) and each tile becomes a `vector.contract`, lowered to outer
    products and then to one `vector.fma` per row. Each tile size is the largest power of two up to
    the option that divides its loop, so no tile needs masking. Other ops
    are left alone. Convolutions reach this pass as GEMMs: the lowering
    builds them as im2col columns and one contraction.
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", "4", "most rows of a tile">,
    Option<"tileN", "tile-n", "int64_t", "16", "most columns of a tile">,
    Option<"tileK", "tile-k", "int64_t", "8",
           "most reduction depth of a tile">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::tensor::TensorDialect", "::mlir::affine::AffineDialect"
  ];
}

def RaiseContractions : Pass<"amp-raise-contractions", "func::FuncOp"> {
  let summary = "Turn GEMM-like linalg.generic ops into linalg.contract";
  let description = [{
    The first half of the CPU pipeline's BLAS path. Each linalg.generic
    whose body is `acc + a * b` (operands widened to the accumulator by
    `arith.extf` or already of its type; f32 accumulator with f32, f16 or
    bf16 operands, or f64 throughout), whose maps are projected
    permutations, and whose every reduction loop indexes both inputs and
    every parallel loop the output and one input, becomes the equivalent
    `linalg.contract`. An input dimension indexed by the constant 0 (a
    broadcast batch of size 1) is dropped by a rank-reducing
    `tensor.extract_slice` first. As a named op the contraction is out of
    reach of `linalg-fuse-elementwise-ops`, so its operands stay plain
    tensors that `amp-contractions-to-blas` can hand to BLAS after
    bufferization. Other generics are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseElementwise : Pass<"amp-fuse-elementwise", "func::FuncOp"> {
  let summary = "linalg-fuse-elementwise-ops that keeps linalg.contract "
                "ops whole";
  let description = [{
    The CPU pipeline's elementwise fusion: the patterns of upstream's
    `linalg-fuse-elementwise-ops` (elementwise producers into consumers,
    reshapes folded by expansion, constant folding) under a control that
    never fuses into a `linalg.contract`. Upstream's pass rewrites a
    contraction whose operand is a reshape into a generic and may then fuse
    its single-use producers into the multiply-accumulate body: an FP8
    weight's whole quantization ends up recomputed for every product, and
    the GEMM is lost to the BLAS path. Here the reshape and the producers
    stay outside, computed once.

    Upstream fuses a producer only into its one consumer. With
    `multi-use` (the default), a cheap elementwise producer (parallel loops,
    at most four `arith` ops) whose result several ops read is also fused
    into each consumer that computes (not a pure copy or gather, which the
    library-call passes match) and reads it element for element (a
    permutation map, so nothing is recomputed more than once per consumer
    element): its few operations are recomputed there, and once every
    reader has them the producer's loop (a kernel on the GPU) and its
    stored result go. Mixed precision makes many such producers: a
    loss-scaled gradient's unscaling, read by the finiteness check and the
    update; a rounding `extf(truncf(x))` read by several ops.

    A `linalg.transpose` that one `linalg.generic` reads, and that does more
    than copy, becomes a generic first, so that it fuses into that reader,
    which then reads the transpose's input permuted (attention's head
    split, then the scaling of Q): one loop (a kernel on the GPU) and one
    buffer fewer. Other transposes stay: those around a contraction are the
    layouts that the GEMM and convolution record passes fold into the
    library calls (a convolution's weight gradient reads X and dY
    transposed and writes dW transposed).
  }];
  let options = [
    Option<"multiUse", "multi-use", "bool", "true",
           "also fuse cheap elementwise producers that several ops read">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def StoreFP8GemmOperands
    : Pass<"amp-store-fp8-gemm-operands", "func::FuncOp"> {
  let summary = "Store each FP8-quantized GEMM operand as FP8, K innermost, "
                "and dequantize it separately";
  let description = [{
    The FP8 half of the GEMM records. The graph lowering turns an
    `amp.scaled_matmul` into a dequantization (`extf(q) * scale_inv`, FP8
    to f32) and an f32 contraction, and fusion folds the dequantization into
    the quantization that produced `q`: one `linalg.generic` yields
    `extf(truncf(x * scale) : f8) * scale_inv`, so the FP8 data never
    exists in memory. After bufferization, for each such output that only
    contractions read (as an input, the generic the last writer before
    them), this pass makes the generic also store the `truncf` result into
    a new FP8 buffer laid out with the contraction's reduction (K)
    dimensions innermost (Hopper's cuBLASLt takes FP8 operands only in the
    "TN" layout: K contiguous in both), one buffer per distinct layout (a
    tensor and its transpose, as Transformer Engine's cast-transpose
    writes), and computes `scale_inv` once into a 0-d buffer from the
    generic's 0-d inputs. Each contraction then reads a buffer that a
    dequantizing `linalg.generic` (`extf(q) * scale_inv`, nothing else)
    fills just before it, which `amp-contractions-to-gemm-records` folds
    into an FP8 GEMM record. The generic stops writing the f32 output once
    nothing else reads it. Factors computed only from function arguments
    that nothing writes before (delayed scaling's scales) are computed
    together by one generic at the function's start (one per 4 KB of
    memref descriptors: a kernel's parameters). Values are unchanged: the same FP8 rounding, the
    same f32 product. Per-tensor scales only: a scale that varies over the
    tensor (block scaling) is left as it is. `remarks=true` says what was
    stored, or why a quantized GEMM operand was not.
  }];
  let options = [
    Option<"emitRemarks", "remarks", "bool", "false",
           "a remark per quantized GEMM operand: its FP8 layouts, or why it "
           "stays f32">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def ContractionsToGemmRecords
    : Pass<"amp-contractions-to-gemm-records", "ModuleOp"> {
  let summary = "Describe each linalg.contract on memrefs as a cuBLASLt-style "
                "GEMM record and call amp_gemm with it";
  let description = [{
    The GEMM half of the CUDA backend's library calls, checked on the CPU.
    Each `linalg.contract` on memrefs with static shapes and strides whose
    loops group into batch, M, N and K dimensions that every operand lays
    out contiguously, and whose operands a column-major GEMM reads in place
    (C with contiguous columns, or contiguous rows with A and B swapped:
    C^T = B^T A^T), gets a record (include/amp/Runtime/GemmRecord.h): m, n,
    k, batch, the transposes, leading dimensions, batch strides (0 for an
    operand shared by every batch) and element types, as cuBLASLt's matrix
    layouts take them. The record becomes a constant `memref.global` and the
    contraction a call to `amp_gemm_<A>_<B>_<D>(record, A, B, D)` (unranked
    memrefs; `llvm.emit_c_interface`). libamp_cpu_runtime executes a record
    with OpenBLAS's column-major GEMM, which reads the same fields the same
    way, so amp-run (`--gemm-records`) checks every record against the
    BLAS path. A zero `linalg.fill` of exactly the output's elements
    earlier in the block, with no op in between reading or writing that
    buffer, becomes the record's overwrite flag (beta 0: D is not read)
    and is erased. A `linalg.generic` right after an overwritten GEMM that
    only adds a bias along D's column-major rows into a buffer of D's shape
    (nothing else reading D, nothing touching that buffer in between)
    becomes the record's bias epilogue (cuBLASLt's `EPILOGUE_BIAS`): a call
    to `amp_gemm_bias_<A>_<B>_<D>(record, A, B, out, bias)` that writes the
    addition's output. A ReLU (`arith.maximumf` with +0.0) after the
    addition, or alone, in such a generic (or one that works in place on
    D) becomes the record's activation (`RELU_BIAS`, `RELU`). GELU's tanh
    approximation, however the body spells it (include/amp/Conversion/
    GELUBodies.h evaluates the body at sample points), of D plus a bias in
    such a generic, or of what the GEMM or its bias epilogue wrote in the
    next generic, is activation 2 (`GELU_BIAS`, `GELU`), or 3
    (`GELU_AUX_BIAS`, `GELU_AUX`) where GELU's input is read later: the
    GEMM writes it too, as its aux matrix (`amp_gemm_bias_aux_*`,
    `amp_gemm_aux_*`, the aux last). A generic right after an overwritten
    GEMM that multiplies D by GELU's derivative at another buffer of D's
    shape is activation 4 (`DGELU`), that buffer the aux matrix. The aux
    has D's type and leading dimension, a multiple of 8. Where an op in
    between uses the generic's output, the GEMM moves to the generic when
    nothing in between writes what it reads. ReLU's backward
    (`select(y > 0, dY, 0)`) right after the GEMM of dY, at a y that an
    earlier GEMM's ReLU epilogue wrote and nothing wrote since, is
    activation 6 (`DRELU`): that GEMM's call is rewritten to also write
    the bit mask of y > 0 into a new i8 buffer (activation 5,
    `RELU_AUX_BIAS`/`RELU_AUX`, `amp_gemm_bias_mask_*`/`amp_gemm_mask_*`),
    which the backward GEMM reads and which is freed after it. In AMP, where
    an f16 or bf16 GEMM's next kernel adds the bias rounded to the inputs'
    type to D first and only rounds the sum, the GEMM adds the bias (an
    f16/bf16 copy that a new kernel rounds, or the bias itself) and writes
    the rounded sum: the kernel's output when that is all it computes, else
    a new buffer that the kernel reads instead (`amp_gemm_bias_<T>_<T>_<T>`).
    That last case keeps the kernel and, for an f32 bias, adds the copy's:
    it is taken only where D has at least `rounded-bias-min-elements`
    elements, whose 4 bytes saved each outweigh a launch.
    An overwritten f16 or bf16 GEMM whose f32 result
    the ops that read it, `linalg.generic`s up to its next write (a
    gradient's finite check and its update, say), use only in truncations
    to the inputs' type writes the rounded
    result instead (cuBLASLt's output type; include/amp/Conversion/
    OutputCasts.h): a new buffer of that type, `amp_gemm_<T>_<T>_<T>`, and
    the generic reads it without the truncations. A one-batch GEMM with an
    f32 D and a zero-filled f32 vector that a `linalg.generic` sums one of
    its inputs into, over exactly the GEMM's reduction loops (a Linear
    layer's bias gradient next to its weight gradient; include/amp/
    Conversion/BiasGradients.h), computes the sum in its epilogue
    (cuBLASLt's `BGRADA`/`BGRADB`, bias 2 or 3 in the record) when nothing
    writes that input or touches the vector between the two: a call to
    `amp_gemm_bgrad_<A>_<B>_<D>(record, A, B, D, gradient)` that writes
    both, and the reduction and its fill go. A contraction whose two
    inputs a dequantizing
    `linalg.generic` (`extf(q) * scale_inv`, FP8 `q` read through a
    permutation, 0-d `scale_inv`) fills just before it, as
    `amp-store-fp8-gemm-operands` leaves them, gets an FP8 record on the
    FP8 buffers instead when cuBLASLt's FP8 rules hold ("TN": K contiguous
    in both, leading dimensions multiples of 16, f32 result, not two E5M2
    operands): a call to `amp_gemm_<A>_<B>_f32(record, A, B, D, scale_a,
    scale_b)`, and the dequantizations go once nothing else reads their
    values. With `transposes` (the default), a transposed copy
    (`linalg.transpose`, or a `linalg.generic` that only copies through a
    permutation) that wrote an input just for the GEMM, with nothing
    writing its source in between, goes: the GEMM reads the source through
    permuted strides. An overwritten result that a chain of such copies
    moves (each the next op to touch the buffer that the one before wrote,
    and its only reader; the reader of an output cast that only rounds is
    such a copy) is written where the farthest copy whose target nothing
    touches in between puts it, through the copies' composed permutation,
    and the copies go (attention's heads: V transposed for P V, and P V's
    result rounded and transposed back). Either only where the GEMM keeps
    its sizes (no loop moved into the batch) and a bias epilogue its
    orientation, with batch strides and leading dimensions that cuBLASLt's
    strided batches take. Other contractions are left for
    `amp-contractions-to-blas`;
    `remarks=true` prints each record, or why a contraction has none (and
    why FP8 operands got no FP8 record), and the copies each GEMM folds.
  }];
  let options = [
    Option<"emitRemarks", "remarks", "bool", "false",
           "a remark per contraction: its record, or why it has none">,
    Option<"warnUnrecorded", "warn-unrecorded", "bool", "false",
           "a warning per contraction that gets no record, with why (the "
           "CUDA pipeline: it stays a kernel of the grid loops)">,
    Option<"roundedBiasMinElements", "rounded-bias-min-elements", "int64_t",
           "1048576",
           "the fewest elements of D for which an AMP bias that a kernel "
           "adds before going on becomes the GEMM's, with a new kernel "
           "rounding an f32 bias (about a launch's worth of bytes)">,
    Option<"foldTransposes", "transposes", "bool", "true",
           "read the source of an input's transposed copy, and write a "
           "result that only copies move where they put it, through "
           "permuted strides">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"
  ];
}

def ConvolutionsToDNNRecords
    : Pass<"amp-convolutions-to-dnn-records", "ModuleOp"> {
  let summary = "Describe each im2col convolution as a cuDNN-style "
                "convolution record and call amp_conv with it";
  let description = [{
    The convolution half of the CUDA backend's library calls, checked on
    the CPU. The graph lowering builds a convolution as an implicit GEMM:
    a copying `linalg.generic` gathers the input windows into im2col columns
    `col[n, g, c, k..., o...] = x[n, g*C + c, o*s + k*d]`, collapsed to
    `[n, g, c*k, o]`, and a `linalg.contract` multiplies them with the
    weights `[g, m, c*k]` into `y[n, g, m, o]` (forward, also a data
    gradient: a convolution of the upsampled dY by the flipped W) or with
    `dy[n, g, m, o]` into `dw[g, m, c*k]` (the weight gradient). After
    bufferization, each
    such contraction on packed memrefs of one type (f32 or f64), or of
    f16 or bf16 inputs into an overwritten f32 accumulator that its
    readers only round to their type (written rounded instead, cuDNN's
    PSEUDO_HALF configuration, as GEMM records' output casts), or adds a
    bias and then only rounds (the call rounds before the bias, as
    PyTorch's cuDNN path does, and the op widens the values back), whose
    gathered input
    nothing writes between the gather and the contraction, gets a record
    (include/amp/Runtime/ConvRecord.h): mode (forward, backward filter or
    backward data),
    batch, channels, groups, and the input, kernel, output sizes, strides,
    dilations and paddings of up to three spatial dimensions. An input the
    lowering padded with zeros (a zero fill, then a copy of the input into
    a unit-stride window, the batch and channels whole) is read unpadded,
    the record carrying the padding, and the fill and copy go once nothing
    reads the padded buffer. A data gradient, which the lowering builds as
    a convolution of dY upsampled by the strides (a zero fill, then a copy
    into a strided window) and padded, with the kernel flipped and
    regrouped by a copying generic (`w[g, m, c, k] = W[g*C + c, m,
    K-1-k]`), gets a backward-data record that reads dY and W themselves
    (when its output padding is below the stride; W rounded in its own
    layout by a new generic where the flip also rounds an f32 W to the
    convolution's type), and the copies and the
    flip go once nothing reads them. A weight gradient computed as
    PyTorch's decomposition does, a convolution of X and dY transposed
    batch-last whose result is transposed back into dW (maybe through an
    elementwise rounding), gets a backward-filter record that reads X and
    dY and writes dW, and the transposes go. The record
    becomes a constant `memref.global` and the contraction a call to
    `amp_conv_<X>_<F>_<R>(record, X, F, R)` that reads the gathered input
    X itself (dY for backward data); the gather and its columns are erased
    once no contraction reads them. A zero `linalg.fill` of the result just before becomes the
    overwrite flag (cuDNN's beta 0), as for GEMM records. libamp_cpu_runtime
    executes a record with direct convolution loops, so amp-run
    `--grid-loops` checks every record against the CPU path. Run before
    `amp-contractions-to-gemm-records`, which takes the contractions left;
    `remarks=true` prints each record, or why a contraction has none.
  }];
  let options = [
    Option<"emitRemarks", "remarks", "bool", "false",
           "a remark per contraction: its record, or why it has none">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"
  ];
}

def ContractionsToBLAS : Pass<"amp-contractions-to-blas", "ModuleOp"> {
  let summary = "Call the CPU runtime's BLAS GEMMs for linalg.contract on "
                "memrefs";
  let description = [{
    The second half of the CPU pipeline's BLAS path, after bufferization.
    Each `linalg.contract` on memrefs whose types the runtime takes (f32
    output with f32, f16 or bf16 inputs, or f64 throughout) becomes a call
    to `amp_contract_<A>_<B>_<C>` of libamp_cpu_runtime
    (include/amp/Runtime/CPURuntime.h): every operand is passed as a
    strided view over all loops of the contraction (stride 0 on the loops
    it does not index, built with `memref.reinterpret_cast`), cast to an
    unranked memref, with an i64 that says which operands each loop
    indexes. The runtime runs one OpenBLAS GEMM per batch index, packing
    operands whose layout or type BLAS cannot take. The declarations carry
    `llvm.emit_c_interface`. Other contractions are left for
    `convert-linalg-to-loops`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def ExpandFP8Casts : Pass<"amp-expand-fp8-casts", "func::FuncOp"> {
  let summary = "Rewrite FP8 truncf and extf as integer bit arithmetic";
  let description = [{
    The CPU pipeline's FP8 conversions. `convert-arith-to-apfloat` turns
    each FP8 `arith.truncf` and `arith.extf` into a call to an APFloat
    wrapper per element, which made FP8 steps several times slower than
    BF16 ones. This pass rewrites casts between f8E4M3FN or f8E5M2 and
    f32, f16 or bf16 (scalars or vectors) into i32 shifts, masks, adds and
    selects that LLVM vectorizes:

    - `truncf` rounds to nearest even (the mantissa's dropped bits for
      normal results, an f32 addition of 2^23 for subnormal ones), gives
      NaN for NaN, and from halfway past the largest finite value on
      infinity (E5M2) or NaN (E4M3FN, which has no infinity; APFloat
      rounds the tie at 464 up as well). The CPU pipeline's casts clamp
      first when they saturate.
    - `extf` decodes sign, exponent and mantissa, subnormals exactly,
      infinity and NaN.

    The results equal APFloat's bit for bit for every non-NaN value (NaN
    payloads are the canonical quiet NaN). A `truncf` with a rounding mode
    other than to-nearest-even, and casts from f64, are left to
    `convert-arith-to-apfloat`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def OutlineLoopNests : Pass<"amp-outline-loop-nests", "ModuleOp"> {
  let summary = "Move each top-level loop nest of a function into a "
                "function of its own";
  let description = [{
    The CPU pipeline's last step on loops, for compile time. A lowered
    step is one function with thousands of loop nests, and LLVM's loop
    passes (IndVarSimplify, ScalarEvolution) and instruction selection
    take time that grows faster than the size of one function. This pass
    moves each op with loops (`LoopLikeOpInterface`: scf.for, scf.parallel,
    scf.while, affine.for) at the top level of a function with at least
    `min-loops` of them into a new private function `<name>_loop<i>`,
    with `passthrough = ["noinline"]` (the LLVM dialect's attribute, which
    convert-func-to-llvm keeps) so that LLVM keeps it apart, and internal
    linkage (`llvm.linkage`), so that two lowered steps linked into one
    program do not clash; it replaces the loop nest with a call. The new
    function takes the values the loop nest uses from above as arguments
    and returns its results; constants are copied into it, so that LLVM
    still sees constant bounds and strides. The pass cannot fail.

    LLVM's own `LoopExtractorPass`, which amp-run used before, does the
    same on LLVM IR but scans the whole function again for each loop it
    extracts: 15 s of a 31 s JIT on a ResNeXt-50 step.
  }];
  let options = [
    Option<"minLoops", "min-loops", "unsigned", "2",
           "outline only from functions with at least this many top-level "
           "loop nests">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LinalgToGridLoops : Pass<"amp-linalg-to-grid-loops", "func::FuncOp"> {
  let summary = "Lower each linalg op on memrefs to a loop nest tiled into a "
                "GPU grid of blocks and threads";
  let description = [{
    The CUDA backend's kernels, before they become kernels. Each linalg op
    on memrefs becomes one `scf.parallel` of blocks around one
    `scf.parallel` of threads, with `#gpu.loop_dim_map` mappings that
    `convert-parallel-loops-to-gpu` turns into a `gpu.launch`:
    - a `linalg.generic`'s parallel dimensions are interchanged outermost;
      together they form one index space of `N` points, tiled into
      `ceil(N / block-size)` blocks of `min(N, block-size)` threads, each
      thread guarded by `index < N`; the reduction dimensions stay
      sequential loops inside each thread, `scf.for` loops that carry the
      outputs in `iter_args` (a register): each output is loaded once
      before them and stored once after, unless an output is indexed by a
      reduction dimension or an input reads an output's buffer (then it is
      loaded and stored at each iteration, as `linalg` lowers it). Where a
      `linalg.fill` set exactly an output's elements earlier in the block
      (nothing touching that buffer in between) and the outputs are indexed
      by all the parallel dimensions, the registers start from the fill's
      value instead and the fill (a grid of its own) is erased;
    - an op with no parallel dimension (a full reduction) runs in a grid of
      one block of one thread (a loop over one point before tiling);
    - an `scf.parallel` without a mapping outside grids (a scatter's nest
      from `amp-parallelize-loop-nests`, a one-point loop from
      `amp-host-data-to-kernels`) is tiled like a linalg op's parallel
      dimensions, and fuses like one: its accesses are the memrefs from
      above that its ops read or write, each of any element (a loop whose
      ops may touch memory they do not name stays a grid of its own);
    - with `half-pairs` (on by default), an elementwise op (no reduction)
      on f16 or bf16 buffers, its innermost loop of even size, gives each
      thread two adjacent elements of that loop: every 16-bit operand
      indexed by that loop as its contiguous last dimension, at an even
      offset with even strides, is read and written as one 4-byte aligned
      `vector<2xf16>`/`vector<2xbf16>` (one 32-bit access, the FP16x2/BF16x2
      access of hand-written kernels), the body computed for each element;
      other operands are read per element. Half the threads, half the
      16-bit memory instructions;
    - with `fuse` (on by default), consecutive ops whose parallel loops have
      the same bounds and steps, with only allocations and ops without
      memory effects between them, run as one grid (each thread runs the
      first op's body, then the second's) when every element that one of
      them writes and the other reads or writes is the same memref,
      partitioned by the parallel dimensions at the same results in both
      (each parallel dimension alone at some result of both indexing maps,
      so that an iteration touches only its own elements): a reduction and
      the elementwise op on its result (LayerNorm's mean and inverse
      deviation), two reductions over the same rows, two elementwise ops
      with no producer in common. The same holds for rows: an op whose
      first parallel loops repeat a reduction's (softmax's division and
      LayerNorm's normalization, which read the row's result at each of its
      elements; the op that computes the rows a reduction reads) runs in
      the reduction's threads, its other parallel loops made sequential
      `scf.for` loops after (or before) the reduction's, when they add at
      most as many iterations as the reduction's loops run. An op that
      cannot fuse with the next may fuse with one of the 4 after it: it
      moves down to it when the ops between it and that one are ops over
      buffers independent of it (see `fuse-independent` below) and ops
      without memory effects (a BatchNorm's centering, its running mean's
      update, then its normalization of the centered values: the small
      FP16 CNN's 54 grids became 49, BF16's 48 became 40). Two memrefs
      share memory
      when they are views of one buffer, unless both are subviews of it
      with static ranges that are disjoint in one dimension (the slices of
      a concatenation); distinct function arguments are distinct buffers
      (the step's contract), as for the register accumulators above. A
      memref that an op's body uses from above (a gather's table, loaded
      at computed indices) is an access of any of its elements. Two ops of
      one point each run in one thread, one after the other, whatever they
      touch, unless they are independent (below). Two ops do not fuse
      when the kernel's parameters (see `max-parameter-bytes` below) would
      pass the limit: an unrolled LSTM's 16 outputs copied into one
      stacked tensor, 32 memrefs, are too many for one kernel;
    - with `fuse-independent` (on by default), grids left after that with
      static bounds and no memory that one writes and another reads or
      writes run as one grid (the horizontal fusion of PyTorch's
      `_foreach` ops and Apex's multi-tensor apply: the all-finite checks
      and updates of every parameter, the first ops of independent
      branches, FP8's scaling-state updates): each op's points, padded to
      a multiple of 32 (a warp), in turn; an `scf.index_switch` on the
      point's segment runs that op's body on the indices delinearized from
      the point's offset in the segment. The grids need not be
      consecutive: each joins the earliest grid before it in its block that
      it can move up to, and runs there. It moves past ops that touch no
      memory it writes and write no memory it touches (a library call
      touches its operands), past grids that have moved up before it or
      that it does not depend on, and takes along the allocations and ops
      without memory effects that define what it uses (views); it stops at
      any other op. A grid stops taking more before the kernel's
      parameters (a memref descriptor is two pointers, an offset, a size
      and a stride per dimension; 8 bytes for any other value but a
      constant, which the kernel gets as code) would pass
      `max-parameter-bytes` (4096: PTX before ISA 8.1 allows 4352).
    - with `row-lanes` (32 by default; 1 turns it off), a grid whose
      threads each run a row after that (a reduction over the row and the
      elementwise ops over its elements: softmax, LayerNorm and their
      gradients), when one of the row's loops runs at least `row-lanes`
      iterations, gives each row `row-lanes` threads instead (a warp, for
      coalesced reads along the row), `block-size / row-lanes` rows per
      block, and joins no independent grid. Each lane takes every
      `row-lanes`-th iteration of the row's loops (those over an op's
      parallel dimensions, and reductions whose iter_args each have one
      combiner with a neutral element, from which each lane's partial
      result starts). The block loop's body allocates a scratch buffer per
      reduction result (one partial result per thread: shared memory on
      the GPU), frees them at its end, and has one thread loop per phase
      of the row: a loop of the row (a reduction's partial results stored to
      its scratch), or the stores between the row's loops, which the row's
      first lane does. A phase that needs a reduction's result combines the
      row's partial results from its scratch buffer, in lane order, from
      the reduction's initial value; loads and ops without memory effects
      run in each phase that needs their values (a row whose load another
      phase would read after a write of its memory keeps one thread).
      `amp-grid-phases-to-gpu` makes such a block loop one `gpu.launch`
      with a barrier between phases.
    Without the GPU conversion, `convert-scf-to-cf` runs the same loops
    sequentially on the CPU (`amp-run --grid-loops`), so the kernels'
    arithmetic is checked against the CPU path without a GPU.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "threads per block (at most 1024)">,
    Option<"rowLanes", "row-lanes", "int64_t", "32",
           "threads that share a row of a reduction and its elementwise "
           "ops (a power of two, at most block-size; 1: one thread per "
           "row)">,
    Option<"halfPairs", "half-pairs", "bool", "true",
           "two adjacent f16/bf16 elements per thread of an elementwise op, "
           "as one 32-bit access">,
    Option<"fuse", "fuse", "bool", "true",
           "run consecutive ops with the same parallel iteration space as "
           "one grid where each iteration depends on itself only">,
    Option<"fuseIndependentGrids", "fuse-independent", "bool", "true",
           "run independent grids as one, each on its own blocks, moving "
           "later ones up to the earliest they can join">,
    Option<"maxParameterBytes", "max-parameter-bytes", "int64_t", "4096",
           "most bytes of kernel parameters that fuse and fuse-independent "
           "may give a kernel (4352 in PTX before ISA 8.1)">
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect"
  ];
}

def GridPhasesToGPU : Pass<"amp-grid-phases-to-gpu", "func::FuncOp"> {
  let summary = "Turn a grid whose threads run in phases into a gpu.launch "
                "with barriers between the phases";
  let description = [{
    `amp-linalg-to-grid-loops{row-lanes}` gives a row several threads: its
    block loop (an `scf.parallel` mapped to blocks) allocates scratch
    buffers (`memref.alloc`, freed at its end) and holds one thread loop
    (an `scf.parallel` mapped to threads) per phase, each phase reading
    what the ones before wrote. Run sequentially on the CPU that is what
    it says; `convert-parallel-loops-to-gpu` takes no block loop with more
    than one thread loop, nor an allocation beside them. This pass makes
    each such block loop one `gpu.launch` of the block loop's trip count
    in blocks and the thread loops' in threads (the same for all of them),
    each scratch buffer a workgroup attribution (shared memory), the
    phases' bodies one after the other with a `gpu.barrier` between each
    two. Block loops without an allocation are left to
    `convert-parallel-loops-to-gpu`. One that holds anything else than
    static allocations, their frees, thread loops from 0 by 1 of one trip
    count and ops without memory effects is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect"
  ];
}

def ReverseParallelLoops : Pass<"amp-reverse-parallel-loops",
                                 "func::FuncOp"> {
  let summary = "Run every parallel loop's iterations last to first";
  let description = [{
    A check for the CUDA backend's grids without a GPU: every
    `scf.parallel`'s body sees `lb + last - iv` for each induction variable
    `iv`, where `last` is the loop's last value, so that a sequential run
    (`convert-scf-to-cf`) visits the iterations in reverse order. A grid
    whose threads depend on one another (one thread reads or writes an
    element that another writes: a race on a GPU) then gives other results
    than in order, while a correct grid gives the same.
    `amp-run --grid-loops --reverse-grid-loops` runs a step's kernels this
    way; a test runs the zoo's steps in both orders against the CPU path.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def SplitReductions : Pass<"amp-split-reductions", "func::FuncOp"> {
  let summary = "Split large reductions with few outputs into a parallel "
                "partial reduction and a small final one";
  let description = [{
    On tensors, before bufferization for the GPU: a grid gives each output
    element of a reduction one thread, so a full reduction (the all-finite
    check of dynamic loss scaling, FP8's amax) or one with few outputs runs
    on a handful of threads. A reduction with fewer than `threads / 4`
    output elements and at least 2048 reduced elements has its reduction
    dimensions collapsed into one (where every indexing map keeps them
    contiguous) and split by upstream `linalg::splitReduction`: `ratio`
    partial results per output, each thread summing a strided slice (so
    neighbouring threads read neighbouring elements), then a reduction of
    the partials, which is split again the same way where that pays. The
    ratios are those that give the shortest chain of sequential iterations
    one thread runs, level after level, counting each level as 256 more
    (a kernel launch): each at least 8 and giving at most `threads`
    threads, a divisor of the reduced size or, where the size has a large
    prime factor (a vocabulary of 30522 = 6 * 5087 words), a power of two
    whose remainder, the tail, is sliced off and reduced after the
    partials, starting from their result. A 768x3072 all-finite check
    takes 144 + 128 + 128 iterations in three levels (16384, then 128
    threads), where one split of 1024 took 2304 + 1024. An input that a
    `linalg.generic` reads at index 0 of a unit dimension (a softmax's row
    max from a [rows, 1] tensor) is collapsed without that dimension first,
    since
    `linalg::splitReduction` needs maps it can invert; other constant
    indices leave the reduction as it is. A `linalg.contract` stays whole:
    it becomes a GEMM record, and the GEMM library splits its own K. So
    does a reduction that a contraction takes as its bias gradient
    epilogue (include/amp/Conversion/BiasGradients.h).

    Reduction dimensions that do not collapse into one (BatchNorm's batch
    and spatial dimensions, across its channels) are reduced in two steps
    first, when the reduction has one combiner with a neutral element: the
    largest group of them that collapses (of at least 8 elements), with
    the others made parallel and appended to the output (partials starting
    from the neutral element), then the partials combined over the others
    into the output. The first step is then split as above, and the second
    where that pays.

    With `serial-terms` above 0 (the CPU pipeline, for accuracy rather than
    threads), `threads` is ignored and every floating-point sum (one
    `arith.addf` combiner, whatever its prologue) whose output elements
    each add more than `serial-terms` terms in sequence is split, and its
    partial reductions again, until none adds more: a cascade of blocked
    sums, whose rounding error grows with the sum of the block sizes rather
    than with the reduced size (PyTorch's and ONNX Runtime's CPU sums are
    blocked too). A reduced size up to `serial-terms` squared is split
    into two levels of about its square root; a larger one by its largest
    divisor up to `serial-terms`, then again; a size above twice
    `serial-terms` with no divisor in [2, `serial-terms`] (a large prime:
    1733, a factor of GPT-2's 50257 words) by `serial-terms` over its head,
    its tail of fewer terms added after (a smaller prime stays whole).
    Other combiners (max, min, products, integers) stay whole.

    Bias gradients that a contraction can take as its epilogue are left
    whole in both modes unless `split-bias-gradients` is set (the CPU's
    BLAS path, which has no epilogue).
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"16384",
           "Threads to aim for: output elements times the split ratio">,
    Option<"serialTerms", "serial-terms", "int64_t", /*default=*/"0",
           "Split floating-point sums until no output element adds more "
           "than this many terms in sequence (0: split for threads)">,
    Option<"splitBiasGradients", "split-bias-gradients", "bool",
           /*default=*/"false",
           "Split bias gradients too, rather than leaving them whole for "
           "their contraction's epilogue">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def ParallelizeLoopNests : Pass<"amp-parallelize-loop-nests", "func::FuncOp"> {
  let summary = "Make the independent loops of a loop nest on buffers "
                "parallel";
  let description = [{
    What bufferization leaves of a scatter (ScatterElements, ScatterND,
    GatherGrad, a MaxPool gradient) is a perfect nest of `scf.for` loops
    that read and write buffers element by element. Run as it is, it is
    one GPU thread. This pass finds the loops whose iterations touch
    disjoint elements of every buffer the nest writes: every load and store
    of a written buffer, through one view, indexes one dimension with the
    loop's induction variable itself (ScatterElements' dimensions other
    than its axis, an embedding gradient's feature dimension). The nest
    becomes an `scf.parallel` over those loops around the others, in their
    order, which `amp-linalg-to-grid-loops` tiles into a grid.

    With `atomic-updates`, a nest some of whose loops are not independent
    becomes parallel over all of them when every buffer it writes is
    written only by additions (`store (addf (load B[i]), u), B[i]`, f32 or
    f64: a scatter-add, a MaxPool gradient, an embedding gradient), each
    then a `memref.atomic_rmw addf`. The sums then run in no fixed order
    on a GPU (as PyTorch's `scatter_add_` does).

    A nest is left as it is when a loop carries values, a bound is
    computed inside the nest, or its body has a memory effect other than
    `memref.load` and `memref.store`. Distinct allocations and function
    arguments are assumed not to overlap (a step's buffers are separate).
  }];
  let options = [
    Option<"atomicUpdates", "atomic-updates", "bool", "false",
           "make loops that add into the same elements parallel too, with "
           "atomic additions">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def HostDataToKernels : Pass<"amp-host-data-to-kernels", "func::FuncOp"> {
  let summary = "Move the host's reads and writes of buffers into kernels";
  let description = [{
    Runs before `amp-linalg-to-grid-loops`, so that the host code of a CUDA
    step touches no buffer data and the step's buffers may live in device
    memory:
    - a `memref.copy` becomes a `linalg.copy`, which the next pass tiles
      into a grid like any linalg op;
    - each run of consecutive ops that read or write buffers (the loops of
      a scatter, a `memref.store` of a scalar) moves into `scf.parallel`
      loops over one point, which the next pass tiles into grids of one
      block of one thread or runs in other grids: one loop per independent
      part of the run (ops that use no value another computes and touch no
      buffer another writes go apart: one FP8 scale's update and the next
      scaling state's history). Ops that hold linalg ops, grids or calls
      stay where they are and their regions are searched in turn.
    An op whose results host code uses cannot move: it stays on the host
    with a warning that the step's buffers must then be host-accessible.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def PlanBuffers : Pass<"amp-plan-buffers", "func::FuncOp"> {
  let summary = "Place a step's temporary buffers in one arena, reusing "
                "memory between buffers whose lifetimes do not overlap";
  let description = [{
    The CUDA backend's memory plan, after `amp-linalg-to-grid-loops`. Each
    `memref.alloc` of the function's body with a static shape and the
    identity layout, whose every access (through views) is a grid (an
    `scf.parallel` that becomes a kernel), a library call (`amp_gemm_*`,
    `amp_conv_*`) or a free, lives from its first access to its last in
    the body's order: bufferization frees every buffer at the function's
    end, so without a plan a step holds all its temporaries at once. The
    buffers get offsets in one arena, largest first, each at the lowest
    offset (a multiple of `alignment` bytes) that no buffer live at the
    same time occupies (the greedy-by-size heuristic of TensorFlow Lite's
    arena planner and XLA's heap simulator). The arena is one
    `memref.alloc` of i8 at the body's start, each buffer a `memref.view`
    of it, their frees one free of the arena; the GPU pipeline makes it one
    device allocation per step. A buffer the host touches keeps its own
    allocation (`amp-place-gpu-buffers` puts it in host-reachable memory).
    `remarks=true` says how many buffers and bytes went into how large an
    arena.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "256",
           "bytes each buffer's offset is a multiple of (cuBLASLt and "
           "cuDNN prefer 256)">,
    Option<"emitRemarks", "remarks", "bool", "false",
           "a remark per function: buffers planned, their bytes, the arena's">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"
  ];
}

def PlaceGPUBuffers : Pass<"amp-place-gpu-buffers", "ModuleOp"> {
  let summary = "Place the host code's buffers in device memory, or in "
                "memory the host reaches too where host code touches them";
  let description = [{
    After `gpu-kernel-outlining`, each `memref.alloc` of a host function
    becomes a `gpu.alloc`: in device memory when only kernels, library
    calls (GEMMs, convolutions) and frees use it (through views),
    `host_shared` (CUDA managed memory) when host code reads or writes it
    too (what
    `amp-host-data-to-kernels` left on the host, with its warning).
    `memref.dealloc` becomes `gpu.dealloc`. A constant (`memref.get_global`)
    that a kernel or a library call reads is copied with `gpu.memcpy` into
    a device buffer where it is taken, freed before each return; the
    records that `amp_gemm` and `amp_conv` read on the host stay where they
    are. The
    step's arguments are the caller's to place. `amp-async-gpu-work` then
    puts the allocations, copies and frees on a stream.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect"
  ];
}

def AsyncGPUWork : Pass<"amp-async-gpu-work", "func::FuncOp"> {
  let summary = "Queue a host function's GPU work on one stream; wait only "
                "where the host touches buffers";
  let description = [{
    Kernel launches, device allocations, copies and frees become
    asynchronous on one stream (`gpu.wait async` at the start of each
    block), so that the host queues them without waiting for each. The
    host waits for the stream (`gpu.wait`) only before an op that reads or
    writes buffers itself, an op with unknown effects or one that holds GPU
    work in its regions (which get streams of their own), and before the
    block's terminator. The runtime's library calls (`amp_gemm_*`,
    `amp_conv_*`) run on the same stream in order, so they need no wait. Without this pass each
    launch waits for its kernel.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GPUModuleToBinary : Pass<"amp-gpu-module-to-binary", "ModuleOp"> {
  let summary = "Compile every gpu.module into a gpu.binary, the modules on "
                "the context's threads";
  let description = [{
    Upstream's `gpu-module-to-binary`, for the many small modules that
    `gpu-kernel-outlining` makes (one per kernel): each `gpu.module` is
    serialized for each of its targets (`nvvm-attach-target`; for NVVM,
    LLVM's NVPTX back end and then the toolkit's ptxas, one process per
    module and chip) on the MLIR context's thread pool, and then replaced,
    in module order, by a `gpu.binary` of its objects, the same op that
    upstream's pass writes. Upstream compiles one module after the other:
    75 s of the large FP8 transformer's 101 s `--amp-lower-to-cuda` on 2
    cores. `--mlir-disable-threading` compiles them one by one. A module
    without targets, or one that does not compile, is an error on it;
    with several, their diagnostics come in module order.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", "\"\"",
           "root of the CUDA toolkit (ptxas)">,
    Option<"format", "format", "std::string", "\"fatbin\"",
           "what each target gives: offloading (LLVM bitcode), isa (PTX), "
           "bin (cubin) or fatbin">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def MergeGPUObjects : Pass<"amp-merge-gpu-objects", "ModuleOp"> {
  let summary = "Merge each gpu.binary's cubins into one fatbin";
  let description = [{
    `gpu-module-to-binary` gives a `gpu.binary` one object per target, and
    the host code embeds only the first. This pass hands the cubins of each
    `gpu.binary` (one per chip, `bin` format) to the toolkit's `fatbinary`
    (one process per binary, on the MLIR context's threads) and leaves one
    `fatbin` object in their place, from which the CUDA
    driver loads the image for the GPU it runs on. A `gpu.binary` with one
    object, or with objects in another format, is left as it is.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", "\"\"",
           "root of the CUDA toolkit that has bin/fatbinary">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // AMP_CONVERSION_PASSES_TD
