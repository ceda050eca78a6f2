//===- ONNXGraphDialect.cpp - ONNX graph dialect registration --*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::onnxg;

#include "amp/Dialect/ONNXGraph/IR/ONNXGraphOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "amp/Dialect/ONNXGraph/IR/ONNXGraphOpsTypes.cpp.inc"

void ONNXGraphDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "amp/Dialect/ONNXGraph/IR/ONNXGraphOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "amp/Dialect/ONNXGraph/IR/ONNXGraphOps.cpp.inc"
      >();
}
