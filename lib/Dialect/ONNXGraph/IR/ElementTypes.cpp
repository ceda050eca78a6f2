//===- ElementTypes.cpp - ONNX element types <-> MLIR types ----*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// One table serves both directions.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::onnxg;

/// ONNX TensorProto.DataType numbers, from onnx.proto.
enum DataType : int32_t {
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
};

Type mlir::onnxg::getElementType(MLIRContext *ctx, int32_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case kFloat:
    return b.getF32Type();
  case kUInt8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case kInt8:
    return b.getI8Type();
  case kUInt16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case kInt16:
    return b.getI16Type();
  case kInt32:
    return b.getI32Type();
  case kInt64:
    return b.getI64Type();
  case kString:
    return StringType::get(ctx);
  case kBool:
    return b.getI1Type();
  case kFloat16:
    return b.getF16Type();
  case kDouble:
    return b.getF64Type();
  case kUInt32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case kUInt64:
    return b.getIntegerType(64, /*isSigned=*/false);
  case kComplex64:
    return ComplexType::get(b.getF32Type());
  case kComplex128:
    return ComplexType::get(b.getF64Type());
  case kBFloat16:
    return b.getBF16Type();
  case kFloat8E4M3FN:
    return Float8E4M3FNType::get(ctx);
  case kFloat8E4M3FNUZ:
    return Float8E4M3FNUZType::get(ctx);
  case kFloat8E5M2:
    return Float8E5M2Type::get(ctx);
  case kFloat8E5M2FNUZ:
    return Float8E5M2FNUZType::get(ctx);
  case kUInt4:
    return b.getIntegerType(4, /*isSigned=*/false);
  case kInt4:
    return b.getIntegerType(4);
  case kFloat4E2M1:
    return Float4E2M1FNType::get(ctx);
  default:
    return {};
  }
}

std::optional<int32_t> mlir::onnxg::getOnnxDataType(Type type) {
  if (isa<StringType>(type))
    return kString;
  if (type.isF32())
    return kFloat;
  if (type.isF16())
    return kFloat16;
  if (type.isBF16())
    return kBFloat16;
  if (type.isF64())
    return kDouble;
  if (isa<Float8E4M3FNType>(type))
    return kFloat8E4M3FN;
  if (isa<Float8E4M3FNUZType>(type))
    return kFloat8E4M3FNUZ;
  if (isa<Float8E5M2Type>(type))
    return kFloat8E5M2;
  if (isa<Float8E5M2FNUZType>(type))
    return kFloat8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(type))
    return kFloat4E2M1;
  if (auto complex = dyn_cast<ComplexType>(type)) {
    if (complex.getElementType().isF32())
      return kComplex64;
    if (complex.getElementType().isF64())
      return kComplex128;
    return std::nullopt;
  }
  auto intType = dyn_cast<IntegerType>(type);
  if (!intType || intType.isSigned())
    return std::nullopt;
  bool isUnsigned = intType.isUnsigned();
  switch (intType.getWidth()) {
  case 1:
    return isUnsigned ? std::nullopt : std::optional<int32_t>(kBool);
  case 4:
    return isUnsigned ? kUInt4 : kInt4;
  case 8:
    return isUnsigned ? kUInt8 : kInt8;
  case 16:
    return isUnsigned ? kUInt16 : kInt16;
  case 32:
    return isUnsigned ? kUInt32 : kInt32;
  case 64:
    return isUnsigned ? kUInt64 : kInt64;
  default:
    return std::nullopt;
  }
}

unsigned mlir::onnxg::getRawElementSize(Type type) {
  if (isa<StringType>(type))
    return 0;
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * getRawElementSize(complex.getElementType());
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits == 1)
    return 1;
  return bits % 8 == 0 ? bits / 8 : 0;
}
