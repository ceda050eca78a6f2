//===- AMPDialect.cpp - AMP dialect registration ---------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPDialect.h"
#include "amp/Dialect/AMP/IR/AMPOps.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/AMP/IR/AMPOpsDialect.cpp.inc"

void AMPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "amp/Dialect/AMP/IR/AMPOps.cpp.inc"
      >();
}
