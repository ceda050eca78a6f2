//===- Quantization.cpp - Lower the linear quantization ops ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (per tensor or
// per axis; 8- and 16-bit integers and FP8), and ONNX Runtime's
// quantization-aware training ops com.microsoft FakeQuant and
// FakeQuantGrad. Integers are rounded half to even (std::nearbyint) and
// saturated to their type's range; the arithmetic is f32.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::amp::lowering;

/// A scalar of an unsigned integer type as the signless one of its width,
/// which arith computes with (a cast the LLVM lowering folds away).
static Value toSignless(OpBuilder &b, Location loc, Value value) {
  Type signless = getSignlessType(value.getType());
  return signless == value.getType()
             ? value
             : reinterpretInteger(b, loc, value, signless);
}

/// A signless scalar as `type` when that is unsigned.
static Value fromSignless(OpBuilder &b, Location loc, Value value, Type type) {
  return value.getType() == type ? value
                                 : reinterpretInteger(b, loc, value, type);
}

/// Operand `i` (a scale or zero point) shaped to broadcast against `input`:
/// one element becomes a scalar, a 1-D tensor of the size of `axis` becomes
/// that size at `axis` and 1 elsewhere. Null when absent.
static FailureOr<Value> alignToAxis(NodeLowering &node, unsigned i,
                                    RankedTensorType inputType,
                                    StringRef what) {
  Value value = node.operand(i);
  if (!value)
    return Value();
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  RankedTensorType type = getRankedType(value);
  if (!type || !type.hasStaticShape())
    return node.emitError() << "the " << what << " must have a static shape";
  Type element = type.getElementType();
  if (type.getNumElements() == 1)
    return reshapeTo(b, loc, value, RankedTensorType::get({}, element));
  // Per axis: `axis` (default 1) matters only here.
  int64_t rank = inputType.getRank();
  std::optional<int64_t> axis = normalizeAxis(node.getInt("axis", 1), rank);
  if (!axis)
    return node.emitError() << "axis " << node.getInt("axis", 1)
                            << " is out of range for rank " << rank;
  if (type.getRank() != 1 || type.getDimSize(0) != inputType.getDimSize(*axis))
    return node.emitError()
           << "the " << what << " must have one element or one per element "
           << "of axis " << *axis << " (" << inputType.getDimSize(*axis)
           << "), not " << type;
  SmallVector<int64_t> shape(rank, 1);
  shape[*axis] = type.getDimSize(0);
  return reshapeTo(b, loc, value, RankedTensorType::get(shape, element));
}

/// An f32 scalar of `value`, an element of an ONNX tensor of `type`
/// (integers reach generics signless).
static Value toF32(OpBuilder &b, Location loc, Value value, Type type);

/// The input (operand 0), its quantization axis (`axis`, default 1) and
/// its scale and zero point (operands 1 and 2) aligned to it.
struct QuantizationOperands {
  Value input, scale, zeroPoint;
  RankedTensorType inputType;
  Type zeroPointType; ///< The declared zero point's element type, or null.

  /// An elementwise generic of `elementType` over the input, scale and zero
  /// point, whose body gets them as f32 scalars (a null zero point when
  /// there is none).
  Value
  build(OpBuilder &b, Location loc, Type elementType,
        function_ref<Value(OpBuilder &, Location, Value, Value, Value)> body) {
    SmallVector<Value> inputs = {input, scale};
    if (zeroPoint)
      inputs.push_back(zeroPoint);
    Type inputElement = inputType.getElementType();
    return buildElementwise(
        b, loc, inputType.clone(elementType), inputs,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value zero =
              args.size() > 2 ? toF32(nb, nl, args[2], zeroPointType) : Value();
          return body(nb, nl, toF32(nb, nl, args[0], inputElement),
                      convertScalar(nb, nl, args[1], nb.getF32Type()), zero);
        });
  }
};

static FailureOr<QuantizationOperands> getOperands(NodeLowering &node) {
  QuantizationOperands operands;
  operands.input = node.operand(0);
  operands.inputType = getRankedType(operands.input);
  if (!operands.inputType || !operands.inputType.hasStaticShape())
    return node.emitError() << "expects a static input shape";
  if (node.getInt("block_size", 0) != 0)
    return node.emitError() << "blocked quantization (block_size) does not "
                               "lower yet";
  FailureOr<Value> scale = alignToAxis(node, 1, operands.inputType, "scale");
  if (failed(scale))
    return failure();
  FailureOr<Value> zeroPoint =
      alignToAxis(node, 2, operands.inputType, "zero point");
  if (failed(zeroPoint))
    return failure();
  if (!*scale || !isa<FloatType>(getRankedType(*scale).getElementType()))
    return node.emitError() << "the scale must be a float tensor";
  operands.scale = *scale;
  operands.zeroPoint = *zeroPoint;
  if (Value declared = node.operand(2))
    operands.zeroPointType = getRankedType(declared).getElementType();
  return operands;
}

/// `value` (f32, integers already rounded) as a scalar of `type`: integers
/// saturated to its range, floats converted (saturating FP8 when
/// `saturate`).
static Value quantizeScalar(OpBuilder &b, Location loc, Value value, Type type,
                            bool saturate) {
  Type stored = getSignlessType(type);
  if (isa<FloatType>(type)) {
    if (!saturate)
      return arith::TruncFOp::create(b, loc, type, value);
    return convertScalar(b, loc, value, type);
  }
  unsigned width = type.getIntOrFloatBitWidth();
  bool isUnsigned = type.isUnsignedInteger();
  double low = isUnsigned ? 0 : -std::ldexp(1.0, width - 1);
  double high =
      isUnsigned ? std::ldexp(1.0, width) - 1 : std::ldexp(1.0, width - 1) - 1;
  Type f32 = b.getF32Type();
  value =
      arith::MaximumFOp::create(b, loc, value, createScalar(b, loc, f32, low));
  value =
      arith::MinimumFOp::create(b, loc, value, createScalar(b, loc, f32, high));
  return fromSignless(b, loc,
                      convertScalar(b, loc, value, stored,
                                    /*fromUnsigned=*/false, isUnsigned),
                      type);
}

static Value toF32(OpBuilder &b, Location loc, Value value, Type type) {
  return convertScalar(b, loc, toSignless(b, loc, value), b.getF32Type(),
                       type && type.isUnsignedInteger());
}

/// QuantizeLinear(x, y_scale, y_zero_point?): saturate(round(x / y_scale) +
/// y_zero_point), in the zero point's type (else `output_dtype`, else
/// uint8); FP8 outputs are x / y_scale converted, saturating unless
/// `saturate` is 0.
static LoweringResult lowerQuantizeLinear(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  FailureOr<QuantizationOperands> operands = getOperands(node);
  if (failed(operands))
    return failure();
  Type type = operands->zeroPointType;
  if (!type)
    type = onnxg::getElementType(b.getContext(),
                                 node.getInt("output_dtype", 2 /*UINT8*/));
  type = node.resultElementType(0, type);
  if (!type || (!isa<FloatType>(type) && !isa<IntegerType>(type)))
    return node.emitError() << "quantizes to integers or FP8, not " << type;
  bool saturate = node.getInt("saturate", 1) != 0;
  return SmallVector<Value>{operands->build(
      b, loc, type,
      [&](OpBuilder &nb, Location nl, Value x, Value scale, Value zero) {
        Value scaled = arith::DivFOp::create(nb, nl, x, scale);
        if (isa<IntegerType>(type))
          scaled = math::RoundEvenOp::create(nb, nl, scaled);
        if (zero)
          scaled = arith::AddFOp::create(nb, nl, scaled, zero);
        return quantizeScalar(nb, nl, scaled, type, saturate);
      })};
}

/// DequantizeLinear(x, x_scale, x_zero_point?): (x - x_zero_point) *
/// x_scale, in the scale's type.
static LoweringResult lowerDequantizeLinear(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  FailureOr<QuantizationOperands> operands = getOperands(node);
  if (failed(operands))
    return failure();
  Type type = node.resultElementType(
      0, getRankedType(node.operand(1)).getElementType());
  return SmallVector<Value>{operands->build(
      b, loc, type,
      [](OpBuilder &nb, Location nl, Value x, Value scale, Value zero) {
        if (zero)
          x = arith::SubFOp::create(nb, nl, x, zero);
        return arith::MulFOp::create(nb, nl, x, scale).getResult();
      })};
}

/// DynamicQuantizeLinear(x) -> (y, y_scale, y_zero_point): uint8 over the
/// range of x widened to hold 0: scale = (max - min) / 255, zero point =
/// saturate(round(-min / scale)), y = saturate(round(x / scale) + zero
/// point). An all-zero x has scale 0 and quantizes to 0.
static LoweringResult lowerDynamicQuantizeLinear(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type || !type.hasStaticShape() || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects a float tensor of static shape";
  Type f32 = b.getF32Type(), u8 = b.getIntegerType(8, /*isSigned=*/false);
  SmallVector<int64_t> all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  auto extreme = [&](CombineKind kind) {
    // Starting from 0 includes it in the range.
    return buildReduction(b, loc, input, all, f32, createScalar(b, loc, f32, 0),
                          [&](OpBuilder &nb, Location nl, Value x, Value acc) {
                            return combineValues(nb, nl, kind, acc, x);
                          });
  };
  Value low = extreme(CombineKind::Min), high = extreme(CombineKind::Max);
  auto scalarType = RankedTensorType::get({}, f32);
  Value scale = buildElementwise(
      b, loc, scalarType, ValueRange{low, high},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::DivFOp::create(
                   nb, nl, arith::SubFOp::create(nb, nl, args[1], args[0]),
                   createScalar(nb, nl, f32, 255))
            .getResult();
      });
  // x / scale with a scale of 0 (every x is 0) divides by 1 instead.
  auto safeDivide = [&](OpBuilder &nb, Location nl, Value x, Value s) {
    Value zero = createScalar(nb, nl, f32, 0);
    Value isZero =
        arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, s, zero);
    Value divisor = arith::SelectOp::create(nb, nl, isZero,
                                            createScalar(nb, nl, f32, 1), s);
    return arith::DivFOp::create(nb, nl, x, divisor).getResult();
  };
  Value zeroPoint =
      buildElementwise(b, loc, scalarType.clone(u8), ValueRange{low, scale},
                       [&](OpBuilder &nb, Location nl, ValueRange args) {
                         Value negated = arith::NegFOp::create(nb, nl, args[0]);
                         Value rounded = math::RoundEvenOp::create(
                             nb, nl, safeDivide(nb, nl, negated, args[1]));
                         return quantizeScalar(nb, nl, rounded, u8, true);
                       });
  Value quantized = buildElementwise(
      b, loc, type.clone(u8), ValueRange{input, scale, zeroPoint},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convertScalar(nb, nl, args[0], f32);
        Value rounded =
            math::RoundEvenOp::create(nb, nl, safeDivide(nb, nl, x, args[1]));
        Value shifted =
            arith::AddFOp::create(nb, nl, rounded, toF32(nb, nl, args[2], u8));
        return quantizeScalar(nb, nl, shifted, u8, true);
      });
  return SmallVector<Value>{quantized, scale, zeroPoint};
}

/// com.microsoft FakeQuant(x, scale, zero_point) -> (y, mask): q =
/// round(x / scale) + zero_point, y = (clamp(q, quant_min, quant_max) -
/// zero_point) * scale, and mask says where q was in range (the gradient
/// passes there). Per tensor, as ONNX Runtime's kernel.
static LoweringResult lowerFakeQuant(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects a float tensor";
  SmallVector<Value> parameters;
  for (unsigned i : {1u, 2u}) {
    RankedTensorType parameterType = getRankedType(node.operand(i));
    if (!parameterType || !parameterType.hasStaticShape() ||
        parameterType.getNumElements() != 1 ||
        !isa<FloatType>(parameterType.getElementType()))
      return node.emitError() << "the scale and zero point must be float "
                                 "tensors of one element";
    parameters.push_back(
        getScalarOperand(node, i, i == 1 ? "scale" : "zero point"));
    if (!parameters.back())
      return failure();
  }
  Type f32 = b.getF32Type();
  double low = node.getInt("quant_min", 0),
         high = node.getInt("quant_max", 255);
  // q in f32: integers up to 2^24 are exact.
  auto quantize = [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value x = convertScalar(nb, nl, args[0], f32);
    Value zeroPoint =
        math::TruncOp::create(nb, nl, convertScalar(nb, nl, args[2], f32));
    Value rounded = math::RoundEvenOp::create(
        nb, nl,
        arith::DivFOp::create(nb, nl, x, convertScalar(nb, nl, args[1], f32)));
    return std::make_pair(arith::AddFOp::create(nb, nl, rounded, zeroPoint),
                          zeroPoint);
  };
  SmallVector<Value> operands = {input, parameters[0], parameters[1]};
  Value output = buildElementwise(
      b, loc, type, operands, [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto [q, zeroPoint] = quantize(nb, nl, args);
        Value clamped = arith::MinimumFOp::create(
            nb, nl,
            arith::MaximumFOp::create(nb, nl, q,
                                      createScalar(nb, nl, f32, low)),
            createScalar(nb, nl, f32, high));
        return arith::MulFOp::create(
                   nb, nl, arith::SubFOp::create(nb, nl, clamped, zeroPoint),
                   convertScalar(nb, nl, args[1], f32))
            .getResult();
      });
  Value mask = buildElementwise(
      b, loc, type.clone(b.getI1Type()), operands,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value q = quantize(nb, nl, args).first;
        return arith::AndIOp::create(
                   nb, nl,
                   arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE, q,
                                         createScalar(nb, nl, f32, low)),
                   arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE, q,
                                         createScalar(nb, nl, f32, high)))
            .getResult();
      });
  return SmallVector<Value>{output, mask};
}

/// com.microsoft FakeQuantGrad(dY, mask): dY where the mask is set, else 0.
static LoweringResult lowerFakeQuantGrad(NodeLowering &node) {
  Value dy = node.operand(0), mask = node.operand(1);
  RankedTensorType type = getRankedType(dy);
  RankedTensorType maskType = getRankedType(mask);
  if (!type || !isa<FloatType>(type.getElementType()) || !maskType ||
      !maskType.getElementType().isInteger(1) ||
      !getBroadcastType({dy, mask}, type))
    return node.emitError() << "expects a float gradient and a bool mask of "
                               "its shape";
  return SmallVector<Value>{buildElementwise(
      node.getBuilder(), node.getLoc(),
      type.clone(node.resultElementType(0, type.getElementType())),
      ValueRange{dy, mask}, [](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::SelectOp::create(
                   nb, nl, args[1], args[0],
                   createScalar(nb, nl, args[0].getType(), 0))
            .getResult();
      })};
}

void amp::lowering::populateQuantizationLowerings(LoweringTable &table) {
  table.add("", "QuantizeLinear", lowerQuantizeLinear);
  table.add("", "DequantizeLinear", lowerDequantizeLinear);
  table.add("", "DynamicQuantizeLinear", lowerDynamicQuantizeLinear);
  table.add("com.microsoft", "FakeQuant", lowerFakeQuant);
  table.add("com.microsoft", "FakeQuantGrad", lowerFakeQuantGrad);
}
