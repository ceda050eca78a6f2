//===- PrecisionOpInterface.h - What AMP passes ask an op -------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONOPINTERFACE_H
#define AMP_INTERFACES_PRECISIONOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

#include "amp/Interfaces/PrecisionClass.h.inc"
#include "amp/Interfaces/PrecisionOpInterface.h.inc"

#endif // AMP_INTERFACES_PRECISIONOPINTERFACE_H
