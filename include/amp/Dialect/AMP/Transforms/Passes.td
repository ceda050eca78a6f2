//===- Passes.td - Mixed-precision passes ------------------*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_PASSES_TD
#define AMP_DIALECT_AMP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AMPAnalyzeTraining : Pass<"amp-analyze-training", "ModuleOp"> {
  let summary = "Find the loss, parameters, gradients and optimizer of a "
                "training graph";
  let description = [{
    Finds the roles of the tensors of each function's training step and
    records them for the passes after it:

    - `amp.training` on the function: `kind`, `loss`, `seeds` (the backward
      seeds the loss scale multiplies), `parameters` and their `gradients`
      (two parallel lists), and `updates` (`[updated, previous]` pairs of
      the parameters and optimizer state the step updates), each a value
      name;
    - `amp.region` on each op of the body: `forward` (computes the loss),
      `backward` (computes the gradients) or `optimizer` (reads them).
      amp-assign-precision keeps the optimizer region FP32.

    The kinds (docs/TrainingGraphs.md): `training_step` (a whole step
    without markers, understood from its dataflow: outputs that update
    inputs by name, by `updates`, or by their arithmetic (`p - lr * d`), the
    backward seed `ones_like(loss)` in its exported forms or `seed`,
    gradients by seed linearity),
    `amp_opt.training_step` (our exporter's `amp_opt.*` metadata), `onnx.gradient` (ONNX's `Gradient`
    with Adam, Adagrad or Momentum), `ort.module` (ORTModule: `YieldOp`,
    `<param>_grad` outputs), `ort.training_artifact` (ONNX Runtime's
    `training_model.onnx`: gradient accumulators, `<loss>_grad` seed),
    `optimizer` (an optimizer graph without backward), `backward` (gradient
    ops and nothing else recognised) and `forward`.

    Gradients and seeds that ONNX shape inference left untyped (it does not
    know ONNX Runtime's gradient ops) take the type of the tensor they are
    the gradient of: the parameter, or the value YieldOp hands out.

    In a `training_step`, parameters are the updated inputs that the forward
    reads and whose update depends on the seed; their gradients are the
    last values linear in the seed on the way to the update (the op table's
    linear columns); `unscale` lists every seed-linear value that a
    non-linear op or an output reads, where loss scaling takes the scale
    out; other updated inputs are optimizer state (`updates`, kept on
    overflow) or buffers (`buffers`). For the other kinds the same
    linearity checks the markers: a recorded gradient that is not linear in
    the seeds, or a seed-linear value read outside the recorded gradients,
    gets a warning.

    A graph with backward ops but no recorded loss takes its one float
    output with one element; with several that is an error that lists
    them, and `loss` names the right one. Without a seed the first backward
    ops reading the loss op's results are the seeds. A gradient that the
    loss depends on is an error; a gradient that other gradients read
    (BatchNorm's bias gradient) is backward where they read it. With `remarks`, a remark
    summarizes each function; a graph without backward always gets one
    saying that it is converted as a forward graph, and a graph with a
    backward but no loss a warning.
  }];
  let options = [
    Option<"lossName", "loss", "std::string", "\"\"",
           "name of the loss tensor, where the graph does not record it">,
    Option<"seedName", "seed", "std::string", "\"\"",
           "name of the backward seed, where the dataflow does not show it">,
    ListOption<"updateNames", "updates", "std::string",
               "outputs that update inputs, <input>:<output>, where the "
               "names follow no known convention">,
    Option<"rolesFile", "roles", "std::string", "\"\"",
           "JSON file with `loss`, `seed` and `updates` ({input: output})">,
    Option<"emitRemarks", "remarks", "bool", "false",
           "emit a remark with what was found in each function">,
  ];
}

def AMPInsertLossScaling : Pass<"amp-insert-loss-scaling", "ModuleOp"> {
  let summary = "Scale the backward seed, unscale every gradient";
  let description = [{
    Applies loss scaling to the training step amp-analyze-training found
    (`amp.training`):

    - a new input `amp.loss_scale` (a scalar FP32, initial value
      `init-scale`) multiplies each backward seed (`amp.scale_loss`); for
      ONNX's `Gradient`, whose seed is inside the op, the loss is scaled and
      the op differentiates the scaled loss;
    - every gradient passes through `amp.unscale` before anything else reads
      it: the barrier after which nothing becomes low precision;
    - `mode=dynamic` adds the overflow check (`amp.all_finite` over all
      unscaled gradients), keeps each updated parameter and optimizer state
      at its previous value after an overflow (`amp.update_if_finite`), and
      updates the scale (`amp.update_scale`): the input `amp.growth_count`
      counts clean steps, and the outputs `amp.loss_scale.updated` and
      `amp.growth_count.updated` feed the next step. A graph whose
      optimizer runs elsewhere (ONNX Runtime artifacts, ORTModule) gets
      zero gradients after an overflow and an output `amp.grads_finite`
      that tells the caller to skip its update.
    - `mode=static` keeps the scale constant; `mode=none` changes nothing.

    The settings go to the function attribute `amp.loss_scaling` and to the
    model's metadata (`amp_opt.loss_scaling`). docs/LossScaling.md has the
    exported state and the update rule.
  }];
  let options = [
    Option<"mode", "mode", "std::string", "\"dynamic\"",
           "dynamic, static or none">,
    Option<"initScale", "init-scale", "double", "65536.0",
           "loss scale of the first step">,
    Option<"growthInterval", "growth-interval", "int64_t", "2000",
           "clean steps in a row before the scale grows (dynamic)">,
    Option<"growthFactor", "growth-factor", "double", "2.0",
           "factor the scale grows by (dynamic)">,
    Option<"backoffFactor", "backoff-factor", "double", "0.5",
           "factor the scale shrinks by after an overflow (dynamic)">,
    Option<"minScale", "min-scale", "double", "1.0",
           "smallest loss scale (dynamic)">,
    Option<"maxScale", "max-scale", "double", "16777216.0",
           "largest loss scale (dynamic)">,
  ];
  let dependentDialects = ["::mlir::amp::AMPDialect"];
}

def AMPAssignPrecision : Pass<"amp-assign-precision", "ModuleOp"> {
  let summary = "Decide the precision of each op";
  let description = [{
    Gives every op of each function's body a precision (`amp.precision`, a
    type attribute) and the reason for it (`amp.reason`), without changing
    any type; amp-materialize-casts applies the decisions.

    With `assign=optimal` (the default), one s-t min-cut (Boost.Graph's
    Boykov-Kolmogorov max-flow) labels every op of the function and its
    subgraphs FP32 or low so that the sum of the ops' modeled times and of
    the casts between them (one per value and target type, as
    materialization and fusion make them) is least; ties go to FP32. The
    class and policy pin ops: keep-fp32, never-touch, the barrier below,
    `range`, `unsupported-type`, `fp64` and `unknown-type` to FP32, a policy
    `always` low; always, infer and follow ops are otherwise free. The
    function attribute `amp.assignment` records the objective of the cut,
    of the propagation rules' labels and of all FP32, and how many
    decisions change with `default-dim-size` 8x larger
    (docs/OptimalAssignment.md). With `assign=propagate`, the rules below
    decide:

    1. Each op's class comes from the precision policy (the op table,
       overridden by `policy`, `op-class` and `node-class`).
    2. Always ops go low precision when the cost model (`device`) says they
       are faster with the casts they need (reason `always-list`, or
       `cost-model` when they stay FP32); ops the policy makes always go
       low without asking it (reason `policy`).
    3. Keep-fp32 ops stay FP32 and deny low precision downstream through
       infer and follow ops, up to the next always op.
    4. Infer and follow ops go low by the rule: `between` (TensorFlow's:
       only on a path from one low op to another) or `downstream` (PAI's:
       anything after a low op). A follow op whose data inputs are all low
       goes low too.
    5. `amp.unscale` is the barrier: nothing after it goes low (`barrier`),
       nor do ops that amp-analyze-training put in the optimizer region.
    6. Constants follow their users: a follow op computed from constants only
       (a Constant, an Unsqueeze of an initializer) goes low when all its
       uses are data inputs of low ops, so the cast lands on the constant
       and amp-fuse-casts converts it in place.

    The range check (`range`) looks at constant data inputs, also through
    follow ops with one data input (an Unsqueeze of a Constant).

    Ops whose data has an unknown type (`unknown-type`) or is FP64 (`fp64`)
    are never touched. An op that cannot hold the low type (its ONNX schema
    at its opset does not allow it: `unsupported-type`) stays FP32 and
    stops propagation like a keep-fp32 op. With `onnx-types=false` the
    schemas' type lists are not asked: for steps that amp-compile and
    amp-run lower, never written as ONNX, whose lowerings compute every op
    in any float type (a BF16 Conv, which ONNX allows from opset 22 only,
    becomes a cuDNN BF16 convolution); the ONNX exporter's check refuses
    such a step.

    Subgraphs (regions that hold ops with PrecisionOpInterface, such as the
    bodies of ONNX If, Loop and Scan) are decided like function bodies, after
    the block that holds them: their arguments and results keep their types,
    so every loop-carried value and branch output has one precision (the one
    it had), and the op that holds them is never touched. A subgraph of an op
    after `amp.unscale` stays FP32. A region that holds no such ops (a linalg
    body) is not a subgraph. TOSA and linalg ops are decided through
    external models (docs/ExternalModels.md).
    docs/passes/AMPPasses.md has the options; docs/PrecisionClasses.md,
    docs/PrecisionPolicy.md and docs/CostModel.md the inputs.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"fp16\"",
           "low precision type: fp16 or bf16">,
    Option<"assignMode", "assign", "std::string", "\"optimal\"",
           "optimal (one min-cut over the whole function) or propagate "
           "(the anchors' rules)">,
    Option<"rule", "rule", "std::string", "\"\"",
           "infer rule of assign=propagate: between or downstream (default: "
           "between for fp16, downstream for bf16)">,
    Option<"device", "device", "std::string", "\"h100\"",
           "device profile of the cost model: h100, a100 or v100">,
    Option<"casts", "casts", "std::string", "\"fused\"",
           "fused (a cast costs its memory traffic inside a neighbouring "
           "kernel, as amp-compile fuses it) or kernels (a launch each, as "
           "ONNX Runtime runs Cast nodes)">,
    Option<"policyFile", "policy", "std::string", "\"\"",
           "JSON policy file (docs/PrecisionPolicy.md)">,
    ListOption<"opClasses", "op-class", "std::string",
               "op type overrides, OpType:class">,
    ListOption<"nodeClasses", "node-class", "std::string",
               "node name overrides, name:class">,
    Option<"defaultDimSize", "default-dim-size", "int64_t", "64",
           "size the cost model assumes for dynamic dimensions without a "
           "`dim` entry">,
    ListOption<"dimSizes", "dim", "std::string",
               "sizes of named dynamic dimensions, <name>:<size>">,
    Option<"onnxTypes", "onnx-types", "bool", "true",
           "keep each op to the types its ONNX schema allows at its opset "
           "(false: any float type, for steps that are lowered, not "
           "exported)">,
    Option<"emitRemarks", "remarks", "bool", "false",
           "emit a remark with each op's decision">,
  ];
}

def AMPMaterializeCasts : Pass<"amp-materialize-casts", "ModuleOp"> {
  let summary = "Apply the precision decisions with amp.cast";
  let description = [{
    Applies amp-assign-precision's decisions (`amp.precision`) to each
    function body: an op decided low gets its float data operands cast to
    the low type and its float data results retyped; an op decided FP32
    keeps its types and reads a value made low cast back to its old type
    (FP64 and FP16 values of the input graph stay as they are). There is one `amp.cast` per value and
    target type, placed right after the value's definition and shared by
    all its consumers. Slots that are not data (shapes, indices, fixed FP32
    statistics), ops without a decision and the function results keep their
    types: graph inputs and outputs keep their ONNX types. Ops without a
    decision are untouched.

    Subgraph bodies are handled the same way, their arguments and results
    keeping their types. A value of an enclosing block that a subgraph reads
    in low precision is cast in that enclosing block, once per step rather
    than once per loop iteration.

    With `keep-io-types=false`, a function argument read only as data by
    ops decided in one low type takes that type (not a parameter that
    amp-analyze-training found: those stay FP32 master weights), and a result computed in
    low precision is returned as it is: the graph's inputs and outputs
    change type instead of being cast.
  }];
  let options = [
    Option<"keepIOTypes", "keep-io-types", "bool", "true",
           "keep the types of function arguments and results">,
  ];
  let dependentDialects = ["::mlir::amp::AMPDialect"];
}

def AMPEliminateCasts : Pass<"amp-eliminate-casts", "ModuleOp"> {
  let summary = "Remove cast chains that round-trip exactly";
  let description = [{
    Rewrites `amp.cast(amp.cast(x : A to B) : B to C)` into
    `amp.cast(x : A to C)`, or into `x` when C is A, when every A value is
    exactly a B value (f16 to f32 and back: removed). A chain through a
    narrower type rounds and is never removed (f32 to f16 to f32 stays).
    Casts to the same type and casts without users disappear; casts with an
    FP8 scale are left alone.
  }];
}

def AMPFuseCasts : Pass<"amp-fuse-casts", "ModuleOp"> {
  let summary = "Fold casts into the ops that produce or read them";
  let description = [{
    Removes an `amp.cast` when a neighbouring op can do its work, through
    `CastFusionOpInterface`:

    - into an existing conversion of the same value to the same type (a
      `Cast` node of the input graph), which it reuses, moved up to the
      cast when it came later;
    - into its producer, when every user of the produced value is a cast to
      the same type and the producer can write that type itself: a float
      initializer or Constant is converted in place (round to nearest even,
      like the cast), a `Cast` node is retargeted (`Cast(to=FLOAT)` then a
      cast to f16 becomes `Cast(to=FLOAT16)`, when rounding once gives what
      rounding twice gave);
    - into its consumers, when the cast widens exactly and they can read the
      narrower value (a `Cast` node gives the same result for both).

    A `Cast` node that fusion leaves converting a value to its own type
    (`Cast(to=FLOAT)` between two f16 values) is removed, unless the
    function returns it.

    A constant shared with FP32 users keeps its cast: one cast per step,
    not a second copy. The count goes to the function attribute
    `amp.casts_fused`, for the report.
  }];
}

def AMPFP8 : Pass<"amp-fp8", "ModuleOp"> {
  let summary = "Run the GEMMs that gain from it in FP8, with scaling state";
  let description = [{
    Runs after the assignment and cast passes, on the GEMMs of the forward
    and backward (`MatMul`, `Gemm`, `com.microsoft::FusedMatMul`), whatever
    base precision they got. Each eligible GEMM becomes `amp.scaled_matmul`
    on operands that `amp.quantize` scales into FP8; its result keeps the
    GEMM's type. docs/FP8.md has the rules; in short:

    - **Eligible**: not in the optimizer or after `amp.unscale`, not pinned
      FP32 by a class or policy, operands of rank 2 or more (b of rank 2 or
      a's), static K and N multiples of 16 (of 128 for `recipe=block`),
      `alpha` 1, a `Gemm`'s C absent or a bias [N] with `beta` 1, not two
      gradient operands. A GEMM of two batched activations (attention's
      Q·Kᵀ and P·V and their gradients) stays in its precision unless
      `fp8=always` or the policy asks for it, as Transformer Engine does.
    - **Decision** (`fp8=auto`): one s-t min-cut (PrecisionCut) over the
      eligible GEMMs and their quantizations: a GEMM goes FP8 when its base
      time minus its FP8 time pays for the quantizations it needs, each
      quantization (one per value and format) counted once however many
      GEMMs share it; ties keep the base precision. `fp8=always` converts
      every eligible GEMM, `fp8=never` none. The policy file's `fp8`
      section and `fp8-op` / `fp8-node` force or forbid FP8.
    - **Formats**: `format=hybrid` quantizes gradients (values that depend
      on the backward seed) to E5M2 and activations and weights to E4M3;
      `format=e4m3` uses E4M3 everywhere. `format=auto` (the default) is
      TE's choice: hybrid for `delayed` and `current`, e4m3 for `block`.
    - **Recipes**: `delayed` quantizes with the scale of the previous step
      and records the amax; one `amp.fp8_update` per step updates every
      history (`amax-history`, `amax-algo`, `margin`) and scale, threaded
      as the inputs `amp.fp8.<value>.amax_history` (zeros) and
      `amp.fp8.<value>.scale` (1) and the outputs `<input>.updated`
      (metadata `amp_opt.fp8`). `current` computes each scale from the
      tensor itself. `block` scales blocks of 1x128 (activations and
      gradients, along K) and 128x128 (weights) with power-of-two scales.

    Each FP8 GEMM gets `amp.fp8` (its modeled times and formats); the
    function gets `amp.fp8` (recipe, GEMMs, states) for amp-report.
  }];
  let options = [
    Option<"mode", "fp8", "std::string", "\"auto\"",
           "auto (the cost model decides), always or never">,
    Option<"recipe", "recipe", "std::string", "\"delayed\"",
           "delayed, current or block">,
    Option<"format", "format", "std::string", "\"auto\"",
           "auto (hybrid, or e4m3 with recipe=block), hybrid (E5M2 "
           "gradients, E4M3 otherwise) or e4m3">,
    Option<"amaxHistory", "amax-history", "int64_t", "1024",
           "length of each amax history (delayed)">,
    Option<"amaxAlgo", "amax-algo", "std::string", "\"max\"",
           "max or most_recent (delayed)">,
    Option<"margin", "margin", "int64_t", "0",
           "the scale is divided by 2^margin">,
    Option<"device", "device", "std::string", "\"h100\"",
           "cost model profile: h100, a100 or v100">,
    Option<"casts", "casts", "std::string", "\"fused\"",
           "fused (a cast costs its memory traffic inside a neighbouring "
           "kernel, as amp-compile fuses it) or kernels (a launch each, as "
           "ONNX Runtime runs Cast nodes)">,
    Option<"defaultDimSize", "default-dim-size", "int64_t", "64",
           "size assumed for a dynamic dimension without a dim entry">,
    ListOption<"dimSizes", "dim", "std::string",
               "sizes of named dynamic dimensions, <name>:<size>">,
    Option<"policyFile", "policy", "std::string", "\"\"",
           "JSON policy file; its fp8 section forces or forbids FP8">,
    ListOption<"fp8OpTypes", "fp8-op", "std::string",
               "FP8 per op type, OpType:always or OpType:never">,
    ListOption<"fp8Nodes", "fp8-node", "std::string",
               "FP8 per node, name:always or name:never">,
    Option<"emitRemarks", "remarks", "bool", "false",
           "a remark per GEMM: FP8 or not, and why">,
  ];
  let dependentDialects = ["::mlir::amp::AMPDialect"];
}

def AMPRecompute : Pass<"amp-recompute", "ModuleOp"> {
  let summary = "Recompute forward values in the backward to save memory";
  let description = [{
    Chooses which forward results the backward keeps (saved activations)
    and which it recomputes: a recomputed op is cloned into the backward
    right before its first backward reader, which reads the clone, so the
    forward's value is freed after its last forward use. Runs on the
    regions amp-analyze-training marks (`amp.region`), after the precision
    passes: an activation weighs its bytes after AMP (FP16 two, FP8 one).
    docs/Recompute.md has the rules; in short:

    - `mode=mincut` (AOTAutograd's partitioner): the fewest saved bytes
      among plans that clone no GEMM, convolution or attention, by one s-t
      min-cut over the forward's ops (Boost.Graph).
    - `mode=budget` with `memory-budget`: the plan of least modeled extra
      time within the budget among the min-cut's, Lagrangian min-cuts of
      bytes plus weighted time and a greedy completion, with GEMMs banned
      when a plan without them fits; otherwise also AOTAutograd's knapsack
      over the compute-intensive values (the cut solved again without the
      bans it lifts), each with and without the clones the budget does
      not need. With `peak-check` (default), the memory planner measures
      the candidates' peaks on a ladder of budgets (90%, 80%, ... of the
      saved activations, then the budget) and each rung takes its fastest
      plan whose peak is no higher than the rung above's, so that a
      smaller budget never raises the peak. A budget no plan meets gets a
      warning ("cannot reduce ... below X; reached Y, from Z") and the
      smallest plan.
    - `mode=sqrt`: Chen's sqrt(n) segments, a baseline that recomputes
      GEMMs too (about one extra forward).
    - `mode=optimal`: the exact optimum of the same choice by MILP (GLPK),
      with `memory-budget` the least extra modeled time within it, without
      it the fewest saved bytes with GEMMs banned; for graphs of at most
      `optimal-max-ops` forward ops, stopped after `optimal-time-limit`
      seconds.
    - Never cloned, in any mode: random ops (Dropout and the
      `com.microsoft` dropouts keep their output and mask), ops with side
      effects or regions, optimizer ops, loss scaling and FP8 amax, scale
      and history ops (a recomputed `amp.quantize` reads the forward's
      scale). Values live past the backward anyway (function results,
      optimizer inputs) cost nothing to keep; graph inputs and parameters
      are never in question.

    Clones get `amp.region = "backward"`, `amp.recomputed` and their names
    with a `.recompute` suffix. The function gets `amp.recompute` (mode,
    the planner's saved-activation and peak bytes before and after, the
    recomputed ops by type, extra FLOPs and modeled time) for amp-report.
  }];
  let options = [
    Option<"mode", "mode", "std::string", "\"mincut\"",
           "none, sqrt, mincut, budget or optimal">,
    Option<"memoryBudget", "memory-budget", "std::string", "\"\"",
           "saved-activation bytes to stay within: a number of bytes, "
           "<n>KiB, <n>MiB, <n>GiB or <n>% of the saved activations">,
    Option<"peakCheck", "peak-check", "bool", "true",
           "mode=budget: the fastest plan whose planner peak is no higher "
           "than a larger budget's (false: the fastest plan)">,
    Option<"optimalMaxOps", "optimal-max-ops", "int64_t", "3000",
           "mode=optimal: the most forward ops the MILP takes">,
    Option<"optimalTimeLimit", "optimal-time-limit", "double", "120",
           "mode=optimal: seconds the MILP may search">,
    Option<"device", "device", "std::string", "\"h100\"",
           "cost model profile of the modeled extra time">,
    Option<"casts", "casts", "std::string", "\"fused\"",
           "fused (a cast costs its memory traffic inside a neighbouring "
           "kernel, as amp-compile fuses it) or kernels (a launch each, as "
           "ONNX Runtime runs Cast nodes)">,
    Option<"defaultDimSize", "default-dim-size", "int64_t", "64",
           "size assumed for a dynamic dimension without a dim entry">,
    ListOption<"dimSizes", "dim", "std::string",
               "sizes of named dynamic dimensions, <name>:<size>">,
    Option<"emitRemarks", "remarks", "bool", "false",
           "a remark per recomputed op and saved value, and a summary">,
  ];
}

def AMPReport : Pass<"amp-report", "ModuleOp"> {
  let summary = "Write the mixed-precision report and print its summary";
  let description = [{
    Summarizes amp-assign-precision's decisions and the casts in each
    function body: prints a short summary on stderr and, with `file`, writes
    the JSON report (docs/Report.md): `precision`, `ops` (`total`,
    `low_precision`, `by_type`), `casts` (`inserted`, `eliminated`, `fused`,
    `remaining`), `flops` (`total`, `low_precision`), `modeled_time_us`
    (`fp32`, `amp`) and `decisions` (one entry per op: `name`, `op_type`,
    `precision`, `reason`). The IR is unchanged.
  }];
  let options = [
    Option<"file", "file", "std::string", "\"\"",
           "JSON report to write (none when empty)">,
    Option<"device", "device", "std::string", "\"h100\"",
           "device profile of the modeled times">,
    Option<"casts", "casts", "std::string", "\"fused\"",
           "fused (a cast costs its memory traffic inside a neighbouring "
           "kernel, as amp-compile fuses it) or kernels (a launch each, as "
           "ONNX Runtime runs Cast nodes)">,
    Option<"defaultDimSize", "default-dim-size", "int64_t", "64",
           "size assumed for dynamic dimensions without a `dim` entry">,
    ListOption<"dimSizes", "dim", "std::string",
               "sizes of named dynamic dimensions, <name>:<size>">,
  ];
}

#endif // AMP_DIALECT_AMP_TRANSFORMS_PASSES_TD
