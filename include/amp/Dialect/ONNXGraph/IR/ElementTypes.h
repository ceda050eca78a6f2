//===- ElementTypes.h - ONNX element types <-> MLIR types -------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_ONNXGRAPH_IR_ELEMENTTYPES_H
#define AMP_DIALECT_ONNXGRAPH_IR_ELEMENTTYPES_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>

namespace mlir::onnxg {

/// The MLIR type of ONNX TensorProto.DataType `dataType`, or null.
Type getElementType(MLIRContext *ctx, int32_t dataType);

/// The ONNX TensorProto.DataType of an MLIR element type.
std::optional<int32_t> getOnnxDataType(Type type);

/// Bytes one element takes in ONNX raw_data (0 for strings and 4-bit types).
unsigned getRawElementSize(Type type);

} // namespace mlir::onnxg

#endif // AMP_DIALECT_ONNXGRAPH_IR_ELEMENTTYPES_H
