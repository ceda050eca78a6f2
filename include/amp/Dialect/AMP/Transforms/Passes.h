//===- Passes.h - Mixed-precision passes ------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_PASSES_H
#define AMP_DIALECT_AMP_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

/// The decision attributes amp-assign-precision sets on each op.
inline constexpr llvm::StringLiteral kPrecisionAttrName = "amp.precision";
inline constexpr llvm::StringLiteral kReasonAttrName = "amp.reason";
/// The module attribute amp-assign-precision sets with onnx-types=false when
/// an op went low in a type its ONNX schema does not allow at its opset:
/// that op, described. The ONNX exporter refuses such a module.
inline constexpr llvm::StringLiteral kBeyondONNXTypesAttrName =
    "amp.beyond_onnx_types";
/// The casts amp-materialize-casts inserted into a function, for the report.
inline constexpr llvm::StringLiteral kCastsInsertedAttrName =
    "amp.casts_inserted";
/// The casts amp-fuse-casts folded into other ops, for the report.
inline constexpr llvm::StringLiteral kCastsFusedAttrName = "amp.casts_fused";

/// What amp-assign-precision's objective says of a function (mode, low,
/// cut_us, propagate_us, baseline_us, free_ops, sensitivity_changed,
/// sensitivity_dim_size), for the report.
inline constexpr llvm::StringLiteral kAssignmentAttrName = "amp.assignment";
/// The factor the sensitivity of the optimal assignment scales the default
/// dimension size by.
inline constexpr int64_t kSensitivityFactor = 8;
/// The size the cost model assumes for a dynamic dimension without a `dim`
/// entry: a training batch, not a single sample (Passes.td repeats it).
inline constexpr int64_t kDefaultDimSize = 64;

/// What amp-analyze-training found in a function (docs/TrainingGraphs.md):
/// `{kind, loss, seeds, parameters, gradients, updates}`, values by name.
inline constexpr llvm::StringLiteral kTrainingAttrName = "amp.training";
/// The part of the step an op belongs to: forward, backward or optimizer.
inline constexpr llvm::StringLiteral kRegionAttrName = "amp.region";
/// The amp.region of `op`, or "" when it has none.
inline llvm::StringRef getRegionName(Operation *op) {
  auto region = op->getAttrOfType<StringAttr>(kRegionAttrName);
  return region ? region.getValue() : "";
}
/// The loss-scaling settings amp-insert-loss-scaling applied, for the report.
inline constexpr llvm::StringLiteral kLossScalingAttrName = "amp.loss_scaling";
/// The model metadata that carries those settings out: a step that has it
/// was converted by amp-opt before.
inline constexpr llvm::StringLiteral kLossScalingMetadataKey =
    "amp_opt.loss_scaling";
/// amp-fp8's record: on an FP8 GEMM its modeled times and formats, on a
/// function the recipe, the GEMMs and the scaling states.
inline constexpr llvm::StringLiteral kFP8AttrName = "amp.fp8";
/// amp-recompute's record on a function (mode, budget, the planner's bytes
/// before, extra FLOPs), and the mark on each op it cloned.
inline constexpr llvm::StringLiteral kRecomputeAttrName = "amp.recompute";
inline constexpr llvm::StringLiteral kRecomputedAttrName = "amp.recomputed";

#define GEN_PASS_DECL
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"

/// Registers --amp-pipeline (docs/Pipeline.md).
void registerAMPPipeline();

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_PASSES_H
