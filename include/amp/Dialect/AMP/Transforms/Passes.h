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
/// The casts amp-materialize-casts inserted into a function, for the report.
inline constexpr llvm::StringLiteral kCastsInsertedAttrName =
    "amp.casts_inserted";
/// The casts amp-fuse-casts folded into other ops, for the report.
inline constexpr llvm::StringLiteral kCastsFusedAttrName = "amp.casts_fused";

#define GEN_PASS_DECL
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"

/// Registers --amp-pipeline (docs/Pipeline.md).
void registerAMPPipeline();

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_PASSES_H
