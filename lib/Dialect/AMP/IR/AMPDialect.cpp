//===- AMPDialect.cpp - AMP dialect registration ---------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPDialect.h"
#include "amp/Dialect/AMP/IR/AMPOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/AMP/IR/AMPOpsDialect.cpp.inc"

void AMPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "amp/Dialect/AMP/IR/AMPOps.cpp.inc"
      >();
}

Operation *AMPDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || typed.getType() != type)
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, typed);
}
