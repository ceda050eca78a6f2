//===- AMPOps.cpp - Lower the amp dialect's ops ---------------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp.cast, amp.unscale and amp.scale_loss as elementwise generics,
// amp.all_finite as an and-reduction of |x| < inf, amp.update_if_finite as
// a select and amp.update_scale as scalar arithmetic on 0-d tensors, with
// the rules of their ONNX export.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Dialect/AMP/IR/AMPOps.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::lowering;

/// x * scale (x / scale when `divide`), rounded to `type`; scale is 0-d.
static Value scaleBy(OpBuilder &b, Location loc, Value input, Value scale,
                     RankedTensorType type, bool divide) {
  return buildElementwise(
      b, loc, type, ValueRange{input, scale},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value factor = args[1];
        if (divide)
          factor = arith::DivFOp::create(
              nb, nl, createScalar(nb, nl, factor.getType(), 1), factor);
        return arith::MulFOp::create(nb, nl, args[0], factor).getResult();
      });
}

/// An i1 0-d tensor: every element of `input` is finite (for a 0-d input,
/// a reduction over no dimensions).
static Value buildAllFinite(OpBuilder &b, Location loc, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  Value init = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  return buildReduction(
      b, loc, input, axes, getComputeType(type.getElementType()), init,
      [](OpBuilder &nb, Location nl, Value x, Value acc) {
        Value magnitude = math::AbsFOp::create(nb, nl, x);
        Value finite = arith::CmpFOp::create(
            nb, nl, arith::CmpFPredicate::OLT, magnitude,
            createScalar(nb, nl, magnitude.getType(), INFINITY));
        return arith::AndIOp::create(nb, nl, acc, finite).getResult();
      });
}

/// count + 1, and whether that reaches `interval` (the scale grows).
static std::pair<Value, Value> countCleanStep(OpBuilder &b, Location loc,
                                              Value count, int64_t interval) {
  Value counted = arith::AddIOp::create(
      b, loc, count, createScalar(b, loc, count.getType(), 1));
  Value grow =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, counted,
                            createScalar(b, loc, count.getType(), interval));
  return {counted, grow};
}

static void lowerUpdateScale(UpdateScaleOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto scalarType = [&](Type element) {
    return RankedTensorType::get({}, element);
  };
  Value newScale = buildElementwise(
      b, loc, scalarType(b.getF32Type()),
      ValueRange{op.getScale(), op.getCount(), op.getFinite()},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Type f32 = nb.getF32Type();
        Value grow =
            countCleanStep(nb, nl, args[1], op.getGrowthInterval()).second;
        Value grown = arith::MinimumFOp::create(
            nb, nl,
            arith::MulFOp::create(
                nb, nl, args[0],
                createScalar(nb, nl, f32,
                             op.getGrowthFactor().convertToFloat())),
            createScalar(nb, nl, f32, op.getMaxScale().convertToFloat()));
        Value shrunk = arith::MaximumFOp::create(
            nb, nl,
            arith::MulFOp::create(
                nb, nl, args[0],
                createScalar(nb, nl, f32,
                             op.getBackoffFactor().convertToFloat())),
            createScalar(nb, nl, f32, op.getMinScale().convertToFloat()));
        Value clean = arith::SelectOp::create(nb, nl, grow, grown, args[0]);
        return arith::SelectOp::create(nb, nl, args[2], clean, shrunk)
            .getResult();
      });
  Value newCount = buildElementwise(
      b, loc, scalarType(b.getI64Type()),
      ValueRange{op.getCount(), op.getFinite()},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value zero = createScalar(nb, nl, args[0].getType(), 0);
        auto [counted, grow] =
            countCleanStep(nb, nl, args[0], op.getGrowthInterval());
        Value clean = arith::SelectOp::create(nb, nl, grow, zero, counted);
        return arith::SelectOp::create(nb, nl, args[1], clean, zero)
            .getResult();
      });
  op.getNewScale().replaceAllUsesWith(newScale);
  op.getNewCount().replaceAllUsesWith(newCount);
}

FailureOr<bool> amp::lowering::lowerAMPOp(Operation *op, OpBuilder &b) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Value replacement;
  if (auto castOp = dyn_cast<CastOp>(op)) {
    replacement = convertTensor(b, loc, castOp.getInput(),
                                castOp.getType().getElementType());
  } else if (auto unscale = dyn_cast<UnscaleOp>(op)) {
    replacement = scaleBy(b, loc, unscale.getInput(), unscale.getScale(),
                          cast<RankedTensorType>(unscale.getType()),
                          /*divide=*/true);
  } else if (auto scaleLoss = dyn_cast<ScaleLossOp>(op)) {
    replacement = scaleBy(b, loc, scaleLoss.getInput(), scaleLoss.getScale(),
                          cast<RankedTensorType>(scaleLoss.getType()),
                          /*divide=*/false);
  } else if (auto allFinite = dyn_cast<AllFiniteOp>(op)) {
    for (Value input : allFinite.getInputs()) {
      Value finite = buildAllFinite(b, loc, input);
      replacement =
          replacement
              ? buildElementwise(
                    b, loc, cast<RankedTensorType>(allFinite.getType()),
                    ValueRange{replacement, finite},
                    [](OpBuilder &nb, Location nl, ValueRange args) {
                      return arith::AndIOp::create(nb, nl, args[0], args[1])
                          .getResult();
                    })
              : finite;
    }
  } else if (auto update = dyn_cast<UpdateIfFiniteOp>(op)) {
    replacement = buildElementwise(
        b, loc, cast<RankedTensorType>(update.getType()),
        ValueRange{update.getFinite(), update.getUpdated(),
                   update.getPrevious()},
        [](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::SelectOp::create(nb, nl, args[0], args[1], args[2])
              .getResult();
        });
  } else if (auto updateScale = dyn_cast<UpdateScaleOp>(op)) {
    lowerUpdateScale(updateScale, b);
    op->erase();
    return true;
  } else {
    return op->emitError("has no lowering");
  }
  op->getResult(0).replaceAllUsesWith(
      castToType(b, loc, replacement, op->getResult(0).getType()));
  op->erase();
  return true;
}
