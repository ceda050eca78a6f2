//===- DataMovement.cpp - Lower constants, shapes, reshapes and indexing --===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Constant, ConstantOfShape, Range, Shape, Size, Identity, the reshapes
// (Reshape, Flatten, Squeeze, Unsqueeze), Transpose, Expand, Tile, Concat,
// Split, Slice, Gather, GatherElements, the scatters (ScatterElements,
// ScatterND), OneHot, and ONNX Runtime's ConcatTraining, SliceGrad,
// GatherGrad and BroadcastGradientArgs. Shape operands must be constants
// (after ONNX shape inference they are, for the graphs we know).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringSwitch.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::amp::lowering;

static LoweringResult lowerConstant(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  RankedTensorType type = node.resultType(0);
  if (!type)
    return node.emitError() << "the output has no tensor type";
  TypedAttr value;
  if (auto tensor = dyn_cast_or_null<ElementsAttr>(node.getAttr("value")))
    value = cast<TypedAttr>(tensor);
  else if (auto f = dyn_cast_or_null<FloatAttr>(node.getAttr("value_float")))
    value = DenseElementsAttr::get(type, f.getValue());
  else if (auto i = dyn_cast_or_null<IntegerAttr>(node.getAttr("value_int")))
    value = DenseElementsAttr::get(type, i.getValue());
  else if (auto ints = node.getInts("value_ints"))
    value = DenseElementsAttr::get(type, ArrayRef<int64_t>(*ints));
  else if (auto floats = dyn_cast_or_null<DenseF32ArrayAttr>(
               node.getAttr("value_floats")))
    value = DenseElementsAttr::get(type, floats.asArrayRef());
  if (!value)
    return node.emitError() << "only tensor, float and int values lower";
  if (value.getType() != type)
    return node.emitError() << "the value's type " << value.getType()
                            << " differs from the output's " << type;
  return SmallVector<Value>{
      createConstant(b, node.getLoc(), cast<ElementsAttr>(value))};
}

/// A static shape from a constant shape operand, or an error.
static FailureOr<SmallVector<int64_t>> getShapeOperand(NodeLowering &node,
                                                       unsigned i) {
  std::optional<SmallVector<int64_t>> shape = node.getConstantInts(i);
  if (!shape)
    return node.emitError() << "the shape operand must be a constant";
  return *shape;
}

/// The static sizes of result 0: its declared type when that is static,
/// else the constant shape operand `i`.
static FailureOr<SmallVector<int64_t>> getResultShape(NodeLowering &node,
                                                      unsigned i) {
  RankedTensorType declared = node.resultType(0);
  if (declared && declared.hasStaticShape())
    return llvm::to_vector(declared.getShape());
  return getShapeOperand(node, i);
}

static LoweringResult lowerConstantOfShape(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  RankedTensorType declared = node.resultType(0);
  if (!declared)
    return node.emitError() << "the output has no tensor type";
  FailureOr<SmallVector<int64_t>> shape = getResultShape(node, 0);
  if (failed(shape))
    return failure();
  Type elementType = declared.getElementType();
  // Booleans are imported as resources (a byte each, as ONNX stores them).
  TypedAttr fill = b.getZeroAttr(elementType);
  if (Attribute value = node.getAttr("value")) {
    auto elements = dyn_cast<ElementsAttr>(value);
    fill = elements && elements.getNumElements() == 1
               ? onnxg::getUniformElement(elements)
               : TypedAttr();
    if (!fill)
      return node.emitError() << "value must be a one-element tensor";
  }
  Value scalar = arith::ConstantOp::create(b, node.getLoc(), fill);
  return SmallVector<Value>{
      createFilled(b, node.getLoc(),
                   getAsIndexOpFoldResult(b.getContext(), *shape), scalar)};
}

/// EyeLike(x): x's shape (2-D) with ones where column - row = k, in the
/// declared type (dtype, or x's).
static LoweringResult lowerEyeLike(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  RankedTensorType type = getRankedType(node.operand(0));
  if (!type || type.getRank() != 2)
    return node.emitError() << "expects a 2-D tensor";
  Type elementType = node.resultElementType(0, type.getElementType());
  int64_t k = node.getInt("k", 0);
  Value init =
      createEmpty(b, loc, getSizes(b, loc, node.operand(0)), elementType);
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{}, init,
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(2)}, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        Value row = linalg::IndexOp::create(nb, nl, 0);
        Value column = linalg::IndexOp::create(nb, nl, 1);
        Value diagonal =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                  arith::SubIOp::create(nb, nl, column, row),
                                  arith::ConstantIndexOp::create(nb, nl, k));
        linalg::YieldOp::create(nb, nl,
                                convertScalar(nb, nl, diagonal, elementType));
      });
  return SmallVector<Value>{generic.getResult(0)};
}

/// HannWindow, HammingWindow and BlackmanWindow(size): a constant of
/// `size` (a constant operand) coefficients sum_k a_k cos(2 pi k n / d),
/// d = size when `periodic` (default) and size - 1 otherwise, in the type
/// `output_datatype` names (default float).
static LoweringResult lowerWindow(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  std::optional<SmallVector<int64_t>> size = node.getConstantInts(0);
  if (!size || size->size() != 1 || (*size)[0] < 0)
    return node.emitError() << "the size must be a constant scalar of at "
                               "least 0";
  int64_t count = (*size)[0];
  Type type =
      onnxg::getElementType(b.getContext(), node.getInt("output_datatype", 1));
  type = node.resultElementType(0, type);
  if (!type || !isa<FloatType, IntegerType>(type))
    return node.emitError() << "output_datatype is not a number type";
  StringRef opType = node.getNode().getOpType();
  // Coefficients a_0, a_1, a_2 of the cosine sum (ONNX's definitions).
  SmallVector<double, 3> a = opType == "HannWindow"
                                 ? SmallVector<double, 3>{0.5, -0.5}
                             : opType == "HammingWindow"
                                 ? SmallVector<double, 3>{25.0 / 46, -21.0 / 46}
                                 : SmallVector<double, 3>{0.42, -0.5, 0.08};
  double denominator =
      node.getInt("periodic", 1) ? double(count) : double(count - 1);
  auto tensorType = RankedTensorType::get({count}, type);
  SmallVector<double> values;
  for (int64_t n = 0; n < count; ++n) {
    double value = 0;
    for (auto [k, coefficient] : llvm::enumerate(a))
      value += coefficient *
               (denominator > 0
                    ? std::cos(2 * M_PI * double(k) * double(n) / denominator)
                    : 1.0);
    values.push_back(value);
  }
  return SmallVector<Value>{
      createNumberConstant(b, node.getLoc(), tensorType, values)};
}

static LoweringResult lowerShape(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  RankedTensorType type = getRankedType(node.operand(0));
  if (!type)
    return node.emitError() << "expects a ranked tensor";
  int64_t rank = type.getRank();
  int64_t start = node.getInt("start", 0), end = node.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  bool isSize = node.getNode().getOpType() == "Size";
  Type i64 = b.getI64Type();
  if (type.hasStaticShape()) {
    if (isSize)
      return SmallVector<Value>{arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(RankedTensorType::get({}, i64),
                                 type.getNumElements()))};
    SmallVector<int64_t> dims(
        type.getShape().slice(start, std::max<int64_t>(0, end - start)));
    return SmallVector<Value>{arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            RankedTensorType::get({int64_t(dims.size())}, i64),
            ArrayRef<int64_t>(dims)))};
  }
  SmallVector<Value> dims;
  for (int64_t i = isSize ? 0 : start; i < (isSize ? rank : end); ++i)
    dims.push_back(convertScalar(
        b, loc, tensor::DimOp::create(b, loc, node.operand(0), i), i64));
  if (isSize) {
    Value count = createScalar(b, loc, i64, 1);
    for (Value dim : dims)
      count = arith::MulIOp::create(b, loc, count, dim);
    return SmallVector<Value>{tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, i64), count)};
  }
  return SmallVector<Value>{tensor::FromElementsOp::create(b, loc, dims)};
}

/// com.microsoft BroadcastGradientArgs(a_shape, b_shape): the axes of the
/// broadcast result, in descending order, that A's and B's gradients sum
/// over (where the other operand is larger, or A or B has no dimension).
/// Both shapes must be constants, which they are for static graphs.
static LoweringResult lowerBroadcastGradientArgs(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  std::optional<SmallVector<int64_t>> aShape = node.getConstantInts(0);
  std::optional<SmallVector<int64_t>> bShape = node.getConstantInts(1);
  if (!aShape || !bShape)
    return node.emitError() << "needs constant shapes (static input shapes)";
  int64_t i = aShape->size() - 1, j = bShape->size() - 1;
  int64_t k = std::max(aShape->size(), bShape->size()) - 1;
  SmallVector<int64_t> aAxes, bAxes;
  for (; i >= 0 && j >= 0; --i, --j, --k) {
    int64_t aDim = (*aShape)[i], bDim = (*bShape)[j];
    if (aDim == bDim)
      continue;
    if (aDim != 1 && bDim != 1)
      return node.emitError() << "dimension " << aDim << " of A and " << bDim
                              << " of B do not broadcast";
    (aDim == 1 ? aAxes : bAxes).push_back(k);
  }
  for (; k >= 0; --k)
    (i < 0 ? aAxes : bAxes).push_back(k);
  SmallVector<Value> results;
  for (ArrayRef<int64_t> axes : {ArrayRef<int64_t>(aAxes), ArrayRef(bAxes)})
    results.push_back(arith::ConstantOp::create(
        b, node.getLoc(),
        DenseElementsAttr::get(
            RankedTensorType::get({int64_t(axes.size())}, b.getI64Type()),
            axes)));
  results.resize(node.getNumResults());
  return results;
}

/// Reshapes the input to the declared output type, or to `shape` where the
/// declared type is not static.
static LoweringResult reshapeInput(NodeLowering &node,
                                   ArrayRef<int64_t> shape) {
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type)
    return node.emitError() << "expects ranked tensors";
  // An output ONNX could not type (a shape computed by Shape) takes `shape`.
  RankedTensorType declared = node.resultType(0);
  if (!declared)
    declared = RankedTensorType::get(shape, type.getElementType());
  RankedTensorType target =
      declared.hasStaticShape() ? declared : declared.clone(shape);
  if (int64_t(shape.size()) != declared.getRank())
    return node.emitError() << "the new shape has rank " << shape.size()
                            << ", the output " << declared.getRank();
  if (!target.hasStaticShape() || !type.hasStaticShape()) {
    // Only merging or splitting dimensions works on dynamic sizes.
    if (type.getRank() > target.getRank() &&
        getReassociationIndicesForCollapse(type.getShape(), target.getShape()))
      return SmallVector<Value>{
          reshapeTo(node.getBuilder(), node.getLoc(), input, target)};
    return node.emitError()
           << "reshaping " << type << " to " << target << " needs static sizes";
  }
  if (type.getNumElements() != target.getNumElements())
    return node.emitError() << "cannot reshape " << type << " to " << target;
  return SmallVector<Value>{
      reshapeTo(node.getBuilder(), node.getLoc(), input, target)};
}

static LoweringResult lowerReshape(NodeLowering &node) {
  RankedTensorType type = getRankedType(node.operand(0));
  RankedTensorType declared = node.resultType(0);
  if (declared && declared.hasStaticShape())
    return reshapeInput(node, declared.getShape());
  FailureOr<SmallVector<int64_t>> shape = getShapeOperand(node, 1);
  if (!type || failed(shape))
    return failure();
  bool allowZero = node.getInt("allowzero", 0);
  int64_t known = 1, inferred = -1;
  for (auto [i, size] : llvm::enumerate(*shape)) {
    if (size == 0 && !allowZero) {
      if (int64_t(i) >= type.getRank())
        return node.emitError() << "a 0 in the shape has no input dimension";
      size = type.getDimSize(i);
    }
    if (size == -1)
      inferred = i;
    else if (ShapedType::isDynamic(size) || ShapedType::isDynamic(known))
      known = ShapedType::kDynamic;
    else
      known *= size;
  }
  if (inferred >= 0) {
    (*shape)[inferred] =
        type.hasStaticShape() && known > 0 && !ShapedType::isDynamic(known)
            ? type.getNumElements() / known
            : ShapedType::kDynamic;
  }
  return reshapeInput(node, *shape);
}

static LoweringResult lowerFlatten(NodeLowering &node) {
  RankedTensorType type = getRankedType(node.operand(0));
  if (!type)
    return node.emitError() << "expects a ranked tensor";
  std::optional<int64_t> axis =
      node.getInt("axis", 1) == type.getRank()
          ? std::optional<int64_t>(type.getRank())
          : normalizeAxis(node.getInt("axis", 1), type.getRank());
  if (!axis)
    return node.emitError() << "axis is out of range";
  int64_t outer = 1, inner = 1;
  for (auto [i, size] : llvm::enumerate(type.getShape())) {
    int64_t &part = int64_t(i) < *axis ? outer : inner;
    part = ShapedType::isDynamic(size) || ShapedType::isDynamic(part)
               ? ShapedType::kDynamic
               : part * size;
  }
  return reshapeInput(node, {outer, inner});
}

/// Squeeze and Unsqueeze: the axes from the attribute or operand 1.
static LoweringResult lowerSqueeze(NodeLowering &node) {
  bool unsqueeze = node.getNode().getOpType() == "Unsqueeze";
  RankedTensorType type = getRankedType(node.operand(0));
  if (!type)
    return node.emitError() << "expects a ranked tensor";
  bool notConstant = false;
  std::optional<SmallVector<int64_t>> axes =
      node.getIntsFromAttrOrOperand("axes", 1, notConstant);
  if (notConstant)
    return node.emitError() << "axes must be a constant";
  SmallVector<int64_t> shape;
  if (unsqueeze) {
    if (!axes)
      return node.emitError() << "axes are required";
    int64_t rank = type.getRank() + axes->size();
    SmallVector<bool> inserted(rank, false);
    for (int64_t axis : *axes) {
      std::optional<int64_t> normalized = normalizeAxis(axis, rank);
      if (!normalized)
        return node.emitError() << "axis " << axis << " is out of range";
      inserted[*normalized] = true;
    }
    unsigned next = 0;
    for (int64_t i = 0; i < rank; ++i)
      shape.push_back(inserted[i] ? 1 : type.getDimSize(next++));
  } else {
    SmallVector<bool> removed(type.getRank(), false);
    if (axes) {
      for (int64_t axis : *axes) {
        std::optional<int64_t> normalized = normalizeAxis(axis, type.getRank());
        if (!normalized)
          return node.emitError() << "axis " << axis << " is out of range";
        removed[*normalized] = true;
      }
    } else {
      for (int64_t i = 0; i < type.getRank(); ++i)
        removed[i] = type.getDimSize(i) == 1;
    }
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (!removed[i])
        shape.push_back(type.getDimSize(i));
  }
  return reshapeInput(node, shape);
}

static LoweringResult lowerTranspose(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type)
    return node.emitError() << "expects a ranked tensor";
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> attr = node.getInts("perm"))
    perm = *attr;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if (int64_t(perm.size()) != rank ||
      sorted != llvm::to_vector(llvm::seq<int64_t>(0, rank)))
    return node.emitError()
           << "perm is not a permutation of " << rank << " dimensions";
  return SmallVector<Value>{transposeTensor(b, loc, input, perm)};
}

static LoweringResult lowerExpand(NodeLowering &node) {
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  RankedTensorType declared = node.resultType(0);
  if (!type)
    return node.emitError() << "expects ranked tensors";
  // ONNX shape inference's static output type says it all; otherwise the
  // broadcast of the input shape and the requested one.
  RankedTensorType requested = declared;
  if (!declared || !declared.hasStaticShape()) {
    FailureOr<SmallVector<int64_t>> shape = getShapeOperand(node, 1);
    if (failed(shape))
      return failure();
    requested = RankedTensorType::get(*shape, type.getElementType());
  }
  // An output ONNX could not type at all has the broadcast's rank.
  if (!declared)
    declared = RankedTensorType::get(
        SmallVector<int64_t>(std::max(type.getRank(), requested.getRank()),
                             ShapedType::kDynamic),
        type.getElementType());
  RankedTensorType result = getBroadcastType({type, requested}, declared);
  if (!result)
    return node.emitError() << "cannot expand " << type << " to " << requested;
  return SmallVector<Value>{buildElementwise(
      node.getBuilder(), node.getLoc(), result, input,
      [](OpBuilder &, Location, ValueRange args) { return args[0]; })};
}

static LoweringResult lowerTile(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  RankedTensorType declared = node.resultType(0);
  if (!type)
    return node.emitError() << "expects ranked tensors";
  FailureOr<SmallVector<int64_t>> repeats = failure();
  if (declared && declared.hasStaticShape() && type.hasStaticShape() &&
      declared.getRank() == type.getRank()) {
    repeats.emplace();
    for (int64_t i = 0; i < type.getRank(); ++i)
      repeats->push_back(declared.getDimSize(i) /
                         std::max<int64_t>(1, type.getDimSize(i)));
  } else {
    repeats = getShapeOperand(node, 1);
  }
  if (failed(repeats))
    return failure();
  if (!type.hasStaticShape() || int64_t(repeats->size()) != type.getRank())
    return node.emitError() << "expects a static input and one repeat per "
                               "dimension";
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    shape.push_back(type.getDimSize(i) * (*repeats)[i]);
    exprs.push_back(b.getAffineDimExpr(i) % type.getDimSize(i));
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value init = tensor::EmptyOp::create(b, loc, resultType, ValueRange());
  SmallVector<AffineMap> maps = {
      AffineMap::get(type.getRank(), 0, exprs, b.getContext()),
      b.getMultiDimIdentityMap(type.getRank())};
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return SmallVector<Value>{
      linalg::GenericOp::create(
          b, loc, resultType, input, init, maps, iterators,
          [](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(nb, nl, args[0]);
          })
          .getResult(0)};
}

Value amp::lowering::concatTensors(OpBuilder &b, Location loc,
                                   ValueRange inputs, int64_t axis) {
  if (inputs.size() == 1)
    return inputs.front();
  // One op, not a chain of insert_slices into one tensor: one-shot
  // bufferization's analysis of such a chain grows with the fourth power of
  // its length (a Concat of 200 inputs took 24 s), and tensor.concat
  // bufferizes to the same allocation and copies into its subviews.
  return tensor::ConcatOp::create(b, loc, axis, inputs);
}

static LoweringResult lowerConcat(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < node.getNumOperands(); ++i)
    if (Value input = node.operand(i))
      inputs.push_back(input);
  RankedTensorType first = inputs.empty() ? nullptr : getRankedType(inputs[0]);
  if (!first)
    return node.emitError() << "expects ranked tensors";
  std::optional<int64_t> axis =
      normalizeAxis(node.getInt("axis", 0), first.getRank());
  if (!axis)
    return node.emitError() << "axis is out of range";
  SmallVector<Value> results = {concatTensors(b, loc, inputs, *axis)};
  // com.microsoft ConcatTraining also returns each input's length along
  // the axis (i64).
  if (node.getNumResults() > 1 && node.isResultUsed(1)) {
    SmallVector<Value> lengths;
    for (Value input : inputs)
      lengths.push_back(
          convertScalar(b, loc,
                        getValueOrCreateConstantIndexOp(
                            b, loc, tensor::getMixedSize(b, loc, input, *axis)),
                        b.getI64Type()));
    results.push_back(tensor::FromElementsOp::create(
        b, loc,
        RankedTensorType::get({int64_t(lengths.size())}, b.getI64Type()),
        lengths));
  }
  results.resize(node.getNumResults());
  return results;
}

FailureOr<int64_t> amp::lowering::getSplitAxis(NodeLowering &node) {
  RankedTensorType type = getRankedType(node.operand(0));
  if (!type)
    return node.emitError() << "expects a ranked tensor";
  std::optional<int64_t> axis =
      normalizeAxis(node.getInt("axis", 0), type.getRank());
  if (!axis || type.isDynamicDim(*axis))
    return node.emitError() << "axis must be in range and of static size";
  return *axis;
}

FailureOr<SmallVector<Value>>
amp::lowering::splitInput(NodeLowering &node, int64_t axis,
                          ArrayRef<int64_t> parts) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  int64_t rank = getRankedType(input).getRank();
  int64_t size = getRankedType(input).getDimSize(axis), total = 0;
  for (int64_t part : parts)
    total += part;
  if (total != size)
    return node.emitError()
           << "split sizes add up to " << total << ", the axis has " << size;
  SmallVector<Value> results;
  int64_t offset = 0;
  for (int64_t part : parts) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    offsets[axis] = b.getIndexAttr(offset);
    sizes[axis] = b.getIndexAttr(part);
    results.push_back(
        tensor::ExtractSliceOp::create(b, loc, input, offsets, sizes, strides));
    offset += part;
  }
  return results;
}

static LoweringResult lowerSplit(NodeLowering &node) {
  FailureOr<int64_t> axis = getSplitAxis(node);
  if (failed(axis))
    return failure();
  bool notConstant = false;
  std::optional<SmallVector<int64_t>> splits =
      node.getIntsFromAttrOrOperand("split", 1, notConstant);
  int64_t size = getRankedType(node.operand(0)).getDimSize(*axis);
  unsigned outputs = node.getNumResults();
  // A split computed at run time (ONNX Runtime's SplitTraining reads
  // ConcatTraining's lengths) is what the static result sizes say.
  if (notConstant) {
    splits.emplace();
    for (unsigned i = 0; i < outputs; ++i) {
      RankedTensorType type = node.resultType(i);
      if (!type || type.isDynamicDim(*axis))
        return node.emitError()
               << "split must be a constant, or every output's size along "
                  "the axis static";
      splits->push_back(type.getDimSize(*axis));
    }
  }
  if (!splits) {
    int64_t part = llvm::divideCeil(size, outputs);
    splits.emplace();
    for (unsigned i = 0; i < outputs; ++i)
      splits->push_back(std::min(part, size - part * i));
  }
  if (splits->size() != outputs)
    return node.emitError() << "split has " << splits->size() << " sizes for "
                            << outputs << " outputs";
  return splitInput(node, *axis, *splits);
}

namespace {
/// Where a Slice reads: offsets, sizes and strides into its data, and the
/// axes it reads backwards (negative steps) in that box.
struct SliceBox {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<int64_t> reversed;
};
} // namespace

/// The box of a Slice (starts, ends, axes, steps from operand `first` on,
/// or attributes in older opsets) into data of `type` with `sizes`. A
/// negative step reads the same elements as the positive one from the last
/// element read, backwards.
static FailureOr<SliceBox> getSliceBox(NodeLowering &node,
                                       RankedTensorType type,
                                       SmallVector<OpFoldResult> sizes,
                                       unsigned first) {
  OpBuilder &b = node.getBuilder();
  int64_t rank = type.getRank();
  bool notConstant = false, anyNotConstant = false;
  auto read = [&](StringRef name, unsigned i) {
    auto values = node.getIntsFromAttrOrOperand(name, first + i, notConstant);
    anyNotConstant |= notConstant;
    return values;
  };
  std::optional<SmallVector<int64_t>> starts = read("starts", 0);
  std::optional<SmallVector<int64_t>> ends = read("ends", 1);
  std::optional<SmallVector<int64_t>> axes = read("axes", 2);
  std::optional<SmallVector<int64_t>> steps = read("steps", 3);
  if (anyNotConstant || !starts || !ends)
    return node.emitError() << "starts, ends, axes and steps must be constants";
  if (!axes)
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  if (!steps)
    steps = SmallVector<int64_t>(starts->size(), 1);
  if (ends->size() != starts->size() || axes->size() != starts->size() ||
      steps->size() != starts->size())
    return node.emitError() << "starts, ends, axes and steps differ in length";
  SliceBox box{SmallVector<OpFoldResult>(rank, b.getIndexAttr(0)),
               std::move(sizes),
               SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)),
               {}};
  for (size_t i = 0; i < starts->size(); ++i) {
    std::optional<int64_t> axis = normalizeAxis((*axes)[i], rank);
    if (!axis)
      return node.emitError() << "axis " << (*axes)[i] << " is out of range";
    int64_t dim = type.getDimSize(*axis);
    int64_t step = (*steps)[i];
    if (ShapedType::isDynamic(dim))
      return node.emitError() << "sliced dimensions must be static";
    if (step == 0)
      return node.emitError() << "a step is 0";
    // ONNX clamps to [0, dim] forward and to [-1, dim - 1] backwards.
    int64_t start = (*starts)[i], end = (*ends)[i];
    start = start < 0 ? start + dim : start;
    end = end < 0 ? end + dim : end;
    int64_t low = step > 0 ? 0 : -1, high = step > 0 ? dim : dim - 1;
    start = std::min(std::max<int64_t>(start, 0), high);
    end = std::min(std::max(end, low), high);
    int64_t stride = std::abs(step);
    int64_t count = std::max<int64_t>(
        0, llvm::divideCeil(step > 0 ? end - start : start - end, stride));
    if (step < 0) {
      start -= (count - 1) * stride;
      if (count > 1)
        box.reversed.push_back(*axis);
    }
    box.offsets[*axis] = b.getIndexAttr(count ? start : 0);
    box.sizes[*axis] = b.getIndexAttr(count);
    box.strides[*axis] = b.getIndexAttr(stride);
  }
  return box;
}

/// CenterCropPad (opset 18): each of `axes` (all by default) cropped or
/// zero-padded to its size in `shape`, centered: a crop starts at (size -
/// target) / 2, a pad puts (target - size) / 2 before, the rest after, as
/// ONNX's reference.
static LoweringResult lowerCenterCropPad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  std::optional<SmallVector<int64_t>> shape = node.getConstantInts(1);
  if (!type || !type.hasStaticShape())
    return node.emitError() << "expects an input of static shape";
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = node.getInts("axes")) {
    for (int64_t axis : *given) {
      std::optional<int64_t> normalized = normalizeAxis(axis, rank);
      if (!normalized)
        return node.emitError()
               << "axis " << axis << " is out of range for rank " << rank;
      axes.push_back(*normalized);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  if (!shape || shape->size() != axes.size() ||
      llvm::any_of(*shape, [](int64_t size) { return size < 0; }))
    return node.emitError() << "shape must be a constant of one size of at "
                               "least 0 per axis ("
                            << axes.size() << ")";
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()), low(rank, 0),
      high(rank, 0);
  for (auto [axis, target] : llvm::zip(axes, *shape)) {
    int64_t size = type.getDimSize(axis);
    if (target < size) {
      offsets[axis] = (size - target) / 2;
      sizes[axis] = target;
    } else {
      low[axis] = (target - size) / 2;
      high[axis] = target - size - low[axis];
    }
  }
  Value cropped = tensor::ExtractSliceOp::create(
      b, loc, input, getAsIndexOpFoldResult(b.getContext(), offsets),
      getAsIndexOpFoldResult(b.getContext(), sizes),
      getAsIndexOpFoldResult(b.getContext(), SmallVector<int64_t>(rank, 1)));
  return SmallVector<Value>{
      padTensor(b, loc, cropped, low, high,
                createScalar(b, loc, type.getElementType(), 0))};
}

/// ReverseSequence(input, sequence_lens): along `time_axis`, the first
/// sequence_lens[b] elements of each batch `b` (along `batch_axis`) in
/// reverse order, the rest as they are.
static LoweringResult lowerReverseSequence(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0), lengths = node.operand(1);
  RankedTensorType type = getRankedType(input);
  RankedTensorType lengthType = getRankedType(lengths);
  int64_t batchAxis = node.getInt("batch_axis", 1);
  int64_t timeAxis = node.getInt("time_axis", 0);
  if (!type || type.getRank() < 2 || !lengthType || lengthType.getRank() != 1 ||
      !isa<IntegerType>(lengthType.getElementType()))
    return node.emitError() << "expects a tensor of rank >= 2 and 1-D "
                               "integer lengths";
  if ((batchAxis != 0 && batchAxis != 1) || (timeAxis != 0 && timeAxis != 1) ||
      batchAxis == timeAxis)
    return node.emitError() << "batch_axis and time_axis must be 0 and 1 "
                               "in either order";
  Value init =
      createEmpty(b, loc, getSizes(b, loc, input), type.getElementType());
  return SmallVector<Value>{buildGenericOverIndices(
      b, loc, init, [&](OpBuilder &nb, Location nl) -> Value {
        SmallVector<Value> indices;
        for (int64_t d = 0; d < type.getRank(); ++d)
          indices.push_back(linalg::IndexOp::create(nb, nl, d));
        Value length = convertScalar(
            nb, nl,
            tensor::ExtractOp::create(nb, nl, lengths, indices[batchAxis]),
            nb.getIndexType());
        Value time = indices[timeAxis];
        Value inside = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                             time, length);
        Value reversed = arith::SubIOp::create(
            nb, nl,
            arith::SubIOp::create(nb, nl, length,
                                  arith::ConstantIndexOp::create(nb, nl, 1)),
            time);
        indices[timeAxis] =
            arith::SelectOp::create(nb, nl, inside, reversed, time);
        return tensor::ExtractOp::create(nb, nl, input, indices);
      })};
}

/// `value` with the order of its elements reversed along `axes` (a
/// generic that reads each element through tensor.extract, as torch-mlir
/// lowers aten.flip).
static Value reverseAxes(OpBuilder &b, Location loc, Value value,
                         ArrayRef<int64_t> axes) {
  if (axes.empty())
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  Value init =
      createEmpty(b, loc, getSizes(b, loc, value), type.getElementType());
  return buildGenericOverIndices(
      b, loc, init, [&](OpBuilder &nb, Location nl) -> Value {
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d) {
          Value index = linalg::IndexOp::create(nb, nl, d);
          if (llvm::is_contained(axes, d)) {
            Value last = tensor::DimOp::create(nb, nl, value, d);
            last = arith::SubIOp::create(
                nb, nl, last, arith::ConstantIndexOp::create(nb, nl, 1));
            index = arith::SubIOp::create(nb, nl, last, index);
          }
          indices.push_back(index);
        }
        return tensor::ExtractOp::create(nb, nl, value, indices);
      });
}

static LoweringResult lowerSlice(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type)
    return node.emitError() << "expects a ranked tensor";
  FailureOr<SliceBox> box =
      getSliceBox(node, type, getSizes(b, loc, input), /*first=*/1);
  if (failed(box))
    return failure();
  Value slice = tensor::ExtractSliceOp::create(b, loc, input, box->offsets,
                                               box->sizes, box->strides);
  return SmallVector<Value>{reverseAxes(b, loc, slice, box->reversed)};
}

/// DepthToSpace(x) of [N, C, H, W] with blocksize b: x as [N, b, b, C/b^2,
/// H, W] (DCR, the default) or [N, C/b^2, b, b, H, W] (CRD), permuted to
/// [N, C/b^2, H, b, W, b]; SpaceToDepth the inverse of DCR.
static LoweringResult lowerDepthToSpace(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  bool toSpace = node.getNode().getOpType() == "DepthToSpace";
  int64_t block = node.getInt("blocksize", 0);
  if (!type || type.getRank() != 4 || !type.hasStaticShape())
    return node.emitError() << "expects a static tensor of rank 4";
  if (block < 1)
    return node.emitError() << "blocksize must be at least 1";
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  StringRef mode = toSpace ? node.getString("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD")
    return node.emitError()
           << "unknown mode '" << mode << "'; expects DCR or CRD";
  if (toSpace && c % (block * block))
    return node.emitError()
           << "blocksize " << block << " squared does not divide the channels";
  if (!toSpace && (h % block || w % block))
    return node.emitError()
           << "blocksize " << block << " does not divide the height and width";
  SmallVector<int64_t> split, perm, result;
  if (toSpace) {
    int64_t depth = c / (block * block);
    split = mode == "DCR" ? SmallVector<int64_t>{n, block, block, depth, h, w}
                          : SmallVector<int64_t>{n, depth, block, block, h, w};
    perm = mode == "DCR" ? SmallVector<int64_t>{0, 3, 4, 1, 5, 2}
                         : SmallVector<int64_t>{0, 1, 4, 2, 5, 3};
    result = {n, depth, h * block, w * block};
  } else {
    split = {n, c, h / block, block, w / block, block};
    perm = {0, 3, 5, 1, 2, 4};
    result = {n, c * block * block, h / block, w / block};
  }
  Type elementType = type.getElementType();
  Value blocks =
      reshapeTo(b, loc, input, RankedTensorType::get(split, elementType));
  Value moved = transposeTensor(b, loc, blocks, perm);
  return SmallVector<Value>{
      reshapeTo(b, loc, moved, RankedTensorType::get(result, elementType))};
}

namespace {
/// How Resize maps one output axis to input coordinates.
struct ResizeAxis {
  int64_t inSize, outSize;
  double scale;
};
} // namespace

/// The input coordinate (f32) of output index `index` along `axis` under
/// ONNX's coordinate_transformation_mode `mode`.
static Value getResizeSourceCoordinate(OpBuilder &b, Location loc,
                                       StringRef mode, const ResizeAxis &axis,
                                       Value index) {
  Type f32 = b.getF32Type();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  Value x = arith::SIToFPOp::create(
      b, loc, f32, arith::IndexCastOp::create(b, loc, b.getI64Type(), index));
  if (mode == "asymmetric")
    return arith::DivFOp::create(b, loc, x, constant(axis.scale));
  if (mode == "align_corners")
    return axis.outSize == 1
               ? constant(0)
               : arith::MulFOp::create(
                     b, loc, x,
                     constant(double(axis.inSize - 1) / (axis.outSize - 1)))
                     .getResult();
  if (mode == "pytorch_half_pixel" && axis.outSize == 1)
    return constant(0);
  // half_pixel and pytorch_half_pixel: (x + 0.5) / scale - 0.5.
  Value shifted = arith::AddFOp::create(b, loc, x, constant(0.5));
  return arith::SubFOp::create(
      b, loc, arith::DivFOp::create(b, loc, shifted, constant(axis.scale)),
      constant(0.5));
}

/// Fails, saying so, unless getResizeSourceCoordinate knows `transform`.
static LogicalResult checkResizeTransform(NodeLowering &node,
                                          StringRef transform) {
  if (transform == "half_pixel" || transform == "pytorch_half_pixel" ||
      transform == "align_corners" || transform == "asymmetric")
    return success();
  return node.emitError() << "coordinate_transformation_mode '" << transform
                          << "' does not lower yet";
}

/// `coordinate` (f32, integral) as an index clamped into [0, size).
static Value clampToIndex(OpBuilder &b, Location loc, Value coordinate,
                          int64_t size) {
  Value i = arith::FPToSIOp::create(b, loc, b.getI64Type(), coordinate);
  i = arith::MaxSIOp::create(
      b, loc, i,
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)).getResult());
  i = arith::MinSIOp::create(
      b, loc, i,
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(size - 1))
          .getResult());
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), i);
}

/// The weights of the 4 neighbours of a cubic interpolation at fraction `t`
/// past the second: Keys' kernel with coefficient `a` at distances 1 + t,
/// t, 1 - t and 2 - t (ONNX Resize's cubic mode, PyTorch's bicubic).
static SmallVector<Value, 4> buildCubicWeights(OpBuilder &b, Location loc,
                                               Value t, double a) {
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  auto mul = [&](Value x, Value y) {
    return arith::MulFOp::create(b, loc, x, y).getResult();
  };
  auto add = [&](Value x, double c) {
    return arith::AddFOp::create(b, loc, x, constant(c)).getResult();
  };
  // |x| <= 1: ((a + 2) x - (a + 3)) x^2 + 1.
  auto near = [&](Value x) {
    return add(mul(mul(add(mul(constant(a + 2), x), -(a + 3)), x), x), 1);
  };
  // 1 < |x| < 2: ((a x - 5a) x + 8a) x - 4a.
  auto far = [&](Value x) {
    return add(mul(add(mul(add(mul(constant(a), x), -5 * a), x), 8 * a), x),
               -4 * a);
  };
  Value oneMinus = arith::SubFOp::create(b, loc, constant(1), t);
  return {far(add(t, 1)), near(t), near(oneMinus),
          far(arith::SubFOp::create(b, loc, constant(2), t))};
}

/// Resize(X, roi?, scales?, sizes?) (opset 10 and the deprecated Upsample:
/// X, scales; Upsample before opset 9: a `scales` attribute) in modes
/// nearest, linear and cubic: a generic that reads, for each output element,
/// the nearest input element or the 2 (linear) or 4 (cubic) neighbours
/// along each resized axis (borders repeated), weighted.
static LoweringResult lowerResize(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  RankedTensorType declared = node.resultType(0);
  if (!type || !type.hasStaticShape())
    return node.emitError() << "expects a static input shape";
  int64_t rank = type.getRank();
  bool upsample = node.getNode().getOpType() == "Upsample";
  bool old = upsample || node.getNode().getOpset() < 11;
  StringRef mode = node.getString("mode", "nearest");
  StringRef transform =
      old ? "asymmetric"
          : node.getString("coordinate_transformation_mode", "half_pixel");
  // Before opset 11, nearest truncates when upsampling and takes the
  // ceiling when downsampling (ONNX Runtime's "simple" mode).
  StringRef nearestMode =
      old ? "simple" : node.getString("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return node.emitError() << "mode '" << mode << "' does not lower yet";
  double cubicA = node.getFloat("cubic_coeff_a", -0.75);
  bool excludeOutside = node.getInt("exclude_outside", 0);
  if (failed(checkResizeTransform(node, transform)))
    return failure();
  if (node.getInt("antialias", 0) || node.getInts("axes") ||
      node.getString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return node.emitError()
           << "antialias, axes and keep_aspect_ratio_policy do not lower yet";
  if (mode != "nearest" && !isa<FloatType>(type.getElementType()))
    return node.emitError() << "mode '" << mode << "' needs a float tensor";
  unsigned scalesOperand = old ? 1 : 2;
  std::optional<SmallVector<double>> scales =
      node.getConstantFloats(scalesOperand);
  if (auto attr = dyn_cast_or_null<DenseF32ArrayAttr>(node.getAttr("scales")))
    scales = llvm::to_vector_of<double>(attr.asArrayRef());
  if (scales && scales->empty())
    scales.reset();
  std::optional<SmallVector<int64_t>> sizes =
      old ? std::nullopt : node.getConstantInts(3);
  if ((scales && int64_t(scales->size()) != rank) ||
      (sizes && int64_t(sizes->size()) != rank) || (!scales && !sizes))
    return node.emitError()
           << "needs constant scales or sizes, one per dimension";
  SmallVector<ResizeAxis> axes;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = type.getDimSize(d);
    int64_t out = sizes ? (*sizes)[d] : int64_t(std::floor(in * (*scales)[d]));
    double scale = scales ? (*scales)[d] : double(out) / in;
    if (out < 1 || scale <= 0)
      return node.emitError()
             << "resizes dimension " << d << " of " << in << " to " << out;
    axes.push_back({in, out, scale});
    shape.push_back(out);
  }
  Type elementType = type.getElementType();
  auto resultType = RankedTensorType::get(shape, elementType);
  if (declared && declared.hasStaticShape() &&
      declared.getShape() != ArrayRef<int64_t>(shape))
    return node.emitError() << "computes " << resultType
                            << ", the output is declared " << declared;
  Value init = tensor::EmptyOp::create(b, loc, shape, elementType);
  Value resized = buildGenericOverIndices(
      b, loc, init, [&](OpBuilder &nb, Location nl) -> Value {
        auto f32Constant = [&](double value) -> Value {
          return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(value));
        };
        // Per axis, the input indices read and their weights: the nearest
        // index (no weight), or 2 (linear) or 4 (cubic) neighbours.
        SmallVector<SmallVector<std::pair<Value, Value>, 4>> taps(rank);
        for (int64_t d = 0; d < rank; ++d) {
          Value index = linalg::IndexOp::create(nb, nl, d);
          const ResizeAxis &axis = axes[d];
          if (axis.inSize == axis.outSize && axis.scale == 1.0) {
            taps[d].push_back({index, Value()});
            continue;
          }
          Value x = getResizeSourceCoordinate(nb, nl, transform, axis, index);
          if (mode == "nearest") {
            Value rounded;
            StringRef rounding = nearestMode;
            if (rounding == "simple")
              rounding = axis.scale < 1 ? "ceil" : "floor";
            if (rounding == "floor")
              rounded = math::FloorOp::create(nb, nl, x);
            else if (rounding == "ceil")
              rounded = math::CeilOp::create(nb, nl, x);
            else if (rounding == "round_prefer_ceil")
              rounded = math::FloorOp::create(
                  nb, nl, arith::AddFOp::create(nb, nl, x, f32Constant(0.5)));
            else // round_prefer_floor
              rounded = math::CeilOp::create(
                  nb, nl, arith::SubFOp::create(nb, nl, x, f32Constant(0.5)));
            taps[d].push_back(
                {clampToIndex(nb, nl, rounded, axis.inSize), Value()});
            continue;
          }
          Value floor = math::FloorOp::create(nb, nl, x);
          Value t = arith::SubFOp::create(nb, nl, x, floor);
          auto neighbour = [&](int64_t offset) {
            return arith::AddFOp::create(nb, nl, floor, f32Constant(offset))
                .getResult();
          };
          if (mode == "linear") {
            taps[d].push_back(
                {clampToIndex(nb, nl, floor, axis.inSize),
                 arith::SubFOp::create(nb, nl, f32Constant(1), t)});
            taps[d].push_back(
                {clampToIndex(nb, nl, neighbour(1), axis.inSize), t});
            continue;
          }
          // Cubic: Keys' kernel with a = cubic_coeff_a at distances 1 + t,
          // t, 1 - t and 2 - t; with exclude_outside, neighbours outside
          // the axis weigh 0 and the rest are scaled to sum 1.
          SmallVector<Value, 4> weights = buildCubicWeights(nb, nl, t, cubicA);
          Value total;
          for (int64_t k = 0; k < 4; ++k) {
            Value at = neighbour(k - 1);
            if (excludeOutside) {
              Value inside = arith::AndIOp::create(
                  nb, nl,
                  arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE, at,
                                        f32Constant(0)),
                  arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, at,
                                        f32Constant(axis.inSize)));
              weights[k] = arith::SelectOp::create(nb, nl, inside, weights[k],
                                                   f32Constant(0));
              total = total ? arith::AddFOp::create(nb, nl, total, weights[k])
                                  .getResult()
                            : weights[k];
            }
            taps[d].push_back(
                {clampToIndex(nb, nl, at, axis.inSize), weights[k]});
          }
          if (excludeOutside)
            for (auto &tap : taps[d])
              tap.second = arith::DivFOp::create(nb, nl, tap.second, total);
        }
        // Sum over every combination of the axes' taps of the weighted
        // elements.
        Type computeType = getComputeType(elementType);
        SmallVector<int64_t> choice(rank, 0);
        Value sum;
        while (true) {
          SmallVector<Value> indices;
          Value weight;
          for (int64_t d = 0; d < rank; ++d) {
            auto [index, w] = taps[d][choice[d]];
            indices.push_back(index);
            if (w)
              weight =
                  weight ? arith::MulFOp::create(nb, nl, weight, w).getResult()
                         : w;
          }
          Value element = tensor::ExtractOp::create(nb, nl, input, indices);
          if (!weight)
            return convertScalar(nb, nl, element, elementType);
          Value term = arith::MulFOp::create(
              nb, nl, convertScalar(nb, nl, element, computeType),
              convertScalar(nb, nl, weight, computeType));
          sum =
              sum ? arith::AddFOp::create(nb, nl, sum, term).getResult() : term;
          int64_t d = rank - 1;
          while (d >= 0 && ++choice[d] == int64_t(taps[d].size()))
            choice[d--] = 0;
          if (d < 0)
            break;
        }
        return convertScalar(nb, nl, sum, elementType);
      });
  return SmallVector<Value>{resized};
}

/// The interpolation weights [out, in] (row-major) of one axis of a Resize
/// in mode nearest or linear, as lowerResize computes them (in f32):
/// each output index reads its nearest input index, or floor(x) and
/// floor(x) + 1 clamped into the axis with weights 1 - t and t.
static SmallVector<double> getResizeWeights(const ResizeAxis &axis,
                                            StringRef transform, bool linear,
                                            StringRef nearestMode) {
  SmallVector<double> weights(axis.outSize * axis.inSize, 0.0);
  auto clamp = [&](float x) {
    return std::clamp<int64_t>(int64_t(x), 0, axis.inSize - 1);
  };
  for (int64_t o = 0; o < axis.outSize; ++o) {
    float x = float(o);
    if (transform == "asymmetric")
      x = x / float(axis.scale);
    else if (transform == "align_corners")
      x = axis.outSize == 1
              ? 0.0f
              : x * float(double(axis.inSize - 1) / (axis.outSize - 1));
    else if (transform == "pytorch_half_pixel" && axis.outSize == 1)
      x = 0.0f;
    else
      x = (x + 0.5f) / float(axis.scale) - 0.5f;
    double *row = &weights[o * axis.inSize];
    if (!linear) {
      float rounded = nearestMode == "floor"  ? std::floor(x)
                      : nearestMode == "ceil" ? std::ceil(x)
                      : nearestMode == "round_prefer_ceil"
                          ? std::floor(x + 0.5f)
                          : std::ceil(x - 0.5f);
      row[clamp(rounded)] += 1.0;
      continue;
    }
    float floor = std::floor(x), t = x - floor;
    row[clamp(floor)] += 1.0f - t;
    row[clamp(floor + 1.0f)] += t;
  }
  return weights;
}

/// com.microsoft ResizeGrad(dY, X, roi?, scales?), ONNX Runtime's gradient
/// of a Resize in mode linear or nearest (half_pixel, align_corners,
/// asymmetric): the adjoint of the resize, axis by axis, dX = dY contracted
/// with each resized axis's interpolation weights (getResizeWeights).
static LoweringResult lowerResizeGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0);
  RankedTensorType dyType = getRankedType(dy);
  RankedTensorType xType = getRankedType(node.operand(1));
  if (!dyType || !xType || !dyType.hasStaticShape() ||
      !xType.hasStaticShape() || dyType.getRank() != xType.getRank() ||
      !isa<FloatType>(dyType.getElementType()))
    return node.emitError() << "expects a float dY and X of static shapes and "
                               "equal rank";
  StringRef mode = node.getString("mode", "nearest");
  StringRef transform =
      node.getString("coordinate_transformation_mode", "half_pixel");
  StringRef nearestMode = node.getString("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear")
    return node.emitError() << "mode '" << mode
                            << "' has no gradient (ONNX Runtime's: linear and "
                               "nearest)";
  if (failed(checkResizeTransform(node, transform)))
    return failure();
  std::optional<SmallVector<double>> scales;
  if (node.getNumOperands() > 3 && !isa<NoneType>(node.operand(3).getType())) {
    scales = node.getConstantFloats(3);
    if (!scales || int64_t(scales->size()) != dyType.getRank())
      return node.emitError() << "needs constant scales, one per dimension";
  }
  Type accType = getAccumulatorType(dyType.getElementType());
  Value grad = convertTensor(b, loc, dy, accType);
  MLIRContext *ctx = b.getContext();
  int64_t rank = dyType.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    ResizeAxis axis{xType.getDimSize(d), dyType.getDimSize(d),
                    scales
                        ? (*scales)[d]
                        : double(dyType.getDimSize(d)) / xType.getDimSize(d)};
    if (axis.inSize == axis.outSize && axis.scale == 1.0)
      continue;
    SmallVector<double> weights =
        getResizeWeights(axis, transform, mode == "linear", nearestMode);
    Value matrix = createNumberConstant(
        b, loc, RankedTensorType::get({axis.outSize, axis.inSize}, accType),
        weights);
    // next[..., i, ...] = sum_o grad[..., o, ...] * W[o, i]: loop dims are
    // the result's, then o.
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(grad.getType()).getShape());
    shape[d] = axis.inSize;
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(ctx, ArrayRef<int64_t>(shape));
    Value init = createFilled(b, loc, sizes, createScalar(b, loc, accType, 0));
    SmallVector<AffineExpr> gradExprs, outExprs;
    for (int64_t i = 0; i < rank; ++i) {
      outExprs.push_back(b.getAffineDimExpr(i));
      gradExprs.push_back(b.getAffineDimExpr(i == d ? rank : i));
    }
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    grad = linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{grad, matrix}, init,
               {AffineMap::get(rank + 1, 0, gradExprs, ctx),
                AffineMap::get(
                    rank + 1, 0,
                    {b.getAffineDimExpr(rank), b.getAffineDimExpr(d)}, ctx),
                AffineMap::get(rank + 1, 0, outExprs, ctx)},
               iterators,
               [](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(
                     nb, nl,
                     multiplyAccumulate(nb, nl, args[0], args[1], args[2]));
               })
               .getResult(0);
  }
  return SmallVector<Value>{convertTensor(
      b, loc, grad, node.resultElementType(0, dyType.getElementType()))};
}

namespace {
/// GridSample's arithmetic in the body of its generic, in f32, as PyTorch's
/// grid_sampler_compute_source_index and get_value_bounded define it.
struct GridSampler {
  OpBuilder &b;
  Location loc;
  StringRef padding;
  bool alignCorners;

  Value constant(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }

  /// A grid value in [-1, 1] as a coordinate on an axis of `size`: -1 and 1
  /// are the end pixels' centres with align_corners, their outer edges
  /// without.
  Value unnormalize(Value g, int64_t size) {
    if (alignCorners)
      return mul(add(g, constant(1)), constant((size - 1) / 2.0));
    return mul(sub(mul(add(g, constant(1)), constant(size)), constant(1)),
               constant(0.5));
  }

  /// `x` reflected into [low, high] / 2 (PyTorch's reflect_coordinates).
  Value reflect(Value x, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return constant(0);
    double low = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
    Value distance = math::AbsFOp::create(b, loc, sub(x, constant(low)));
    Value extra = arith::RemFOp::create(b, loc, distance, constant(span));
    Value flips = math::FloorOp::create(
        b, loc, arith::DivFOp::create(b, loc, distance, constant(span)));
    Value even = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ,
        arith::RemFOp::create(b, loc, flips, constant(2)), constant(0));
    return arith::SelectOp::create(
        b, loc, even, add(extra, constant(low)),
        add(sub(constant(span), extra), constant(low)));
  }

  /// `x` by the padding mode: clipped into the axis (border), reflected
  /// then clipped (reflection), as it is (zeros).
  Value pad(Value x, int64_t size) {
    if (padding == "zeros")
      return x;
    if (padding == "reflection")
      x = alignCorners ? reflect(x, 0, 2 * (size - 1))
                       : reflect(x, -1, 2 * size - 1);
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, x, constant(0)),
        constant(size - 1));
  }

  /// Whether the integral coordinate `x` lies in an axis of `size`.
  Value inside(Value x, int64_t size) {
    return arith::AndIOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                              constant(0)),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, x,
                              constant(size - 1)));
  }
};
} // namespace

/// GridSample(X [N, C, H, W], grid [N, H_out, W_out, 2]) (opset 16; opset
/// 20's 4-D form and mode names): each output element interpolates X at
/// the grid's (x, y), normalized to [-1, 1], by `mode` (bilinear, nearest
/// rounding half to even, bicubic with A = -0.75) and `padding_mode`
/// (zeros, border, reflection), as PyTorch's grid_sample.
static LoweringResult lowerGridSample(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0), grid = node.operand(1);
  RankedTensorType type = getRankedType(input);
  RankedTensorType gridType = getRankedType(grid);
  if (!type || !gridType || !type.hasStaticShape() ||
      !gridType.hasStaticShape() || type.getRank() != 4 ||
      gridType.getRank() != 4 || !isa<FloatType>(type.getElementType()) ||
      !isa<FloatType>(gridType.getElementType()))
    return node.emitError() << "expects a float X [N, C, H, W] and grid [N, "
                               "H_out, W_out, 2] of static shapes";
  ArrayRef<int64_t> in = type.getShape(), at = gridType.getShape();
  if (at[0] != in[0] || at[3] != 2)
    return node.emitError()
           << "the grid " << gridType << " does not sample " << type;
  StringRef mode = node.getString("mode", "bilinear");
  mode = mode == "linear" ? "bilinear" : mode == "cubic" ? "bicubic" : mode;
  StringRef padding = node.getString("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return node.emitError() << "mode '" << mode << "' is not bilinear, "
                            << "nearest or bicubic";
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return node.emitError() << "padding_mode '" << padding
                            << "' is not zeros, border or reflection";
  bool alignCorners = node.getInt("align_corners", 0) != 0;
  Type elementType = type.getElementType();
  Type computeType = getComputeType(elementType);
  int64_t height = in[2], width = in[3];
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{in[0], in[1], at[1], at[2]}, elementType);
  Value sampled = buildGenericOverIndices(
      b, loc, init, [&](OpBuilder &nb, Location nl) -> Value {
        GridSampler s{nb, nl, padding, alignCorners};
        Value n = linalg::IndexOp::create(nb, nl, 0);
        Value c = linalg::IndexOp::create(nb, nl, 1);
        Value h = linalg::IndexOp::create(nb, nl, 2);
        Value w = linalg::IndexOp::create(nb, nl, 3);
        auto gridAt = [&](int64_t component) {
          Value i = arith::ConstantIndexOp::create(nb, nl, component);
          Value g =
              tensor::ExtractOp::create(nb, nl, grid, ValueRange{n, h, w, i});
          return convertScalar(nb, nl, g, nb.getF32Type());
        };
        Value x = s.unnormalize(gridAt(0), width);
        Value y = s.unnormalize(gridAt(1), height);
        // X at the integral coordinates (tx, ty), 0 outside the image (the
        // padding has moved the coordinates inside where it applies).
        auto tap = [&](Value tx, Value ty) {
          Value insideX = s.inside(tx, width), insideY = s.inside(ty, height);
          // Coordinates outside (NaN, huge) read element 0 and weigh 0:
          // converting them to integers would be undefined.
          Value zero = s.constant(0);
          tx = arith::SelectOp::create(nb, nl, insideX, tx, zero);
          ty = arith::SelectOp::create(nb, nl, insideY, ty, zero);
          Value element = tensor::ExtractOp::create(
              nb, nl, input,
              ValueRange{n, c, clampToIndex(nb, nl, ty, height),
                         clampToIndex(nb, nl, tx, width)});
          return arith::SelectOp::create(
              nb, nl, arith::AndIOp::create(nb, nl, insideX, insideY),
              convertScalar(nb, nl, element, computeType),
              createScalar(nb, nl, computeType, 0));
        };
        auto weigh = [&](Value sum, Value value, Value weight) {
          Value term = arith::MulFOp::create(
              nb, nl, value, convertScalar(nb, nl, weight, computeType));
          return sum ? arith::AddFOp::create(nb, nl, sum, term).getResult()
                     : term;
        };
        Value sum;
        if (mode == "bicubic") {
          // Keys' kernel over 4x4 neighbours; each tap is padded alone.
          Value x0 = math::FloorOp::create(nb, nl, x);
          Value y0 = math::FloorOp::create(nb, nl, y);
          SmallVector<Value, 4> wx =
              buildCubicWeights(nb, nl, s.sub(x, x0), -0.75);
          SmallVector<Value, 4> wy =
              buildCubicWeights(nb, nl, s.sub(y, y0), -0.75);
          for (int64_t i = 0; i < 4; ++i) {
            Value row;
            Value ty = s.pad(s.add(y0, s.constant(i - 1)), height);
            for (int64_t j = 0; j < 4; ++j) {
              Value tx = s.pad(s.add(x0, s.constant(j - 1)), width);
              row = weigh(row, tap(tx, ty), wx[j]);
            }
            sum = weigh(sum, row, wy[i]);
          }
          return convertScalar(nb, nl, sum, elementType);
        }
        x = s.pad(x, width);
        y = s.pad(y, height);
        if (mode == "nearest")
          return convertScalar(nb, nl,
                               tap(math::RoundEvenOp::create(nb, nl, x),
                                   math::RoundEvenOp::create(nb, nl, y)),
                               elementType);
        Value x0 = math::FloorOp::create(nb, nl, x);
        Value y0 = math::FloorOp::create(nb, nl, y);
        Value x1 = s.add(x0, s.constant(1)), y1 = s.add(y0, s.constant(1));
        Value fx = s.sub(x, x0), fy = s.sub(y, y0);
        Value gx = s.sub(s.constant(1), fx), gy = s.sub(s.constant(1), fy);
        sum = weigh(sum, tap(x0, y0), s.mul(gx, gy));
        sum = weigh(sum, tap(x1, y0), s.mul(fx, gy));
        sum = weigh(sum, tap(x0, y1), s.mul(gx, fy));
        sum = weigh(sum, tap(x1, y1), s.mul(fx, fy));
        return convertScalar(nb, nl, sum, elementType);
      });
  return SmallVector<Value>{sampled};
}

/// AffineGrid (opset 20): theta [N, 2, 3] (or [N, 3, 4]) maps each point of
/// the normalized base grid of `size` [N, C, H, W] (or [N, C, D, H, W]) to
/// a sampling point: grid [N, H, W, 2] = theta (x, y, 1), x along W,
/// normalized to [-1, 1] at pixel centres (corners with align_corners), as
/// F.affine_grid.
static LoweringResult lowerAffineGrid(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value theta = node.operand(0);
  RankedTensorType type = getRankedType(theta);
  std::optional<SmallVector<int64_t>> size = node.getConstantInts(1);
  if (!type || !type.hasStaticShape() || type.getRank() != 3 ||
      !isa<FloatType>(type.getElementType()) || !size ||
      (size->size() != 4 && size->size() != 5))
    return node.emitError() << "expects theta of static shape [N, 2, 3] or "
                               "[N, 3, 4] and a constant size of 4 or 5";
  int64_t spatial = size->size() - 2;
  if (type.getDimSize(0) != (*size)[0] || type.getDimSize(1) != spatial ||
      type.getDimSize(2) != spatial + 1)
    return node.emitError() << "theta " << type << " does not map a grid of "
                            << spatial << " spatial dimensions";
  bool alignCorners = node.getInt("align_corners", 0) != 0;
  Type elementType = type.getElementType();
  Type computeType = getComputeType(elementType);
  SmallVector<int64_t> shape = {(*size)[0]};
  shape.append(size->begin() + 2, size->end());
  shape.push_back(spatial);
  Value init = tensor::EmptyOp::create(b, loc, shape, elementType);
  Value grid = buildGenericOverIndices(
      b, loc, init, [&](OpBuilder &nb, Location nl) -> Value {
        Value n = linalg::IndexOp::create(nb, nl, 0);
        Value row = linalg::IndexOp::create(nb, nl, spatial + 1);
        auto constant = [&](double value) {
          return createScalar(nb, nl, computeType, value);
        };
        auto thetaAt = [&](int64_t column) {
          Value at = arith::ConstantIndexOp::create(nb, nl, column);
          return convertScalar(
              nb, nl,
              tensor::ExtractOp::create(nb, nl, theta, ValueRange{n, row, at}),
              computeType);
        };
        // theta's row times the base point (x, y[, z], 1), x along the
        // last dimension.
        Value sum = thetaAt(spatial);
        for (int64_t k = 0; k < spatial; ++k) {
          int64_t dim = spatial - k; // loop index of the k-th coordinate
          double extent = double((*size)[1 + dim]);
          Value i = convertScalar(
              nb, nl,
              arith::IndexCastOp::create(nb, nl, nb.getI64Type(),
                                         linalg::IndexOp::create(nb, nl, dim)),
              computeType);
          // -1 + 2i / (S - 1) (corners), -1 + (2i + 1) / S (centres).
          double first = alignCorners ? -1 : -1 + 1 / extent;
          double step =
              alignCorners ? (extent > 1 ? 2 / (extent - 1) : 0) : 2 / extent;
          Value base = arith::AddFOp::create(
              nb, nl, constant(first),
              arith::MulFOp::create(nb, nl, i, constant(step)));
          sum = arith::AddFOp::create(
              nb, nl, sum, arith::MulFOp::create(nb, nl, thetaAt(k), base));
        }
        return convertScalar(nb, nl, sum, elementType);
      });
  return SmallVector<Value>{grid};
}

/// The index Pad reads along one axis of `size` elements for the output
/// index `index` minus the leading pad (`shifted`, possibly out of range):
/// edge repeats the border element, reflect mirrors about it, wrap repeats
/// the axis.
static Value getPadSourceIndex(OpBuilder &b, Location loc, StringRef mode,
                               Value shifted, int64_t size) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  // The remainder of `value` by `divisor`, in [0, divisor).
  auto wrap = [&](Value value, int64_t divisor) -> Value {
    Value rem = arith::RemSIOp::create(b, loc, value, constant(divisor));
    Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           rem, constant(0));
    return arith::SelectOp::create(
        b, loc, negative, arith::AddIOp::create(b, loc, rem, constant(divisor)),
        rem);
  };
  if (mode == "wrap")
    return wrap(shifted, size);
  if (mode == "reflect" && size > 1) {
    int64_t period = 2 * (size - 1);
    Value folded = wrap(shifted, period);
    Value back = arith::SubIOp::create(b, loc, constant(period), folded);
    return arith::MinSIOp::create(b, loc, folded, back);
  }
  // Edge (and reflect of a single element).
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, shifted, constant(0)),
      constant(size - 1));
}

/// Pad(data, pads, constant_value?, axes?), or pads and value as attributes
/// (opset < 11). Constant mode is a tensor.pad; edge, reflect and wrap are
/// a generic that reads each element from where the mode maps it.
static LoweringResult lowerPad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value data = node.operand(0);
  RankedTensorType type = getRankedType(data);
  if (!type)
    return node.emitError() << "expects a ranked tensor";
  int64_t rank = type.getRank();
  bool notConstant = false;
  std::optional<SmallVector<int64_t>> pads =
      node.getIntsFromAttrOrOperand("pads", 1, notConstant);
  std::optional<SmallVector<int64_t>> axes = node.getConstantInts(3);
  if (notConstant || !pads || (node.operand(3) && !axes))
    return node.emitError() << "pads and axes must be constants";
  if (!axes)
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (pads->size() != 2 * axes->size())
    return node.emitError()
           << "expects " << 2 * axes->size()
           << " pads (2 per padded axis), not " << pads->size();
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (auto [i, axis] : llvm::enumerate(*axes)) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return node.emitError() << "axis " << axis << " is out of range";
    low[*normalized] = (*pads)[i];
    high[*normalized] = (*pads)[i + axes->size()];
  }

  StringRef mode = node.getString("mode", "constant");
  Type elementType = type.getElementType();
  // A constant_value known only at run time is read in the padding
  // generic's body below (a kernel on the GPU, not the host).
  Value runtimeValue;
  if (mode == "constant") {
    Value value;
    if (node.operand(2)) {
      Value scalar = getScalarOperand(node, 2, "constant_value");
      if (!scalar)
        return failure();
      DenseElementsAttr constant;
      if (matchPattern(scalar, m_Constant(&constant)))
        value = arith::ConstantOp::create(
            b, loc, cast<TypedAttr>(constant.getSplatValue<Attribute>()));
      else
        runtimeValue = scalar;
    } else {
      value = createScalar(b, loc, elementType, node.getFloat("value", 0.0f));
    }
    if (value)
      return SmallVector<Value>{padTensor(b, loc, data, low, high, value)};
  }
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return node.emitError() << "unknown mode '" << mode
                            << "'; expects constant, edge, reflect or wrap";

  Value input = cropNegativePads(b, loc, data, low, high);
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(inputType.getShape());
  for (int64_t d = 0; d < rank; ++d) {
    if (!low[d] && !high[d])
      continue;
    if (ShapedType::isDynamic(shape[d]) || shape[d] == 0)
      return node.emitError() << "the padded dimensions must be static and "
                                 "not empty in mode '"
                              << mode << "'";
    shape[d] += std::max<int64_t>(0, low[d]) + std::max<int64_t>(0, high[d]);
  }
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  for (int64_t d = 0; d < rank; ++d)
    if (!ShapedType::isDynamic(shape[d]))
      sizes[d] = b.getIndexAttr(shape[d]);
  Value init = createEmpty(b, loc, sizes, elementType);
  Value padded = buildGenericOverIndices(
      b, loc, init, [&](OpBuilder &nb, Location nl) -> Value {
        SmallVector<Value> indices;
        Value inside;
        for (int64_t d = 0; d < rank; ++d) {
          Value index = linalg::IndexOp::create(nb, nl, d);
          int64_t before = std::max<int64_t>(0, low[d]);
          if (before || high[d] > 0) {
            Value source = arith::SubIOp::create(
                nb, nl, index, arith::ConstantIndexOp::create(nb, nl, before));
            int64_t size = inputType.getDimSize(d);
            if (runtimeValue) {
              // Constant mode: the element exists where the source index
              // is in [0, size); read a clamped one, then select.
              Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
              Value last = arith::ConstantIndexOp::create(nb, nl, size - 1);
              Value within = arith::AndIOp::create(
                  nb, nl,
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge,
                                        source, zero),
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sle,
                                        source, last));
              inside = inside ? arith::AndIOp::create(nb, nl, inside, within)
                                    .getResult()
                              : within;
              index = arith::MinSIOp::create(
                  nb, nl, arith::MaxSIOp::create(nb, nl, source, zero), last);
            } else {
              index = getPadSourceIndex(nb, nl, mode, source, size);
            }
          }
          indices.push_back(index);
        }
        Value element = tensor::ExtractOp::create(nb, nl, input, indices);
        if (!runtimeValue || !inside)
          return element;
        Value padValue = convertScalar(
            nb, nl, tensor::ExtractOp::create(nb, nl, runtimeValue, {}),
            elementType);
        return arith::SelectOp::create(nb, nl, inside, element, padValue);
      });
  return SmallVector<Value>{padded};
}

/// com.microsoft SliceGrad(dY, shape, starts, ends, axes?, steps?): zeros of
/// the sliced input's shape with dY where the Slice read.
static LoweringResult lowerSliceGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0);
  RankedTensorType dyType = getRankedType(dy);
  std::optional<SmallVector<int64_t>> shape = node.getConstantInts(1);
  RankedTensorType type = node.resultType(0);
  if (shape && dyType)
    type = RankedTensorType::get(*shape, dyType.getElementType());
  if (!dyType || !type || !type.hasStaticShape() ||
      type.getRank() != dyType.getRank())
    return node.emitError()
           << "the input shape must be a constant of dY's rank";
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  FailureOr<SliceBox> box = getSliceBox(node, type, sizes, /*first=*/2);
  if (failed(box))
    return failure();
  Value zeros = createFilled(b, loc, sizes,
                             createScalar(b, loc, type.getElementType(), 0));
  dy = reverseAxes(b, loc, dy, box->reversed);
  return SmallVector<Value>{tensor::InsertSliceOp::create(
      b, loc, dy, zeros, box->offsets, getSizes(b, loc, dy), box->strides)};
}

/// A generic over a tensor of `sizes` that reads `indices` through
/// `indicesMap` and yields `body(index)` (element type `elementType`).
static Value
buildIndexedGeneric(OpBuilder &b, Location loc, Value indices,
                    AffineMap indicesMap, ArrayRef<OpFoldResult> sizes,
                    Type elementType,
                    function_ref<Value(OpBuilder &, Location, Value)> body) {
  Value init = createEmpty(b, loc, sizes, elementType);
  int64_t rank = sizes.size();
  SmallVector<AffineMap> maps = {indicesMap, b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), indices, init, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args[0]));
             })
      .getResult(0);
}

static LoweringResult lowerGather(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value data = node.operand(0), indices = node.operand(1);
  RankedTensorType dataType = getRankedType(data);
  RankedTensorType indicesType = getRankedType(indices);
  if (!dataType || !indicesType)
    return node.emitError() << "expects ranked tensors";
  std::optional<int64_t> axis =
      normalizeAxis(node.getInt("axis", 0), dataType.getRank());
  if (!axis)
    return node.emitError() << "axis is out of range";
  int64_t indicesRank = indicesType.getRank();
  int64_t rank = dataType.getRank() - 1 + indicesRank;
  SmallVector<OpFoldResult> sizes, dataSizes = getSizes(b, loc, data);
  for (int64_t i = 0; i < *axis; ++i)
    sizes.push_back(dataSizes[i]);
  for (OpFoldResult size : getSizes(b, loc, indices))
    sizes.push_back(size);
  for (int64_t i = *axis + 1; i < dataType.getRank(); ++i)
    sizes.push_back(dataSizes[i]);
  Value axisSize = getValueOrCreateConstantIndexOp(b, loc, dataSizes[*axis]);
  SmallVector<AffineExpr> indexExprs;
  for (int64_t i = 0; i < indicesRank; ++i)
    indexExprs.push_back(b.getAffineDimExpr(*axis + i));
  return SmallVector<Value>{buildIndexedGeneric(
      b, loc, indices, AffineMap::get(rank, 0, indexExprs, b.getContext()),
      sizes, dataType.getElementType(),
      [&](OpBuilder &nb, Location nl, Value index) -> Value {
        SmallVector<Value> at;
        for (int64_t i = 0; i < *axis; ++i)
          at.push_back(linalg::IndexOp::create(nb, nl, i));
        at.push_back(normalizeIndex(nb, nl, index, axisSize));
        for (int64_t i = *axis + 1; i < dataType.getRank(); ++i)
          at.push_back(linalg::IndexOp::create(nb, nl, i - 1 + indicesRank));
        return tensor::ExtractOp::create(nb, nl, data, at);
      })};
}

/// GatherND(data, indices): for each index tuple (the last dimension of
/// indices, depth m) the slice data[batch..., tuple..., :], the first
/// batch_dims dimensions of both shared.
static LoweringResult lowerGatherND(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value data = node.operand(0), indices = node.operand(1);
  RankedTensorType dataType = getRankedType(data);
  RankedTensorType indicesType = getRankedType(indices);
  if (!dataType || !indicesType || indicesType.getRank() < 1 ||
      indicesType.isDynamicDim(indicesType.getRank() - 1))
    return node.emitError() << "expects ranked tensors and indices with a "
                               "static last dimension";
  int64_t dataRank = dataType.getRank(), indicesRank = indicesType.getRank();
  int64_t batchDims = node.getInt("batch_dims", 0);
  int64_t depth = indicesType.getShape().back();
  if (batchDims < 0 || batchDims >= std::min(dataRank, indicesRank) ||
      depth < 1 || depth > dataRank - batchDims)
    return node.emitError() << "batch_dims " << batchDims << " and depth "
                            << depth << " do not fit data of rank " << dataRank
                            << " and indices of rank " << indicesRank;
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, indices);
  sizes.pop_back();
  SmallVector<OpFoldResult> dataSizes = getSizes(b, loc, data);
  sizes.append(dataSizes.begin() + batchDims + depth, dataSizes.end());
  Value init = createEmpty(b, loc, sizes, dataType.getElementType());
  int64_t rank = sizes.size();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{}, init,
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)}, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        SmallVector<Value> tuple, at;
        for (int64_t i = 0; i < indicesRank - 1; ++i)
          tuple.push_back(linalg::IndexOp::create(nb, nl, i));
        at.append(tuple.begin(), tuple.begin() + batchDims);
        for (int64_t j = 0; j < depth; ++j) {
          tuple.push_back(arith::ConstantIndexOp::create(nb, nl, j));
          Value index = tensor::ExtractOp::create(nb, nl, indices, tuple);
          tuple.pop_back();
          at.push_back(normalizeIndex(
              nb, nl, index,
              tensor::DimOp::create(nb, nl, data, batchDims + j)));
        }
        for (int64_t i = indicesRank - 1; i < rank; ++i)
          at.push_back(linalg::IndexOp::create(nb, nl, i));
        linalg::YieldOp::create(
            nb, nl, tensor::ExtractOp::create(nb, nl, data, at).getResult());
      });
  return SmallVector<Value>{generic.getResult(0)};
}

static LoweringResult lowerGatherElements(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value data = node.operand(0), indices = node.operand(1);
  RankedTensorType dataType = getRankedType(data);
  RankedTensorType indicesType = getRankedType(indices);
  if (!dataType || !indicesType || dataType.getRank() != indicesType.getRank())
    return node.emitError() << "expects ranked tensors of equal rank";
  int64_t rank = dataType.getRank();
  std::optional<int64_t> axis = normalizeAxis(node.getInt("axis", 0), rank);
  if (!axis)
    return node.emitError() << "axis is out of range";
  Value axisSize = tensor::DimOp::create(b, loc, data, *axis);
  return SmallVector<Value>{buildIndexedGeneric(
      b, loc, indices, b.getMultiDimIdentityMap(rank),
      getSizes(b, loc, indices), dataType.getElementType(),
      [&](OpBuilder &nb, Location nl, Value index) -> Value {
        SmallVector<Value> at;
        for (int64_t i = 0; i < rank; ++i)
          at.push_back(i == *axis
                           ? normalizeIndex(nb, nl, index, axisSize)
                           : linalg::IndexOp::create(nb, nl, i).getResult());
        return tensor::ExtractOp::create(nb, nl, data, at);
      })};
}

/// ScatterElements: data, with each update written to (or combined by
/// `reduction` into) the element its index names along `axis`, in the
/// order of the indices.
/// Where the element at `ivs` goes in a scatter along `axis` (or came from
/// in a gather): `ivs` with the wrapped index that `indices` holds there
/// on the axis.
static SmallVector<Value> getElementTarget(OpBuilder &b, Location loc,
                                           Value indices, ValueRange ivs,
                                           int64_t axis, Value axisSize) {
  Value index = tensor::ExtractOp::create(b, loc, indices, ivs);
  SmallVector<Value> target(ivs);
  target[axis] = normalizeIndex(b, loc, index, axisSize);
  return target;
}

static LoweringResult lowerScatterElements(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value data = node.operand(0), indices = node.operand(1),
        updates = node.operand(2);
  RankedTensorType dataType = getRankedType(data);
  RankedTensorType indicesType = getRankedType(indices);
  RankedTensorType updatesType = getRankedType(updates);
  if (!dataType || !indicesType || !updatesType ||
      dataType.getRank() != indicesType.getRank() ||
      updatesType.getRank() != indicesType.getRank())
    return node.emitError() << "expects ranked tensors of equal rank";
  int64_t rank = dataType.getRank();
  std::optional<int64_t> axis = normalizeAxis(node.getInt("axis", 0), rank);
  if (!axis)
    return node.emitError() << "axis is out of range";
  FailureOr<std::optional<CombineKind>> kind = getScatterReduction(node);
  if (failed(kind))
    return failure();
  Value axisSize = tensor::DimOp::create(b, loc, data, *axis);
  return SmallVector<Value>{buildScatter(
      b, loc, data, updates, *kind,
      [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        return getElementTarget(nb, nl, indices, ivs, *axis, axisSize);
      })};
}

/// ScatterND: data, with each update slice written to (or combined by
/// `reduction` into) the slice that the last dimension of `indices` names,
/// in the order of the indices.
static LoweringResult lowerScatterND(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value data = node.operand(0), indices = node.operand(1),
        updates = node.operand(2);
  RankedTensorType dataType = getRankedType(data);
  RankedTensorType indicesType = getRankedType(indices);
  RankedTensorType updatesType = getRankedType(updates);
  if (!dataType || !indicesType || !updatesType || indicesType.getRank() < 1 ||
      indicesType.isDynamicDim(indicesType.getRank() - 1))
    return node.emitError() << "expects ranked tensors and indices with a "
                               "static last dimension";
  int64_t depth = indicesType.getShape().back();
  int64_t batchRank = indicesType.getRank() - 1;
  if (depth > dataType.getRank() ||
      updatesType.getRank() != batchRank + dataType.getRank() - depth)
    return node.emitError() << "updates must have rank "
                            << batchRank + dataType.getRank() - depth
                            << " for indices of depth " << depth;
  FailureOr<std::optional<CombineKind>> kind = getScatterReduction(node);
  if (failed(kind))
    return failure();
  return SmallVector<Value>{buildScatter(
      b, loc, data, updates, *kind,
      [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        SmallVector<Value> at(ivs.take_front(batchRank)), target;
        for (int64_t j = 0; j < depth; ++j) {
          at.push_back(arith::ConstantIndexOp::create(nb, nl, j));
          Value index = tensor::ExtractOp::create(nb, nl, indices, at);
          at.pop_back();
          target.push_back(normalizeIndex(
              nb, nl, index, tensor::DimOp::create(nb, nl, data, j)));
        }
        target.append(ivs.begin() + batchRank, ivs.end());
        return target;
      })};
}

/// A gather's gradient: zeros of `shape` with dY summed (in the
/// accumulator type) into the elements `getTarget` gives for each element
/// of dY, repeated targets accumulating; in the node's result type.
static Value
sumIntoZeros(NodeLowering &node, ArrayRef<int64_t> shape, Value dy,
             function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
                 getTarget) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Type elementType = getRankedType(dy).getElementType();
  Type accType = getAccumulatorType(elementType);
  Value zeros =
      createFilled(b, loc, getAsIndexOpFoldResult(b.getContext(), shape),
                   createScalar(b, loc, accType, 0));
  Value sums = buildScatter(b, loc, zeros, dy, CombineKind::Add, getTarget);
  return convertTensor(b, loc, sums, node.resultElementType(0, elementType));
}

/// com.microsoft GatherGrad(shape, indices, dY): zeros of `shape` with dY
/// summed (in the accumulator type) into the slices along `axis` that
/// Gather read; repeated indices accumulate.
static LoweringResult lowerGatherGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value indices = node.operand(1), dy = node.operand(2);
  RankedTensorType indicesType = getRankedType(indices);
  RankedTensorType dyType = getRankedType(dy);
  FailureOr<SmallVector<int64_t>> shape = getResultShape(node, 0);
  if (failed(shape))
    return failure();
  if (!indicesType || !dyType || !isa<FloatType>(dyType.getElementType()))
    return node.emitError() << "expects ranked indices and a float dY";
  int64_t rank = shape->size();
  std::optional<int64_t> axis = normalizeAxis(node.getInt("axis", 0), rank);
  if (!axis)
    return node.emitError() << "axis is out of range";
  int64_t indicesRank = indicesType.getRank();
  if (dyType.getRank() != rank - 1 + indicesRank)
    return node.emitError() << "dY must have rank " << rank - 1 + indicesRank;
  Value axisSize = arith::ConstantIndexOp::create(b, loc, (*shape)[*axis]);
  return SmallVector<Value>{sumIntoZeros(
      node, *shape, dy, [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        SmallVector<Value> target(ivs.take_front(*axis));
        Value index = tensor::ExtractOp::create(nb, nl, indices,
                                                ivs.slice(*axis, indicesRank));
        target.push_back(normalizeIndex(nb, nl, index, axisSize));
        target.append(ivs.begin() + *axis + indicesRank, ivs.end());
        return target;
      })};
}

/// com.microsoft GatherNDGrad(shape, indices, dY): zeros of `shape` with dY
/// summed (in the accumulator type) into the slices GatherND read, the
/// first batch_dims dimensions shared; repeated tuples accumulate.
static LoweringResult lowerGatherNDGrad(NodeLowering &node) {
  Value indices = node.operand(1), dy = node.operand(2);
  RankedTensorType indicesType = getRankedType(indices);
  RankedTensorType dyType = getRankedType(dy);
  FailureOr<SmallVector<int64_t>> shape = getResultShape(node, 0);
  if (failed(shape))
    return failure();
  if (!indicesType || !dyType || !isa<FloatType>(dyType.getElementType()) ||
      indicesType.getRank() < 1 ||
      indicesType.isDynamicDim(indicesType.getRank() - 1))
    return node.emitError() << "expects a float dY and ranked indices with a "
                               "static last dimension";
  int64_t rank = shape->size(), indicesRank = indicesType.getRank();
  int64_t batchDims = node.getInt("batch_dims", 0);
  int64_t depth = indicesType.getShape().back();
  if (batchDims < 0 || batchDims >= std::min(rank, indicesRank) || depth < 1 ||
      depth > rank - batchDims ||
      dyType.getRank() != indicesRank - 1 + rank - batchDims - depth)
    return node.emitError()
           << "batch_dims " << batchDims << " and depth " << depth
           << " do not fit data of rank " << rank << ", indices of rank "
           << indicesRank << " and dY of rank " << dyType.getRank();
  return SmallVector<Value>{sumIntoZeros(
      node, *shape, dy, [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        SmallVector<Value> tuple(ivs.take_front(indicesRank - 1));
        SmallVector<Value> target(ivs.take_front(batchDims));
        for (int64_t j = 0; j < depth; ++j) {
          tuple.push_back(arith::ConstantIndexOp::create(nb, nl, j));
          Value index = tensor::ExtractOp::create(nb, nl, indices, tuple);
          tuple.pop_back();
          target.push_back(normalizeIndex(
              nb, nl, index,
              arith::ConstantIndexOp::create(nb, nl, (*shape)[batchDims + j])));
        }
        llvm::append_range(target, ivs.drop_front(indicesRank - 1));
        return target;
      })};
}

/// com.microsoft GatherElementsGrad(dY, shape, indices): zeros of `shape`
/// with dY summed (in the accumulator type) where GatherElements (or TopK)
/// read along `axis`; repeated indices accumulate.
static LoweringResult lowerGatherElementsGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0), indices = node.operand(2);
  RankedTensorType dyType = getRankedType(dy);
  RankedTensorType indicesType = getRankedType(indices);
  FailureOr<SmallVector<int64_t>> shape = getResultShape(node, 1);
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  if (!dyType || !indicesType || !isa<FloatType>(dyType.getElementType()) ||
      dyType.getRank() != rank || indicesType.getShape() != dyType.getShape())
    return node.emitError()
           << "expects a float dY and indices of one shape, of the output's "
              "rank";
  std::optional<int64_t> axis = normalizeAxis(node.getInt("axis", 0), rank);
  if (!axis)
    return node.emitError() << "axis is out of range";
  Value axisSize = arith::ConstantIndexOp::create(b, loc, (*shape)[*axis]);
  return SmallVector<Value>{sumIntoZeros(
      node, *shape, dy, [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        return getElementTarget(nb, nl, indices, ivs, *axis, axisSize);
      })};
}

/// OneHot(indices, depth, [off, on]): out[..., k, ...] is `on` where the
/// (wrapped) index is k along `axis`.
static LoweringResult lowerOneHot(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value indices = node.operand(0), values = node.operand(2);
  RankedTensorType indicesType = getRankedType(indices);
  RankedTensorType type = node.resultType(0);
  if (!indicesType || !type || !getRankedType(values) ||
      type.getRank() != indicesType.getRank() + 1)
    return node.emitError() << "expects ranked indices, depth and values";
  std::optional<int64_t> axis =
      normalizeAxis(node.getInt("axis", -1), type.getRank());
  if (!axis)
    return node.emitError() << "axis is out of range";
  if (type.isDynamicDim(*axis)) {
    // The depth operand: a one-element constant of any numeric type.
    std::optional<int64_t> depth;
    if (std::optional<SmallVector<int64_t>> ints = node.getConstantInts(1))
      if (ints->size() == 1)
        depth = (*ints)[0];
    auto constant = node.operand(1)
                        ? node.operand(1).getDefiningOp<arith::ConstantOp>()
                        : arith::ConstantOp();
    auto dense = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue())
                          : DenseFPElementsAttr();
    if (!depth && dense && dense.getNumElements() == 1)
      depth = int64_t((*dense.getValues<APFloat>().begin()).convertToDouble());
    if (!depth || *depth < 1)
      return node.emitError() << "depth must be a positive one-element "
                                 "constant";
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = *depth;
    type = type.clone(shape);
  }
  int64_t rank = type.getRank();
  SmallVector<AffineExpr> indexExprs;
  SmallVector<OpFoldResult> sizes;
  SmallVector<OpFoldResult> indexSizes = getSizes(b, loc, indices);
  for (int64_t i = 0, next = 0; i < rank; ++i) {
    if (i == *axis) {
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
      continue;
    }
    indexExprs.push_back(b.getAffineDimExpr(i));
    sizes.push_back(indexSizes[next++]);
  }
  Type elementType = type.getElementType();
  Value depth = arith::ConstantIndexOp::create(b, loc, type.getDimSize(*axis));
  return SmallVector<Value>{buildIndexedGeneric(
      b, loc, indices, AffineMap::get(rank, 0, indexExprs, b.getContext()),
      sizes, elementType,
      [&](OpBuilder &nb, Location nl, Value index) -> Value {
        // The off and on values are read in the body: a kernel on the GPU,
        // not the host.
        auto value = [&](int64_t i) {
          return convertScalar(
              nb, nl,
              tensor::ExtractOp::create(
                  nb, nl, values,
                  ValueRange{arith::ConstantIndexOp::create(nb, nl, i)}),
              elementType);
        };
        Value hit =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                  normalizeIndex(nb, nl, index, depth),
                                  linalg::IndexOp::create(nb, nl, *axis));
        return arith::SelectOp::create(nb, nl, hit, value(1), value(0));
      })};
}

/// Range(start, limit, delta): start + i * delta for the
/// max(ceil((limit - start) / delta), 0) values of i, counted at run time
/// unless the result type is static.
static LoweringResult lowerRange(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  SmallVector<Value> scalars;
  for (unsigned i = 0; i < 3; ++i) {
    RankedTensorType type = getRankedType(node.operand(i));
    if (!type || type.getRank() != 0)
      return node.emitError() << "start, limit and delta must be scalars";
    scalars.push_back(
        tensor::ExtractOp::create(b, loc, node.operand(i), ValueRange{}));
  }
  Type elementType = scalars[0].getType();
  RankedTensorType declared = node.resultType(0);
  // Constant bounds (shape arithmetic folded while lowering) give a static
  // size even where ONNX could not type the result.
  std::optional<double> constantSize;
  SmallVector<double> bounds;
  for (unsigned i = 0; i < 3; ++i) {
    std::optional<SmallVector<int64_t>> ints = node.getConstantInts(i);
    std::optional<SmallVector<double>> floats =
        ints ? std::nullopt : node.getConstantFloats(i);
    if (ints && ints->size() == 1)
      bounds.push_back(double((*ints)[0]));
    else if (floats && floats->size() == 1)
      bounds.push_back((*floats)[0]);
  }
  if (bounds.size() == 3 && bounds[2] != 0)
    constantSize =
        std::max(0.0, std::ceil((bounds[1] - bounds[0]) / bounds[2]));
  OpFoldResult size;
  if (declared && declared.getRank() == 1 && declared.hasStaticShape()) {
    size = b.getIndexAttr(declared.getDimSize(0));
  } else if (constantSize) {
    size = b.getIndexAttr(int64_t(*constantSize));
  } else {
    Type f64 = b.getF64Type();
    auto toF64 = [&](Value v) { return convertScalar(b, loc, v, f64); };
    Value steps = math::CeilOp::create(
        b, loc,
        arith::DivFOp::create(
            b, loc,
            arith::SubFOp::create(b, loc, toF64(scalars[1]), toF64(scalars[0])),
            toF64(scalars[2])));
    steps =
        arith::MaximumFOp::create(b, loc, steps, createScalar(b, loc, f64, 0));
    size = convertScalar(b, loc, steps, b.getIndexType());
  }
  Value empty = createEmpty(b, loc, {size}, elementType);
  auto type = cast<RankedTensorType>(empty.getType());
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{}, empty, b.getMultiDimIdentityMap(1),
      utils::IteratorType::parallel,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        Value i = convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, 0),
                                getComputeType(elementType));
        Value start = convertScalar(nb, nl, scalars[0], i.getType());
        Value delta = convertScalar(nb, nl, scalars[2], i.getType());
        Value value =
            isa<FloatType>(i.getType())
                ? arith::AddFOp::create(nb, nl, start,
                                        arith::MulFOp::create(nb, nl, i, delta))
                      .getResult()
                : arith::AddIOp::create(nb, nl, start,
                                        arith::MulIOp::create(nb, nl, i, delta))
                      .getResult();
        linalg::YieldOp::create(nb, nl,
                                convertScalar(nb, nl, value, elementType));
      });
  return SmallVector<Value>{generic.getResult(0)};
}

void amp::lowering::populateDataMovementLowerings(LoweringTable &table) {
  table.add("com.microsoft", "ConcatTraining", lowerConcat);
  table.add("com.microsoft", "SliceGrad", lowerSliceGrad);
  table.add("", "Range", lowerRange);
  table.add("", "Constant", lowerConstant);
  table.add("", "ConstantOfShape", lowerConstantOfShape);
  table.add("", "EyeLike", lowerEyeLike);
  for (StringRef window : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    table.add("", window, lowerWindow);
  table.add("", "ReverseSequence", lowerReverseSequence);
  table.add("", "CenterCropPad", lowerCenterCropPad);
  table.add("", "Shape", lowerShape);
  table.add("", "Size", lowerShape);
  table.add("com.microsoft", "BroadcastGradientArgs",
            lowerBroadcastGradientArgs);
  table.add("", "Identity", [](NodeLowering &node) -> LoweringResult {
    return SmallVector<Value>{node.operand(0)};
  });
  table.add("", "Reshape", lowerReshape);
  table.add("", "Flatten", lowerFlatten);
  table.add("", "Squeeze", lowerSqueeze);
  table.add("", "Unsqueeze", lowerSqueeze);
  table.add("", "Transpose", lowerTranspose);
  table.add("", "Expand", lowerExpand);
  table.add("", "Tile", lowerTile);
  table.add("", "Concat", lowerConcat);
  table.add("", "Split", lowerSplit);
  // ConcatTraining's gradient: Split with its lengths as the split input.
  table.add("com.microsoft", "SplitTraining", lowerSplit);
  table.add("", "Slice", lowerSlice);
  table.add("", "Pad", lowerPad);
  table.add("", "DepthToSpace", lowerDepthToSpace);
  table.add("", "SpaceToDepth", lowerDepthToSpace);
  table.add("", "Resize", lowerResize);
  table.add("", "GridSample", lowerGridSample);
  table.add("", "AffineGrid", lowerAffineGrid);
  table.add("", "Upsample", lowerResize);
  table.add("com.microsoft", "ResizeGrad", lowerResizeGrad);
  table.add("com.microsoft", "GatherNDGrad", lowerGatherNDGrad);
  table.add("", "Gather", lowerGather);
  table.add("", "GatherElements", lowerGatherElements);
  table.add("", "GatherND", lowerGatherND);
  table.add("", "ScatterElements", lowerScatterElements);
  table.add("", "Scatter", lowerScatterElements); // deprecated in opset 11
  table.add("", "ScatterND", lowerScatterND);
  table.add("com.microsoft", "GatherGrad", lowerGatherGrad);
  table.add("com.microsoft", "GatherElementsGrad", lowerGatherElementsGrad);
  table.add("", "OneHot", lowerOneHot);
}
