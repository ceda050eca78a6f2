//===- OpTable.cpp - The ONNX op table --------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/OpTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir::onnxg;

static const OpInfo kOpTable[] = {
#define AMP_OP(DOMAIN, TYPE, FAMILY, PRECISION, OPERANDS, RESULTS, PRODUCT,    \
               SUM)                                                            \
  {DOMAIN,   TYPE,    OpFamily::FAMILY, mlir::amp::PrecisionClass::PRECISION,  \
   OPERANDS, RESULTS, PRODUCT,          SUM},
#include "amp/Dialect/ONNXGraph/IR/OpTable.def"
};

llvm::ArrayRef<OpInfo> mlir::onnxg::getOpTable() { return kOpTable; }

const OpInfo *mlir::onnxg::lookupOp(llvm::StringRef domain,
                                    llvm::StringRef opType) {
  using Key = std::pair<llvm::StringRef, llvm::StringRef>;
  static const llvm::DenseMap<Key, const OpInfo *> index = [] {
    llvm::DenseMap<Key, const OpInfo *> map;
    for (const OpInfo &info : kOpTable)
      map[{info.domain, info.opType}] = &info;
    return map;
  }();
  if (domain == "ai.onnx")
    domain = "";
  return index.lookup({domain, opType});
}

llvm::StringRef mlir::onnxg::stringifyOpFamily(OpFamily family) {
  switch (family) {
  case OpFamily::Elementwise:
    return "elementwise";
  case OpFamily::Activation:
    return "activation";
  case OpFamily::Comparison:
    return "comparison";
  case OpFamily::Contraction:
    return "contraction";
  case OpFamily::Convolution:
    return "convolution";
  case OpFamily::Pooling:
    return "pooling";
  case OpFamily::Normalization:
    return "normalization";
  case OpFamily::Reduction:
    return "reduction";
  case OpFamily::DataMovement:
    return "data-movement";
  case OpFamily::Shape:
    return "shape";
  case OpFamily::Constant:
    return "constant";
  case OpFamily::Random:
    return "random";
  case OpFamily::Loss:
    return "loss";
  case OpFamily::Gradient:
    return "gradient";
  case OpFamily::Optimizer:
    return "optimizer";
  case OpFamily::Runtime:
    return "runtime";
  case OpFamily::Sequence:
    return "sequence";
  case OpFamily::Custom:
    return "custom";
  }
  llvm_unreachable("unknown op family");
}
