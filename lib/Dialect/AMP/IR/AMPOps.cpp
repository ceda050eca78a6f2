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

#include "amp/Dialect/AMP/IR/FP8.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp;

#define GET_OP_CLASSES
#include "amp/Dialect/AMP/IR/AMPOps.cpp.inc"

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
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

//===----------------------------------------------------------------------===//
// FP8
//===----------------------------------------------------------------------===//

/// Checks that `scale` fits `data`: 0-d without `block`; with it, `block`
/// has `data`'s rank, positive sizes, and `scale` has the block grid's shape.
static LogicalResult verifyBlockScale(Operation *op, StringRef scaleName,
                                      Type scaleType, Type dataType,
                                      std::optional<ArrayRef<int64_t>> block) {
  auto scale = cast<ShapedType>(scaleType);
  auto data = cast<ShapedType>(dataType);
  if (!block) {
    if (!scale.hasRank() || scale.getRank() != 0)
      return op->emitOpError("takes a 0-d ")
             << scaleName << " without a 'block' attribute, not " << scaleType;
    return success();
  }
  if (!data.hasRank() || static_cast<int64_t>(block->size()) != data.getRank())
    return op->emitOpError("block of rank ")
           << block->size() << " does not match the data's type " << dataType;
  if (llvm::any_of(*block, [](int64_t size) { return size < 1; }))
    return op->emitOpError("block sizes must be positive");
  SmallVector<int64_t> grid = fp8::getBlockGridShape(data.getShape(), *block);
  if (!scale.hasRank() || scale.getRank() != data.getRank() ||
      failed(verifyCompatibleShape(scale.getShape(), grid)))
    return op->emitOpError()
           << scaleName << " of type " << scaleType
           << " does not have the block grid's shape "
           << RankedTensorType::get(grid, scale.getElementType());
  return success();
}

LogicalResult QuantizeOp::verify() {
  return verifyBlockScale(*this, "scale", getScale().getType(),
                          getInput().getType(), getBlock());
}

LogicalResult DequantizeOp::verify() {
  return verifyBlockScale(*this, "scale_inv", getScaleInv().getType(),
                          getInput().getType(), getBlock());
}

LogicalResult AmaxOp::verify() {
  return verifyBlockScale(*this, "result", getResult().getType(),
                          getInput().getType(), getBlock());
}

OpFoldResult AmaxOp::fold(FoldAdaptor adaptor) {
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!input || !type || !type.hasStaticShape())
    return {};
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> block = getBlock()
                                   ? llvm::to_vector(*getBlock())
                                   : SmallVector<int64_t>(inputType.getShape());
  SmallVector<float> amax(type.getNumElements(), 0.0f);
  SmallVector<int64_t> strides = computeStrides(type.getShape());
  SmallVector<int64_t> inputStrides = computeStrides(inputType.getShape());
  int64_t index = 0;
  for (APFloat value : input.getValues<APFloat>()) {
    SmallVector<int64_t> position = delinearize(index++, inputStrides);
    int64_t cell = 0;
    for (auto [dim, coordinate] : llvm::enumerate(position))
      cell += (coordinate / block[dim]) * (type.getRank() ? strides[dim] : 0);
    float &slot = amax[cell];
    slot = fp8::maxOrNaN(slot, std::fabs(value.convertToDouble()));
  }
  return DenseElementsAttr::get(type, ArrayRef<float>(amax));
}

LogicalResult ComputeScaleOp::verify() {
  if (getPrevious() && getPrevious().getType() != getAmax().getType())
    return emitOpError("previous scale of type ")
           << getPrevious().getType() << " does not match the amax's type "
           << getAmax().getType();
  float max = getMax().convertToFloat();
  if (!(max > 0.0f) || !std::isfinite(max))
    return emitOpError("max must be positive and finite, not ") << max;
  if (getMargin() < 0 || getMargin() > 64)
    return emitOpError("margin must lie in [0, 64], not ") << getMargin();
  return success();
}

/// The float values of a constant, if it is one.
static std::optional<SmallVector<float>> getFloats(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  SmallVector<float> values;
  for (APFloat value : dense.getValues<APFloat>())
    values.push_back(value.convertToFloat());
  return values;
}

OpFoldResult ComputeScaleOp::fold(FoldAdaptor adaptor) {
  std::optional<SmallVector<float>> amax = getFloats(adaptor.getAmax());
  std::optional<SmallVector<float>> previous;
  if (getPrevious()) {
    previous = getFloats(adaptor.getPrevious());
    if (!previous)
      return {};
  }
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!amax || !type || !type.hasStaticShape())
    return {};
  SmallVector<float> scales;
  for (auto [index, value] : llvm::enumerate(*amax))
    scales.push_back(fp8::computeScale(
        value,
        previous ? std::optional<float>((*previous)[index]) : std::nullopt,
        getMax().convertToFloat(), getMargin(), getPow2()));
  return DenseElementsAttr::get(type, ArrayRef<float>(scales));
}

LogicalResult FP8UpdateOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location>,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  // Operands: N histories, N amaxes, N scales; results: N histories, then
  // N 0-d scales.
  size_t count = operands.size() / 3;
  for (Value history : operands.take_front(count))
    inferred.push_back(history.getType());
  inferred.append(count, RankedTensorType::get({}, Float32Type::get(context)));
  return success();
}

LogicalResult FP8UpdateOp::verify() {
  size_t count = getHistories().size();
  if (count == 0)
    return emitOpError("requires at least one tensor");
  if (getMaxes().size() != count)
    return emitOpError("has ")
           << getMaxes().size() << " maxes for " << count << " tensors";
  for (auto [index, history] : llvm::enumerate(getHistories())) {
    auto type = cast<ShapedType>(history.getType());
    if (!type.hasRank() || type.getRank() != 1 || type.getDimSize(0) == 0)
      return emitOpError("history #")
             << index << " must be a non-empty 1-d tensor, not " << type;
    if (getNewHistories()[index].getType() != type)
      return emitOpError("new history #")
             << index << " must have the type of history #" << index;
    if (!(getMaxes()[index] > 0.0f) || !std::isfinite(getMaxes()[index]))
      return emitOpError("max #") << index << " must be positive and finite";
  }
  if (!fp8::parseAmaxAlgo(getAlgo()))
    return emitOpError("algo must be \"max\" or \"most_recent\", not \"")
           << getAlgo() << "\"";
  if (getMargin() < 0 || getMargin() > 64)
    return emitOpError("margin must lie in [0, 64], not ") << getMargin();
  return success();
}

LogicalResult FP8UpdateOp::fold(FoldAdaptor adaptor,
                                SmallVectorImpl<OpFoldResult> &results) {
  size_t count = getHistories().size();
  SmallVector<SmallVector<float>> histories;
  SmallVector<float> amaxes, scales;
  for (size_t index = 0; index < count; ++index) {
    std::optional<SmallVector<float>> history =
        getFloats(adaptor.getHistories()[index]);
    std::optional<SmallVector<float>> amax =
        getFloats(adaptor.getAmaxes()[index]);
    std::optional<SmallVector<float>> scale =
        getFloats(adaptor.getScales()[index]);
    if (!history || !amax || !scale)
      return failure();
    histories.push_back(std::move(*history));
    amaxes.push_back(amax->front());
    scales.push_back(scale->front());
  }
  fp8::AmaxAlgo algo = *fp8::parseAmaxAlgo(getAlgo());
  SmallVector<OpFoldResult> newScales;
  for (size_t index = 0; index < count; ++index) {
    float scale =
        fp8::updateHistory(histories[index], amaxes[index], scales[index],
                           getMaxes()[index], getMargin(), algo);
    results.push_back(DenseElementsAttr::get(
        cast<ShapedType>(getNewHistories()[index].getType()),
        ArrayRef<float>(histories[index])));
    newScales.push_back(DenseElementsAttr::get(
        cast<ShapedType>(getNewScales()[index].getType()), scale));
  }
  results.append(newScales);
  return success();
}

LogicalResult ScaledMatMulOp::verify() {
  auto aType = cast<ShapedType>(getA().getType());
  auto bType = cast<ShapedType>(getB().getType());
  auto resultType = cast<ShapedType>(getResult().getType());
  Type aElement = aType.getElementType(), bElement = bType.getElementType();
  if (isa<Float8E5M2Type>(aElement) && isa<Float8E5M2Type>(bElement))
    return emitOpError("does not take two E5M2 operands (cuBLASLt rejects "
                       "them; pair a gradient with an E4M3 operand)");
  if (!aType.hasRank() || !bType.hasRank() || !resultType.hasRank() ||
      aType.getRank() < 2 || bType.getRank() < 2)
    return emitOpError("operands must be ranked with at least 2 dimensions");
  int64_t rank = aType.getRank();
  if (bType.getRank() != 2 && bType.getRank() != rank)
    return emitOpError("b must have rank 2 or a's rank ") << rank;
  if (resultType.getRank() != rank)
    return emitOpError("result must have a's rank ") << rank;
  int64_t m = aType.getDimSize(rank - (getTransposeA() ? 1 : 2));
  int64_t k = aType.getDimSize(rank - (getTransposeA() ? 2 : 1));
  int64_t bRank = bType.getRank();
  int64_t bk = bType.getDimSize(bRank - (getTransposeB() ? 1 : 2));
  int64_t n = bType.getDimSize(bRank - (getTransposeB() ? 2 : 1));
  if (failed(verifyCompatibleShape({k}, {bk})))
    return emitOpError("contraction sizes differ: K = ")
           << k << " in a, " << bk << " in b";
  for (auto [name, size] : {std::pair<StringRef, int64_t>{"K", k}, {"N", n}})
    if (!ShapedType::isDynamic(size) && size % 16 != 0)
      return emitOpError("FP8 GEMMs need ")
             << name << " to be a multiple of 16, not " << size;
  SmallVector<int64_t> expected(aType.getShape().drop_back(2));
  if (bRank == rank &&
      failed(verifyCompatibleShape(expected, bType.getShape().drop_back(2))))
    return emitOpError("batch dimensions of a and b differ");
  expected.append({m, n});
  if (failed(verifyCompatibleShape(resultType.getShape(), expected)))
    return emitOpError("result type ")
           << resultType << " does not match the product's shape";
  if (Value bias = getBias()) {
    auto biasType = cast<ShapedType>(bias.getType());
    if (!biasType.hasRank() || biasType.getRank() != 1 ||
        failed(verifyCompatibleShape({biasType.getDimSize(0)}, {n})))
      return emitOpError("bias must be [N] = [") << n << "], not " << biasType;
  }
  if (failed(verifyBlockScale(*this, "a_scale_inv", getAScaleInv().getType(),
                              aType, getABlock())) ||
      failed(verifyBlockScale(*this, "b_scale_inv", getBScaleInv().getType(),
                              bType, getBBlock())))
    return failure();
  return success();
}
