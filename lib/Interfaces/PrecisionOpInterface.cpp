//===- PrecisionOpInterface.cpp - What AMP passes ask an op ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Interfaces/PrecisionClass.cpp.inc"
#include "amp/Interfaces/PrecisionOpInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// Cost estimates
//===----------------------------------------------------------------------===//

double DimSizes::getSize(int64_t dim) {
  if (!ShapedType::isDynamic(dim))
    return static_cast<double>(dim);
  guessed = true;
  return static_cast<double>(defaultSize);
}

double DimSizes::getNumElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 1;
  if (!shaped.hasRank())
    return getSize(ShapedType::kDynamic);
  double count = 1;
  for (int64_t dim : shaped.getShape())
    count *= getSize(dim);
  return count;
}

double DimSizes::getBytes(Type type, unsigned floatBits) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 0;
  Type element = shaped.getElementType();
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 8;
  if (floatBits && isa<FloatType>(element))
    bits = floatBits;
  return getNumElements(type) * std::max(bits, 8u) / 8;
}

double mlir::amp::detail::estimateElementwiseFlops(Operation *op,
                                                   DimSizes &sizes) {
  double largest = 0;
  for (Type type : op->getResultTypes())
    largest = std::max(largest, sizes.getNumElements(type));
  return largest;
}

double mlir::amp::detail::estimateAllBytes(PrecisionOpInterface op,
                                           DimSizes &sizes, unsigned dataBits) {
  double bytes = 0;
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    bytes += sizes.getBytes(operand.getType(),
                            op.isPrecisionDataOperand(index) ? dataBits : 0);
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    bytes += sizes.getBytes(result.getType(),
                            op.isPrecisionDataResult(index) ? dataBits : 0);
  return bytes;
}
