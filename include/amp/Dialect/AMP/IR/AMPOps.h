//===- AMPOps.h - AMP dialect ops -------------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPOPS_H
#define AMP_DIALECT_AMP_IR_AMPOPS_H

#include "amp/Dialect/AMP/IR/AMPDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "amp/Interfaces/PrecisionOpInterface.h"

#define GET_OP_CLASSES
#include "amp/Dialect/AMP/IR/AMPOps.h.inc"

#endif // AMP_DIALECT_AMP_IR_AMPOPS_H
