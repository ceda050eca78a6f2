//===- ExpandFP8Casts.cpp - FP8 casts as integer arithmetic ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-expand-fp8-casts pass: rewrites arith.truncf to and arith.extf
// from f8E4M3FN and f8E5M2 into i32 bit arithmetic and selects, which LLVM
// vectorizes, instead of the per-element APFloat calls that
// convert-arith-to-apfloat makes of them. Results are APFloat's, bit for
// bit: round to nearest even, subnormals, NaN, and overflow to NaN
// (E4M3FN) or infinity (E5M2).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>

namespace mlir::amp {
#define GEN_PASS_DEF_EXPANDFP8CASTS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
/// An FP8 format's encoding: mantissa bits, exponent bias, and the codes
/// (sign cleared) of its largest finite value, of the NaN a conversion
/// produces, and of infinity (NaN for formats without one).
struct FP8Format {
  int64_t mantissaBits, bias, nanCode, overflowCode;
  /// The f32 bits of the smallest magnitude that overflows: the largest
  /// finite value plus half its unit in the last place.
  int64_t overflowBits;
  bool hasInfinity;
};
} // namespace

/// The encoding of `type` when this pass expands its casts.
static std::optional<FP8Format> getFormat(Type type) {
  if (!isa<Float8E4M3FNType, Float8E5M2Type>(type))
    return std::nullopt;
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type).getFloatSemantics();
  auto code = [](const APFloat &value) {
    return int64_t(value.bitcastToAPInt().getZExtValue());
  };
  FP8Format format;
  format.mantissaBits = llvm::APFloat::semanticsPrecision(semantics) - 1;
  format.bias = 1 - llvm::APFloat::semanticsMinExponent(semantics);
  APFloat threshold = APFloat::getLargest(semantics);
  bool losesInfo = false;
  threshold.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
  float largest = threshold.convertToFloat();
  float halfUlp =
      std::ldexp(1.0f, std::ilogb(largest) - int(format.mantissaBits) - 1);
  format.overflowBits =
      int64_t(APFloat(largest + halfUlp).bitcastToAPInt().getZExtValue());
  format.nanCode = code(APFloat::getQNaN(semantics));
  format.hasInfinity = APFloat::semanticsHasInf(semantics);
  format.overflowCode =
      format.hasInfinity ? code(APFloat::getInf(semantics)) : format.nanCode;
  return format;
}

/// `type` (a scalar or a vector) with `element` as its element type.
static Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

namespace {
/// Builds the bit arithmetic on values shaped like the cast's operand.
struct BitBuilder {
  OpBuilder &b;
  Location loc;
  Type shape; // the operand's type: scalar or vector

  Type i32() { return withElement(shape, b.getI32Type()); }
  Type f32() { return withElement(shape, b.getF32Type()); }
  Value splat(Type type, TypedAttr scalar) {
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(vector, scalar));
    return arith::ConstantOp::create(b, loc, scalar);
  }
  Value int32(int64_t value) {
    return splat(i32(), b.getI32IntegerAttr(int32_t(value)));
  }
  Value float32(float value) { return splat(f32(), b.getF32FloatAttr(value)); }
  Value andI(Value x, int64_t mask) {
    return arith::AndIOp::create(b, loc, x, int32(mask));
  }
  Value orI(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, int64_t bits) {
    return arith::ShLIOp::create(b, loc, x, int32(bits));
  }
  Value shr(Value x, int64_t bits) {
    return arith::ShRUIOp::create(b, loc, x, int32(bits));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate predicate, Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, predicate, x, int32(y));
  }
  Value select(Value condition, Value x, Value y) {
    return arith::SelectOp::create(b, loc, condition, x, y);
  }
  Value bitcast(Type type, Value x) {
    return arith::BitcastOp::create(b, loc, type, x);
  }

  /// The FP8 code (in an i32) of the f32 `x`, rounded to nearest even.
  Value encode(Value x, const FP8Format &format) {
    Value bits = bitcast(i32(), x);
    Value sign = andI(shr(bits, 24), 0x80);
    Value magnitude = andI(bits, 0x7FFFFFFF);
    // Normal: drop the extra mantissa bits, rounding half to even, then
    // rebias the exponent. A carry into the exponent is the right result.
    int64_t dropped = 23 - format.mantissaBits;
    Value odd = andI(shr(magnitude, dropped), 1);
    Value rounded =
        add(add(magnitude, int32((int64_t(1) << (dropped - 1)) - 1)), odd);
    Value normal = arith::SubIOp::create(
        b, loc, shr(rounded, dropped),
        int32((127 - format.bias) << format.mantissaBits));
    // Subnormal: the magnitude in units of the smallest subnormal, rounded
    // to an integer by f32 addition of 2^23 (round to nearest even); a
    // round-up to 2^mantissaBits is the smallest normal's code.
    Value scaled = arith::MulFOp::create(
        b, loc, bitcast(f32(), magnitude),
        float32(std::ldexp(1.0f, int(format.mantissaBits + format.bias - 1))));
    Value magic = float32(8388608.0f);
    Value integral = arith::SubFOp::create(
        b, loc, arith::AddFOp::create(b, loc, scaled, magic), magic);
    Value subnormal = arith::FPToUIOp::create(b, loc, i32(), integral);
    Value isSubnormal =
        cmp(arith::CmpIPredicate::ult, magnitude, (128 - format.bias) << 23);
    Value code = select(isSubnormal, subnormal, normal);
    // From halfway past the largest finite value on: infinity, or NaN
    // where there is none (APFloat rounds that tie up for E4M3FN too).
    code =
        select(cmp(arith::CmpIPredicate::uge, magnitude, format.overflowBits),
               int32(format.overflowCode), code);
    code = select(cmp(arith::CmpIPredicate::ugt, magnitude, 0x7F800000),
                  int32(format.nanCode), code);
    return orI(code, sign);
  }

  /// The f32 bits of the FP8 code `code` (an i32).
  Value decode(Value code, const FP8Format &format) {
    int64_t exponentMask = (0x7F >> format.mantissaBits);
    Value sign = shl(andI(code, 0x80), 24);
    Value exponent = andI(shr(code, format.mantissaBits), exponentMask);
    Value mantissa = andI(code, (1 << format.mantissaBits) - 1);
    Value normal = orI(shl(add(exponent, int32(127 - format.bias)), 23),
                       shl(mantissa, 23 - format.mantissaBits));
    // Subnormal (and zero): mantissa * 2^(1 - bias - mantissaBits), exact.
    Value subnormal = bitcast(
        i32(), arith::MulFOp::create(
                   b, loc, arith::UIToFPOp::create(b, loc, f32(), mantissa),
                   float32(std::ldexp(
                       1.0f, int(1 - format.bias - format.mantissaBits)))));
    Value magnitude =
        select(cmp(arith::CmpIPredicate::eq, exponent, 0), subnormal, normal);
    Value unsignedCode = andI(code, 0x7F);
    if (format.hasInfinity) {
      Value special = cmp(arith::CmpIPredicate::eq, exponent, exponentMask);
      Value infinite = cmp(arith::CmpIPredicate::eq, mantissa, 0);
      magnitude = select(special,
                         select(infinite, int32(0x7F800000), int32(0x7FC00000)),
                         magnitude);
    } else {
      magnitude =
          select(cmp(arith::CmpIPredicate::eq, unsignedCode, format.nanCode),
                 int32(0x7FC00000), magnitude);
    }
    return bitcast(f32(), orI(magnitude, sign));
  }
};
} // namespace

/// Replaces a `truncf` to an FP8 type from f32, f16 or bf16 (widened to
/// f32 first, exactly) that rounds to nearest even.
static void expandTruncate(arith::TruncFOp op) {
  Type source = getElementTypeOrSelf(op.getIn().getType());
  std::optional<FP8Format> format =
      getFormat(getElementTypeOrSelf(op.getType()));
  if (!format || !(source.isF32() || source.isF16() || source.isBF16()) ||
      (op.getRoundingmode() &&
       *op.getRoundingmode() != arith::RoundingMode::to_nearest_even))
    return;
  OpBuilder b(op);
  BitBuilder builder{b, op.getLoc(), op.getIn().getType()};
  Value x = op.getIn();
  if (!source.isF32())
    x = arith::ExtFOp::create(b, op.getLoc(), builder.f32(), x);
  Value code = builder.encode(x, *format);
  Value byte = arith::TruncIOp::create(
      b, op.getLoc(), withElement(builder.shape, b.getI8Type()), code);
  op.replaceAllUsesWith(builder.bitcast(op.getType(), byte));
  op.erase();
}

/// Replaces an `extf` from an FP8 type to f32, f16 or bf16 (rounded from
/// f32, exactly).
static void expandExtend(arith::ExtFOp op) {
  Type target = getElementTypeOrSelf(op.getType());
  std::optional<FP8Format> format =
      getFormat(getElementTypeOrSelf(op.getIn().getType()));
  if (!format || !(target.isF32() || target.isF16() || target.isBF16()))
    return;
  OpBuilder b(op);
  BitBuilder builder{b, op.getLoc(), op.getIn().getType()};
  Value byte =
      builder.bitcast(withElement(builder.shape, b.getI8Type()), op.getIn());
  Value code = arith::ExtUIOp::create(b, op.getLoc(), builder.i32(), byte);
  Value result = builder.decode(code, *format);
  if (!target.isF32())
    result = arith::TruncFOp::create(b, op.getLoc(), op.getType(), result);
  op.replaceAllUsesWith(result);
  op.erase();
}

namespace {
struct ExpandFP8CastsPass : amp::impl::ExpandFP8CastsBase<ExpandFP8CastsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> casts;
    getOperation().walk([&](Operation *op) {
      if (isa<arith::TruncFOp, arith::ExtFOp>(op))
        casts.push_back(op);
    });
    for (Operation *op : casts) {
      if (auto truncate = dyn_cast<arith::TruncFOp>(op))
        expandTruncate(truncate);
      else
        expandExtend(cast<arith::ExtFOp>(op));
    }
  }
};
} // namespace
