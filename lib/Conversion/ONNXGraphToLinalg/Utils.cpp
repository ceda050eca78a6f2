//===- Utils.cpp - Builders shared by the graph-to-linalg lowering --------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// NodeLowering's accessors, the lowering table, and the broadcasting,
// reduction, reshape and conversion builders every op family uses.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Dialect/ONNXGraph/IR/OpTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp::lowering;

//===----------------------------------------------------------------------===//
// NodeLowering
//===----------------------------------------------------------------------===//

Value amp::lowering::getMostStaticValue(Value value) {
  // A cast that only forgot static sizes, or the rank (to a type ONNX
  // could not infer), hides what is known.
  while (auto cast = value.getDefiningOp<tensor::CastOp>()) {
    bool forgotRank = isa<UnrankedTensorType>(cast.getType()) &&
                      isa<RankedTensorType>(cast.getSource().getType());
    if (!forgotRank && !tensor::preservesStaticInformation(
                           cast.getType(), cast.getSource().getType()))
      break;
    value = cast.getSource();
  }
  return value;
}

Value NodeLowering::operand(unsigned i) const {
  Value value = node.getOptionalOperand(i);
  return value ? getMostStaticValue(value) : Value();
}

RankedTensorType NodeLowering::resultType(unsigned i) const {
  return dyn_cast<RankedTensorType>(node.getResult(i).getType());
}

Attribute NodeLowering::getAttr(StringRef name) const {
  return node.getOnnxAttrsOrEmpty().get(name);
}

int64_t NodeLowering::getInt(StringRef name, int64_t defaultValue) const {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(getAttr(name)))
    return attr.getInt();
  return defaultValue;
}

float NodeLowering::getFloat(StringRef name, float defaultValue) const {
  if (auto attr = dyn_cast_or_null<FloatAttr>(getAttr(name)))
    return attr.getValueAsDouble();
  return defaultValue;
}

StringRef NodeLowering::getString(StringRef name,
                                  StringRef defaultValue) const {
  if (auto attr = dyn_cast_or_null<StringAttr>(getAttr(name)))
    return attr.getValue();
  return defaultValue;
}

std::optional<SmallVector<int64_t>>
NodeLowering::getInts(StringRef name) const {
  if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(getAttr(name)))
    return SmallVector<int64_t>(attr.asArrayRef());
  return std::nullopt;
}

/// The integers of a constant tensor: a dense attribute or a resource blob
/// of 32- or 64-bit integers.
static std::optional<SmallVector<int64_t>> readInts(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  auto intType = dyn_cast<IntegerType>(type.getElementType());
  if (!intType)
    return std::nullopt;
  SmallVector<int64_t> values;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    for (const APInt &value : dense.getValues<APInt>())
      values.push_back(intType.getWidth() == 1 ? value.getZExtValue()
                                               : value.getSExtValue());
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource || !resource.getRawHandle().getBlob())
    return std::nullopt;
  ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
  int64_t count = type.getNumElements();
  if (intType.getWidth() == 64 && data.size() == size_t(count) * 8) {
    auto *words = reinterpret_cast<const int64_t *>(data.data());
    values.assign(words, words + count);
    return values;
  }
  if (intType.getWidth() == 32 && data.size() == size_t(count) * 4) {
    auto *words = reinterpret_cast<const int32_t *>(data.data());
    values.assign(words, words + count);
    return values;
  }
  // Booleans: one byte each, as ONNX stores them.
  if (intType.getWidth() == 1 && data.size() == size_t(count)) {
    for (char byte : data)
      values.push_back(byte != 0);
    return values;
  }
  return std::nullopt;
}

/// The most elements getConstantInts reads from a fill.
static constexpr int64_t kMaxReadFillElements = 1 << 16;

std::optional<SmallVector<int64_t>>
NodeLowering::getConstantInts(unsigned i) const {
  Value value = operand(i);
  if (!value)
    return std::nullopt;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    if (auto elements = dyn_cast<ElementsAttr>(constant.getValue()))
      return readInts(elements);
  // A constant of equal elements (createConstant's fill of a splat: the
  // 128 ones of a Split's sizes).
  auto fill = value.getDefiningOp<linalg::FillOp>();
  auto type = getRankedType(value);
  IntegerAttr element;
  if (fill && type && type.hasStaticShape() &&
      type.getNumElements() <= kMaxReadFillElements &&
      fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>() &&
      matchPattern(fill.getInputs().front(), m_Constant(&element)))
    return SmallVector<int64_t>(type.getNumElements(),
                                element.getType().isInteger(1)
                                    ? element.getValue().getZExtValue()
                                    : element.getValue().getSExtValue());
  return std::nullopt;
}

std::optional<SmallVector<double>>
NodeLowering::getConstantFloats(unsigned i) const {
  Value value = operand(i);
  auto constant = value ? value.getDefiningOp<arith::ConstantOp>() : nullptr;
  if (!constant)
    return std::nullopt;
  SmallVector<double> values;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue())) {
    for (const APFloat &element : dense.getValues<APFloat>())
      values.push_back(element.convertToDouble());
    return values;
  }
  auto resource = dyn_cast<DenseF32ResourceElementsAttr>(constant.getValue());
  std::optional<ArrayRef<float>> floats =
      resource ? resource.tryGetAsArrayRef() : std::nullopt;
  if (!floats || int64_t(floats->size()) != resource.getNumElements())
    return std::nullopt;
  values.append(floats->begin(), floats->end());
  return values;
}

std::optional<SmallVector<int64_t>>
NodeLowering::getIntsFromAttrOrOperand(StringRef name, unsigned i,
                                       bool &notConstant) const {
  notConstant = false;
  if (std::optional<SmallVector<int64_t>> values = getInts(name))
    return values;
  if (!operand(i))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> values = getConstantInts(i);
  notConstant = !values;
  return values;
}

std::optional<SmallVector<Value>>
NodeLowering::sequenceOperand(unsigned i) const {
  Value sequence = node.getOptionalOperand(i);
  if (!sequence) {
    emitError() << "input " << i << " (a sequence) is missing";
    return std::nullopt;
  }
  std::optional<SmallVector<Value>> elements = getSequenceElements(sequence);
  if (!elements)
    emitError()
        << "input " << i
        << " must be a sequence built in the graph (SequenceConstruct); "
           "sequences that are graph inputs do not lower";
  return elements;
}

InFlightDiagnostic NodeLowering::emitError() const {
  return node.emitNodeError();
}

//===----------------------------------------------------------------------===//
// Sequences
//===----------------------------------------------------------------------===//

Value amp::lowering::buildSequence(OpBuilder &b, Location loc,
                                   Type sequenceType, ValueRange elements) {
  // A sequence whose type ONNX could not infer (a contrib op's output).
  if (!isa<onnxg::SequenceType>(sequenceType))
    sequenceType = onnxg::SequenceType::get(
        b.getContext(),
        UnrankedTensorType::get(getElementTypeOrSelf(elements.front())));
  return UnrealizedConversionCastOp::create(b, loc, sequenceType, elements)
      .getResult(0);
}

std::optional<SmallVector<Value>>
amp::lowering::getSequenceElements(Value sequence) {
  auto cast = sequence.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast->getNumResults() != 1 ||
      !isa<onnxg::SequenceType>(sequence.getType()))
    return std::nullopt;
  return llvm::to_vector(cast.getInputs());
}

//===----------------------------------------------------------------------===//
// LoweringTable
//===----------------------------------------------------------------------===//

static std::string getTableKey(StringRef domain, StringRef opType) {
  return ((onnxg::isDefaultDomain(domain) ? StringRef() : domain) +
          "::" + opType)
      .str();
}

void LoweringTable::add(StringRef domain, StringRef opType, LoweringFn fn) {
  // Without a row, the precision passes and the training analysis would
  // treat a node that lowers as unknown (never retyped, not linear in the
  // seed): a lowering needs its row.
  if (!onnxg::lookupOp(domain, opType))
    llvm::report_fatal_error(llvm::Twine("the lowering of ") + domain +
                             "::" + opType + " has no row in OpTable.def");
  lowerings[getTableKey(domain, opType)] = fn;
}

LoweringFn LoweringTable::lookup(StringRef domain, StringRef opType) const {
  return lowerings.lookup(getTableKey(domain, opType));
}

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Type amp::lowering::getComputeType(Type elementType) {
  auto floatType = dyn_cast<FloatType>(elementType);
  if (floatType && floatType.getWidth() < 32)
    return Float32Type::get(elementType.getContext());
  return elementType;
}

Type amp::lowering::getAccumulatorType(Type elementType) {
  if (elementType.isF64())
    return elementType;
  return Float32Type::get(elementType.getContext());
}

double amp::lowering::getLargestFinite(FloatType type) {
  return APFloat::getLargest(type.getFloatSemantics()).convertToDouble();
}

Value amp::lowering::createScalar(OpBuilder &b, Location loc, Type type,
                                  double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, int64_t(value));
  return arith::ConstantOp::create(b, loc,
                                   b.getIntegerAttr(type, int64_t(value)));
}

Type amp::lowering::getSignlessType(Type elementType) {
  auto integer = dyn_cast<IntegerType>(elementType);
  return integer && integer.isUnsigned()
             ? IntegerType::get(elementType.getContext(), integer.getWidth())
             : elementType;
}

Value amp::lowering::reinterpretInteger(OpBuilder &b, Location loc, Value value,
                                        Type to) {
  return UnrealizedConversionCastOp::create(b, loc, to, value).getResult(0);
}

Value amp::lowering::convertScalar(OpBuilder &b, Location loc, Value value,
                                   Type to, bool fromUnsigned,
                                   bool toUnsigned) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (from.isIndex()) {
    value = arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
    return convertScalar(b, loc, value, to);
  }
  if (to.isIndex())
    return arith::IndexCastOp::create(
        b, loc, to, convertScalar(b, loc, value, b.getI64Type()));
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth() ||
        (fromFloat.getWidth() == toFloat.getWidth() &&
         APFloat::isRepresentableAsNormalIn(fromFloat.getFloatSemantics(),
                                            toFloat.getFloatSemantics())))
      return arith::ExtFOp::create(b, loc, to, value);
    if (toFloat.getWidth() == 8) {
      // Saturate as ONNX Cast (saturate=1) and the GPU conversions do.
      double largest = getLargestFinite(toFloat);
      value = arith::MinimumFOp::create(b, loc, value,
                                        createScalar(b, loc, from, largest));
      value = arith::MaximumFOp::create(b, loc, value,
                                        createScalar(b, loc, from, -largest));
    }
    if (fromFloat.getWidth() == toFloat.getWidth()) {
      // f16 <-> bf16: through f32.
      value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    }
    return arith::TruncFOp::create(b, loc, to, value);
  }
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  if (fromInt && toFloat) {
    if (fromInt.getWidth() == 1 || fromUnsigned)
      return arith::UIToFPOp::create(b, loc, to, value);
    return arith::SIToFPOp::create(b, loc, to, value);
  }
  if (fromFloat && toInt) {
    if (toInt.getWidth() == 1)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   createScalar(b, loc, from, 0));
    if (toUnsigned)
      return arith::FPToUIOp::create(b, loc, to, value);
    return arith::FPToSIOp::create(b, loc, to, value);
  }
  if (fromInt && toInt) {
    if (toInt.getWidth() == 1)
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                   createScalar(b, loc, from, 0));
    if (fromInt.getWidth() == 1 ||
        (fromUnsigned && fromInt.getWidth() < toInt.getWidth()))
      return arith::ExtUIOp::create(b, loc, to, value);
    if (fromInt.getWidth() < toInt.getWidth())
      return arith::ExtSIOp::create(b, loc, to, value);
    if (fromInt.getWidth() == toInt.getWidth())
      return value;
    return arith::TruncIOp::create(b, loc, to, value);
  }
  llvm_unreachable("convertScalar: unsupported types");
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

SmallVector<OpFoldResult> amp::lowering::getSizes(OpBuilder &b, Location loc,
                                                  Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

Value amp::lowering::createEmpty(OpBuilder &b, Location loc,
                                 ArrayRef<OpFoldResult> sizes,
                                 Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value amp::lowering::createFilled(OpBuilder &b, Location loc,
                                  ArrayRef<OpFoldResult> sizes, Value value) {
  Value empty = createEmpty(b, loc, sizes, value.getType());
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

Value amp::lowering::cropNegativePads(OpBuilder &b, Location loc, Value input,
                                      ArrayRef<int64_t> low,
                                      ArrayRef<int64_t> high) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  if (llvm::all_of(low, [](int64_t p) { return p >= 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p >= 0; }))
    return input;
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t i = 0; i < rank; ++i) {
    if (low[i] >= 0 && high[i] >= 0)
      continue;
    int64_t crop =
        std::max<int64_t>(0, -low[i]) + std::max<int64_t>(0, -high[i]);
    offsets[i] = b.getIndexAttr(std::max<int64_t>(0, -low[i]));
    shape[i] -= crop;
    sizes[i] = b.getIndexAttr(shape[i]);
  }
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), input,
      offsets, sizes, strides);
}

Value amp::lowering::padTensor(OpBuilder &b, Location loc, Value input,
                               ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                               Value value) {
  input = cropNegativePads(b, loc, input, low, high);
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  if (llvm::all_of(low, [](int64_t p) { return p <= 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p <= 0; }))
    return input;
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> lowAttrs, highAttrs;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t before = std::max<int64_t>(0, low[i]);
    int64_t after = std::max<int64_t>(0, high[i]);
    if (!ShapedType::isDynamic(shape[i]))
      shape[i] += before + after;
    lowAttrs.push_back(b.getIndexAttr(before));
    highAttrs.push_back(b.getIndexAttr(after));
  }
  auto padType = RankedTensorType::get(shape, type.getElementType());
  return tensor::PadOp::create(b, loc, padType, input, lowAttrs, highAttrs,
                               value);
}

Value amp::lowering::getScalarOperand(NodeLowering &node, unsigned i,
                                      StringRef what) {
  Value value = node.operand(i);
  auto type = getRankedType(value);
  if (!type || !type.hasStaticShape() || type.getNumElements() != 1) {
    node.emitError() << what << " (input " << i
                     << ") must be a tensor of one element";
    return {};
  }
  return reshapeTo(node.getBuilder(), node.getLoc(), value,
                   RankedTensorType::get({}, type.getElementType()));
}

Value amp::lowering::transposeTensor(OpBuilder &b, Location loc, Value input,
                                     ArrayRef<int64_t> perm) {
  SmallVector<OpFoldResult> sizes, inputSizes = getSizes(b, loc, input);
  for (int64_t p : perm)
    sizes.push_back(inputSizes[p]);
  Value init = createEmpty(b, loc, sizes, getElementTypeOrSelf(input));
  return linalg::TransposeOp::create(b, loc, input, init, perm).getResult()[0];
}

std::optional<int64_t> amp::lowering::normalizeAxis(int64_t axis,
                                                    int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

RankedTensorType
amp::lowering::getBroadcastType(ArrayRef<RankedTensorType> operandTypes,
                                RankedTensorType declared) {
  int64_t rank = declared.getRank();
  SmallVector<int64_t> shape(rank, 1);
  for (RankedTensorType type : operandTypes) {
    if (!type || type.getRank() > rank)
      return {};
    int64_t offset = rank - type.getRank();
    for (auto [i, size] : llvm::enumerate(type.getShape())) {
      int64_t &merged = shape[offset + i];
      if (size == 1)
        continue;
      if (merged == 1 || ShapedType::isDynamic(merged))
        merged = size;
      else if (!ShapedType::isDynamic(size) && size != merged)
        return {};
    }
  }
  for (auto [i, size] : llvm::enumerate(declared.getShape())) {
    if (ShapedType::isDynamic(size))
      continue;
    if (!ShapedType::isDynamic(shape[i]) && shape[i] != size)
      return {};
    shape[i] = size;
  }
  return RankedTensorType::get(shape, declared.getElementType());
}

RankedTensorType amp::lowering::getBroadcastType(ValueRange operands,
                                                 RankedTensorType declared) {
  SmallVector<RankedTensorType> types;
  for (Value operand : operands)
    types.push_back(dyn_cast<RankedTensorType>(operand.getType()));
  return getBroadcastType(types, declared);
}

/// Sizes of the broadcast result of `operands` (rank of `type`): static
/// sizes from `type`, dynamic ones from an operand that is not 1 there.
static SmallVector<OpFoldResult> getBroadcastSizes(OpBuilder &b, Location loc,
                                                   RankedTensorType type,
                                                   ValueRange operands) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < rank; ++i) {
    if (!type.isDynamicDim(i)) {
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
      continue;
    }
    OpFoldResult size = b.getIndexAttr(1);
    for (Value operand : operands) {
      auto operandType = cast<RankedTensorType>(operand.getType());
      int64_t position = i - (rank - operandType.getRank());
      if (position < 0 || operandType.getDimSize(position) == 1)
        continue;
      size = tensor::getMixedSize(b, loc, operand, position);
      break;
    }
    sizes.push_back(size);
  }
  return sizes;
}

Value amp::lowering::buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    ValueRange operands,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps;
  for (Value operand : operands) {
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t offset = rank - type.getRank();
    SmallVector<AffineExpr> exprs;
    for (auto [i, size] : llvm::enumerate(type.getShape())) {
      bool broadcast = size == 1 && resultType.getDimSize(offset + i) != 1;
      exprs.push_back(broadcast ? b.getAffineConstantExpr(0)
                                : b.getAffineDimExpr(offset + i));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  // Float operands meet in f64 when one of them is f64.
  bool anyF64 = llvm::any_of(operands, [](Value operand) {
    return getElementTypeOrSelf(operand.getType()).isF64();
  });
  Value init =
      createEmpty(b, loc, getBroadcastSizes(b, loc, resultType, operands),
                  resultType.getElementType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), operands, init, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        SmallVector<Value> scalars;
        for (Value arg : args.drop_back()) {
          Type type = getComputeType(arg.getType());
          if (anyF64 && isa<FloatType>(type))
            type = nested.getF64Type();
          scalars.push_back(convertScalar(nested, nestedLoc, arg, type));
        }
        Value result = body(nested, nestedLoc, scalars);
        linalg::YieldOp::create(nested, nestedLoc,
                                convertScalar(nested, nestedLoc, result,
                                              resultType.getElementType()));
      });
  return castToType(b, loc, generic.getResult(0), resultType);
}

Value amp::lowering::multiplyAccumulate(OpBuilder &b, Location loc, Value x,
                                        Value y, Value acc) {
  Type accType = acc.getType();
  Value product =
      arith::MulFOp::create(b, loc, convertScalar(b, loc, x, accType),
                            convertScalar(b, loc, y, accType));
  return arith::AddFOp::create(b, loc, acc, product);
}

ReductionLoops amp::lowering::getReductionLoops(OpBuilder &b, Location loc,
                                                Value input,
                                                ArrayRef<int64_t> axes) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  ReductionLoops loops;
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < rank; ++i) {
    if (llvm::is_contained(axes, i)) {
      loops.iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    loops.iterators.push_back(utils::IteratorType::parallel);
    loops.outSizes.push_back(sizes[i]);
    outExprs.push_back(b.getAffineDimExpr(i));
  }
  loops.outMap = AffineMap::get(rank, 0, outExprs, b.getContext());
  return loops;
}

Value amp::lowering::buildReduction(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
    Type accType, Value init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine,
    function_ref<Value(OpBuilder &, Location, Value)> map) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  ReductionLoops loops = getReductionLoops(b, loc, input, axes);
  Value acc = createFilled(b, loc, loops.outSizes, init);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank), loops.outMap};
  auto generic = linalg::GenericOp::create(
      b, loc, acc.getType(), input, acc, maps, loops.iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value x = convertScalar(nested, nestedLoc, args[0], accType);
        if (map)
          x = map(nested, nestedLoc, x);
        linalg::YieldOp::create(nested, nestedLoc,
                                combine(nested, nestedLoc, x, args[1]));
      });
  return generic.getResult(0);
}

Value amp::lowering::combineValues(OpBuilder &b, Location loc, CombineKind kind,
                                   Value acc, Value x) {
  bool isFloat = isa<FloatType>(x.getType());
  // Booleans order false < true, which as signed i1 (0 and -1) is reversed.
  bool isBool = x.getType().isInteger(1);
  switch (kind) {
  case CombineKind::Max:
    return isFloat  ? arith::MaximumFOp::create(b, loc, acc, x).getResult()
           : isBool ? arith::MaxUIOp::create(b, loc, acc, x).getResult()
                    : arith::MaxSIOp::create(b, loc, acc, x).getResult();
  case CombineKind::Min:
    return isFloat  ? arith::MinimumFOp::create(b, loc, acc, x).getResult()
           : isBool ? arith::MinUIOp::create(b, loc, acc, x).getResult()
                    : arith::MinSIOp::create(b, loc, acc, x).getResult();
  case CombineKind::Mul:
    return isFloat ? arith::MulFOp::create(b, loc, acc, x).getResult()
                   : arith::MulIOp::create(b, loc, acc, x).getResult();
  case CombineKind::Add:
    return isFloat ? arith::AddFOp::create(b, loc, acc, x).getResult()
                   : arith::AddIOp::create(b, loc, acc, x).getResult();
  }
  llvm_unreachable("unknown combine kind");
}

Value amp::lowering::buildScatter(
    OpBuilder &b, Location loc, Value dest, Value updates,
    std::optional<CombineKind> kind,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
        getTarget) {
  Type elementType = getRankedType(dest).getElementType();
  int64_t rank = getRankedType(updates).getRank();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lbs(rank, zero), steps(rank, one), ubs;
  for (int64_t i = 0; i < rank; ++i)
    ubs.push_back(tensor::DimOp::create(b, loc, updates, i));
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{dest},
      [&](OpBuilder &nb, Location nl, ValueRange ivs,
          ValueRange args) -> scf::ValueVector {
        SmallVector<Value> target = getTarget(nb, nl, ivs);
        Value value = convertScalar(
            nb, nl, tensor::ExtractOp::create(nb, nl, updates, ivs),
            elementType);
        Value acc = args[0];
        if (kind) {
          Value current = tensor::ExtractOp::create(nb, nl, acc, target);
          value = combineValues(nb, nl, *kind, current, value);
        }
        return {
            tensor::InsertOp::create(nb, nl, value, acc, target).getResult()};
      });
  return nest.results.front();
}

FailureOr<std::optional<CombineKind>>
amp::lowering::getScatterReduction(NodeLowering &node) {
  StringRef reduction = node.getString("reduction", "none");
  if (reduction == "none")
    return std::optional<CombineKind>();
  std::optional<CombineKind> kind =
      llvm::StringSwitch<std::optional<CombineKind>>(reduction)
          .Case("add", CombineKind::Add)
          .Case("mul", CombineKind::Mul)
          .Case("max", CombineKind::Max)
          .Case("min", CombineKind::Min)
          .Default(std::nullopt);
  if (!kind)
    return node.emitError() << "unknown reduction '" << reduction << "'";
  return kind;
}

Value amp::lowering::normalizeIndex(OpBuilder &b, Location loc, Value index,
                                    Value size) {
  index = convertScalar(b, loc, index, b.getIndexType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  Value wrapped = arith::AddIOp::create(b, loc, index, size);
  return arith::SelectOp::create(b, loc, negative, wrapped, index);
}

Value amp::lowering::buildSum(OpBuilder &b, Location loc, Value input,
                              ArrayRef<int64_t> axes) {
  Type accType = getAccumulatorType(getRankedType(input).getElementType());
  return buildReduction(
      b, loc, input, axes, accType, createScalar(b, loc, accType, 0),
      [](OpBuilder &nb, Location nl, Value x, Value acc) {
        return arith::AddFOp::create(nb, nl, acc, x).getResult();
      });
}

FailureOr<Value> amp::lowering::sumToShape(OpBuilder &b, Location loc,
                                           Value value,
                                           RankedTensorType target) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t extra = type.getRank() - target.getRank();
  if (extra < 0 || !type.hasStaticShape() || !target.hasStaticShape())
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (i < extra) {
      axes.push_back(i);
      continue;
    }
    int64_t size = target.getDimSize(i - extra);
    if (size == 1 && type.getDimSize(i) != 1)
      axes.push_back(i);
    else if (size != type.getDimSize(i))
      return failure();
  }
  if (axes.empty())
    return value;
  return reshapeTo(b, loc, buildSum(b, loc, value, axes),
                   target.clone(type.getElementType()));
}

Value amp::lowering::buildMax(OpBuilder &b, Location loc, Value input,
                              ArrayRef<int64_t> axes) {
  Type accType = getAccumulatorType(getRankedType(input).getElementType());
  return buildReduction(
      b, loc, input, axes, accType, createScalar(b, loc, accType, -INFINITY),
      [](OpBuilder &nb, Location nl, Value x, Value acc) {
        return arith::MaximumFOp::create(nb, nl, acc, x).getResult();
      });
}

Value amp::lowering::getElementCount(OpBuilder &b, Location loc, Value input,
                                     ArrayRef<int64_t> axes) {
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t axis : axes)
    count = arith::MulIOp::create(
        b, loc, count, getValueOrCreateConstantIndexOp(b, loc, sizes[axis]));
  return count;
}

/// A boolean resource (a byte per element, as ONNX stores them) as dense
/// bools: LLVM has no global of a resource of i1, and upstream folders
/// iterate constants that a resource cannot give them.
static Value createBooleanConstant(OpBuilder &b, Location loc,
                                   DenseResourceElementsAttr resource) {
  auto type = cast<RankedTensorType>(resource.getType());
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob || blob->getData().size() != size_t(type.getNumElements()))
    return arith::ConstantOp::create(b, loc, resource);
  SmallVector<bool> values;
  for (char byte : blob->getData())
    values.push_back(byte != 0);
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, values));
}

Value amp::lowering::createNumberConstant(OpBuilder &b, Location loc,
                                          RankedTensorType type,
                                          ArrayRef<double> values) {
  Type elementType = type.getElementType();
  SmallVector<Attribute> attrs;
  for (double value : values)
    attrs.push_back(
        isa<FloatType>(elementType)
            ? Attribute(b.getFloatAttr(elementType, value))
            : Attribute(b.getIntegerAttr(elementType, int64_t(value))));
  return createConstant(b, loc, DenseElementsAttr::get(type, attrs));
}

Value amp::lowering::createConstant(OpBuilder &b, Location loc,
                                    ElementsAttr value) {
  // Scalars and shape-sized vectors; weights stay resources; a large tensor
  // of one value is filled, not stored (a kernel on the GPU, not a copy).
  constexpr int64_t kMaxInlinedElements = 64;
  auto type = cast<ShapedType>(value.getType());
  // Arith's constants are signless: unsigned ones are stored as such and
  // their elements cast back in a generic (lowerElementwise's casts).
  Type elementType = type.getElementType();
  if (Type signless = getSignlessType(elementType); signless != elementType) {
    auto signlessType = type.clone(signless);
    ElementsAttr signlessValue;
    if (auto dense = dyn_cast<DenseElementsAttr>(value))
      signlessValue = dense.bitcast(signless);
    else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
      signlessValue =
          DenseResourceElementsAttr::get(signlessType, resource.getRawHandle());
    if (signlessValue)
      return buildElementwise(b, loc, cast<RankedTensorType>(type),
                              createConstant(b, loc, signlessValue),
                              [&](OpBuilder &nb, Location nl, ValueRange args) {
                                return reinterpretInteger(nb, nl, args[0],
                                                          elementType);
                              });
  }
  if (type.getNumElements() > kMaxInlinedElements && type.hasStaticShape())
    if (TypedAttr element = onnxg::getUniformElement(value)) {
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      Value scalar = arith::ConstantOp::create(b, loc, element);
      return linalg::FillOp::create(b, loc, scalar, empty).result();
    }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (resource && type.getElementType().isInteger(1) && type.hasStaticShape())
    return createBooleanConstant(b, loc, resource);
  if (resource && type.getNumElements() <= kMaxInlinedElements &&
      type.getElementType().getIntOrFloatBitWidth() % 8 == 0)
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      if (bool splat;
          DenseElementsAttr::isValidRawBuffer(type, blob->getData(), splat))
        value = DenseElementsAttr::getFromRawBuffer(type, blob->getData());
  return arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
}

Value amp::lowering::buildGenericOverIndices(
    OpBuilder &b, Location loc, Value init,
    function_ref<Value(OpBuilder &, Location)> body) {
  auto type = cast<RankedTensorType>(init.getType());
  int64_t rank = type.getRank();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange(), init,
             SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)}, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange) {
               linalg::YieldOp::create(nb, nl, body(nb, nl));
             })
      .getResult(0);
}

Value amp::lowering::castToType(OpBuilder &b, Location loc, Value value,
                                Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

Value amp::lowering::convertTensor(OpBuilder &b, Location loc, Value value,
                                   Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return buildElementwise(
      b, loc, type.clone(elementType), value,
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

Value amp::lowering::reshapeTo(OpBuilder &b, Location loc, Value value,
                               RankedTensorType type) {
  auto source = cast<RankedTensorType>(value.getType());
  type = type.clone(source.getElementType());
  if (source == type)
    return value;
  if (source.getShape() == type.getShape())
    return castToType(b, loc, value, type);
  if (source.getRank() > type.getRank()) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForCollapse(source.getShape(), type.getShape());
    if (groups)
      return castToType(b, loc,
                        tensor::CollapseShapeOp::create(b, loc, value, *groups),
                        type);
  } else if (source.getRank() < type.getRank() && type.hasStaticShape()) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForCollapse(type.getShape(), source.getShape());
    if (groups)
      return tensor::ExpandShapeOp::create(b, loc, type, value, *groups);
  }
  // General case: through a flat tensor (static shapes only).
  assert(source.hasStaticShape() && type.hasStaticShape() &&
         "reshapeTo: a general reshape needs static shapes");
  auto flatType =
      RankedTensorType::get({source.getNumElements()}, type.getElementType());
  auto allDims = [](int64_t rank) {
    SmallVector<ReassociationIndices> groups;
    if (rank)
      groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return groups;
  };
  Value flat = value;
  if (source.getRank() > 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, value,
                                           allDims(source.getRank()));
  else if (source.getRank() == 0)
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, value, allDims(0));
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat, allDims(0));
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       allDims(type.getRank()));
}

Value amp::lowering::keepDims(OpBuilder &b, Location loc, Value value,
                              Value input, ArrayRef<int64_t> axes) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto valueType = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(inputType.getShape());
  for (int64_t axis : axes)
    shape[axis] = 1;
  auto type = RankedTensorType::get(shape, valueType.getElementType());
  if (valueType.getRank() == 0) {
    SmallVector<ReassociationIndices> none;
    return tensor::ExpandShapeOp::create(b, loc, type, value, none);
  }
  // Each kept dimension takes the reduced ones before it (the first kept
  // one also those after it up to the next kept one).
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t i = 0; i < inputType.getRank(); ++i) {
    pending.push_back(i);
    if (llvm::is_contained(axes, i))
      continue;
    groups.push_back(pending);
    pending.clear();
  }
  groups.back().append(pending.begin(), pending.end());
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  for (int64_t axis : axes)
    sizes[axis] = b.getIndexAttr(1);
  return tensor::ExpandShapeOp::create(b, loc, type, value, groups, sizes);
}
