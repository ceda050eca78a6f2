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

#include <cmath>

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

//===----------------------------------------------------------------------===//
// Loss scaling
//===----------------------------------------------------------------------===//

LogicalResult AllFiniteOp::verify() {
  if (getInputs().empty())
    return emitOpError("requires at least one input");
  return success();
}

LogicalResult UpdateIfFiniteOp::verify() {
  auto updated = cast<RankedTensorType>(getUpdated().getType());
  auto previous = cast<RankedTensorType>(getPrevious().getType());
  if (previous != updated &&
      !(previous.getRank() == 0 &&
        previous.getElementType() == updated.getElementType()))
    return emitOpError("previous value of type ")
           << previous << " is neither " << updated
           << " nor a 0-d tensor of its element type";
  return success();
}

LogicalResult UpdateScaleOp::verify() {
  float growth = getGrowthFactor().convertToFloat();
  float backoff = getBackoffFactor().convertToFloat();
  float lowest = getMinScale().convertToFloat();
  float highest = getMaxScale().convertToFloat();
  if (!(growth >= 1.0f))
    return emitOpError("growth_factor must be at least 1, not ") << growth;
  if (!(backoff > 0.0f && backoff < 1.0f))
    return emitOpError("backoff_factor must lie in (0, 1), not ") << backoff;
  if (getGrowthInterval() < 1)
    return emitOpError("growth_interval must be at least 1, not ")
           << getGrowthInterval();
  if (!(lowest > 0.0f && lowest <= highest && std::isfinite(highest)))
    return emitOpError("requires 0 < min_scale <= max_scale < inf, not [")
           << lowest << ", " << highest << "]";
  return success();
}
