//===- Pipeline.cpp - The --amp-pipeline of DESIGN.md ---------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// --amp-pipeline="precision=fp16 ...": (with precision=fp8,
// onnxg-upgrade-opset) amp-analyze-training,
// amp-insert-loss-scaling, amp-assign-precision, amp-materialize-casts,
// amp-eliminate-casts, amp-fuse-casts, (amp-fp8), (amp-recompute) and
// amp-report with one set of options
// (docs/Pipeline.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::amp;

namespace {
struct AMPPipelineOptions : PassPipelineOptions<AMPPipelineOptions> {
  Option<std::string> precision{
      *this, "precision", llvm::cl::init("fp16"),
      llvm::cl::desc("fp16, bf16, fp8 (GEMMs in FP8 over the base) or fp32 "
                     "(every stage but the conversion)")};
  Option<std::string> base{
      *this, "base", llvm::cl::init("bf16"),
      llvm::cl::desc("with precision=fp8: the precision of everything "
                     "else, bf16 or fp16")};
  Option<std::string> fp8{
      *this, "fp8", llvm::cl::init("auto"),
      llvm::cl::desc("with precision=fp8: auto, always or never")};
  Option<std::string> fp8Recipe{*this, "fp8-recipe", llvm::cl::init("delayed"),
                                llvm::cl::desc("delayed, current or block")};
  Option<std::string> fp8Format{
      *this, "fp8-format", llvm::cl::init("auto"),
      llvm::cl::desc("auto (hybrid, or e4m3 with fp8-recipe=block), hybrid "
                     "(E5M2 gradients) or e4m3")};
  Option<int64_t> amaxHistory{
      *this, "amax-history", llvm::cl::init(1024),
      llvm::cl::desc("amax history length (fp8-recipe=delayed)")};
  Option<std::string> amaxAlgo{
      *this, "amax-algo", llvm::cl::init("max"),
      llvm::cl::desc("max or most_recent (fp8-recipe=delayed)")};
  Option<int64_t> margin{*this, "margin", llvm::cl::init(0),
                         llvm::cl::desc("FP8 scales are divided by 2^margin")};
  ListOption<std::string> fp8OpTypes{
      *this, "fp8-op",
      llvm::cl::desc("FP8 per op type, OpType:always or OpType:never")};
  ListOption<std::string> fp8Nodes{
      *this, "fp8-node",
      llvm::cl::desc("FP8 per node, name:always or "
                     "name:never")};
  Option<std::string> assign{
      *this, "assign", llvm::cl::init("optimal"),
      llvm::cl::desc("optimal (one min-cut over the whole function) or "
                     "propagate (the anchors' rules)")};
  Option<std::string> rule{
      *this, "rule",
      llvm::cl::desc("infer rule of assign=propagate: between or downstream "
                     "(default: between for fp16, downstream for bf16)")};
  Option<std::string> device{*this, "device", llvm::cl::init("h100"),
                             llvm::cl::desc("h100, a100 or v100")};
  Option<std::string> casts{
      *this, "casts", llvm::cl::init("fused"),
      llvm::cl::desc("how the cost model runs casts: fused (inside "
                     "neighbouring kernels) or kernels (a launch each)")};
  Option<std::string> policy{
      *this, "policy", llvm::cl::desc("JSON policy file (PrecisionPolicy.md)")};
  ListOption<std::string> opClasses{
      *this, "op-class", llvm::cl::desc("op type overrides, OpType:class")};
  ListOption<std::string> nodeClasses{
      *this, "node-class", llvm::cl::desc("node overrides, name:class")};
  Option<int64_t> defaultDimSize{
      *this, "default-dim-size", llvm::cl::init(kDefaultDimSize),
      llvm::cl::desc("size assumed for dynamic dimensions without a dim")};
  ListOption<std::string> dimSizes{
      *this, "dim",
      llvm::cl::desc("sizes of named dynamic dimensions, <name>:<size>")};
  Option<std::string> report{*this, "report",
                             llvm::cl::desc("JSON report to write")};
  Option<bool> remarks{*this, "remarks", llvm::cl::init(false),
                       llvm::cl::desc("a remark per decision")};
  Option<std::string> loss{
      *this, "loss",
      llvm::cl::desc("name of the loss tensor, where the graph does not "
                     "record it")};
  Option<std::string> seed{
      *this, "seed",
      llvm::cl::desc("name of the backward seed, where the dataflow does "
                     "not show it")};
  ListOption<std::string> updates{
      *this, "updates",
      llvm::cl::desc("outputs that update inputs, <input>:<output>")};
  Option<std::string> roles{
      *this, "roles", llvm::cl::desc("JSON file with loss, seed and updates")};
  Option<std::string> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("dynamic, static or none (default: dynamic for fp16, "
                     "none for bf16)")};
  Option<double> initScale{*this, "init-scale", llvm::cl::init(65536.0),
                           llvm::cl::desc("loss scale of the first step")};
  Option<int64_t> growthInterval{
      *this, "growth-interval", llvm::cl::init(2000),
      llvm::cl::desc("clean steps before the scale grows")};
  Option<double> growthFactor{*this, "growth-factor", llvm::cl::init(2.0),
                              llvm::cl::desc("factor the scale grows by")};
  Option<double> backoffFactor{
      *this, "backoff-factor", llvm::cl::init(0.5),
      llvm::cl::desc("factor the scale shrinks by after an overflow")};
  Option<double> minScale{*this, "min-scale", llvm::cl::init(1.0),
                          llvm::cl::desc("smallest loss scale")};
  Option<double> maxScale{*this, "max-scale", llvm::cl::init(16777216.0),
                          llvm::cl::desc("largest loss scale")};
  Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("none, sqrt, mincut, budget or optimal (default: none, "
                     "budget with a memory-budget)")};
  Option<std::string> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("saved-activation bytes to stay within: <n>, <n>KiB, "
                     "<n>MiB, <n>GiB or <n>%")};
  Option<bool> peakCheck{
      *this, "peak-check", llvm::cl::init(true),
      llvm::cl::desc("recompute=budget: no smaller budget raises the memory "
                     "planner's peak (false: the fastest plan)")};
  Option<double> optimalTimeLimit{
      *this, "optimal-time-limit", llvm::cl::init(120),
      llvm::cl::desc("recompute=optimal: seconds the MILP may search")};
  Option<bool> onnxTypes{
      *this, "onnx-types", llvm::cl::init(true),
      llvm::cl::desc("keep each op to its ONNX schema's types (false: any "
                     "float type, for amp-compile and amp-run)")};
  Option<bool> keepIOTypes{
      *this, "keep-io-types", llvm::cl::init(true),
      llvm::cl::desc("keep the graph's input and output types")};
};

/// Gives a pass the cost model's options: device, casts and dimension sizes.
template <typename PassOptions>
void setCostModelOptions(const AMPPipelineOptions &options, PassOptions &pass) {
  pass.device = options.device;
  pass.casts = options.casts;
  pass.defaultDimSize = options.defaultDimSize;
  pass.dimSizes.assign(options.dimSizes.begin(), options.dimSizes.end());
}

/// The passes that convert: the assignment, casts, and FP8's GEMMs.
void addConversionPasses(OpPassManager &pm, const AMPPipelineOptions &options,
                         StringRef precision, bool isFP8) {
  AMPAssignPrecisionOptions assign;
  assign.precision = precision.str();
  assign.assignMode = options.assign;
  assign.rule = options.rule;
  setCostModelOptions(options, assign);
  assign.policyFile = options.policy;
  assign.opClasses.assign(options.opClasses.begin(), options.opClasses.end());
  assign.nodeClasses.assign(options.nodeClasses.begin(),
                            options.nodeClasses.end());
  assign.onnxTypes = options.onnxTypes;
  assign.emitRemarks = options.remarks;
  pm.addPass(createAMPAssignPrecision(assign));
  AMPMaterializeCastsOptions materialize;
  materialize.keepIOTypes = options.keepIOTypes;
  pm.addPass(createAMPMaterializeCasts(materialize));
  pm.addPass(createAMPEliminateCasts());
  pm.addPass(createAMPFuseCasts());
  if (isFP8) {
    AMPFP8Options fp8;
    fp8.mode = options.fp8;
    fp8.recipe = options.fp8Recipe;
    fp8.format = options.fp8Format;
    fp8.amaxHistory = options.amaxHistory;
    fp8.amaxAlgo = options.amaxAlgo;
    fp8.margin = options.margin;
    setCostModelOptions(options, fp8);
    fp8.policyFile = options.policy;
    fp8.fp8OpTypes.assign(options.fp8OpTypes.begin(), options.fp8OpTypes.end());
    fp8.fp8Nodes.assign(options.fp8Nodes.begin(), options.fp8Nodes.end());
    fp8.emitRemarks = options.remarks;
    pm.addPass(createAMPFP8(fp8));
  }
}

void buildAMPPipeline(OpPassManager &pm, const AMPPipelineOptions &options) {
  // FP8 runs the chosen GEMMs over a base assignment in BF16 or FP16.
  bool isFP8 = options.precision == "fp8";
  std::string precision =
      isFP8 ? options.base.getValue() : options.precision.getValue();
  // FP8 types exist from ONNX opset 19 on; nodes created later take it.
  if (isFP8)
    pm.addPass(onnxg::createONNXGraphUpgradeOpset());
  AMPAnalyzeTrainingOptions analyze;
  analyze.lossName = options.loss;
  analyze.seedName = options.seed;
  analyze.updateNames.assign(options.updates.begin(), options.updates.end());
  analyze.rolesFile = options.roles;
  pm.addPass(createAMPAnalyzeTraining(analyze));
  AMPInsertLossScalingOptions scaling;
  // precision=fp32 only (base=fp32 is an error of amp-assign-precision).
  bool isFP32 = options.precision == "fp32";
  scaling.mode = !options.lossScale.empty()      ? options.lossScale.getValue()
                 : precision == "bf16" || isFP32 ? "none"
                                                 : "dynamic";
  scaling.initScale = options.initScale;
  scaling.growthInterval = options.growthInterval;
  scaling.growthFactor = options.growthFactor;
  scaling.backoffFactor = options.backoffFactor;
  scaling.minScale = options.minScale;
  scaling.maxScale = options.maxScale;
  pm.addPass(createAMPInsertLossScaling(scaling));
  // FP32 keeps every op as it is: the training analysis and the report
  // (and the stages that do not convert) still run.
  if (!isFP32)
    addConversionPasses(pm, options, precision, isFP8);
  // Recomputation weighs activations at their converted types.
  std::string recompute = options.recompute;
  if (recompute.empty())
    recompute = options.memoryBudget.empty() ? "none" : "budget";
  if (recompute != "none" || !options.memoryBudget.empty()) {
    AMPRecomputeOptions remat;
    remat.mode = recompute;
    remat.memoryBudget = options.memoryBudget;
    remat.optimalTimeLimit = options.optimalTimeLimit;
    remat.peakCheck = options.peakCheck;
    setCostModelOptions(options, remat);
    remat.emitRemarks = options.remarks;
    pm.addPass(createAMPRecompute(remat));
  }
  AMPReportOptions report;
  report.file = options.report;
  setCostModelOptions(options, report);
  pm.addPass(createAMPReport(report));
}
} // namespace

void mlir::amp::registerAMPPipeline() {
  PassPipelineRegistration<AMPPipelineOptions>(
      "amp-pipeline",
      "Mixed precision for training: find the roles, scale the loss, decide, "
      "materialize and eliminate casts, report",
      buildAMPPipeline);
}
