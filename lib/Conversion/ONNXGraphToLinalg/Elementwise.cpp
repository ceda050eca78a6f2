//===- Elementwise.cpp - Lower elementwise graph nodes --------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Arithmetic, math functions, activations, comparisons, logic, Where, Clip,
// Cast and the elementwise gradient ops of ONNX Runtime: each becomes one
// broadcasting linalg.generic (buildElementwise) around a scalar body.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/Support/SaveAndRestore.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp::lowering;

/// The scalar body of an elementwise op: widened operands in, one value out.
using ScalarBody = function_ref<Value(OpBuilder &, Location, ValueRange)>;

static bool isFloat(Value value) { return isa<FloatType>(value.getType()); }

/// Whether the body being built reads unsigned integers. Arith's integers
/// are signless: lowerElementwise casts unsigned elements to them in the
/// body, and the scalar ops below then take their unsigned forms.
static bool unsignedOperands = false;

static Value constantLike(OpBuilder &b, Location loc, Value like,
                          double value) {
  return createScalar(b, loc, like.getType(), value);
}

/// Lowers `node` to one elementwise generic over `operands`.
static LoweringResult lowerElementwise(NodeLowering &node, ValueRange operands,
                                       ScalarBody body) {
  RankedTensorType declared = node.resultType(0);
  if (!declared) {
    // An output ONNX could not type or shape: the operands' rank, any
    // sizes, and the element type it declares, else the one the op's schema
    // fixes (comparisons and logic give booleans, Where its branches' type,
    // CastLike its second operand's), else Cast's `to`, else the first
    // float operand's.
    int64_t rank = 0;
    Type operandElement;
    for (Value operand : operands)
      if (RankedTensorType type = getRankedType(operand)) {
        rank = std::max(rank, type.getRank());
        if (!operandElement || (!isa<FloatType>(operandElement) &&
                                isa<FloatType>(type.getElementType())))
          operandElement = type.getElementType();
      }
    if (!operandElement)
      return node.emitError() << "operands must be ranked tensors";
    onnxg::NodeOp op = node.getNode();
    Type elementType;
    if (auto unranked = dyn_cast<UnrankedTensorType>(op.getResult(0).getType()))
      elementType = unranked.getElementType();
    else if (op.getOpType() == "Cast" && node.getInt("to", 0))
      elementType =
          onnxg::getElementType(op.getContext(), node.getInt("to", 0));
    else if (!(elementType = onnxg::getSchemaResultElementType(op, 0)))
      elementType = operandElement;
    if (!elementType)
      return node.emitError() << "an unknown result element type";
    declared = RankedTensorType::get(
        SmallVector<int64_t>(rank, ShapedType::kDynamic), elementType);
  }
  bool anyUnsigned = false;
  for (Value operand : operands) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return node.emitError() << "operands must be ranked tensors";
    anyUnsigned |= type.getElementType().isUnsignedInteger();
  }
  RankedTensorType type = getBroadcastType(operands, declared);
  if (!type)
    return node.emitError()
           << "operand shapes do not broadcast to " << declared;
  // Unsigned elements enter and leave the body through casts from and to
  // signless ones of their width, which the LLVM lowering folds away.
  Type resultElement = type.getElementType();
  bool unsignedResult = resultElement.isUnsignedInteger();
  llvm::SaveAndRestore scope(unsignedOperands, anyUnsigned);
  return SmallVector<Value>{buildElementwise(
      node.getBuilder(), node.getLoc(), type, operands,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        if (!anyUnsigned && !unsignedResult)
          return body(b, loc, args);
        SmallVector<Value> values;
        for (Value arg : args)
          values.push_back(
              arg.getType() == getSignlessType(arg.getType())
                  ? arg
                  : reinterpretInteger(b, loc, arg,
                                       getSignlessType(arg.getType())));
        Value result = body(b, loc, values);
        if (!unsignedResult)
          return result;
        result = convertScalar(b, loc, result, getSignlessType(resultElement),
                               anyUnsigned, /*toUnsigned=*/true);
        return reinterpretInteger(b, loc, result, resultElement);
      })};
}

/// The node's present operands, in order.
static SmallVector<Value> getOperands(NodeLowering &node) {
  SmallVector<Value> operands;
  for (unsigned i = 0; i < node.getNumOperands(); ++i)
    if (Value operand = node.operand(i))
      operands.push_back(operand);
  return operands;
}

static LoweringResult lowerAll(NodeLowering &node, ScalarBody body) {
  return lowerElementwise(node, getOperands(node), body);
}

//===----------------------------------------------------------------------===//
// Scalar arithmetic on float or integer values
//===----------------------------------------------------------------------===//

/// The float op on floats, the integer op otherwise.
template <typename FloatOp, typename IntOp>
static Value floatOrInt(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x))
    return FloatOp::create(b, loc, x, y);
  return IntOp::create(b, loc, x, y);
}

static Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, x, y);
}
static Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::SubFOp, arith::SubIOp>(b, loc, x, y);
}
static Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::MulFOp, arith::MulIOp>(b, loc, x, y);
}
static Value div(OpBuilder &b, Location loc, Value x, Value y) {
  if (unsignedOperands)
    return floatOrInt<arith::DivFOp, arith::DivUIOp>(b, loc, x, y);
  return floatOrInt<arith::DivFOp, arith::DivSIOp>(b, loc, x, y);
}
static Value max(OpBuilder &b, Location loc, Value x, Value y) {
  if (unsignedOperands)
    return floatOrInt<arith::MaximumFOp, arith::MaxUIOp>(b, loc, x, y);
  return floatOrInt<arith::MaximumFOp, arith::MaxSIOp>(b, loc, x, y);
}
static Value min(OpBuilder &b, Location loc, Value x, Value y) {
  if (unsignedOperands)
    return floatOrInt<arith::MinimumFOp, arith::MinUIOp>(b, loc, x, y);
  return floatOrInt<arith::MinimumFOp, arith::MinSIOp>(b, loc, x, y);
}

/// The integer comparison `predicate` on unsigned values where the body
/// reads them.
static arith::CmpIPredicate getIntPredicate(arith::CmpIPredicate predicate) {
  if (!unsignedOperands)
    return predicate;
  switch (predicate) {
  case arith::CmpIPredicate::slt:
    return arith::CmpIPredicate::ult;
  case arith::CmpIPredicate::sle:
    return arith::CmpIPredicate::ule;
  case arith::CmpIPredicate::sgt:
    return arith::CmpIPredicate::ugt;
  case arith::CmpIPredicate::sge:
    return arith::CmpIPredicate::uge;
  default:
    return predicate;
  }
}

static Value compare(OpBuilder &b, Location loc, Value x, Value y,
                     arith::CmpFPredicate floatPredicate,
                     arith::CmpIPredicate intPredicate) {
  if (isFloat(x))
    return arith::CmpFOp::create(b, loc, floatPredicate, x, y);
  return arith::CmpIOp::create(b, loc, getIntPredicate(intPredicate), x, y);
}

static Value exp(OpBuilder &b, Location loc, Value x) {
  return math::ExpOp::create(b, loc, x);
}

/// 1 / (1 + exp(-x)).
static Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = constantLike(b, loc, x, 1.0);
  Value negated = arith::NegFOp::create(b, loc, x);
  return arith::DivFOp::create(
      b, loc, one, arith::AddFOp::create(b, loc, one, exp(b, loc, negated)));
}

/// Exact GELU: x * (1 + erf(x / sqrt 2)) / 2.
static Value gelu(OpBuilder &b, Location loc, Value x) {
  Value scaled =
      arith::MulFOp::create(b, loc, x, constantLike(b, loc, x, M_SQRT1_2));
  Value erf = math::ErfOp::create(b, loc, scaled);
  Value onePlus =
      arith::AddFOp::create(b, loc, erf, constantLike(b, loc, x, 1.0));
  Value half = arith::MulFOp::create(b, loc, x, constantLike(b, loc, x, 0.5));
  return arith::MulFOp::create(b, loc, half, onePlus);
}

/// d gelu(x) / dx = (1 + erf(x / sqrt 2)) / 2 + x * exp(-x^2 / 2) / sqrt(2 pi).
static Value geluDerivative(OpBuilder &b, Location loc, Value x) {
  Value erf = math::ErfOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, x, constantLike(b, loc, x, M_SQRT1_2)));
  Value cdf = arith::MulFOp::create(
      b, loc, arith::AddFOp::create(b, loc, erf, constantLike(b, loc, x, 1.0)),
      constantLike(b, loc, x, 0.5));
  Value square = arith::MulFOp::create(b, loc, x, x);
  Value density = arith::MulFOp::create(
      b, loc,
      exp(b, loc,
          arith::MulFOp::create(b, loc, square, constantLike(b, loc, x, -0.5))),
      constantLike(b, loc, x, 0.5 * M_2_SQRTPI * M_SQRT1_2));
  return arith::AddFOp::create(b, loc, cdf,
                               arith::MulFOp::create(b, loc, x, density));
}

/// The tanh approximation's inner value sqrt(2/pi) * (x + 0.044715 x^3).
static Value fastGeluInner(OpBuilder &b, Location loc, Value x) {
  Value cube =
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
  Value sum = arith::AddFOp::create(
      b, loc, x,
      arith::MulFOp::create(b, loc, cube, constantLike(b, loc, x, 0.044715)));
  return arith::MulFOp::create(b, loc, sum,
                               constantLike(b, loc, x, M_2_SQRTPI * M_SQRT1_2));
}

/// Tanh-approximated GELU: x * (1 + tanh(inner(x))) / 2.
static Value fastGelu(OpBuilder &b, Location loc, Value x) {
  Value tanh = math::TanhOp::create(b, loc, fastGeluInner(b, loc, x));
  Value onePlus =
      arith::AddFOp::create(b, loc, tanh, constantLike(b, loc, x, 1.0));
  return arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, x, constantLike(b, loc, x, 0.5)),
      onePlus);
}

/// d fastGelu(x) / dx.
static Value fastGeluDerivative(OpBuilder &b, Location loc, Value x) {
  Value tanh = math::TanhOp::create(b, loc, fastGeluInner(b, loc, x));
  Value one = constantLike(b, loc, x, 1.0);
  Value half = constantLike(b, loc, x, 0.5);
  // (1 + t) / 2 + x / 2 * (1 - t^2) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2)
  Value first = arith::MulFOp::create(
      b, loc, arith::AddFOp::create(b, loc, one, tanh), half);
  Value sech2 = arith::SubFOp::create(
      b, loc, one, arith::MulFOp::create(b, loc, tanh, tanh));
  Value square = arith::MulFOp::create(b, loc, x, x);
  Value inner = arith::MulFOp::create(
      b, loc,
      arith::AddFOp::create(
          b, loc, one,
          arith::MulFOp::create(b, loc, square,
                                constantLike(b, loc, x, 3 * 0.044715))),
      constantLike(b, loc, x, M_2_SQRTPI * M_SQRT1_2));
  Value second =
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, half),
                            arith::MulFOp::create(b, loc, sech2, inner));
  return arith::AddFOp::create(b, loc, first, second);
}

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

/// Registers a lowering whose body needs no attributes.
#define SIMPLE(DOMAIN, NAME, BODY)                                             \
  table.add(DOMAIN, NAME, [](NodeLowering &node) {                             \
    return lowerAll(                                                           \
        node, [](OpBuilder &b, Location loc, ValueRange a) { return BODY; });  \
  })

static LoweringResult lowerVariadic(NodeLowering &node,
                                    Value (*combine)(OpBuilder &, Location,
                                                     Value, Value),
                                    bool mean) {
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value result = a[0];
    for (Value x : a.drop_front())
      result = combine(b, loc, result, x);
    if (mean)
      result = div(b, loc, result, constantLike(b, loc, result, a.size()));
    return result;
  });
}

/// Cast, and CastLike (operand 1 only gives the type of the result).
static LoweringResult lowerCast(NodeLowering &node) {
  RankedTensorType type = node.resultType(0);
  auto toFloat =
      dyn_cast_or_null<FloatType>(type ? type.getElementType() : Type());
  if (toFloat && toFloat.getWidth() == 8 && node.getInt("saturate", 1) == 0) {
    // Without saturation, out-of-range values become NaN or inf.
    return lowerElementwise(
        node, node.operand(0), [&](OpBuilder &b, Location loc, ValueRange a) {
          return arith::TruncFOp::create(b, loc, toFloat, a[0]).getResult();
        });
  }
  // buildElementwise (and, to unsigned integers, lowerElementwise)
  // converts the body's value to the result type; from unsigned integers,
  // the body converts to floats and wider integers.
  Type to = type ? type.getElementType() : Type();
  return lowerElementwise(
      node, node.operand(0), [&](OpBuilder &b, Location loc, ValueRange a) {
        if (!to || !unsignedOperands || to.isUnsignedInteger())
          return a[0];
        return convertScalar(b, loc, a[0], to, /*fromUnsigned=*/true);
      });
}

static LoweringResult lowerClip(NodeLowering &node) {
  Value input = node.operand(0);
  SmallVector<Value> operands = {input};
  Value low = node.operand(1), high = node.operand(2);
  if (low)
    operands.push_back(low);
  if (high)
    operands.push_back(high);
  bool hasAttrs = node.getAttr("min") || node.getAttr("max");
  double lowAttr = node.getFloat("min", -INFINITY);
  double highAttr = node.getFloat("max", INFINITY);
  return lowerElementwise(
      node, operands, [&](OpBuilder &b, Location loc, ValueRange a) {
        Value x = a[0];
        unsigned next = 1;
        if (low)
          x = max(b, loc, x, a[next++]);
        if (high)
          x = min(b, loc, x, a[next++]);
        if (hasAttrs && isFloat(x)) {
          x = max(b, loc, x, constantLike(b, loc, x, lowAttr));
          x = min(b, loc, x, constantLike(b, loc, x, highAttr));
        }
        return x;
      });
}

static LoweringResult lowerIsInf(NodeLowering &node) {
  bool positive = node.getInt("detect_positive", 1);
  bool negative = node.getInt("detect_negative", 1);
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value isPositive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a[0],
                              constantLike(b, loc, a[0], INFINITY));
    Value isNegative =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a[0],
                              constantLike(b, loc, a[0], -INFINITY));
    Value none = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    return arith::OrIOp::create(b, loc, positive ? isPositive : none,
                                negative ? isNegative : none)
        .getResult();
  });
}

static LoweringResult lowerScale(NodeLowering &node) {
  double scale = node.getFloat("scale", 1.0);
  bool scaleDown = node.getInt("scale_down", 0);
  Value input = node.operand(0), factor = node.operand(1);
  SmallVector<Value> operands = {input};
  if (factor)
    operands.push_back(factor);
  return lowerElementwise(
      node, operands, [&](OpBuilder &b, Location loc, ValueRange a) {
        Value by = a.size() > 1 ? convertScalar(b, loc, a[1], a[0].getType())
                                : constantLike(b, loc, a[0], scale);
        return scaleDown ? div(b, loc, a[0], by) : mul(b, loc, a[0], by);
      });
}

/// ONNX Gelu (opset 20, `approximate`) and com.microsoft Gelu/FastGelu/
/// BiasGelu (an optional bias added first).
static LoweringResult lowerGelu(NodeLowering &node) {
  bool tanh = node.getString("approximate", "none") == "tanh" ||
              node.getNode().getOpType() == "FastGelu";
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a.size() > 1 ? add(b, loc, a[0], a[1]) : a[0];
    return tanh ? fastGelu(b, loc, x) : gelu(b, loc, x);
  });
}

/// GeluGrad(dY, X), FastGeluGrad(dY, X), BiasGeluGrad_dX(dY, X, B),
/// BiasFastGeluGrad_dX(dY, X, B).
static LoweringResult lowerGeluGrad(NodeLowering &node) {
  bool tanh = node.getNode().getOpType().contains("FastGelu");
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a.size() > 2 ? add(b, loc, a[1], a[2]) : a[1];
    Value slope =
        tanh ? fastGeluDerivative(b, loc, x) : geluDerivative(b, loc, x);
    return mul(b, loc, a[0], slope);
  });
}

/// com.microsoft QuickGelu(X) = X * sigmoid(alpha * X), and its gradient
/// QuickGeluGrad(dY, X) = dY * s * (1 + alpha * X * (1 - s)).
static LoweringResult lowerQuickGelu(NodeLowering &node) {
  double alpha = node.getFloat("alpha", 1.702);
  bool grad = node.getNode().getOpType() == "QuickGeluGrad";
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = grad ? a[1] : a[0];
    Value scaled = mul(b, loc, x, constantLike(b, loc, x, alpha));
    Value s = sigmoid(b, loc, scaled);
    if (!grad)
      return mul(b, loc, x, s);
    Value one = constantLike(b, loc, x, 1);
    Value slope = mul(
        b, loc, s, add(b, loc, one, mul(b, loc, scaled, sub(b, loc, one, s))));
    return mul(b, loc, a[0], slope);
  });
}

/// com.microsoft DivGrad(dY, A, B) for Y = A / B: dA = dY / B and dB =
/// -dY * A / B^2, each summed over the dimensions its operand was
/// broadcast along.
static LoweringResult lowerDivGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0), x = node.operand(1), y = node.operand(2);
  RankedTensorType dyType = getRankedType(dy);
  if (!dyType || !getRankedType(x) || !getRankedType(y) ||
      !isa<FloatType>(dyType.getElementType()) || !dyType.hasStaticShape())
    return node.emitError() << "expects float tensors, dY of static shape";
  Type accType = getAccumulatorType(dyType.getElementType());
  auto reduced = [&](unsigned result, Value operand,
                     ScalarBody body) -> FailureOr<Value> {
    if (result >= node.getNumResults() || !node.isResultUsed(result))
      return Value();
    Value full = buildElementwise(b, loc, dyType.clone(accType),
                                  ValueRange{dy, x, y}, body);
    FailureOr<Value> sum = sumToShape(b, loc, full, getRankedType(operand));
    if (failed(sum))
      return node.emitError()
             << "operand " << result + 1 << " of type " << operand.getType()
             << " does not broadcast to dY";
    return convertTensor(b, loc, *sum,
                         node.resultElementType(
                             result, getRankedType(operand).getElementType()));
  };
  FailureOr<Value> dx =
      reduced(0, x, [](OpBuilder &nb, Location nl, ValueRange a) {
        return div(nb, nl, a[0], a[2]);
      });
  FailureOr<Value> dDivisor =
      reduced(1, y, [](OpBuilder &nb, Location nl, ValueRange a) {
        Value quotient = div(nb, nl, div(nb, nl, a[0], a[2]), a[2]);
        return arith::NegFOp::create(nb, nl, mul(nb, nl, quotient, a[1]))
            .getResult();
      });
  if (failed(dx) || failed(dDivisor))
    return failure();
  SmallVector<Value> results = {*dx, *dDivisor};
  results.resize(node.getNumResults());
  return results;
}

static LoweringResult lowerLeakyRelu(NodeLowering &node) {
  double alpha = node.getFloat("alpha", 0.01);
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0];
    Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                           constantLike(b, loc, x, 0));
    Value scaled = mul(b, loc, x, constantLike(b, loc, x, alpha));
    return arith::SelectOp::create(b, loc, negative, scaled, x).getResult();
  });
}

/// com.microsoft LeakyReluGrad(dY, Y): dY where the forward's output Y is
/// positive, alpha * dY elsewhere (ONNX Runtime's kernel).
static LoweringResult lowerLeakyReluGrad(NodeLowering &node) {
  double alpha = node.getFloat("alpha", 0.01);
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value dy = a[0], y = a[1];
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, y,
                                           constantLike(b, loc, y, 0));
    Value scaled = mul(b, loc, dy, constantLike(b, loc, dy, alpha));
    return arith::SelectOp::create(b, loc, positive, dy, scaled).getResult();
  });
}

static LoweringResult lowerElu(NodeLowering &node) {
  bool selu = node.getNode().getOpType() == "Selu";
  double alpha = node.getFloat("alpha", selu ? 1.67326319217681884765625 : 1);
  double gamma = selu ? node.getFloat("gamma", 1.05070102214813232421875) : 1;
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0];
    Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                           constantLike(b, loc, x, 0));
    Value expm1 = mul(b, loc, math::ExpM1Op::create(b, loc, x),
                      constantLike(b, loc, x, alpha));
    Value y = arith::SelectOp::create(b, loc, negative, expm1, x);
    return mul(b, loc, y, constantLike(b, loc, x, gamma));
  });
}

/// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
static LoweringResult lowerCelu(NodeLowering &node) {
  double alpha = node.getFloat("alpha", 1);
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0], zero = constantLike(b, loc, x, 0);
    Value alphaValue = constantLike(b, loc, x, alpha);
    Value expm1 = math::ExpM1Op::create(b, loc, div(b, loc, x, alphaValue));
    return add(b, loc, max(b, loc, x, zero),
               min(b, loc, mul(b, loc, expm1, alphaValue), zero));
  });
}

/// Swish (opset 24): x sigmoid(alpha x); SiLU with alpha 1.
static LoweringResult lowerSwish(NodeLowering &node) {
  double alpha = node.getFloat("alpha", 1);
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0];
    return mul(b, loc, x,
               sigmoid(b, loc, mul(b, loc, x, constantLike(b, loc, x, alpha))));
  });
}

/// ThresholdedRelu: x where x > alpha, else 0.
static LoweringResult lowerThresholdedRelu(NodeLowering &node) {
  double alpha = node.getFloat("alpha", 1);
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0];
    Value above = compare(b, loc, x, constantLike(b, loc, x, alpha),
                          arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt);
    return arith::SelectOp::create(b, loc, above, x, constantLike(b, loc, x, 0))
        .getResult();
  });
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
static LoweringResult lowerShrink(NodeLowering &node) {
  double lambd = node.getFloat("lambd", 0.5);
  double bias = node.getFloat("bias", 0);
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0], biasValue = constantLike(b, loc, x, bias);
    Value below = compare(b, loc, x, constantLike(b, loc, x, -lambd),
                          arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt);
    Value above = compare(b, loc, x, constantLike(b, loc, x, lambd),
                          arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt);
    Value y = arith::SelectOp::create(b, loc, above, sub(b, loc, x, biasValue),
                                      constantLike(b, loc, x, 0));
    return arith::SelectOp::create(b, loc, below, add(b, loc, x, biasValue), y)
        .getResult();
  });
}

/// Trilu(x, k): x where column - row >= k (upper) or <= k (lower) in the
/// last two dimensions, else 0. k, 0 by default, may be computed.
static LoweringResult lowerTrilu(NodeLowering &node) {
  RankedTensorType type = getRankedType(node.operand(0));
  if (!type || type.getRank() < 2)
    return node.emitError() << "expects a ranked tensor of rank >= 2";
  bool upper = node.getInt("upper", 1) != 0;
  int64_t rank = type.getRank();
  SmallVector<Value> operands = {node.operand(0)};
  if (Value k = node.operand(1)) {
    RankedTensorType kType = getRankedType(k);
    if (!kType || kType.getNumElements() != 1)
      return node.emitError() << "k must be a one-element tensor";
    operands.push_back(reshapeTo(node.getBuilder(), node.getLoc(), k,
                                 kType.clone(ArrayRef<int64_t>{})));
  }
  return lowerElementwise(
      node, operands, [&](OpBuilder &b, Location loc, ValueRange a) {
        Type i64 = b.getI64Type();
        Value row = convertScalar(
            b, loc, linalg::IndexOp::create(b, loc, rank - 2), i64);
        Value column = convertScalar(
            b, loc, linalg::IndexOp::create(b, loc, rank - 1), i64);
        Value k = a.size() > 1 ? convertScalar(b, loc, a[1], i64)
                               : createScalar(b, loc, i64, 0);
        Value diagonal = arith::SubIOp::create(b, loc, column, row);
        Value keep = arith::CmpIOp::create(b, loc,
                                           upper ? arith::CmpIPredicate::sge
                                                 : arith::CmpIPredicate::sle,
                                           diagonal, k);
        return arith::SelectOp::create(b, loc, keep, a[0],
                                       constantLike(b, loc, a[0], 0))
            .getResult();
      });
}

/// BitShift (unsigned integers): X shifted left or right (logically) by Y
/// bits; by the width or more, 0.
static LoweringResult lowerBitShift(NodeLowering &node) {
  StringRef direction = node.getString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return node.emitError()
           << "direction must be LEFT or RIGHT, not '" << direction << "'";
  bool left = direction == "LEFT";
  for (unsigned i : {0u, 1u}) {
    RankedTensorType type = getRankedType(node.operand(i));
    if (!type || !isa<IntegerType>(type.getElementType()))
      return node.emitError() << "expects integer tensors";
  }
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0], y = a[1];
    Value shifted = left ? arith::ShLIOp::create(b, loc, x, y).getResult()
                         : arith::ShRUIOp::create(b, loc, x, y).getResult();
    Value tooFar = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::uge, y,
        constantLike(b, loc, y, x.getType().getIntOrFloatBitWidth()));
    return arith::SelectOp::create(b, loc, tooFar, constantLike(b, loc, x, 0),
                                   shifted)
        .getResult();
  });
}

/// Mod: the remainder with the dividend's sign (fmod=1, C's fmod), or with
/// the divisor's (fmod=0, Python's %; ONNX asks fmod=1 of floats, numpy's
/// mod is taken for them).
static LoweringResult lowerMod(NodeLowering &node) {
  bool fmod = node.getInt("fmod", 0) != 0;
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0], y = a[1];
    Value rem = unsignedOperands
                    ? floatOrInt<arith::RemFOp, arith::RemUIOp>(b, loc, x, y)
                    : floatOrInt<arith::RemFOp, arith::RemSIOp>(b, loc, x, y);
    if (fmod)
      return rem;
    // A non-zero remainder whose sign differs from the divisor's moves by
    // one divisor.
    Value zero = constantLike(b, loc, x, 0);
    Value nonZero = compare(b, loc, rem, zero, arith::CmpFPredicate::UNE,
                            arith::CmpIPredicate::ne);
    Value remNegative = compare(b, loc, rem, zero, arith::CmpFPredicate::OLT,
                                arith::CmpIPredicate::slt);
    Value divisorNegative = compare(b, loc, y, zero, arith::CmpFPredicate::OLT,
                                    arith::CmpIPredicate::slt);
    Value differ = arith::XOrIOp::create(b, loc, remNegative, divisorNegative);
    Value shift = arith::AndIOp::create(b, loc, nonZero, differ);
    return arith::SelectOp::create(b, loc, shift, add(b, loc, rem, y), rem)
        .getResult();
  });
}

static LoweringResult lowerHardSigmoid(NodeLowering &node) {
  bool swish = node.getNode().getOpType() == "HardSwish";
  double alpha = swish ? 1.0 / 6 : node.getFloat("alpha", 0.2);
  double beta = swish ? 0.5 : node.getFloat("beta", 0.5);
  return lowerAll(node, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0];
    Value y = add(b, loc, mul(b, loc, x, constantLike(b, loc, x, alpha)),
                  constantLike(b, loc, x, beta));
    y = min(b, loc, max(b, loc, y, constantLike(b, loc, x, 0)),
            constantLike(b, loc, x, 1));
    return swish ? mul(b, loc, x, y) : y;
  });
}

/// x^y in x's type. An integer base is raised in f64 (exact below 2^53)
/// and truncated, as ONNX's reference does for a float exponent.
static Value pow(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x))
    return math::PowFOp::create(
        b, loc, x,
        convertScalar(b, loc, y, x.getType(),
                      /*fromUnsigned=*/!isFloat(y) && unsignedOperands));
  Type f64 = b.getF64Type();
  Value power = math::PowFOp::create(
      b, loc, convertScalar(b, loc, x, f64, unsignedOperands),
      convertScalar(b, loc, y, f64, !isFloat(y) && unsignedOperands));
  return convertScalar(b, loc, power, x.getType(), /*fromUnsigned=*/false,
                       unsignedOperands);
}

void amp::lowering::populateElementwiseLowerings(LoweringTable &table) {
  SIMPLE("", "Add", add(b, loc, a[0], a[1]));
  SIMPLE("", "Sub", sub(b, loc, a[0], a[1]));
  SIMPLE("", "Mul", mul(b, loc, a[0], a[1]));
  SIMPLE("", "Div", div(b, loc, a[0], a[1]));
  SIMPLE("", "Pow", pow(b, loc, a[0], a[1]));
  table.add("", "Mod", lowerMod);
  table.add("", "Sum", [](NodeLowering &node) {
    return lowerVariadic(node, add, /*mean=*/false);
  });
  table.add("", "Mean", [](NodeLowering &node) {
    return lowerVariadic(node, add, /*mean=*/true);
  });
  table.add("", "Max", [](NodeLowering &node) {
    return lowerVariadic(node, max, /*mean=*/false);
  });
  table.add("", "Min", [](NodeLowering &node) {
    return lowerVariadic(node, min, /*mean=*/false);
  });
  SIMPLE("", "Neg",
         isFloat(a[0]) ? arith::NegFOp::create(b, loc, a[0]).getResult()
                       : sub(b, loc, constantLike(b, loc, a[0], 0), a[0]));
  SIMPLE("", "Abs",
         isFloat(a[0]) ? math::AbsFOp::create(b, loc, a[0]).getResult()
                       : math::AbsIOp::create(b, loc, a[0]).getResult());
  SIMPLE("", "Sign",
         isFloat(a[0])
             ? arith::SelectOp::create(
                   b, loc,
                   arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         a[0], constantLike(b, loc, a[0], 0)),
                   constantLike(b, loc, a[0], 0),
                   math::CopySignOp::create(
                       b, loc, constantLike(b, loc, a[0], 1), a[0]))
                   .getResult()
             : arith::SubIOp::create(
                   b, loc,
                   convertScalar(b, loc,
                                 compare(b, loc, a[0],
                                         constantLike(b, loc, a[0], 0),
                                         arith::CmpFPredicate::OGT,
                                         arith::CmpIPredicate::sgt),
                                 a[0].getType()),
                   convertScalar(b, loc,
                                 compare(b, loc, a[0],
                                         constantLike(b, loc, a[0], 0),
                                         arith::CmpFPredicate::OLT,
                                         arith::CmpIPredicate::slt),
                                 a[0].getType()))
                   .getResult());
  SIMPLE("", "Sqrt", math::SqrtOp::create(b, loc, a[0]));
  SIMPLE("", "Exp", exp(b, loc, a[0]));
  SIMPLE("", "Log", math::LogOp::create(b, loc, a[0]));
  SIMPLE("", "Erf", math::ErfOp::create(b, loc, a[0]));
  SIMPLE("", "Sin", math::SinOp::create(b, loc, a[0]));
  SIMPLE("", "Cos", math::CosOp::create(b, loc, a[0]));
  SIMPLE("", "Tan", math::TanOp::create(b, loc, a[0]));
  SIMPLE("", "Tanh", math::TanhOp::create(b, loc, a[0]));
  SIMPLE("", "Sinh", math::SinhOp::create(b, loc, a[0]));
  SIMPLE("", "Cosh", math::CoshOp::create(b, loc, a[0]));
  SIMPLE("", "Asin", math::AsinOp::create(b, loc, a[0]));
  SIMPLE("", "Acos", math::AcosOp::create(b, loc, a[0]));
  SIMPLE("", "Atan", math::AtanOp::create(b, loc, a[0]));
  SIMPLE("", "Asinh", math::AsinhOp::create(b, loc, a[0]));
  SIMPLE("", "Acosh", math::AcoshOp::create(b, loc, a[0]));
  SIMPLE("", "Atanh", math::AtanhOp::create(b, loc, a[0]));
  SIMPLE("", "Ceil", math::CeilOp::create(b, loc, a[0]));
  SIMPLE("", "Floor", math::FloorOp::create(b, loc, a[0]));
  SIMPLE("", "Round", math::RoundEvenOp::create(b, loc, a[0]));
  SIMPLE("", "Reciprocal", div(b, loc, constantLike(b, loc, a[0], 1), a[0]));
  SIMPLE("", "Relu", max(b, loc, a[0], constantLike(b, loc, a[0], 0)));
  SIMPLE("", "Sigmoid", sigmoid(b, loc, a[0]));
  SIMPLE("", "Softplus",
         math::Log1pOp::create(b, loc, exp(b, loc, a[0])).getResult());
  // Mish (opset 18): x tanh(softplus(x)); where exp(x) overflows, tanh is 1.
  SIMPLE("", "Mish",
         mul(b, loc, a[0],
             math::TanhOp::create(
                 b, loc, math::Log1pOp::create(b, loc, exp(b, loc, a[0])))));
  SIMPLE("", "Softsign",
         div(b, loc, a[0],
             add(b, loc, constantLike(b, loc, a[0], 1),
                 math::AbsFOp::create(b, loc, a[0]))));
  SIMPLE("", "PRelu",
         arith::SelectOp::create(
             b, loc,
             arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a[0],
                                   constantLike(b, loc, a[0], 0)),
             mul(b, loc, a[0], a[1]), a[0])
             .getResult());
  SIMPLE("", "IsNaN",
         arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a[0], a[0])
             .getResult());
  table.add("", "IsInf", lowerIsInf);
  table.add("", "LeakyRelu", lowerLeakyRelu);
  table.add("", "Elu", lowerElu);
  table.add("", "Selu", lowerElu);
  table.add("", "HardSigmoid", lowerHardSigmoid);
  table.add("", "HardSwish", lowerHardSigmoid);
  table.add("", "Gelu", lowerGelu);
  table.add("", "Clip", lowerClip);
  table.add("", "Cast", lowerCast);
  table.add("", "CastLike", lowerCast);
  table.add("", "Celu", lowerCelu);
  table.add("", "Swish", lowerSwish);
  table.add("", "ThresholdedRelu", lowerThresholdedRelu);
  table.add("", "Shrink", lowerShrink);
  table.add("", "Trilu", lowerTrilu);
  table.add("", "BitShift", lowerBitShift);
  SIMPLE("", "Where",
         arith::SelectOp::create(b, loc, a[0], a[1], a[2]).getResult());
  SIMPLE("", "Equal",
         compare(b, loc, a[0], a[1], arith::CmpFPredicate::OEQ,
                 arith::CmpIPredicate::eq));
  SIMPLE("", "Less",
         compare(b, loc, a[0], a[1], arith::CmpFPredicate::OLT,
                 arith::CmpIPredicate::slt));
  SIMPLE("", "LessOrEqual",
         compare(b, loc, a[0], a[1], arith::CmpFPredicate::OLE,
                 arith::CmpIPredicate::sle));
  SIMPLE("", "Greater",
         compare(b, loc, a[0], a[1], arith::CmpFPredicate::OGT,
                 arith::CmpIPredicate::sgt));
  SIMPLE("", "GreaterOrEqual",
         compare(b, loc, a[0], a[1], arith::CmpFPredicate::OGE,
                 arith::CmpIPredicate::sge));
  SIMPLE(
      "", "Not",
      arith::XOrIOp::create(
          b, loc, a[0], arith::ConstantOp::create(b, loc, b.getBoolAttr(true)))
          .getResult());
  SIMPLE("", "And", arith::AndIOp::create(b, loc, a[0], a[1]).getResult());
  SIMPLE("", "Or", arith::OrIOp::create(b, loc, a[0], a[1]).getResult());
  SIMPLE("", "Xor", arith::XOrIOp::create(b, loc, a[0], a[1]).getResult());
  // Bitwise ops (opset 18) of integers.
  SIMPLE("", "BitwiseAnd",
         arith::AndIOp::create(b, loc, a[0], a[1]).getResult());
  SIMPLE("", "BitwiseOr", arith::OrIOp::create(b, loc, a[0], a[1]).getResult());
  SIMPLE("", "BitwiseXor",
         arith::XOrIOp::create(b, loc, a[0], a[1]).getResult());
  SIMPLE("", "BitwiseNot",
         arith::XOrIOp::create(b, loc, a[0], constantLike(b, loc, a[0], -1))
             .getResult());

  // com.microsoft
  table.add("com.microsoft", "Gelu", lowerGelu);
  table.add("com.microsoft", "FastGelu", lowerGelu);
  table.add("com.microsoft", "BiasGelu", lowerGelu);
  table.add("com.microsoft", "Scale", lowerScale);
  table.add("com.microsoft", "GeluGrad", lowerGeluGrad);
  table.add("com.microsoft", "BiasGeluGrad_dX", lowerGeluGrad);
  table.add("com.microsoft", "BiasFastGeluGrad_dX", lowerGeluGrad);
  table.add("com.microsoft", "FastGeluGrad", lowerGeluGrad);
  table.add("com.microsoft", "QuickGelu", lowerQuickGelu);
  table.add("com.microsoft", "QuickGeluGrad", lowerQuickGelu);
  table.add("com.microsoft", "DivGrad", lowerDivGrad);
  table.add("com.microsoft", "LeakyReluGrad", lowerLeakyReluGrad);
  // Trilu's gradient is a Trilu of dY.
  table.add("com.microsoft", "Trilu", lowerTrilu);
  // SigmoidGrad(dY, Y) = dY * Y * (1 - Y), Y the forward's output.
  SIMPLE(
      "com.microsoft", "SigmoidGrad",
      mul(b, loc, a[0],
          mul(b, loc, a[1], sub(b, loc, constantLike(b, loc, a[1], 1), a[1]))));
  // ReluGrad(dY, X) = X > 0 ? dY : 0.
  SIMPLE("com.microsoft", "ReluGrad",
         arith::SelectOp::create(
             b, loc,
             arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, a[1],
                                   constantLike(b, loc, a[1], 0)),
             a[0], constantLike(b, loc, a[0], 0))
             .getResult());
  // TanhGrad(dY, Y) = dY * (1 - Y^2), Y the forward's output.
  SIMPLE(
      "com.microsoft", "TanhGrad",
      mul(b, loc, a[0],
          sub(b, loc, constantLike(b, loc, a[1], 1), mul(b, loc, a[1], a[1]))));
}
