//===- ExternalModels.h - AMP interfaces for TOSA ops -----------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// PrecisionOpInterface and CastFusionOpInterface for the TOSA dialect, so
// that the mixed-precision passes run on TOSA input (docs/ExternalModels.md).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_TOSA_EXTERNALMODELS_H
#define AMP_DIALECT_TOSA_EXTERNALMODELS_H

namespace mlir {
class DialectRegistry;

namespace amp {
/// Attaches the AMP interfaces to TOSA's float ops when the dialect loads.
void registerTosaExternalModels(DialectRegistry &registry);
} // namespace amp
} // namespace mlir

#endif // AMP_DIALECT_TOSA_EXTERNALMODELS_H
