//===- AMPOps.cpp - AMP dialect ops ----------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Verifiers and folders of the `amp` ops.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::amp;

#define GET_OP_CLASSES
#include "amp/Dialect/AMP/IR/AMPOps.cpp.inc"

/// True for the 8-bit float types (f8E4M3FN, f8E5M2, ...).
static bool isFloat8(Type type) {
  return isa<FloatType>(type) && type.getIntOrFloatBitWidth() == 8;
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  Type resultElt = getResult().getType().getElementType();
  bool needsScale = isFloat8(resultElt);
  if (needsScale && !getScale())
    return emitOpError("requires a 'scale' attribute when casting to ")
           << resultElt;
  if (!needsScale && getScale())
    return emitOpError("takes a 'scale' attribute only when casting to an "
                       "8-bit float, not to ")
           << resultElt;
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() && !getScale())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// UnscaleOp
//===----------------------------------------------------------------------===//

PrecisionClass UnscaleOp::getPrecisionClass() {
  return PrecisionClass::KeepFP32;
}

bool UnscaleOp::isPrecisionDataOperand(unsigned index) { return index == 0; }

bool UnscaleOp::isPrecisionDataResult(unsigned index) { return false; }
