//===- Optimizers.cpp - Lower optimizer update rules ----------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The ONNX preview-training optimizers (Adagrad, Momentum, Adam; variadic
// over the tensors they update) and ONNX Runtime's AdamOptimizer (one
// tensor per node) and AdamWOptimizer (sequences of tensors). Each update is
// elementwise and runs in f32; scalar factors (bias corrections, decayed
// learning rates) are computed once per node as 0-d tensors.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::amp::lowering;

/// A 0-d f32 tensor computed from the 0-d tensors `scalars`.
static Value
buildScalar(OpBuilder &b, Location loc, ValueRange scalars,
            function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  return buildElementwise(b, loc, RankedTensorType::get({}, b.getF32Type()),
                          scalars, body);
}

/// `value` as f32 (step counts are integers).
static Value toF32(OpBuilder &b, Location loc, Value value) {
  return convertScalar(b, loc, value, b.getF32Type());
}

/// The f32 constant `value`.
static Value f32(OpBuilder &b, Location loc, double value) {
  return createScalar(b, loc, b.getF32Type(), value);
}

/// `coefficient * x + g`: the gradient with L2 regularization added.
static Value regularize(OpBuilder &b, Location loc, float coefficient, Value x,
                        Value g) {
  if (coefficient == 0)
    return g;
  return arith::AddFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, f32(b, loc, coefficient), x).getResult(),
      g);
}

/// The type of result `i`: the declared one, else `like`'s.
static RankedTensorType getUpdateType(NodeLowering &node, unsigned i,
                                      Value like) {
  if (RankedTensorType declared = node.resultType(i))
    return declared;
  return cast<RankedTensorType>(like.getType());
}

namespace {
/// What every preview-training optimizer starts with: the learning rate R
/// and the update count T (0-d), and how many tensors it updates.
struct PreviewOperands {
  Value rate, count;
  unsigned tensors;
};
} // namespace

/// Reads R and T and splits the variadic operands after them into `groups`
/// equal groups (X..., G..., state...); nullopt after an error.
static std::optional<PreviewOperands> getPreviewOperands(NodeLowering &node,
                                                         unsigned groups) {
  unsigned variadic = node.getNumOperands() - 2;
  if (node.getNumOperands() < 2 + groups || variadic % groups != 0) {
    node.emitError() << "expects R, T and " << groups
                     << " groups of equally many tensors";
    return std::nullopt;
  }
  for (unsigned i = 2; i < node.getNumOperands(); ++i) {
    auto type = getRankedType(node.operand(i));
    if (!type || !isa<FloatType>(type.getElementType())) {
      node.emitError() << "input " << i << " must be a float tensor";
      return std::nullopt;
    }
  }
  PreviewOperands operands;
  operands.tensors = variadic / groups;
  operands.rate = getScalarOperand(node, 0, "R");
  operands.count = operands.rate ? getScalarOperand(node, 1, "T") : Value();
  if (!operands.count)
    return std::nullopt;
  return operands;
}

/// ai.onnx.preview.training Adagrad(R, T, X..., G..., H...) ->
/// (X_new..., H_new...).
static LoweringResult lowerAdagrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  std::optional<PreviewOperands> operands = getPreviewOperands(node, 3);
  if (!operands)
    return failure();
  unsigned n = operands->tensors;
  Value rate = operands->rate, count = operands->count;
  float decay = node.getFloat("decay_factor", 0);
  float epsilon = node.getFloat("epsilon", 0);
  float norm = node.getFloat("norm_coefficient", 0);
  // r = R / (1 + T * decay_factor)
  Value decayed = buildScalar(
      b, loc, {rate, count}, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value t = arith::MulFOp::create(nb, nl, toF32(nb, nl, args[1]),
                                        f32(nb, nl, decay));
        return arith::DivFOp::create(
                   nb, nl, toF32(nb, nl, args[0]),
                   arith::AddFOp::create(nb, nl, f32(nb, nl, 1), t))
            .getResult();
      });
  SmallVector<Value> results(2 * n);
  for (unsigned i = 0; i < n; ++i) {
    Value x = node.operand(2 + i), g = node.operand(2 + n + i),
          h = node.operand(2 + 2 * n + i);
    Value hNew = buildElementwise(
        b, loc, getUpdateType(node, n + i, h), {x, g, h},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value gr = regularize(nb, nl, norm, args[0], args[1]);
          return arith::AddFOp::create(nb, nl, args[2],
                                       arith::MulFOp::create(nb, nl, gr, gr))
              .getResult();
        });
    results[i] = buildElementwise(
        b, loc, getUpdateType(node, i, x), {x, g, hNew, decayed},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value gr = regularize(nb, nl, norm, args[0], args[1]);
          Value denominator = arith::AddFOp::create(
              nb, nl, math::SqrtOp::create(nb, nl, args[2]),
              f32(nb, nl, epsilon));
          Value step = arith::DivFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, args[3], gr), denominator);
          return arith::SubFOp::create(nb, nl, args[0], step).getResult();
        });
    results[n + i] = hNew;
  }
  return results;
}

/// ai.onnx.preview.training Momentum(R, T, X..., G..., V...) ->
/// (X_new..., V_new...), standard or Nesterov.
static LoweringResult lowerMomentum(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  StringRef mode = node.getString("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return node.emitError()
           << "mode must be 'standard' or 'nesterov', not '" << mode << "'";
  std::optional<PreviewOperands> operands = getPreviewOperands(node, 3);
  if (!operands)
    return failure();
  unsigned n = operands->tensors;
  Value rate = operands->rate, count = operands->count;
  float alpha = node.getFloat("alpha", 0);
  float beta = node.getFloat("beta", 0);
  float norm = node.getFloat("norm_coefficient", 0);
  // The gradient's coefficient is 1 on the first update (T == 0).
  Value adjustedBeta = buildScalar(
      b, loc, {count}, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value first =
            arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE,
                                  toF32(nb, nl, args[0]), f32(nb, nl, 0));
        return arith::SelectOp::create(nb, nl, first, f32(nb, nl, 1),
                                       f32(nb, nl, beta))
            .getResult();
      });
  SmallVector<Value> results(2 * n);
  for (unsigned i = 0; i < n; ++i) {
    Value x = node.operand(2 + i), g = node.operand(2 + n + i),
          v = node.operand(2 + 2 * n + i);
    Value vNew = buildElementwise(
        b, loc, getUpdateType(node, n + i, v), {x, g, v, adjustedBeta},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value gr = regularize(nb, nl, norm, args[0], args[1]);
          return arith::AddFOp::create(
                     nb, nl,
                     arith::MulFOp::create(nb, nl, f32(nb, nl, alpha), args[2]),
                     arith::MulFOp::create(nb, nl, args[3], gr))
              .getResult();
        });
    results[i] = buildElementwise(
        b, loc, getUpdateType(node, i, x), {x, g, vNew, rate},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value direction = args[2];
          if (mode == "nesterov")
            direction = arith::AddFOp::create(
                nb, nl, regularize(nb, nl, norm, args[0], args[1]),
                arith::MulFOp::create(nb, nl, f32(nb, nl, alpha), args[2]));
          Value rateValue = toF32(nb, nl, args[3]);
          return arith::SubFOp::create(
                     nb, nl, args[0],
                     arith::MulFOp::create(nb, nl, rateValue, direction))
              .getResult();
        });
    results[n + i] = vNew;
  }
  return results;
}

/// `1 - base^step` for a float `step`.
static Value biasCorrection(OpBuilder &b, Location loc, float base,
                            Value step) {
  return arith::SubFOp::create(
      b, loc, f32(b, loc, 1),
      math::PowFOp::create(b, loc, f32(b, loc, base), step));
}

/// The moment updates shared by both Adams: alpha * m + (1 - alpha) * g and
/// beta * h + (1 - beta) * g * g, in f32.
static Value updateFirstMoment(OpBuilder &b, Location loc, float alpha, Value m,
                               Value g) {
  return arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, f32(b, loc, alpha), m),
      arith::MulFOp::create(b, loc, f32(b, loc, 1 - alpha), g));
}
static Value updateSecondMoment(OpBuilder &b, Location loc, float beta, Value h,
                                Value g) {
  return arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, f32(b, loc, beta), h),
      arith::MulFOp::create(b, loc, f32(b, loc, 1 - beta),
                            arith::MulFOp::create(b, loc, g, g)));
}

/// ai.onnx.preview.training Adam(R, T, X..., G..., V..., H...) ->
/// (X_new..., V_new..., H_new...).
static LoweringResult lowerPreviewAdam(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  std::optional<PreviewOperands> operands = getPreviewOperands(node, 4);
  if (!operands)
    return failure();
  unsigned n = operands->tensors;
  Value rate = operands->rate, count = operands->count;
  float alpha = node.getFloat("alpha", 0.9f);
  float beta = node.getFloat("beta", 0.999f);
  float epsilon = node.getFloat("epsilon", 1e-6f);
  float norm = node.getFloat("norm_coefficient", 0);
  float normPost = node.getFloat("norm_coefficient_post", 0);
  // R * sqrt(1 - beta^T) / (1 - alpha^T), or R on the first update.
  Value adjustedRate = buildScalar(
      b, loc, {rate, count}, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = toF32(nb, nl, args[0]), t = toF32(nb, nl, args[1]);
        Value corrected = arith::DivFOp::create(
            nb, nl,
            arith::MulFOp::create(
                nb, nl, r,
                math::SqrtOp::create(nb, nl, biasCorrection(nb, nl, beta, t))),
            biasCorrection(nb, nl, alpha, t));
        Value first = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE,
                                            t, f32(nb, nl, 0));
        return arith::SelectOp::create(nb, nl, first, r, corrected).getResult();
      });
  SmallVector<Value> results(3 * n);
  for (unsigned i = 0; i < n; ++i) {
    Value x = node.operand(2 + i), g = node.operand(2 + n + i),
          v = node.operand(2 + 2 * n + i), h = node.operand(2 + 3 * n + i);
    Value vNew = buildElementwise(
        b, loc, getUpdateType(node, n + i, v), {x, g, v},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return updateFirstMoment(nb, nl, alpha, args[2],
                                   regularize(nb, nl, norm, args[0], args[1]));
        });
    Value hNew = buildElementwise(
        b, loc, getUpdateType(node, 2 * n + i, h), {x, g, h},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return updateSecondMoment(nb, nl, beta, args[2],
                                    regularize(nb, nl, norm, args[0], args[1]));
        });
    results[i] = buildElementwise(
        b, loc, getUpdateType(node, i, x), {x, vNew, hNew, adjustedRate},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value denominator = arith::AddFOp::create(
              nb, nl, math::SqrtOp::create(nb, nl, args[2]),
              f32(nb, nl, epsilon));
          Value step = arith::MulFOp::create(
              nb, nl, args[3],
              arith::DivFOp::create(nb, nl, args[1], denominator));
          Value updated = arith::SubFOp::create(nb, nl, args[0], step);
          return arith::MulFOp::create(nb, nl, f32(nb, nl, 1 - normPost),
                                       updated)
              .getResult();
        });
    results[n + i] = vNew;
    results[2 * n + i] = hNew;
  }
  return results;
}

namespace {
/// The attributes of ONNX Runtime's Adam updates (AdamOptimizer,
/// AdamWOptimizer): mode 0 corrects the moments and decays the weight
/// before the update (PyTorch AdamW), mode 1 corrects the learning rate and
/// decays the updated weight (Hugging Face).
struct OrtAdamSettings {
  int64_t mode = 0;
  float alpha = 0.9f, beta = 0.999f, lambda = 0, epsilon = 1e-8f;
  bool correctBias = true;
};
} // namespace

/// The settings of ONNX Runtime Adam node `node`, whose mode, weight decay
/// and bias correction have these attribute names; fails with an error for
/// an unknown mode.
static FailureOr<OrtAdamSettings>
getOrtAdamSettings(NodeLowering &node, StringRef modeName, StringRef lambdaName,
                   StringRef correctBiasName) {
  OrtAdamSettings settings;
  settings.mode = node.getInt(modeName, 0);
  if (settings.mode != 0 && settings.mode != 1)
    return node.emitError()
           << modeName << " must be 0 or 1, not " << settings.mode;
  settings.alpha = node.getFloat("alpha", 0.9f);
  settings.beta = node.getFloat("beta", 0.999f);
  settings.lambda = node.getFloat(lambdaName, 0);
  settings.epsilon = node.getFloat("epsilon", 1e-8f);
  settings.correctBias = node.getInt(correctBiasName, 1) != 0;
  return settings;
}

/// [1 - alpha^step, 1 - beta^step], or 1s without bias correction, as 0-d
/// f32 tensors.
static std::pair<Value, Value>
buildBiasCorrections(OpBuilder &b, Location loc,
                     const OrtAdamSettings &settings, Value step) {
  auto correction = [&](float base) {
    return buildScalar(
        b, loc, {step}, [&](OpBuilder &nb, Location nl, ValueRange args) {
          if (!settings.correctBias)
            return f32(nb, nl, 1);
          return biasCorrection(nb, nl, base, toF32(nb, nl, args[0]));
        });
  };
  return {correction(settings.alpha), correction(settings.beta)};
}

/// The f32 change of weights `w` given the updated moments, the learning
/// rate (0-d) and the bias corrections.
static Value buildAdamDelta(OpBuilder &b, Location loc,
                            const OrtAdamSettings &settings, Value w,
                            Value m1New, Value m2New, Value rate,
                            Value alphaCorrection, Value betaCorrection) {
  auto wType = cast<RankedTensorType>(w.getType());
  return buildElementwise(
      b, loc, wType.clone(b.getF32Type()),
      {w, m1New, m2New, rate, alphaCorrection, betaCorrection},
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value weight = args[0], eta = toF32(nb, nl, args[3]);
        Value decay = f32(nb, nl, settings.lambda);
        if (settings.mode == 0) {
          Value denominator = arith::AddFOp::create(
              nb, nl,
              math::SqrtOp::create(
                  nb, nl, arith::DivFOp::create(nb, nl, args[2], args[5])),
              f32(nb, nl, settings.epsilon));
          Value update = arith::AddFOp::create(
              nb, nl,
              arith::DivFOp::create(
                  nb, nl, arith::DivFOp::create(nb, nl, args[1], args[4]),
                  denominator),
              arith::MulFOp::create(nb, nl, decay, weight));
          return arith::NegFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, eta, update));
        }
        Value stepSize = arith::DivFOp::create(
            nb, nl,
            arith::MulFOp::create(nb, nl, eta,
                                  math::SqrtOp::create(nb, nl, args[5])),
            args[4]);
        Value denominator =
            arith::AddFOp::create(nb, nl, math::SqrtOp::create(nb, nl, args[2]),
                                  f32(nb, nl, settings.epsilon));
        Value update = arith::DivFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, stepSize, args[1]),
            denominator);
        Value decayed = arith::MulFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, eta, decay),
            arith::SubFOp::create(nb, nl, weight, update));
        return arith::NegFOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, update, decayed));
      });
}

namespace {
/// One tensor's Adam update: the new moments and the f32 weight change.
struct AdamUpdate {
  Value m1, m2, delta;
};
} // namespace

/// The Adam update of weights `w` by gradient `g`, with moments `m1` and `m2`
/// updated into types `m1Type` and `m2Type`.
static AdamUpdate buildAdamUpdate(OpBuilder &b, Location loc,
                                  const OrtAdamSettings &settings, Value w,
                                  Value g, Value m1, Value m2,
                                  RankedTensorType m1Type,
                                  RankedTensorType m2Type, Value rate,
                                  Value alphaCorrection, Value betaCorrection) {
  AdamUpdate update;
  update.m1 = buildElementwise(
      b, loc, m1Type, {m1, g},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        return updateFirstMoment(nb, nl, settings.alpha, args[0], args[1]);
      });
  update.m2 = buildElementwise(
      b, loc, m2Type, {m2, g},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        return updateSecondMoment(nb, nl, settings.beta, args[0], args[1]);
      });
  update.delta = buildAdamDelta(b, loc, settings, w, update.m1, update.m2, rate,
                                alphaCorrection, betaCorrection);
  return update;
}

/// `updated` where the 0-d boolean `doUpdate` holds, else `previous`
/// converted to `updated`'s type.
static Value selectIfUpdated(OpBuilder &b, Location loc, Value doUpdate,
                             Value updated, Value previous) {
  auto type = cast<RankedTensorType>(updated.getType());
  Value kept = convertTensor(b, loc, previous, type.getElementType());
  return buildElementwise(b, loc, type, {doUpdate, updated, kept},
                          [&](OpBuilder &nb, Location nl, ValueRange args) {
                            return arith::SelectOp::create(nb, nl, args[0],
                                                           args[1], args[2])
                                .getResult();
                          });
}

/// com.microsoft AdamOptimizer(ETA, S, W, G, M1, M2, [W16], [loss_scale],
/// [grad_norm], [do_update]) -> (S', M1', M2', [W'], [G'], [W16']), as
/// ONNX Runtime's kernels compute it: weight_decay_mode 0 corrects the
/// moments (PyTorch AdamW), 1 corrects the learning rate (Hugging Face).
/// A bool input 6 is the update signal, as in ONNX Runtime's training_api
/// test artifacts.
static LoweringResult lowerAdamOptimizer(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value rate = getScalarOperand(node, 0, "ETA");
  Value step = rate ? getScalarOperand(node, 1, "the step count") : Value();
  if (!step)
    return failure();
  Value w = node.operand(2), g = node.operand(3), m1 = node.operand(4),
        m2 = node.operand(5);
  for (Value value : {w, g, m1, m2}) {
    auto type = getRankedType(value);
    if (!type || !isa<FloatType>(type.getElementType()))
      return node.emitError()
             << "expects float weight, gradient and moment tensors";
  }
  // Input 6 holds low-precision weights, or, when it is a bool, the update
  // signal that is otherwise input 9.
  Value lowPrecisionWeights, doUpdate, lossScale;
  unsigned signalOperand = 9;
  if (Value sixth = node.operand(6)) {
    if (!getRankedType(sixth).getElementType().isInteger(1))
      lowPrecisionWeights = sixth;
    else if (node.operand(9))
      return node.emitError() << "has two update signals (inputs 6 and 9)";
    else
      signalOperand = 6;
  }
  if (node.operand(8))
    return node.emitError()
           << "gradient-norm clipping (input 8) does not lower yet";
  if (node.operand(7) && !(lossScale = getScalarOperand(node, 7, "loss_scale")))
    return failure();
  if (node.operand(signalOperand) &&
      !(doUpdate = getScalarOperand(node, signalOperand, "the update signal")))
    return failure();
  FailureOr<OrtAdamSettings> settings = getOrtAdamSettings(
      node, "weight_decay_mode", "lambda", "do_bias_correction");
  if (failed(settings))
    return failure();
  auto [alphaCorrection, betaCorrection] =
      buildBiasCorrections(b, loc, *settings, step);
  // The gradient, unscaled.
  Value gradient = g;
  if (lossScale)
    gradient = buildElementwise(
        b, loc, cast<RankedTensorType>(g.getType()).clone(b.getF32Type()),
        {g, lossScale}, [&](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::DivFOp::create(nb, nl, args[0], toF32(nb, nl, args[1]))
              .getResult();
        });
  auto [m1New, m2New, delta] = buildAdamUpdate(
      b, loc, *settings, w, gradient, m1, m2, getUpdateType(node, 1, m1),
      getUpdateType(node, 2, m2), rate, alphaCorrection, betaCorrection);
  Value stepNew = buildElementwise(
      b, loc, RankedTensorType::get({}, getRankedType(step).getElementType()),
      {step}, [&](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::AddIOp::create(nb, nl, args[0],
                                     createScalar(nb, nl, args[0].getType(), 1))
            .getResult();
      });
  Value wNew = buildElementwise(
      b, loc, getUpdateType(node, 3, w), {w, delta},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::AddFOp::create(nb, nl, args[0], args[1]).getResult();
      });
  SmallVector<Value> results = {stepNew, m1New, m2New, wNew, delta, Value()};
  SmallVector<Value> inputs = {step, m1, m2, w, g, lowPrecisionWeights};
  if (lowPrecisionWeights)
    results[5] = convertTensor(
        b, loc, wNew, getRankedType(lowPrecisionWeights).getElementType());
  // Without the update signal every output is its input.
  for (auto [i, result] : llvm::enumerate(results)) {
    if (!result || i >= node.getNumResults())
      continue;
    RankedTensorType type = getUpdateType(node, i, inputs[i]);
    if (i == 0)
      result = reshapeTo(b, loc, result, type);
    else
      result = convertTensor(b, loc, result, type.getElementType());
    if (doUpdate)
      result = selectIfUpdated(b, loc, doUpdate, result, inputs[i]);
  }
  results.resize(std::min<size_t>(results.size(), node.getNumResults()));
  return results;
}

/// The float tensors of sequence operand `i` of an optimizer node, each of
/// the shape of the same tensor of `like` when given; nullopt after an
/// error.
static std::optional<SmallVector<Value>>
getFloatSequence(NodeLowering &node, unsigned i, StringRef what,
                 ArrayRef<Value> like = {}) {
  std::optional<SmallVector<Value>> elements = node.sequenceOperand(i);
  if (!elements)
    return std::nullopt;
  if (!like.empty() && elements->size() != like.size()) {
    node.emitError() << "input " << i << " holds " << elements->size()
                     << " tensors, the weights " << like.size();
    return std::nullopt;
  }
  for (auto [k, value] : llvm::enumerate(*elements)) {
    RankedTensorType type = getRankedType(value);
    if (!type || !isa<FloatType>(type.getElementType()) ||
        (!like.empty() &&
         type.getShape() != getRankedType(like[k]).getShape())) {
      node.emitError() << "tensor " << k << " of the " << what
                       << " must be a float tensor of its weight's shape";
      return std::nullopt;
    }
  }
  return elements;
}

/// The updated flag of an optimizer node: `doUpdate` (or 1 without one) as
/// a tensor of the shape of operand `like`.
static Value buildUpdatedFlag(NodeLowering &node, Value doUpdate,
                              unsigned like) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  auto likeType = cast<RankedTensorType>(node.operand(like).getType());
  Type flagType = node.resultElementType(0, b.getI1Type());
  if (doUpdate)
    return reshapeTo(b, loc, convertTensor(b, loc, doUpdate, flagType),
                     likeType.clone(flagType));
  return createFilled(b, loc, getSizes(b, loc, node.operand(like)),
                      createScalar(b, loc, flagType, 1));
}

/// com.microsoft AdamWOptimizer(lr, step, weights, gradients, moments_1,
/// moments_2, [update_signal]) -> (updated_flag, [weights'], [moments_1'],
/// [moments_2']): the four inputs are sequences of equally many tensors,
/// which ONNX Runtime updates in place and returns; each tensor is updated
/// as AdamOptimizer updates its one (adam_mode is its weight_decay_mode,
/// weight_decay its lambda). The flag is 1 when the update ran.
static LoweringResult lowerAdamWOptimizer(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value rate = getScalarOperand(node, 0, "the learning rate");
  Value step = rate ? getScalarOperand(node, 1, "the step count") : Value();
  if (!step)
    return failure();
  std::optional<SmallVector<Value>> weights =
      getFloatSequence(node, 2, "weights");
  if (!weights)
    return failure();
  SmallVector<SmallVector<Value>> sequences = {*weights};
  for (auto [i, what] : llvm::enumerate(ArrayRef<StringRef>{
           "gradients", "first moments", "second moments"})) {
    std::optional<SmallVector<Value>> elements =
        getFloatSequence(node, i + 3, what, *weights);
    if (!elements)
      return failure();
    sequences.push_back(std::move(*elements));
  }
  Value doUpdate;
  if (node.operand(6) &&
      !(doUpdate = getScalarOperand(node, 6, "the update signal")))
    return failure();
  FailureOr<OrtAdamSettings> settings =
      getOrtAdamSettings(node, "adam_mode", "weight_decay", "correct_bias");
  if (failed(settings))
    return failure();
  auto [alphaCorrection, betaCorrection] =
      buildBiasCorrections(b, loc, *settings, step);

  SmallVector<SmallVector<Value>> updated(3);
  for (unsigned i = 0; i < sequences[0].size(); ++i) {
    Value w = sequences[0][i], g = sequences[1][i], m1 = sequences[2][i],
          m2 = sequences[3][i];
    auto wType = getRankedType(w);
    auto [m1New, m2New, delta] = buildAdamUpdate(
        b, loc, *settings, w, g, m1, m2, getRankedType(m1), getRankedType(m2),
        rate, alphaCorrection, betaCorrection);
    Value wNew = buildElementwise(
        b, loc, wType, {w, delta},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::AddFOp::create(nb, nl, args[0], args[1]).getResult();
        });
    Value newValues[] = {wNew, m1New, m2New};
    Value previous[] = {w, m1, m2};
    for (unsigned k = 0; k < 3; ++k)
      updated[k].push_back(doUpdate ? selectIfUpdated(b, loc, doUpdate,
                                                      newValues[k], previous[k])
                                    : newValues[k]);
  }
  // The flag has the step's shape; ONNX Runtime writes a bool into it.
  SmallVector<Value> results = {buildUpdatedFlag(node, doUpdate, 1)};
  for (unsigned k = 0; k < 3 && k + 1 < node.getNumResults(); ++k)
    results.push_back(buildSequence(
        b, loc, node.getNode().getResult(k + 1).getType(), updated[k]));
  return results;
}

/// com.microsoft SGDOptimizerV2(lr, weights, gradients, [update_signal]) ->
/// (updated_flag, [weights']): each tensor of the weights sequence minus lr
/// times its gradient, which ONNX Runtime writes in place; the flag (of
/// lr's shape) is 1 when the update ran.
static LoweringResult lowerSGDOptimizerV2(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value rate = getScalarOperand(node, 0, "the learning rate");
  if (!rate)
    return failure();
  std::optional<SmallVector<Value>> weights =
      getFloatSequence(node, 1, "weights");
  if (!weights)
    return failure();
  std::optional<SmallVector<Value>> gradients =
      getFloatSequence(node, 2, "gradients", *weights);
  if (!gradients)
    return failure();
  Value doUpdate;
  if (node.operand(3) &&
      !(doUpdate = getScalarOperand(node, 3, "the update signal")))
    return failure();
  SmallVector<Value> updated;
  for (auto [w, g] : llvm::zip(*weights, *gradients)) {
    Value next = buildElementwise(
        b, loc, getRankedType(w), {w, g, rate},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value step = arith::MulFOp::create(
              nb, nl, convertScalar(nb, nl, args[2], args[1].getType()),
              args[1]);
          return arith::SubFOp::create(
                     nb, nl, args[0],
                     convertScalar(nb, nl, step, args[0].getType()))
              .getResult();
        });
    updated.push_back(doUpdate ? selectIfUpdated(b, loc, doUpdate, next, w)
                               : next);
  }
  SmallVector<Value> results = {buildUpdatedFlag(node, doUpdate, 0)};
  if (node.getNumResults() > 1)
    results.push_back(
        buildSequence(b, loc, node.getNode().getResult(1).getType(), updated));
  return results;
}

/// com.microsoft InplaceClipGradNorm(gradients) -> clipped: every tensor
/// times min(max_norm / (norm + 1e-6), 1), where norm is the L2 norm of
/// all of them together (norm_type "fro", the only one), in f32.
static LoweringResult lowerInplaceClipGradNorm(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  StringRef normType = node.getString("norm_type", "fro");
  if (normType != "fro")
    return node.emitError()
           << "norm_type '" << normType << "' is not 'fro', the only one";
  std::optional<SmallVector<Value>> gradients =
      getFloatSequence(node, 0, "gradients");
  if (!gradients)
    return failure();
  Type f32 = b.getF32Type();
  auto scalarType = RankedTensorType::get({}, f32);
  auto add = [](OpBuilder &nb, Location nl, ValueRange args) {
    return arith::AddFOp::create(nb, nl, args[0], args[1]).getResult();
  };
  Value squares;
  for (Value g : *gradients) {
    int64_t rank = getRankedType(g).getRank();
    Value sum = buildReduction(
        b, loc, g, llvm::to_vector(llvm::seq<int64_t>(0, rank)), f32,
        createScalar(b, loc, f32, 0),
        [](OpBuilder &nb, Location nl, Value x, Value acc) {
          return arith::AddFOp::create(nb, nl, acc, x).getResult();
        },
        [](OpBuilder &nb, Location nl, Value x) {
          return arith::MulFOp::create(nb, nl, x, x).getResult();
        });
    squares = squares
                  ? buildElementwise(b, loc, scalarType, {squares, sum}, add)
                  : sum;
  }
  double maxNorm = node.getFloat("max_norm", 1.0);
  Value coefficient =
      squares ? buildElementwise(
                    b, loc, scalarType, squares,
                    [&](OpBuilder &nb, Location nl, ValueRange args) {
                      Value norm = arith::AddFOp::create(
                          nb, nl, math::SqrtOp::create(nb, nl, args[0]),
                          createScalar(nb, nl, f32, 1e-6));
                      Value ratio = arith::DivFOp::create(
                          nb, nl, createScalar(nb, nl, f32, maxNorm), norm);
                      return arith::MinimumFOp::create(
                                 nb, nl, ratio, createScalar(nb, nl, f32, 1))
                          .getResult();
                    })
              : Value();
  SmallVector<Value> clipped;
  for (Value g : *gradients)
    clipped.push_back(buildElementwise(
        b, loc, getRankedType(g), {g, coefficient},
        [](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::MulFOp::create(
                     nb, nl, args[0],
                     convertScalar(nb, nl, args[1], args[0].getType()))
              .getResult();
        }));
  return SmallVector<Value>{
      buildSequence(b, loc, node.getNode().getResult(0).getType(), clipped)};
}

void amp::lowering::populateOptimizerLowerings(LoweringTable &table) {
  table.add("ai.onnx.preview.training", "Adagrad", lowerAdagrad);
  table.add("ai.onnx.preview.training", "Momentum", lowerMomentum);
  table.add("ai.onnx.preview.training", "Adam", lowerPreviewAdam);
  table.add("com.microsoft", "AdamOptimizer", lowerAdamOptimizer);
  table.add("com.microsoft", "AdamWOptimizer", lowerAdamWOptimizer);
  table.add("com.microsoft", "SGDOptimizerV2", lowerSGDOptimizerV2);
  table.add("com.microsoft", "InplaceClipGradNorm", lowerInplaceClipGradNorm);
}
