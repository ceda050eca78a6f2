//===- GELUBodies.cpp - Elementwise bodies that compute GELU --------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/GELUBodies.h"
#include "amp/Runtime/GemmRecord.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace {
/// The sample points: GELU's curved part, both tails, and 0.
constexpr double kSamples[] = {-7.0,  -4.0,   -2.6, -1.7, -1.25, -0.8,
                               -0.45, -0.125, 0.0,  0.07, 0.3,   0.65,
                               1.1,   1.5,    2.25, 3.2,  5.0,   8.0};
/// Second values: GELU's bias, or the gradient's dY.
constexpr double kSecondSamples[] = {-1.5, 0.0, 0.375, 2.0};
} // namespace

/// What `body` yields with its block arguments set as in `arguments`, in
/// double precision (roundings and widenings as the identity), or nullopt
/// when it computes something other than smooth arithmetic on them.
static std::optional<double>
evaluate(Block *body, const llvm::SmallDenseMap<Value, double, 4> &arguments) {
  llvm::SmallDenseMap<Value, double, 16> values(arguments.begin(),
                                                arguments.end());
  // A body's value, or a float constant from around the generic.
  auto get = [&](Value value) -> std::optional<double> {
    auto found = values.find(value);
    if (found != values.end())
      return found->second;
    FloatAttr constant;
    if (matchPattern(value, m_Constant(&constant)))
      return constant.getValueAsDouble();
    return std::nullopt;
  };
  for (Operation &op : body->getOperations()) {
    if (auto yield = dyn_cast<linalg::YieldOp>(op))
      return yield->getNumOperands() == 1 ? get(yield->getOperand(0))
                                          : std::nullopt;
    if (op.getNumResults() != 1)
      return std::nullopt;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto value = dyn_cast<FloatAttr>(constant.getValue());
      if (!value)
        return std::nullopt;
      values[constant] = value.getValueAsDouble();
      continue;
    }
    SmallVector<double, 3> in;
    for (Value operand : op.getOperands()) {
      std::optional<double> value = get(operand);
      if (!value)
        return std::nullopt;
      in.push_back(*value);
    }
    std::optional<double> result =
        llvm::TypeSwitch<Operation *, std::optional<double>>(&op)
            .Case([&](arith::AddFOp) { return in[0] + in[1]; })
            .Case([&](arith::SubFOp) { return in[0] - in[1]; })
            .Case([&](arith::MulFOp) { return in[0] * in[1]; })
            .Case([&](arith::DivFOp) { return in[0] / in[1]; })
            .Case([&](arith::NegFOp) { return -in[0]; })
            .Case<arith::ExtFOp, arith::TruncFOp>(
                [&](Operation *) { return in[0]; })
            .Case([&](math::TanhOp) { return std::tanh(in[0]); })
            .Case([&](math::ExpOp) { return std::exp(in[0]); })
            .Case([&](math::PowFOp) { return std::pow(in[0], in[1]); })
            .Case([&](math::SqrtOp) { return std::sqrt(in[0]); })
            .Case([&](math::FmaOp) { return in[0] * in[1] + in[2]; })
            .Default([](Operation *) { return std::nullopt; });
    if (!result)
      return std::nullopt;
    values[op.getResult(0)] = *result;
  }
  return std::nullopt;
}

/// The relative tolerance of a body's result: float32's rounding of the
/// constants, or, where the body rounds to f16 or bf16 (an AMP kernel, whose
/// constants are rounded to that type too), 16 of that type's unit
/// roundoffs (its constants' rounding moves GELU by at most about 5).
static double getTolerance(Block *body) {
  double tolerance = 1e-5;
  body->walk([&](arith::TruncFOp rounding) {
    auto type = cast<FloatType>(getElementTypeOrSelf(rounding.getType()));
    tolerance =
        std::max(tolerance, 16 * std::ldexp(1.0, -type.getFPMantissaWidth()));
  });
  return tolerance;
}

/// Whether `body` yields `expected(a, b)` at every pair of samples, `a`
/// from kSamples and `b` from kSecondSamples (`second` null: only `a`),
/// within getTolerance.
template <typename Expected>
static bool matchesAtSamples(Block *body, Value first, Value second,
                             Expected expected) {
  auto isArgument = [&](Value value) {
    auto argument = dyn_cast_if_present<BlockArgument>(value);
    return argument && argument.getOwner() == body;
  };
  if (!isArgument(first) || (second && !isArgument(second)) || first == second)
    return false;
  static constexpr double kNoSecond[] = {0.0};
  ArrayRef<double> seconds =
      second ? ArrayRef<double>(kSecondSamples) : ArrayRef<double>(kNoSecond);
  double tolerance = getTolerance(body);
  for (double a : kSamples)
    for (double b : seconds) {
      llvm::SmallDenseMap<Value, double, 4> arguments = {{first, a}};
      if (second)
        arguments[second] = b;
      std::optional<double> got = evaluate(body, arguments);
      double want = expected(a, b);
      if (!got || !std::isfinite(*got) ||
          std::abs(*got - want) > tolerance * std::abs(want) + 1e-6)
        return false;
    }
  return true;
}

bool amp::computesGELU(Block *body, Value x, Value bias) {
  auto tanh = [](double value) { return std::tanh(value); };
  return matchesAtSamples(body, x, bias, [&](double a, double b) {
    return runtime::gemmGELU(a + b, tanh);
  });
}

bool amp::computesGELUGradient(Block *body, Value dy, Value x) {
  auto tanh = [](double value) { return std::tanh(value); };
  // x first: the samples cover GELU's curve, dY its scale.
  return matchesAtSamples(body, x, dy, [&](double a, double b) {
    return b * runtime::gemmGELUDerivative(a, tanh);
  });
}
