//===- Random.cpp - Lower the random ops ----------------------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Dropout, com.microsoft BitmaskDropout, BiasDropout and their gradients
// DropoutGrad and BitmaskDropoutGrad; the generators RandomUniform(Like),
// RandomNormal(Like), Bernoulli and Multinomial. Draws come from a
// counter-based generator: draw i of a node is u_i = splitmix64(streamKey + (i
// + 1) * golden) / 2^64 (24 bits; 53 for doubles), where the stream key mixes
// the seed (the node's `seed` attribute, else the function's `amp.random_key`
// argument), the key's step counter and the node's stream number. Element i of
// a mask keeps its value when u_i >= ratio; a normal draw takes u_2i and u_2i+1
// (Box-Muller). So a draw depends only on (seed, counter, node, element):
// the same on every run and on any device, and new at every step.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp::lowering;

/// An i64 constant of all 64 bits of `value` (createScalar goes through a
/// double, which would round them).
static Value createI64(OpBuilder &b, Location loc, uint64_t value) {
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(b.getI64Type(), int64_t(value)));
}

/// splitmix64's finalizer, a bijective mix of 64 bits.
static Value mix64(OpBuilder &b, Location loc, Value x) {
  auto xorShift = [&](Value v, unsigned shift) {
    return arith::XOrIOp::create(
        b, loc, v, arith::ShRUIOp::create(b, loc, v, createI64(b, loc, shift)));
  };
  x = arith::MulIOp::create(b, loc, xorShift(x, 30),
                            createI64(b, loc, 0xBF58476D1CE4E5B9ULL));
  x = arith::MulIOp::create(b, loc, xorShift(x, 27),
                            createI64(b, loc, 0x94D049BB133111EBULL));
  return xorShift(x, 31);
}

static constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

/// The i64 key of the random stream of `node`, as a 0-d tensor that a
/// generic computes from the function's key: in a kernel on the GPU, so
/// that a compiled step reads no buffer on the host (docs/AmpCompile.md).
static Value getStreamKey(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value key = node.getRandomKey();
  std::optional<int64_t> fixedSeed;
  if (node.getAttr("seed"))
    fixedSeed = node.getInt("seed", 0);
  uint64_t stream = node.takeRandomStream();
  ArrayRef<Value> iterations = node.getRandomSource()->getIterations();
  Value init = createEmpty(b, loc, {}, b.getI64Type());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, init,
             {AffineMap::get(b.getContext())}, ArrayRef<utils::IteratorType>{},
             [&](OpBuilder &nb, Location nl, ValueRange) {
               auto element = [&](int64_t i) -> Value {
                 return tensor::ExtractOp::create(
                     nb, nl, key,
                     ValueRange{arith::ConstantIndexOp::create(nb, nl, i)});
               };
               Value seed =
                   fixedSeed ? createI64(nb, nl, *fixedSeed) : element(0);
               // seed, then counter, then stream, each folded in through
               // the mix.
               Value state =
                   mix64(nb, nl,
                         arith::AddIOp::create(nb, nl, seed,
                                               createI64(nb, nl, kGolden)));
               state = mix64(nb, nl,
                             arith::XOrIOp::create(nb, nl, state, element(1)));
               state = mix64(nb, nl,
                             arith::XOrIOp::create(nb, nl, state,
                                                   createI64(nb, nl, stream)));
               // Then the iteration of each loop around the node.
               for (Value iteration : iterations) {
                 SmallVector<Value> zeros(
                     getRankedType(iteration).getRank(),
                     arith::ConstantIndexOp::create(nb, nl, 0));
                 Value number =
                     tensor::ExtractOp::create(nb, nl, iteration, zeros);
                 state = mix64(nb, nl,
                               arith::XOrIOp::create(nb, nl, state, number));
               }
               linalg::YieldOp::create(nb, nl, state);
             })
      .getResult(0);
}

/// Draw `index` (i64) of the stream `streamKey`: uniform in [0, 1), of
/// `bits` bits (at most 24 in f32, 53 in f64), so that a type of that many
/// significand bits holds it exactly (never rounds it up to 1).
static Value drawUniform(OpBuilder &b, Location loc, Value streamKey,
                         Value index, unsigned bits = 24, FloatType type = {}) {
  if (!type)
    type = b.getF32Type();
  Value step = arith::MulIOp::create(
      b, loc, arith::AddIOp::create(b, loc, index, createI64(b, loc, 1)),
      createI64(b, loc, kGolden));
  Value mixed = mix64(b, loc, arith::AddIOp::create(b, loc, streamKey, step));
  Value top =
      arith::ShRUIOp::create(b, loc, mixed, createI64(b, loc, 64 - bits));
  return arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, type, top),
      createScalar(b, loc, type, std::ldexp(1.0, -int(bits))));
}

/// Whether element `index` (i64) of the stream `streamKey` is kept: its
/// uniform draw is at least `ratio` (f32).
static Value isKept(OpBuilder &b, Location loc, Value streamKey, Value index,
                    Value ratio) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                               drawUniform(b, loc, streamKey, index), ratio);
}

/// A standard normal draw (f32) for element `index` of `streamKey`, by
/// Box-Muller from draws 2 index and 2 index + 1: sqrt(-2 ln(1 - u)) cos(2
/// pi v), at most 5.8 in magnitude (24-bit draws).
static Value drawNormal(OpBuilder &b, Location loc, Value streamKey,
                        Value index) {
  Type f32 = b.getF32Type();
  Value first = arith::MulIOp::create(b, loc, index, createI64(b, loc, 2));
  Value second = arith::AddIOp::create(b, loc, first, createI64(b, loc, 1));
  Value u = drawUniform(b, loc, streamKey, first);
  Value v = drawUniform(b, loc, streamKey, second);
  Value radius = math::SqrtOp::create(
      b, loc,
      arith::MulFOp::create(
          b, loc, createScalar(b, loc, f32, -2),
          math::LogOp::create(
              b, loc,
              arith::SubFOp::create(b, loc, createScalar(b, loc, f32, 1), u))));
  Value angle = arith::MulFOp::create(
      b, loc, createScalar(b, loc, f32, 2 * 3.14159265358979323846), v);
  return arith::MulFOp::create(b, loc, radius,
                               math::CosOp::create(b, loc, angle));
}

/// The row-major position (i64) of the current element of a generic whose
/// loops span `sizes`.
static Value getLinearIndex(OpBuilder &b, Location loc, ArrayRef<Value> sizes) {
  Value position = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [i, size] : llvm::enumerate(sizes))
    position = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, position, size),
        linalg::IndexOp::create(b, loc, i));
  return convertScalar(b, loc, position, b.getI64Type());
}

/// What a body computes from the row-major position of its element (i64)
/// and the values of the generic's 0-d inputs.
using IndexedBody =
    function_ref<Value(OpBuilder &, Location, Value, ValueRange)>;

/// A tensor of `sizes` and `elementType` whose element at row-major
/// position i (i64) is `element(i, scalars)`, converted to `elementType`;
/// `scalars` are 0-d tensors (a stream key, a ratio) read in the body.
static Value buildIndexed(OpBuilder &b, Location loc,
                          ArrayRef<OpFoldResult> sizes, Type elementType,
                          ValueRange scalars, IndexedBody element) {
  SmallVector<Value> sizeValues;
  for (OpFoldResult size : sizes)
    sizeValues.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
  Value init = createEmpty(b, loc, sizes, elementType);
  int64_t rank = sizes.size();
  SmallVector<AffineMap> maps(scalars.size(),
                              AffineMap::get(rank, 0, b.getContext()));
  maps.push_back(b.getMultiDimIdentityMap(rank));
  return linalg::GenericOp::create(
             b, loc, init.getType(), scalars, init, maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value value = element(nb, nl, getLinearIndex(nb, nl, sizeValues),
                                     args.drop_back());
               linalg::YieldOp::create(
                   nb, nl, convertScalar(nb, nl, value, elementType));
             })
      .getResult(0);
}

/// An i1 tensor of `sizes` whose element at row-major position i (i64) is
/// `isSet(i, scalars)`.
static Value buildMask(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                       ValueRange scalars, IndexedBody isSet) {
  return buildIndexed(b, loc, sizes, b.getI1Type(), scalars, isSet);
}

/// The keep mask (i1) of a tensor of `sizes` for the stream `streamKey`
/// (0-d i64) and `ratio` (0-d f32).
static Value buildKeepMask(OpBuilder &b, Location loc, Value streamKey,
                           ArrayRef<OpFoldResult> sizes, Value ratio) {
  return buildMask(
      b, loc, sizes, {streamKey, ratio},
      [](OpBuilder &nb, Location nl, Value index, ValueRange scalars) {
        return isKept(nb, nl, scalars[0], index, scalars[1]);
      });
}

/// select(keep, x * (1 / (1 - ratio)), 0) (+ residual) element by element, as
/// `type`; `ratio` is a 0-d f32 tensor, or null for ratio 0.
static Value applyKeepMask(OpBuilder &b, Location loc, RankedTensorType type,
                           Value x, Value keep, Value ratio,
                           Value residual = nullptr) {
  SmallVector<Value> operands = {x, keep};
  if (ratio)
    operands.push_back(ratio);
  if (residual)
    operands.push_back(residual);
  return buildElementwise(
      b, loc, type, operands, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Type computeType = args[0].getType();
        Value kept = args[0];
        if (ratio) {
          // The scale 1 / (1 - ratio) in f32, as ONNX Runtime and PyTorch.
          Type f32 = nb.getF32Type();
          Value one = createScalar(nb, nl, f32, 1);
          Value scale = arith::DivFOp::create(
              nb, nl, one,
              arith::SubFOp::create(nb, nl, one,
                                    convertScalar(nb, nl, args[2], f32)));
          kept = arith::MulFOp::create(
              nb, nl, kept, convertScalar(nb, nl, scale, computeType));
        }
        Value y = arith::SelectOp::create(nb, nl, args[1], kept,
                                          createScalar(nb, nl, computeType, 0));
        if (residual)
          y = arith::AddFOp::create(nb, nl, y, args.back());
        return y;
      });
}

/// The ratio of a dropout node as a 0-d f32 tensor: operand `i` (a
/// constant must be in [0, 1); a tensor is read at run time, in a kernel),
/// else the attribute, else 0.5. A training_mode operand `trainingIndex`
/// known only at run time selects ratio 0 (nothing drops, scale 1) when it
/// is false.
static FailureOr<Value> getDropoutRatio(NodeLowering &node, unsigned i,
                                        unsigned trainingIndex) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Type f32 = b.getF32Type();
  auto scalarType = RankedTensorType::get({}, f32);
  Value ratio;
  double constant = node.getFloat("ratio", 0.5);
  if (Value ratioValue = node.operand(i)) {
    RankedTensorType type = getRankedType(ratioValue);
    if (!type || type.getNumElements() != 1 ||
        !isa<FloatType>(type.getElementType()))
      return node.emitError() << "the ratio must be a float scalar";
    auto constantOp = ratioValue.getDefiningOp<arith::ConstantOp>();
    auto dense = constantOp ? dyn_cast<DenseElementsAttr>(constantOp.getValue())
                            : DenseElementsAttr();
    if (dense)
      constant = dense.getSplatValue<APFloat>().convertToDouble();
    else
      ratio = convertTensor(b, loc,
                            reshapeTo(b, loc, ratioValue,
                                      scalarType.clone(type.getElementType())),
                            f32);
  }
  if (!ratio) {
    if (constant < 0 || constant >= 1)
      return node.emitError()
             << "the ratio must be in [0, 1), not " << constant;
    ratio = createConstant(
        b, loc,
        DenseElementsAttr::get(scalarType, b.getF32FloatAttr(constant)));
  }
  Value training = node.operand(trainingIndex);
  if (training && !node.getConstantInts(trainingIndex)) {
    RankedTensorType trainingType = getRankedType(training);
    ratio = buildElementwise(
        b, loc, scalarType,
        {reshapeTo(b, loc, training,
                   scalarType.clone(trainingType.getElementType())),
         ratio},
        [](OpBuilder &nb, Location nl, ValueRange args) {
          Value on = convertScalar(nb, nl, args[0], nb.getI1Type());
          return arith::SelectOp::create(
                     nb, nl, on, args[1],
                     createScalar(nb, nl, args[1].getType(), 0))
              .getResult();
        });
  }
  return ratio;
}

/// Whether the training_mode operand `i` may be true: absent is `absent`,
/// and one known only at run time counts as true (getDropoutRatio then
/// selects ratio 0 when it is false).
static bool isTrainingMode(NodeLowering &node, unsigned i, bool absent) {
  if (!node.operand(i))
    return absent;
  std::optional<SmallVector<int64_t>> training = node.getConstantInts(i);
  return !training || training->empty() || (*training)[0] != 0;
}

/// Checks the float data operand of a dropout node.
static FailureOr<RankedTensorType> getDataType(NodeLowering &node, Value data) {
  RankedTensorType type = getRankedType(data);
  if (!type || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects a float tensor";
  return type;
}

/// Bits per word of a bitmask.
static constexpr int64_t kMaskBits = 32;

/// BitmaskDropout's mask words as `element` (ui32 as ONNX types them, i32
/// as arith computes them), element by element: a tensor.bitcast does not
/// bufferize.
static Value reinterpretWords(OpBuilder &b, Location loc, Value mask,
                              Type element) {
  auto type = cast<RankedTensorType>(mask.getType());
  return buildElementwise(b, loc, type.clone(element), mask,
                          [&](OpBuilder &nb, Location nl, ValueRange args) {
                            return reinterpretInteger(nb, nl, args[0], element);
                          });
}

/// BitmaskDropout's mask of `input`: one bit per element, element i at bit
/// i % 32 of word i / 32, set where the stream `streamKey` keeps it (every
/// element without a stream); bits past the end are 0. `type` is the
/// declared mask type, uint32 for ONNX Runtime.
static Value buildBitmask(OpBuilder &b, Location loc, Value input,
                          Value streamKey, Value ratio, RankedTensorType type) {
  // words[w] = OR_j set(32 w + j) << j.
  int64_t rank = getRankedType(input).getRank();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value count = convertScalar(
      b, loc,
      getElementCount(b, loc, input,
                      llvm::to_vector(llvm::seq<int64_t>(0, rank))),
      i64);
  Value words = arith::DivUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, count,
                            createScalar(b, loc, i64, kMaskBits - 1)),
      createScalar(b, loc, i64, kMaskBits));
  OpFoldResult wordCount =
      getAsOpFoldResult(convertScalar(b, loc, words, b.getIndexType()));
  Value bitSpace =
      createEmpty(b, loc, {wordCount, b.getIndexAttr(kMaskBits)}, i32);
  Value init = createFilled(b, loc, {wordCount}, createScalar(b, loc, i32, 0));
  MLIRContext *ctx = b.getContext();
  // The stream key and the ratio as 0-d inputs, after the bit space.
  SmallVector<Value> inputs = {bitSpace};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(2)};
  if (streamKey) {
    inputs.append({streamKey, ratio});
    maps.append(2, AffineMap::get(2, 0, ctx));
  }
  maps.push_back(AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, ctx));
  Value mask =
      linalg::GenericOp::create(
          b, loc, init.getType(), inputs, init, maps,
          {utils::IteratorType::parallel, utils::IteratorType::reduction},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value bit =
                convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, 1), i64);
            Value word =
                convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, 0), i64);
            Value index = arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(nb, nl, word,
                                      createScalar(nb, nl, i64, kMaskBits)),
                bit);
            Value set = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                              index, count);
            if (streamKey)
              set = arith::AndIOp::create(
                  nb, nl, set, isKept(nb, nl, args[1], index, args[2]));
            Value shifted = arith::ShLIOp::create(
                nb, nl, arith::ExtUIOp::create(nb, nl, i32, set),
                convertScalar(nb, nl, bit, i32));
            linalg::YieldOp::create(
                nb, nl,
                arith::OrIOp::create(nb, nl, args.back(), shifted).getResult());
          })
          .getResult(0);
  if (type && type.getElementType().isUnsignedInteger(32))
    mask = reinterpretWords(b, loc, mask, type.getElementType());
  return mask;
}

/// Dropout and com.microsoft BitmaskDropout(data, ratio?, training_mode?)
/// -> (output, mask): the mask is bool for Dropout and packed bits
/// (buildBitmask) for BitmaskDropout. Outside training mode (training_mode
/// false or absent) nothing drops and the mask is all set.
static LoweringResult lowerDropout(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  FailureOr<RankedTensorType> type = getDataType(node, input);
  if (failed(type))
    return failure();
  bool isBitmask = node.getNode().getOpType() == "BitmaskDropout";
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  bool wantMask = node.getNumResults() > 1 && node.isResultUsed(1);
  Value streamKey, ratio, keep;
  SmallVector<Value> results = {input};
  if (isTrainingMode(node, 2, /*absent=*/false)) {
    FailureOr<Value> ratioValue = getDropoutRatio(node, 1, 2);
    if (failed(ratioValue))
      return failure();
    ratio = *ratioValue;
    streamKey = getStreamKey(node);
    keep = buildKeepMask(b, loc, streamKey, sizes, ratio);
    results[0] = applyKeepMask(
        b, loc, type->clone(node.resultElementType(0, type->getElementType())),
        input, keep, ratio);
  }
  if (wantMask && isBitmask)
    results.push_back(
        buildBitmask(b, loc, input, streamKey, ratio, node.resultType(1)));
  else if (wantMask)
    results.push_back(keep ? keep
                           : createFilled(b, loc, sizes,
                                          arith::ConstantOp::create(
                                              b, loc, b.getBoolAttr(true))));
  results.resize(node.getNumResults());
  return results;
}

/// com.microsoft BiasDropout(data, bias, residual?, ratio?, training_mode?)
/// -> (output, mask): dropout of data + bias, plus the residual.
static LoweringResult lowerBiasDropout(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value data = node.operand(0), bias = node.operand(1),
        residual = node.operand(2);
  FailureOr<RankedTensorType> type = getDataType(node, data);
  if (failed(type))
    return failure();
  if (!getRankedType(bias) || !getBroadcastType({data, bias}, *type) ||
      (residual && !getBroadcastType({data, residual}, *type)))
    return node.emitError() << "bias and residual must broadcast to the data";
  FailureOr<Value> ratio = getDropoutRatio(node, 3, 4);
  if (failed(ratio))
    return failure();
  bool training = isTrainingMode(node, 4, /*absent=*/false);
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, data);
  Value keep =
      training ? buildKeepMask(b, loc, getStreamKey(node), sizes, *ratio)
               : createFilled(
                     b, loc, sizes,
                     arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  Value sum = buildElementwise(
      b, loc, type->clone(getComputeType(type->getElementType())),
      ValueRange{data, bias}, [](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::AddFOp::create(nb, nl, args[0], args[1]).getResult();
      });
  SmallVector<Value> results = {applyKeepMask(
      b, loc, type->clone(node.resultElementType(0, type->getElementType())),
      sum, keep, training ? *ratio : Value(), residual)};
  results.push_back(keep);
  results.resize(node.getNumResults());
  return results;
}

/// com.microsoft DropoutGrad and BitmaskDropoutGrad(dY, mask, ratio?,
/// training_mode?): dY where the mask (bool, or BitmaskDropout's words) kept
/// the element, scaled by 1 / (1 - ratio); dY itself outside training mode.
static LoweringResult lowerDropoutGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0), mask = node.operand(1);
  FailureOr<RankedTensorType> type = getDataType(node, dy);
  if (failed(type))
    return failure();
  bool isBitmask = node.getNode().getOpType() == "BitmaskDropoutGrad";
  RankedTensorType maskType = getRankedType(mask);
  if (!maskType || (isBitmask ? maskType.getRank() != 1 ||
                                    !maskType.getElementType().isInteger(32)
                              : !maskType.getElementType().isInteger(1)))
    return node.emitError()
           << (isBitmask ? "expects a 1-D 32-bit mask" : "expects a bool mask");
  FailureOr<Value> ratio = getDropoutRatio(node, 2, 3);
  if (failed(ratio))
    return failure();
  if (!isTrainingMode(node, 3, /*absent=*/true))
    return SmallVector<Value>{dy};
  if (isBitmask) {
    if (maskType.getElementType().isUnsignedInteger())
      mask = reinterpretWords(b, loc, mask, b.getI32Type());
    // Bit i % 32 of word i / 32.
    mask = buildMask(
        b, loc, getSizes(b, loc, dy), {},
        [&](OpBuilder &nb, Location nl, Value index, ValueRange) -> Value {
          Value bits = createScalar(nb, nl, nb.getI64Type(), kMaskBits);
          Value word = tensor::ExtractOp::create(
              nb, nl, mask,
              ValueRange{convertScalar(
                  nb, nl, arith::DivUIOp::create(nb, nl, index, bits),
                  nb.getIndexType())});
          Value bit =
              convertScalar(nb, nl, arith::RemUIOp::create(nb, nl, index, bits),
                            nb.getI32Type());
          Value shifted = arith::ShRUIOp::create(nb, nl, word, bit);
          return arith::TruncIOp::create(nb, nl, nb.getI1Type(), shifted);
        });
  }
  return SmallVector<Value>{applyKeepMask(
      b, loc, type->clone(node.resultElementType(0, type->getElementType())),
      dy, mask, *ratio)};
}

/// The element type a generator writes: the declared result type, else its
/// `dtype` attribute, else `fallback`; an error unless `isAllowed`.
static FailureOr<Type> getGeneratedType(NodeLowering &node, Type fallback,
                                        function_ref<bool(Type)> isAllowed,
                                        StringRef allowed) {
  Type type = fallback;
  if (IntegerAttr dtype =
          dyn_cast_or_null<IntegerAttr>(node.getAttr("dtype"))) {
    type =
        onnxg::getElementType(node.getBuilder().getContext(), dtype.getInt());
    if (!type)
      return node.emitError()
             << "dtype " << dtype.getInt() << " is not a tensor element type";
  }
  type = node.resultElementType(0, type);
  if (!isAllowed(type))
    return node.emitError() << "generates " << allowed << ", not " << type;
  return type;
}

/// The sizes a generator fills: its `shape` attribute (RandomUniform,
/// RandomNormal) or the shape of operand 0 (the *Like ops, Bernoulli).
static FailureOr<SmallVector<OpFoldResult>>
getGeneratedSizes(NodeLowering &node, bool fromInput) {
  OpBuilder &b = node.getBuilder();
  if (fromInput) {
    Value input = node.operand(0);
    if (!getRankedType(input))
      return node.emitError() << "expects a ranked input";
    return getSizes(b, node.getLoc(), input);
  }
  std::optional<SmallVector<int64_t>> shape = node.getInts("shape");
  if (!shape)
    return node.emitError() << "expects a 'shape' attribute";
  if (llvm::any_of(*shape, [](int64_t size) { return size < 0; }))
    return node.emitError() << "the shape must not be negative";
  return getAsIndexOpFoldResult(b.getContext(), *shape);
}

static bool isFloat(Type type) { return isa<FloatType>(type); }

/// RandomUniform(Like) and RandomNormal(Like): low + (high - low) u or mean
/// + scale z, computed in f32 (f64 for a double output) and rounded to the
/// generated type (default f32, the input's for the *Like ops); u has the
/// type's significand bits, 53 for doubles (an exporter's integer draws
/// over ranges past 2^24: torch.randint).
static LoweringResult lowerRandomGenerator(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  StringRef opType = node.getNode().getOpType();
  bool fromInput = opType.ends_with("Like");
  bool normal = opType.starts_with("RandomNormal");
  FailureOr<SmallVector<OpFoldResult>> sizes =
      getGeneratedSizes(node, fromInput);
  if (failed(sizes))
    return failure();
  Type fallback = fromInput ? getRankedType(node.operand(0)).getElementType()
                            : b.getF32Type();
  if (!isFloat(fallback))
    fallback = b.getF32Type();
  FailureOr<Type> type = getGeneratedType(node, fallback, isFloat, "floats");
  if (failed(type))
    return failure();
  double offset = normal ? node.getFloat("mean", 0) : node.getFloat("low", 0);
  double width = normal ? node.getFloat("scale", 1)
                        : node.getFloat("high", 1) - node.getFloat("low", 0);
  Value streamKey = getStreamKey(node);
  bool isDouble = type->isF64();
  unsigned bits = std::min<unsigned>(
      isDouble ? 53 : 24, cast<FloatType>(*type).getFPMantissaWidth());
  return SmallVector<Value>{buildIndexed(
      b, loc, *sizes, *type, streamKey,
      [&](OpBuilder &nb, Location nl, Value index, ValueRange scalars) {
        FloatType compute =
            isDouble ? FloatType(nb.getF64Type()) : FloatType(nb.getF32Type());
        Value draw =
            normal ? convertScalar(
                         nb, nl, drawNormal(nb, nl, scalars[0], index), compute)
                   : drawUniform(nb, nl, scalars[0], index, bits, compute);
        return arith::AddFOp::create(
                   nb, nl, createScalar(nb, nl, compute, offset),
                   arith::MulFOp::create(
                       nb, nl, createScalar(nb, nl, compute, width), draw))
            .getResult();
      })};
}

/// Bernoulli(p): 1 where a uniform draw is below p, else 0, in the
/// generated type (default the input's).
static LoweringResult lowerBernoulli(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType inputType = getRankedType(input);
  if (!inputType || !isFloat(inputType.getElementType()))
    return node.emitError() << "expects float probabilities";
  FailureOr<Type> type = getGeneratedType(
      node, inputType.getElementType(),
      [](Type type) { return type.isIntOrIndexOrFloat(); }, "numbers");
  if (failed(type))
    return failure();
  Value streamKey = getStreamKey(node);
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  Value draws = buildIndexed(
      b, loc, sizes, b.getF32Type(), streamKey,
      [](OpBuilder &nb, Location nl, Value index, ValueRange scalars) {
        return drawUniform(nb, nl, scalars[0], index);
      });
  return SmallVector<Value>{buildElementwise(
      b, loc, inputType.clone(*type), ValueRange{draws, input},
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        // Both reach the body as f64 for f64 probabilities.
        Value u = convertScalar(nb, nl, args[0], nb.getF32Type());
        Value p = convertScalar(nb, nl, args[1], nb.getF32Type());
        Value hit =
            arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, u, p);
        return convertScalar(nb, nl, hit, *type);
      })};
}

/// Multinomial: `sample_size` draws per row of the unnormalized
/// log-probabilities [batch, classes], by the Gumbel-max trick: draw s of
/// row b is the first class c with the largest x[b, c] + g, g = -log(-log
/// u) from draw (b * sample_size + s) * classes + c. One reduction over the
/// classes, in any order, with no running sum (a class of log-probability
/// -inf or NaN is never drawn).
static LoweringResult lowerMultinomial(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType inputType = getRankedType(input);
  if (!inputType || inputType.getRank() != 2 ||
      !isFloat(inputType.getElementType()))
    return node.emitError() << "expects float log-probabilities of rank 2";
  int64_t samples = node.getInt("sample_size", 1);
  if (samples < 1)
    return node.emitError() << "sample_size must be positive, not " << samples;
  FailureOr<Type> type = getGeneratedType(
      node, b.getI32Type(),
      [](Type type) {
        return type.isSignlessInteger(32) || type.isSignlessInteger(64);
      },
      "int32 or int64");
  if (failed(type))
    return failure();
  Value streamKey = getStreamKey(node);
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  SmallVector<OpFoldResult> outSizes = {sizes[0], b.getIndexAttr(samples)};
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  Value bestInit =
      createFilled(b, loc, outSizes, createScalar(b, loc, f32, -INFINITY));
  Value indexInit =
      createFilled(b, loc, outSizes, createScalar(b, loc, i64, 0));
  MLIRContext *context = b.getContext();
  AffineExpr row = getAffineDimExpr(0, context),
             sample = getAffineDimExpr(1, context),
             label = getAffineDimExpr(2, context);
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {row, label}, context),
                                 AffineMap::get(3, 0, context),
                                 AffineMap::get(3, 0, {row, sample}, context),
                                 AffineMap::get(3, 0, {row, sample}, context)};
  SmallVector<Value> drawSizes = {
      getValueOrCreateConstantIndexOp(b, loc, sizes[0]),
      arith::ConstantIndexOp::create(b, loc, samples),
      getValueOrCreateConstantIndexOp(b, loc, sizes[1])};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{bestInit.getType(), indexInit.getType()},
      ValueRange{input, streamKey}, ValueRange{bestInit, indexInit}, maps,
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value draw =
            drawUniform(nb, nl, args[1], getLinearIndex(nb, nl, drawSizes));
        // -log(-log(u)): u = 0 gives -inf, never the best.
        Value gumbel = arith::NegFOp::create(
            nb, nl,
            math::LogOp::create(
                nb, nl,
                arith::NegFOp::create(nb, nl,
                                      math::LogOp::create(nb, nl, draw))));
        Value score = arith::AddFOp::create(
            nb, nl, convertScalar(nb, nl, args[0], f32), gumbel);
        Value take = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                           score, args[2]);
        Value index =
            convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, 2), i64);
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, take, score, args[2]),
                       arith::SelectOp::create(nb, nl, take, index, args[3])});
      });
  return SmallVector<Value>{convertTensor(b, loc, generic.getResult(1), *type)};
}

void amp::lowering::populateRandomLowerings(LoweringTable &table) {
  table.add("", "Dropout", lowerDropout);
  table.add("com.microsoft", "BiasDropout", lowerBiasDropout);
  table.add("com.microsoft", "BitmaskDropout", lowerDropout);
  table.add("com.microsoft", "DropoutGrad", lowerDropoutGrad);
  table.add("com.microsoft", "BitmaskDropoutGrad", lowerDropoutGrad);
  for (StringRef opType : {"RandomUniform", "RandomUniformLike", "RandomNormal",
                           "RandomNormalLike"})
    table.add("", opType, lowerRandomGenerator);
  table.add("", "Bernoulli", lowerBernoulli);
  table.add("", "Multinomial", lowerMultinomial);
}
