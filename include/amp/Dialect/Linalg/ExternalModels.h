//===- ExternalModels.h - AMP interfaces for linalg ops ---------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// PrecisionOpInterface for linalg contractions and convolutions, so that
// the mixed-precision passes run on linalg input (docs/ExternalModels.md).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_LINALG_EXTERNALMODELS_H
#define AMP_DIALECT_LINALG_EXTERNALMODELS_H

namespace mlir {
class DialectRegistry;

namespace amp {
/// Attaches PrecisionOpInterface to linalg ops when the dialect loads.
void registerLinalgExternalModels(DialectRegistry &registry);
} // namespace amp
} // namespace mlir

#endif // AMP_DIALECT_LINALG_EXTERNALMODELS_H
