//===- Normalization.cpp - Lower LayerNormalization and BatchNormalization ===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Mean and variance as f32 reductions, then one elementwise generic that
// normalizes, scales and shifts; BatchNormalization in training mode also
// updates the running statistics.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::amp::lowering;

namespace {
/// Mean and biased variance over some axes, kept as 1s, in the accumulator
/// type (f32, or f64 for f64).
struct Moments {
  Value mean, variance;
};
} // namespace

/// The mean over `axes` of `value`, kept as 1s (the element count divides
/// the buildSum).
static Value buildMeanKept(OpBuilder &b, Location loc, Value value,
                           ArrayRef<int64_t> axes) {
  Value kept = keepDims(b, loc, buildSum(b, loc, value, axes), value, axes);
  auto keptType = cast<RankedTensorType>(kept.getType());
  Value count = convertScalar(b, loc, getElementCount(b, loc, value, axes),
                              keptType.getElementType());
  return buildElementwise(
      b, loc, keptType, kept, [&](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::DivFOp::create(nb, nl, args[0], count).getResult();
      });
}

static Moments buildMoments(OpBuilder &b, Location loc, Value input,
                            ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(input.getType());
  Type accType = getAccumulatorType(type.getElementType());
  Value mean = buildMeanKept(b, loc, input, axes);
  Value squares = buildElementwise(
      b, loc, type.clone(accType), ValueRange{input, mean},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value centered = arith::SubFOp::create(nb, nl, args[0], args[1]);
        return arith::MulFOp::create(nb, nl, centered, centered).getResult();
      });
  return {mean, buildMeanKept(b, loc, squares, axes)};
}

/// 1 / sqrt(variance + epsilon), in the type of `variance`.
static Value buildInvStdDev(OpBuilder &b, Location loc, Value variance,
                            double epsilon) {
  return buildElementwise(
      b, loc, cast<RankedTensorType>(variance.getType()), variance,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value shifted = arith::AddFOp::create(
            nb, nl, args[0], createScalar(nb, nl, args[0].getType(), epsilon));
        return math::RsqrtOp::create(nb, nl, shifted).getResult();
      });
}

/// (x - mean) * invStdDev * scale + bias, rounded to `type`.
static Value buildNormalize(OpBuilder &b, Location loc, RankedTensorType type,
                            Value input, Value mean, Value invStdDev,
                            Value scale, Value bias) {
  SmallVector<Value> operands = {input, mean, invStdDev};
  if (scale)
    operands.push_back(scale);
  if (bias)
    operands.push_back(bias);
  return buildElementwise(
      b, loc, type, operands, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value y = arith::MulFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, args[0], args[1]), args[2]);
        unsigned next = 3;
        if (scale)
          y = arith::MulFOp::create(nb, nl, y, args[next++]);
        if (bias)
          y = arith::AddFOp::create(nb, nl, y, args[next++]);
        return y;
      });
}

/// LayerNormalization, and RMSNormalization (opset 23) and com.microsoft
/// SimplifiedLayerNormalization (RMS normalization: x * rsqrt(mean(x^2) +
/// epsilon) * scale), over the axes
/// from `axis` on. The other outputs are the statistics (Mean and
/// InvStdDev, or the inverse RMS), in f32 unless declared otherwise.
static LoweringResult lowerLayerNorm(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  bool rms = node.getNode().getOpType() == "SimplifiedLayerNormalization" ||
             node.getNode().getOpType() == "RMSNormalization";
  Value input = node.operand(0);
  auto type = getRankedType(input);
  if (!type || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects a float tensor";
  std::optional<int64_t> axis =
      normalizeAxis(node.getInt("axis", -1), type.getRank());
  if (!axis)
    return node.emitError()
           << "axis is out of range for rank " << type.getRank();
  SmallVector<int64_t> axes;
  for (int64_t i = *axis; i < type.getRank(); ++i)
    axes.push_back(i);
  Type accType = getAccumulatorType(type.getElementType());
  Moments moments;
  if (rms) {
    // The mean of the squares about 0: a 0-d zero for the mean.
    Value squares = buildElementwise(
        b, loc, type.clone(accType), input,
        [](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::MulFOp::create(nb, nl, args[0], args[0]).getResult();
        });
    moments = {createFilled(b, loc, {}, createScalar(b, loc, accType, 0)),
               buildMeanKept(b, loc, squares, axes)};
  } else {
    moments = buildMoments(b, loc, input, axes);
  }
  Value invStdDev =
      buildInvStdDev(b, loc, moments.variance, node.getFloat("epsilon", 1e-5));
  SmallVector<Value> results = {buildNormalize(
      b, loc, type.clone(node.resultElementType(0, type.getElementType())),
      input, moments.mean, invStdDev, node.operand(1),
      rms ? Value() : node.operand(2))};
  SmallVector<Value> stats = {invStdDev};
  if (!rms)
    stats.insert(stats.begin(), moments.mean);
  for (auto [i, stat] : llvm::enumerate(stats))
    if (i + 1 < node.getNumResults())
      results.push_back(convertTensor(
          b, loc, stat, node.resultElementType(i + 1, b.getF32Type())));
  results.resize(node.getNumResults());
  return results;
}

/// The gradients of y = x^ * scale + bias with x^ = (X - mean) * invStdDev,
/// whose statistics were taken over `statAxes`: with g = dY * scale,
/// dX = invStdDev * (g - mean(g) - x^ * mean(g * x^)) over `statAxes`, and
/// dscale = sum(dY * x^), dbias = sum(dY) over `paramAxes`, shaped like
/// `scaleType`. `scale`, `mean` and `invStdDev` broadcast against X. A null
/// `mean` is RMS normalization's: x^ = X * invStdDev, and dX has no mean(g)
/// term.
static SmallVector<Value> buildNormalizationGrad(NodeLowering &node, Value dy,
                                                 Value input, Value scale,
                                                 Value mean, Value invStdDev,
                                                 ArrayRef<int64_t> statAxes,
                                                 ArrayRef<int64_t> paramAxes,
                                                 RankedTensorType scaleType) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  auto type = cast<RankedTensorType>(input.getType());
  RankedTensorType accTensor =
      type.clone(getAccumulatorType(type.getElementType()));
  auto multiply = [&](Value x, Value y) {
    return buildElementwise(
        b, loc, accTensor, {x, y},
        [](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::MulFOp::create(nb, nl, args[0], args[1]).getResult();
        });
  };
  Value normalized =
      mean ? buildElementwise(
                 b, loc, accTensor, {input, mean, invStdDev},
                 [](OpBuilder &nb, Location nl, ValueRange args) {
                   return arith::MulFOp::create(
                              nb, nl,
                              arith::SubFOp::create(nb, nl, args[0], args[1]),
                              args[2])
                       .getResult();
                 })
           : multiply(input, invStdDev);
  Value scaled = multiply(dy, scale);
  // The mean of g, which RMS normalization's dX lacks: a 0-d zero.
  Value scaledMean =
      mean ? buildMeanKept(b, loc, scaled, statAxes)
           : createFilled(b, loc, {},
                          createScalar(b, loc, accTensor.getElementType(), 0));
  Value projection =
      buildMeanKept(b, loc, multiply(scaled, normalized), statAxes);
  Value dx = buildElementwise(
      b, loc, type.clone(node.resultElementType(0, type.getElementType())),
      {scaled, scaledMean, normalized, projection, invStdDev},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value centered = arith::SubFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, args[0], args[1]),
            arith::MulFOp::create(nb, nl, args[2], args[3]));
        return arith::MulFOp::create(nb, nl, args[4], centered).getResult();
      });
  auto reduceParams = [&](Value value, unsigned result) {
    Value sum = buildSum(b, loc, value, paramAxes);
    sum = reshapeTo(
        b, loc, sum,
        cast<RankedTensorType>(sum.getType()).clone(scaleType.getShape()));
    return convertTensor(
        b, loc, sum,
        node.resultElementType(result, scaleType.getElementType()));
  };
  SmallVector<Value> results = {dx, reduceParams(multiply(dy, normalized), 1)};
  if (node.getNumResults() > 2)
    results.push_back(reduceParams(dy, 2));
  results.resize(node.getNumResults());
  return results;
}

/// Checks the `count` float operands of a normalization gradient.
static LogicalResult checkNormalizationGradOperands(NodeLowering &node,
                                                    unsigned count) {
  for (unsigned i = 0; i < count; ++i) {
    RankedTensorType type = getRankedType(node.operand(i));
    if (!type || !isa<FloatType>(type.getElementType()))
      return node.emitError()
             << "expects float dY, X, scale, mean and inverse-stddev tensors";
  }
  return success();
}

/// com.microsoft LayerNormalizationGrad(dY, X, scale, mean, inv_std_dev) ->
/// (dX, dscale, dbias), and SimplifiedLayerNormalizationGrad(dY, X, scale,
/// inv_std_dev) -> (dX, dscale) of RMS normalization: statistics over the
/// axes from `axis` on, scale and bias gradients over the outer ones.
static LoweringResult lowerLayerNormGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  bool rms = node.getNode().getOpType() == "SimplifiedLayerNormalizationGrad";
  if (failed(checkNormalizationGradOperands(node, rms ? 4 : 5)))
    return failure();
  Value input = node.operand(1), mean = rms ? Value() : node.operand(3),
        invStdDev = node.operand(rms ? 3 : 4);
  auto type = getRankedType(input);
  int64_t rank = type.getRank();
  std::optional<int64_t> axis = normalizeAxis(node.getInt("axis", -1), rank);
  if (!axis)
    return node.emitError() << "axis is out of range for rank " << rank;
  SmallVector<int64_t> normAxes, outerAxes;
  for (int64_t i = 0; i < rank; ++i)
    (i < *axis ? outerAxes : normAxes).push_back(i);
  // The statistics broadcast over the normalized axes: (outer..., 1...).
  SmallVector<int64_t> statShape(type.getShape().take_front(*axis));
  statShape.append(rank - *axis, 1);
  for (Value *stat : {&mean, &invStdDev}) {
    if (!*stat)
      continue;
    auto statType = cast<RankedTensorType>(stat->getType());
    if (statType.getNumElements() != ShapedType::getNumElements(statShape))
      return node.emitError() << "mean and inv_std_dev must have the shape "
                                 "of X's outer dimensions";
    *stat = reshapeTo(b, loc, *stat, statType.clone(statShape));
  }
  Value scale = node.operand(2);
  return buildNormalizationGrad(node, node.operand(0), input, scale, mean,
                                invStdDev, normAxes, outerAxes,
                                getRankedType(scale));
}

/// (C) -> (C, 1, ..., 1) so that it broadcasts over N and the spatial
/// dimensions of a rank-`rank` input.
static Value asChannelVector(OpBuilder &b, Location loc, Value value,
                             int64_t rank) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape = {type.getDimSize(0)};
  shape.append(rank - 2, 1);
  return reshapeTo(b, loc, value, type.clone(shape));
}

/// BatchNormalization (inference or training_mode) and com.microsoft
/// BatchNormInternal (training; also the saved mean and inverse stddev).
static LoweringResult lowerBatchNorm(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  auto type = getRankedType(input);
  if (!type || type.getRank() < 2 || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects a float tensor of rank >= 2";
  for (unsigned i = 1; i < 5; ++i) {
    RankedTensorType operandType = getRankedType(node.operand(i));
    if (!operandType || operandType.getRank() != 1)
      return node.emitError() << "scale, B, mean and var must be vectors";
  }
  int64_t rank = type.getRank();
  double epsilon = node.getFloat("epsilon", 1e-5);
  double momentum = node.getFloat("momentum", 0.9);
  bool internal = node.getNode().getDomain() == "com.microsoft";
  bool training = internal || node.getInt("training_mode", 0) != 0;
  Value scale = asChannelVector(b, loc, node.operand(1), rank);
  Value bias = asChannelVector(b, loc, node.operand(2), rank);
  if (!training) {
    Value mean = asChannelVector(b, loc, node.operand(3), rank);
    Value invStdDev = buildInvStdDev(
        b, loc,
        convertTensor(b, loc, asChannelVector(b, loc, node.operand(4), rank),
                      b.getF32Type()),
        epsilon);
    SmallVector<Value> results = {
        buildNormalize(b, loc, type, input, mean, invStdDev, scale, bias)};
    results.resize(node.getNumResults());
    return results;
  }
  SmallVector<int64_t> axes = {0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  Moments moments = buildMoments(b, loc, input, axes);
  Value invStdDev = buildInvStdDev(b, loc, moments.variance, epsilon);
  SmallVector<Value> results = {buildNormalize(
      b, loc, type, input, moments.mean, invStdDev, scale, bias)};
  // running = running * momentum + batch * (1 - momentum)
  auto updateRunning = [&](Value running, Value batch) {
    auto runningType = cast<RankedTensorType>(running.getType());
    Value flat = reshapeTo(b, loc, batch, runningType.clone(b.getF32Type()));
    return buildElementwise(
        b, loc, runningType, ValueRange{running, flat},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Type f32 = args[1].getType();
          Value kept = arith::MulFOp::create(
              nb, nl, args[0], createScalar(nb, nl, f32, momentum));
          Value added = arith::MulFOp::create(
              nb, nl, args[1], createScalar(nb, nl, f32, 1 - momentum));
          return arith::AddFOp::create(nb, nl, kept, added).getResult();
        });
  };
  results.push_back(updateRunning(node.operand(3), moments.mean));
  results.push_back(updateRunning(node.operand(4), moments.variance));
  if (internal) {
    auto vectorType = cast<RankedTensorType>(node.operand(3).getType());
    results.push_back(
        reshapeTo(b, loc, moments.mean, vectorType.clone(b.getF32Type())));
    results.push_back(
        reshapeTo(b, loc, invStdDev, vectorType.clone(b.getF32Type())));
  }
  for (unsigned i = 1; i < results.size() && i < node.getNumResults(); ++i)
    if (RankedTensorType resultType = node.resultType(i))
      results[i] =
          convertTensor(b, loc, results[i], resultType.getElementType());
  results.resize(node.getNumResults());
  return results;
}

/// com.microsoft BatchNormalizationGrad(dY, X, scale, saved_mean,
/// saved_inv_std) -> (dX, dscale, dbias): per-channel statistics over N
/// and the spatial axes.
static LoweringResult lowerBatchNormGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  if (failed(checkNormalizationGradOperands(node, 5)))
    return failure();
  Value input = node.operand(1);
  int64_t rank = getRankedType(input).getRank();
  if (rank < 2)
    return node.emitError() << "expects X of rank >= 2";
  for (unsigned i = 2; i < 5; ++i)
    if (getRankedType(node.operand(i)).getRank() != 1)
      return node.emitError() << "scale, mean and inverse stddev must be "
                                 "vectors";
  SmallVector<int64_t> axes = {0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  auto channels = [&](unsigned i) {
    return asChannelVector(b, loc, node.operand(i), rank);
  };
  return buildNormalizationGrad(node, node.operand(0), input, channels(2),
                                channels(3), channels(4), axes, axes,
                                getRankedType(node.operand(2)));
}

/// The float input of a normalization over channels (rank >= 3 for those
/// with per-channel parameters), or null after an error.
static RankedTensorType getNormalizedType(NodeLowering &node, int64_t minRank) {
  RankedTensorType type = getRankedType(node.operand(0));
  if (!type || !isa<FloatType>(type.getElementType()) ||
      type.getRank() < minRank || !type.hasStaticShape()) {
    node.emitError() << "expects a float tensor of static shape and rank >= "
                     << minRank;
    return {};
  }
  return type;
}

/// InstanceNormalization(x, scale, B): each (n, c) normalized over the
/// spatial dimensions, then scaled and shifted per channel.
static LoweringResult lowerInstanceNorm(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  RankedTensorType type = getNormalizedType(node, 3);
  if (!type)
    return failure();
  Value input = node.operand(0), scale = node.operand(1),
        bias = node.operand(2);
  if (!getRankedType(scale) || !getRankedType(bias))
    return node.emitError() << "expects scale and B";
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < type.getRank(); ++i)
    axes.push_back(i);
  Moments moments = buildMoments(b, loc, input, axes);
  Value invStdDev =
      buildInvStdDev(b, loc, moments.variance, node.getFloat("epsilon", 1e-5));
  return SmallVector<Value>{buildNormalize(
      b, loc, type.clone(node.resultElementType(0, type.getElementType())),
      input, moments.mean, invStdDev,
      asChannelVector(b, loc, scale, type.getRank()),
      asChannelVector(b, loc, bias, type.getRank()))};
}

/// GroupNormalization(x, scale, bias): the channels of each sample in
/// num_groups groups, each group normalized over its channels and the
/// spatial dimensions; scale and bias per channel (opset 21) or per group
/// (opset 18).
static LoweringResult lowerGroupNorm(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  RankedTensorType type = getNormalizedType(node, 3);
  if (!type)
    return failure();
  Value input = node.operand(0);
  RankedTensorType scaleType = getRankedType(node.operand(1));
  RankedTensorType biasType = getRankedType(node.operand(2));
  int64_t groups = node.getInt("num_groups", 0);
  int64_t channels = type.getDimSize(1), batch = type.getDimSize(0);
  if (groups <= 0 || channels % groups != 0)
    return node.emitError()
           << "num_groups " << groups << " does not divide the " << channels
           << " channels";
  int64_t perGroup = channels / groups;
  if (!scaleType || !biasType || scaleType.getRank() != 1 ||
      scaleType != biasType ||
      (scaleType.getDimSize(0) != channels &&
       scaleType.getDimSize(0) != groups))
    return node.emitError()
           << "scale and bias must both have " << channels << " (channels) or "
           << groups << " (groups) elements";
  int64_t spatial = type.getNumElements() / (batch * channels);
  // [N, C, ...] -> [N, G, C/G, S]: statistics over the last two.
  auto grouped =
      type.clone(SmallVector<int64_t>{batch, groups, perGroup, spatial});
  Value groupedInput = reshapeTo(b, loc, input, grouped);
  Moments moments = buildMoments(b, loc, groupedInput, {2, 3});
  Value invStdDev =
      buildInvStdDev(b, loc, moments.variance, node.getFloat("epsilon", 1e-5));
  // Per channel: [1, G, C/G, 1]; per group: [1, G, 1, 1].
  auto paramShape = [&](Value param) {
    bool perChannel = getRankedType(param).getDimSize(0) == channels;
    return reshapeTo(b, loc, param,
                     getRankedType(param).clone(SmallVector<int64_t>{
                         1, groups, perChannel ? perGroup : 1, 1}));
  };
  Value normalized = buildNormalize(
      b, loc, grouped.clone(node.resultElementType(0, type.getElementType())),
      groupedInput, moments.mean, invStdDev, paramShape(node.operand(1)),
      paramShape(node.operand(2)));
  return SmallVector<Value>{
      reshapeTo(b, loc, normalized,
                type.clone(node.resultElementType(0, type.getElementType())))};
}

/// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over
/// `axes` (0, 2, 3 by default), as ONNX's function body computes it.
static LoweringResult lowerMeanVarianceNorm(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  RankedTensorType type = getNormalizedType(node, 1);
  if (!type)
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t axis :
       node.getInts("axes").value_or(SmallVector<int64_t>{0, 2, 3})) {
    std::optional<int64_t> normalized = normalizeAxis(axis, type.getRank());
    if (!normalized)
      return node.emitError() << "axis " << axis << " is out of range for rank "
                              << type.getRank();
    axes.push_back(*normalized);
  }
  llvm::sort(axes);
  axes.erase(llvm::unique(axes), axes.end());
  Value input = node.operand(0);
  Moments moments = buildMoments(b, loc, input, axes);
  return SmallVector<Value>{buildElementwise(
      b, loc, type.clone(node.resultElementType(0, type.getElementType())),
      ValueRange{input, moments.mean, moments.variance},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value deviation = math::SqrtOp::create(nb, nl, args[2]);
        Value shifted = arith::AddFOp::create(
            nb, nl, deviation, createScalar(nb, nl, args[2].getType(), 1e-9));
        return arith::DivFOp::create(
                   nb, nl, arith::SubFOp::create(nb, nl, args[0], args[1]),
                   shifted)
            .getResult();
      })};
}

/// LRN: x / (bias + alpha / size * s)^beta, s the sum of squares over the
/// `size` channels around each (floor((size-1)/2) before, the rest after):
/// the squares padded with zeros along C, then a window reduction.
static LoweringResult lowerLRN(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  RankedTensorType type = getNormalizedType(node, 3);
  if (!type)
    return failure();
  int64_t size = node.getInt("size", 0);
  if (size <= 0)
    return node.emitError() << "size must be positive";
  double alpha = node.getFloat("alpha", 1e-4),
         beta = node.getFloat("beta", 0.75), bias = node.getFloat("bias", 1);
  Value input = node.operand(0);
  int64_t rank = type.getRank();
  Type accType = getAccumulatorType(type.getElementType());
  Value squares = buildElementwise(
      b, loc, type.clone(accType), input,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::MulFOp::create(nb, nl, args[0], args[0]).getResult();
      });
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = (size - 1) / 2;
  high[1] = size - 1 - low[1];
  Value padded =
      padTensor(b, loc, squares, low, high, createScalar(b, loc, accType, 0));
  // Loops: the output's, then the window j; the padded squares are read at
  // channel c + j.
  SmallVector<AffineExpr> paddedExprs, outExprs;
  for (int64_t i = 0; i < rank; ++i) {
    outExprs.push_back(b.getAffineDimExpr(i));
    paddedExprs.push_back(i == 1
                              ? b.getAffineDimExpr(1) + b.getAffineDimExpr(rank)
                              : b.getAffineDimExpr(i));
  }
  SmallVector<utils::IteratorType> iterators(rank + 1,
                                             utils::IteratorType::parallel);
  iterators[rank] = utils::IteratorType::reduction;
  // A tensor of the window's shape gives loop j its bound.
  SmallVector<AffineExpr> windowExprs = {b.getAffineDimExpr(rank)};
  Value window = createEmpty(b, loc, {b.getIndexAttr(size)}, accType);
  Value acc = createFilled(b, loc, getSizes(b, loc, input),
                           createScalar(b, loc, accType, 0));
  MLIRContext *ctx = b.getContext();
  auto sums = linalg::GenericOp::create(
      b, loc, acc.getType(), ValueRange{padded, window}, acc,
      SmallVector<AffineMap>{AffineMap::get(rank + 1, 0, paddedExprs, ctx),
                             AffineMap::get(rank + 1, 0, windowExprs, ctx),
                             AffineMap::get(rank + 1, 0, outExprs, ctx)},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(
            nb, nl,
            arith::AddFOp::create(nb, nl, args[2], args[0]).getResult());
      });
  return SmallVector<Value>{buildElementwise(
      b, loc, type.clone(node.resultElementType(0, type.getElementType())),
      ValueRange{input, sums.getResult(0)},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Type t = args[1].getType();
        Value base = arith::AddFOp::create(
            nb, nl, createScalar(nb, nl, t, bias),
            arith::MulFOp::create(nb, nl, createScalar(nb, nl, t, alpha / size),
                                  args[1]));
        Value denominator =
            math::PowFOp::create(nb, nl, base, createScalar(nb, nl, t, beta));
        return arith::DivFOp::create(nb, nl, convertScalar(nb, nl, args[0], t),
                                     denominator)
            .getResult();
      })};
}

void amp::lowering::populateNormalizationLowerings(LoweringTable &table) {
  table.add("", "InstanceNormalization", lowerInstanceNorm);
  table.add("", "GroupNormalization", lowerGroupNorm);
  table.add("", "MeanVarianceNormalization", lowerMeanVarianceNorm);
  table.add("", "LRN", lowerLRN);
  table.add("", "LayerNormalization", lowerLayerNorm);
  table.add("com.microsoft", "LayerNormalizationGrad", lowerLayerNormGrad);
  table.add("com.microsoft", "SimplifiedLayerNormalization", lowerLayerNorm);
  table.add("", "RMSNormalization", lowerLayerNorm);
  table.add("com.microsoft", "SimplifiedLayerNormalizationGrad",
            lowerLayerNormGrad);
  table.add("", "BatchNormalization", lowerBatchNorm);
  table.add("com.microsoft", "BatchNormInternal", lowerBatchNorm);
  table.add("com.microsoft", "BatchNormalizationGrad", lowerBatchNormGrad);
}
