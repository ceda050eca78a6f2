//===- PrecisionOpInterface.cpp - What AMP passes ask an op ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Interfaces/PrecisionClass.cpp.inc"
#include "amp/Interfaces/PrecisionOpInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// Cost estimates
//===----------------------------------------------------------------------===//

bool mlir::amp::isFloatTensor(Type type) {
  auto tensor = dyn_cast<TensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

double DimSizes::getSize(Value value, unsigned dim) {
  auto shaped = dyn_cast<ShapedType>(value.getType());
  if (!shaped)
    return 1;
  if (shaped.hasRank() && !shaped.isDynamicDim(dim))
    return static_cast<double>(shaped.getDimSize(dim));
  StringRef name =
      getDimName && shaped.hasRank() ? getDimName(value, dim) : StringRef();
  if (!name.empty()) {
    auto it = namedSizes.find(name);
    if (it != namedSizes.end())
      return static_cast<double>(it->second);
  }
  std::string guess = name.empty() ? "?" : name.str();
  if (!llvm::is_contained(guesses, guess))
    guesses.push_back(std::move(guess));
  return static_cast<double>(defaultSize);
}

double DimSizes::getNumElements(Value value) {
  auto shaped = dyn_cast<ShapedType>(value.getType());
  if (!shaped)
    return 1;
  if (!shaped.hasRank())
    return getSize(value, 0);
  double count = 1;
  for (unsigned dim = 0, rank = shaped.getRank(); dim < rank; ++dim)
    count *= getSize(value, dim);
  return count;
}

double DimSizes::getBytes(Value value, unsigned floatBits) {
  auto shaped = dyn_cast<ShapedType>(value.getType());
  if (!shaped)
    return 0;
  Type element = shaped.getElementType();
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 8;
  if (floatBits && isa<FloatType>(element))
    bits = floatBits;
  return getNumElements(value) * std::max(bits, 8u) / 8;
}

double mlir::amp::detail::estimateElementwiseFlops(Operation *op,
                                                   DimSizes &sizes) {
  double largest = 0;
  for (Value result : op->getResults())
    largest = std::max(largest, sizes.getNumElements(result));
  return largest;
}

RecomputeKind
mlir::amp::detail::getDefaultRecomputeKind(PrecisionOpInterface op) {
  if (op->getNumRegions() != 0 || !isPure(op))
    return RecomputeKind::Never;
  return op.getPrecisionClass() == PrecisionClass::Always
             ? RecomputeKind::ComputeIntensive
             : RecomputeKind::Cheap;
}

double mlir::amp::detail::estimateAllBytes(PrecisionOpInterface op,
                                           DimSizes &sizes, unsigned dataBits) {
  double bytes = 0;
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    bytes += sizes.getBytes(operand,
                            op.isPrecisionDataOperand(index) ? dataBits : 0);
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    bytes +=
        sizes.getBytes(result, op.isPrecisionDataResult(index) ? dataBits : 0);
  return bytes;
}
