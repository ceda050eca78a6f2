//===- CastFusionOpInterface.cpp - Ops that absorb casts ------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Interfaces/CastFusionOpInterface.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::amp;

#include "amp/Interfaces/CastFusionOpInterface.cpp.inc"

bool mlir::amp::isConversionTo(OpOperand &use, Type type) {
  Operation *user = use.getOwner();
  auto conversion = dyn_cast<CastFusionOpInterface>(user);
  return conversion && user->getNumResults() == 1 &&
         user->getResult(0).getType() == type &&
         conversion.isConversionOf(0, use.getOperandNumber());
}

//===----------------------------------------------------------------------===//
// Exact casts
//===----------------------------------------------------------------------===//

bool mlir::amp::isExactIn(Type from, FloatType to) {
  const llvm::fltSemantics &b = to.getFloatSemantics();
  if (auto integer = dyn_cast<IntegerType>(from)) {
    unsigned digits = integer.getWidth() - (integer.isUnsigned() ? 0 : 1);
    return integer.getWidth() == 1 ||
           digits <= llvm::APFloatBase::semanticsPrecision(b);
  }
  auto fromFloat = dyn_cast<FloatType>(from);
  if (!fromFloat)
    return false;
  const llvm::fltSemantics &a = fromFloat.getFloatSemantics();
  return llvm::APFloatBase::isRepresentableBy(a, b) &&
         (!llvm::APFloatBase::semanticsHasInf(a) ||
          llvm::APFloatBase::semanticsHasInf(b));
}

bool mlir::amp::castsCompose(Type from, FloatType via, FloatType to) {
  if (isExactIn(from, via))
    return true;
  using Base = llvm::APFloatBase;
  const llvm::fltSemantics &v = via.getFloatSemantics();
  const llvm::fltSemantics &t = to.getFloatSemantics();
  unsigned precision = Base::semanticsPrecision(t);
  bool wideEnough =
      Base::semanticsPrecision(v) >= 2 * precision + 2 &&
      Base::semanticsMaxExponent(v) >= Base::semanticsMaxExponent(t) &&
      Base::semanticsHasInf(v) && Base::semanticsHasInf(t);
  if (!wideEnough)
    return false;
  // Integers are never subnormal; a float source needs `via` to keep the
  // full 2p + 2 bits down to `to`'s smallest subnormal.
  if (isa<IntegerType>(from))
    return true;
  return Base::semanticsMinExponent(v) <=
         Base::semanticsMinExponent(t) - 2 * static_cast<int>(precision) - 2;
}

//===----------------------------------------------------------------------===//
// Converting constants
//===----------------------------------------------------------------------===//

namespace {
/// Converts single float elements given as raw bits, round to nearest even;
/// f32 to f16 and to bf16 without APFloat, since weights can be large.
class ElementConverter {
public:
  ElementConverter(FloatType from, FloatType to)
      : from(from.getFloatSemantics()), to(to.getFloatSemantics()),
        fromBits(from.getWidth()), toBits(to.getWidth()), fromF32(from.isF32()),
        toF16(to.isF16()), toBF16(to.isBF16()) {}

  unsigned getFromBytes() const { return (fromBits + 7) / 8; }
  unsigned getToBytes() const { return (toBits + 7) / 8; }

  /// The converted bits of the element whose bits are `bits`; sets
  /// `outOfRange` when a finite value overflows or a non-zero one flushes.
  uint64_t convert(uint64_t bits, bool &outOfRange) const {
    if (fromF32 && (toF16 || toBF16)) {
      uint32_t in = static_cast<uint32_t>(bits);
      uint16_t out = toF16 ? f32ToF16(in) : f32ToBF16(in);
      uint32_t inAbs = in & 0x7fffffffu;
      uint16_t outAbs = out & 0x7fffu;
      uint16_t outInf = toF16 ? 0x7c00 : 0x7f80;
      outOfRange = (inAbs < 0x7f800000u && outAbs == outInf) ||
                   (inAbs != 0 && outAbs == 0);
      return out;
    }
    llvm::APFloat value(from, llvm::APInt(fromBits, bits));
    bool wasFinite = value.isFinite(), wasZero = value.isZero();
    bool losesInfo = false;
    value.convert(to, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    outOfRange =
        (wasFinite && value.isInfinity()) || (!wasZero && value.isZero());
    return value.bitcastToAPInt().getZExtValue();
  }

private:
  static uint16_t f32ToBF16(uint32_t bits) {
    if ((bits & 0x7fffffffu) > 0x7f800000u)
      return static_cast<uint16_t>((bits >> 16) | 0x40);
    bits += 0x7fffu + ((bits >> 16) & 1);
    return static_cast<uint16_t>(bits >> 16);
  }

  // Fabian Giesen's float_to_half_fast3_rtne.
  static uint16_t f32ToF16(uint32_t bits) {
    const uint32_t f32Infinity = 255u << 23;
    const uint32_t f16Overflow = (127u + 16) << 23;
    const uint32_t denormMagic = ((127u - 15) + (23 - 10) + 1) << 23;
    uint32_t sign = bits & 0x80000000u;
    bits ^= sign;
    uint16_t out;
    if (bits >= f16Overflow) {
      out = bits > f32Infinity ? 0x7e00 : 0x7c00;
    } else if (bits < (113u << 23)) {
      float value, magic;
      std::memcpy(&value, &bits, 4);
      std::memcpy(&magic, &denormMagic, 4);
      value += magic;
      uint32_t sum;
      std::memcpy(&sum, &value, 4);
      out = static_cast<uint16_t>(sum - denormMagic);
    } else {
      uint32_t mantissaOdd = (bits >> 13) & 1;
      bits += (static_cast<uint32_t>(15 - 127) << 23) + 0xfff + mantissaOdd;
      out = static_cast<uint16_t>(bits >> 13);
    }
    return out | static_cast<uint16_t>(sign >> 16);
  }

  const llvm::fltSemantics &from, &to;
  unsigned fromBits, toBits;
  bool fromF32, toF16, toBF16;
};
} // namespace

/// The raw little-endian bytes of `value`'s elements (one element when it is
/// a splat), or nothing for a dense_resource without data.
static std::optional<ArrayRef<char>> getRawBytes(ElementsAttr value) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    return blob->getData();
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.getRawData();
  return std::nullopt;
}

/// Runs `converter` over the elements of `raw`, writing the results into
/// `out` when it is not null; returns whether any element was out of range.
static bool convertRaw(const ElementConverter &converter, ArrayRef<char> raw,
                       char *out) {
  unsigned inBytes = converter.getFromBytes(),
           outBytes = converter.getToBytes();
  bool anyOutOfRange = false;
  for (size_t i = 0, e = raw.size() / inBytes; i != e; ++i) {
    // Little-endian, like ONNX's raw data and the hosts we build for.
    uint64_t bits = 0;
    std::memcpy(&bits, raw.data() + i * inBytes, inBytes);
    bool outOfRange = false;
    uint64_t converted = converter.convert(bits, outOfRange);
    anyOutOfRange |= outOfRange;
    if (out)
      std::memcpy(out + i * outBytes, &converted, outBytes);
  }
  return anyOutOfRange;
}

bool mlir::amp::hasFloatData(ElementsAttr value) {
  return isa<FloatType>(cast<ShapedType>(value.getType()).getElementType()) &&
         getRawBytes(value).has_value();
}

ElementsAttr mlir::amp::convertFloatElements(ElementsAttr value,
                                             FloatType type) {
  auto shaped = cast<ShapedType>(value.getType());
  auto from = dyn_cast<FloatType>(shaped.getElementType());
  std::optional<ArrayRef<char>> raw = getRawBytes(value);
  if (!from || !raw)
    return {};
  ShapedType result = shaped.clone(type);
  ElementConverter converter(from, type);
  size_t count = raw->size() / converter.getFromBytes();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    size_t align = converter.getToBytes();
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
        count * converter.getToBytes(), align, /*dataIsMutable=*/true);
    convertRaw(converter, *raw, blob.getMutableData().data());
    std::string key = resource.getRawHandle().getKey().str() + "_";
    llvm::raw_string_ostream(key) << type;
    return cast<ElementsAttr>(
        DenseResourceElementsAttr::get(result, key, std::move(blob)));
  }
  SmallVector<char> out(count * converter.getToBytes());
  convertRaw(converter, *raw, out.data());
  return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(result, out));
}

bool mlir::amp::hasValuesOutOfRange(ElementsAttr value, FloatType type) {
  auto from =
      dyn_cast<FloatType>(cast<ShapedType>(value.getType()).getElementType());
  std::optional<ArrayRef<char>> raw = getRawBytes(value);
  if (!from || !raw)
    return false;
  return convertRaw(ElementConverter(from, type), *raw, /*out=*/nullptr);
}

std::optional<double> mlir::amp::getLargestMagnitude(ElementsAttr value) {
  auto from =
      dyn_cast<FloatType>(cast<ShapedType>(value.getType()).getElementType());
  std::optional<ArrayRef<char>> raw = getRawBytes(value);
  if (!from || !raw)
    return std::nullopt;
  unsigned bytes = (from.getWidth() + 7) / 8;
  double largest = 0;
  for (size_t i = 0, e = raw->size() / bytes; i != e; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, raw->data() + i * bytes, bytes);
    llvm::APFloat element(from.getFloatSemantics(),
                          llvm::APInt(from.getWidth(), bits));
    bool losesInfo = false;
    element.convert(llvm::APFloat::IEEEdouble(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    double magnitude = std::fabs(element.convertToDouble());
    if (!std::isnan(magnitude))
      largest = std::max(largest, magnitude);
  }
  return largest;
}
