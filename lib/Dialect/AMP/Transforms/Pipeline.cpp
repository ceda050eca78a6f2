//===- Pipeline.cpp - The --amp-pipeline of DESIGN.md ---------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// --amp-pipeline="precision=fp16 ...": amp-assign-precision,
// amp-materialize-casts, amp-eliminate-casts, amp-fuse-casts and amp-report
// with one set of options (docs/Pipeline.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::amp;

namespace {
struct AMPPipelineOptions : PassPipelineOptions<AMPPipelineOptions> {
  Option<std::string> precision{*this, "precision", llvm::cl::init("fp16"),
                                llvm::cl::desc("fp16 or bf16")};
  Option<std::string> rule{
      *this, "rule",
      llvm::cl::desc("infer rule: between or downstream (default: between "
                     "for fp16, downstream for bf16)")};
  Option<std::string> device{*this, "device", llvm::cl::init("h100"),
                             llvm::cl::desc("h100, a100 or v100")};
  Option<std::string> policy{
      *this, "policy", llvm::cl::desc("JSON policy file (PrecisionPolicy.md)")};
  ListOption<std::string> opClasses{
      *this, "op-class", llvm::cl::desc("op type overrides, OpType:class")};
  ListOption<std::string> nodeClasses{
      *this, "node-class", llvm::cl::desc("node overrides, name:class")};
  Option<int64_t> defaultDimSize{
      *this, "default-dim-size", llvm::cl::init(1),
      llvm::cl::desc("size assumed for dynamic dimensions without a dim")};
  ListOption<std::string> dimSizes{
      *this, "dim",
      llvm::cl::desc("sizes of named dynamic dimensions, <name>:<size>")};
  Option<std::string> report{*this, "report",
                             llvm::cl::desc("JSON report to write")};
  Option<bool> remarks{*this, "remarks", llvm::cl::init(false),
                       llvm::cl::desc("a remark per decision")};
  Option<bool> keepIOTypes{
      *this, "keep-io-types", llvm::cl::init(true),
      llvm::cl::desc("keep the graph's input and output types")};
};

void buildAMPPipeline(OpPassManager &pm, const AMPPipelineOptions &options) {
  AMPAssignPrecisionOptions assign;
  assign.precision = options.precision;
  assign.rule = options.rule;
  assign.device = options.device;
  assign.policyFile = options.policy;
  assign.opClasses.assign(options.opClasses.begin(), options.opClasses.end());
  assign.nodeClasses.assign(options.nodeClasses.begin(),
                            options.nodeClasses.end());
  assign.defaultDimSize = options.defaultDimSize;
  assign.dimSizes.assign(options.dimSizes.begin(), options.dimSizes.end());
  assign.emitRemarks = options.remarks;
  pm.addPass(createAMPAssignPrecision(assign));
  AMPMaterializeCastsOptions materialize;
  materialize.keepIOTypes = options.keepIOTypes;
  pm.addPass(createAMPMaterializeCasts(materialize));
  pm.addPass(createAMPEliminateCasts());
  pm.addPass(createAMPFuseCasts());
  AMPReportOptions report;
  report.file = options.report;
  report.device = options.device;
  report.defaultDimSize = options.defaultDimSize;
  report.dimSizes.assign(options.dimSizes.begin(), options.dimSizes.end());
  pm.addPass(createAMPReport(report));
}
} // namespace

void mlir::amp::registerAMPPipeline() {
  PassPipelineRegistration<AMPPipelineOptions>(
      "amp-pipeline",
      "Mixed precision: decide, materialize and eliminate casts, report",
      buildAMPPipeline);
}
