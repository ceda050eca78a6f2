//===- CastFusionOpInterface.h - Ops that absorb casts ----------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_CASTFUSIONOPINTERFACE_H
#define AMP_INTERFACES_CASTFUSIONOPINTERFACE_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::amp {

/// Whether every value of `from` (a float or integer type), infinities
/// included, is exactly a value of `to`.
bool isExactIn(Type from, FloatType to);

/// Whether casting to `via` and then to `to` gives what casting straight to
/// `to` gives, for every value of `from`: the first cast is exact, or it
/// rounds to so many more bits than `to` has that rounding twice is
/// innocuous (Figueroa: p(via) >= 2 p(to) + 2, ranges included).
bool castsCompose(Type from, FloatType via, FloatType to);

/// Whether `value` holds float elements whose data is at hand (a
/// dense_resource may have been elided).
bool hasFloatData(ElementsAttr value);

/// `value`'s float elements converted to `type` (round to nearest even),
/// dense or dense_resource like `value`; hasFloatData must hold.
ElementsAttr convertFloatElements(ElementsAttr value, FloatType type);

/// Whether converting `value`'s float elements to `type` overflows a finite
/// value to infinity or flushes a non-zero value to zero.
bool hasValuesOutOfRange(ElementsAttr value, FloatType type);

/// The largest magnitude among `value`'s float elements (NaNs ignored), or
/// nothing when they are not floats or their data is not at hand.
std::optional<double> getLargestMagnitude(ElementsAttr value);

} // namespace mlir::amp

#include "amp/Interfaces/CastFusionOpInterface.h.inc"

namespace mlir::amp {

/// Whether the op `use` belongs to has one result, of type `type`, that
/// converts that operand (a Cast node of the graph): a cast of the same value
/// to `type` can reuse it.
bool isConversionTo(OpOperand &use, Type type);

} // namespace mlir::amp

#endif // AMP_INTERFACES_CASTFUSIONOPINTERFACE_H
