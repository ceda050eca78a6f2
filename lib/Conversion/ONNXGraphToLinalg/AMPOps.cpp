//===- AMPOps.cpp - Lower the amp dialect's ops ---------------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp.cast, amp.unscale and amp.scale_loss as elementwise generics,
// amp.all_finite as an and-reduction of |x| < inf, amp.update_if_finite as
// a select and amp.update_scale as scalar arithmetic on 0-d tensors, with
// the rules of their ONNX export. The FP8 ops: quantize and dequantize as
// generics whose scale map divides each index by the block size, amax as a
// max-reduction into the block grid, the scale formula of FP8.h in arith,
// and scaled_matmul as a contraction of the dequantized operands.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/IR/FP8.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cfloat>

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

//===----------------------------------------------------------------------===//
// FP8
//===----------------------------------------------------------------------===//

/// The map from a data index to its block's scale: d_i floordiv block_i, or
/// no results for a 0-d scale.
static AffineMap getBlockMap(OpBuilder &b, int64_t rank,
                             std::optional<ArrayRef<int64_t>> block) {
  SmallVector<AffineExpr> exprs;
  if (block)
    for (auto [dim, size] : llvm::enumerate(*block))
      exprs.push_back(b.getAffineDimExpr(dim).floorDiv(size));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

/// `body(x, scale)` per element of `data` (widened to f32) with its block's
/// scale, converted to `elementType` (saturating into FP8).
static Value
buildScaled(OpBuilder &b, Location loc, Value data, Value scale,
            std::optional<ArrayRef<int64_t>> block, Type elementType,
            function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
  Value init = createEmpty(b, loc, getSizes(b, loc, data), elementType);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 getBlockMap(b, rank, block),
                                 b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{data, scale}, init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convertScalar(nb, nl, args[0], nb.getF32Type());
        linalg::YieldOp::create(
            nb, nl,
            convertScalar(nb, nl, body(nb, nl, x, args[1]), elementType));
      });
  return generic.getResult(0);
}

static Value multiply(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}

/// `data * scale_inv` in f32, per block.
static Value dequantize(OpBuilder &b, Location loc, Value data, Value scaleInv,
                        std::optional<ArrayRef<int64_t>> block,
                        Type elementType) {
  return buildScaled(b, loc, data, scaleInv, block, elementType, multiply);
}

/// FP8.h's computeScale on f32 scalars; `previous` may be null (1 then).
static Value buildScaleFormula(OpBuilder &b, Location loc, Value amax,
                               Value previous, float fp8Max, int64_t margin,
                               bool pow2) {
  Type f32 = b.getF32Type();
  // Ordered comparisons: a NaN amax is not valid.
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                         amax, createScalar(b, loc, f32, 0));
  Value finite = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, amax,
                                       createScalar(b, loc, f32, INFINITY));
  Value valid = arith::AndIOp::create(b, loc, positive, finite);
  Value scale =
      arith::DivFOp::create(b, loc, createScalar(b, loc, f32, fp8Max), amax);
  if (margin)
    scale = arith::MulFOp::create(
        b, loc, scale, createScalar(b, loc, f32, std::ldexp(1.0, -margin)));
  Value overflow =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, scale,
                            createScalar(b, loc, f32, INFINITY));
  scale = arith::SelectOp::create(b, loc, overflow,
                                  createScalar(b, loc, f32, FLT_MAX), scale);
  if (pow2) {
    // Keep the sign and exponent bits: the power of two at or below.
    Type i32 = b.getI32Type();
    Value bits = arith::BitcastOp::create(b, loc, i32, scale);
    bits = arith::AndIOp::create(
        b, loc, bits,
        arith::ConstantOp::create(b, loc,
                                  b.getI32IntegerAttr(int32_t(0xFF800000u))));
    scale = arith::BitcastOp::create(b, loc, f32, bits);
  }
  Value fallback = previous ? previous : createScalar(b, loc, f32, 1);
  return arith::SelectOp::create(b, loc, valid, scale, fallback);
}

/// max |input| per block (all of it for a 0-d result), NaN propagating.
static Value buildAmax(OpBuilder &b, Location loc, Value input,
                       std::optional<ArrayRef<int64_t>> block,
                       RankedTensorType resultType) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<OpFoldResult> sizes;
  if (block)
    for (auto [dim, size] : llvm::enumerate(*block))
      sizes.push_back(affine::makeComposedFoldedAffineApply(
          b, loc, b.getAffineDimExpr(0).ceilDiv(size),
          {tensor::getMixedSize(b, loc, input, dim)}));
  Value acc =
      createFilled(b, loc, sizes, createScalar(b, loc, b.getF32Type(), 0));
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 getBlockMap(b, rank, block)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, acc.getType(), input, acc, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convertScalar(nb, nl, args[0], nb.getF32Type());
        Value magnitude = math::AbsFOp::create(nb, nl, x);
        linalg::YieldOp::create(
            nb, nl,
            arith::MaximumFOp::create(nb, nl, args[1], magnitude).getResult());
      });
  return castToType(b, loc, generic.getResult(0), resultType);
}

/// A 0-d f32 tensor holding `scalar`.
static Value toScalarTensor(OpBuilder &b, Location loc, Value scalar) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, scalar.getType()), scalar);
}

static Value extractScalar(OpBuilder &b, Location loc, Value tensor) {
  return tensor::ExtractOp::create(b, loc, tensor, ValueRange{});
}

/// One tensor's delayed-scaling step (FP8.h's updateHistory): returns the
/// new history and the new 0-d scale.
static std::pair<Value, Value> buildHistoryUpdate(OpBuilder &b, Location loc,
                                                  Value history, Value amax,
                                                  Value previous, float fp8Max,
                                                  int64_t margin,
                                                  fp8::AmaxAlgo algo) {
  Type f32 = b.getF32Type();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value staged = tensor::InsertOp::create(b, loc, extractScalar(b, loc, amax),
                                          history, ValueRange{zero});
  Value chosen =
      algo == fp8::AmaxAlgo::Max
          ? extractScalar(b, loc,
                          buildAmax(b, loc, staged, std::nullopt,
                                    RankedTensorType::get({}, f32)))
          : tensor::ExtractOp::create(b, loc, staged, ValueRange{zero})
                .getResult();
  Value scale =
      buildScaleFormula(b, loc, chosen, extractScalar(b, loc, previous), fp8Max,
                        margin, /*pow2=*/false);
  // new[j] = staged[(j + 1) mod L], and new[0] = 0.
  auto type = cast<RankedTensorType>(history.getType());
  Value init = createEmpty(b, loc, getSizes(b, loc, history), f32);
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{}, init, b.getMultiDimIdentityMap(1),
      utils::IteratorType::parallel,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        Value j = linalg::IndexOp::create(nb, nl, 0);
        Value one = arith::ConstantIndexOp::create(nb, nl, 1);
        Value length = tensor::DimOp::create(nb, nl, staged, 0);
        Value source = arith::RemUIOp::create(
            nb, nl, arith::AddIOp::create(nb, nl, j, one), length);
        Value value =
            tensor::ExtractOp::create(nb, nl, staged, ValueRange{source});
        Value first =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, j,
                                  arith::ConstantIndexOp::create(nb, nl, 0));
        linalg::YieldOp::create(
            nb, nl,
            arith::SelectOp::create(nb, nl, first, createScalar(nb, nl, f32, 0),
                                    value)
                .getResult());
      });
  return {generic.getResult(0), toScalarTensor(b, loc, scale)};
}

/// Lowers the FP8 ops; false when `op` is none of them.
static bool lowerFP8Op(Operation *op, OpBuilder &b) {
  Location loc = op->getLoc();
  if (auto quantize = dyn_cast<QuantizeOp>(op)) {
    auto type = cast<RankedTensorType>(quantize.getResult().getType());
    Value data =
        buildScaled(b, loc, quantize.getInput(), quantize.getScale(),
                    quantize.getBlock(), type.getElementType(), multiply);
    Value inverse = buildElementwise(
        b, loc, cast<RankedTensorType>(quantize.getScaleInv().getType()),
        quantize.getScale(), [](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::DivFOp::create(
                     nb, nl, createScalar(nb, nl, args[0].getType(), 1),
                     args[0])
              .getResult();
        });
    quantize.getResult().replaceAllUsesWith(castToType(b, loc, data, type));
    quantize.getScaleInv().replaceAllUsesWith(inverse);
    return true;
  }
  if (auto dequantizeOp = dyn_cast<DequantizeOp>(op)) {
    auto type = cast<RankedTensorType>(dequantizeOp.getType());
    Value data =
        dequantize(b, loc, dequantizeOp.getInput(), dequantizeOp.getScaleInv(),
                   dequantizeOp.getBlock(), type.getElementType());
    dequantizeOp.getResult().replaceAllUsesWith(castToType(b, loc, data, type));
    return true;
  }
  if (auto amax = dyn_cast<AmaxOp>(op)) {
    amax.getResult().replaceAllUsesWith(
        buildAmax(b, loc, amax.getInput(), amax.getBlock(),
                  cast<RankedTensorType>(amax.getType())));
    return true;
  }
  if (auto computeScale = dyn_cast<ComputeScaleOp>(op)) {
    SmallVector<Value> operands = {computeScale.getAmax()};
    if (computeScale.getPrevious())
      operands.push_back(computeScale.getPrevious());
    float fp8Max = computeScale.getMax().convertToFloat();
    Value scale = buildElementwise(
        b, loc, cast<RankedTensorType>(computeScale.getType()), operands,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return buildScaleFormula(
              nb, nl, args[0], args.size() > 1 ? args[1] : Value(), fp8Max,
              computeScale.getMargin(), computeScale.getPow2());
        });
    computeScale.getResult().replaceAllUsesWith(scale);
    return true;
  }
  if (auto update = dyn_cast<FP8UpdateOp>(op)) {
    fp8::AmaxAlgo algo = *fp8::parseAmaxAlgo(update.getAlgo());
    for (auto [index, history] : llvm::enumerate(update.getHistories())) {
      auto [newHistory, newScale] = buildHistoryUpdate(
          b, loc, history, update.getAmaxes()[index], update.getScales()[index],
          update.getMaxes()[index], update.getMargin(), algo);
      update.getNewHistories()[index].replaceAllUsesWith(castToType(
          b, loc, newHistory, update.getNewHistories()[index].getType()));
      update.getNewScales()[index].replaceAllUsesWith(newScale);
    }
    return true;
  }
  if (auto matmul = dyn_cast<ScaledMatMulOp>(op)) {
    Type f32 = b.getF32Type();
    Value a = dequantize(b, loc, matmul.getA(), matmul.getAScaleInv(),
                         matmul.getABlock(), f32);
    Value bValue = dequantize(b, loc, matmul.getB(), matmul.getBScaleInv(),
                              matmul.getBBlock(), f32);
    Value acc = buildContraction(b, loc, {a, matmul.getTransposeA()},
                                 {bValue, matmul.getTransposeB()});
    SmallVector<Value> operands = {acc};
    if (matmul.getBias())
      operands.push_back(matmul.getBias());
    auto type = cast<RankedTensorType>(matmul.getType());
    Value result = buildElementwise(
        b, loc, type.clone(cast<RankedTensorType>(acc.getType()).getShape()),
        operands, [](OpBuilder &nb, Location nl, ValueRange args) {
          return args.size() > 1
                     ? arith::AddFOp::create(nb, nl, args[0], args[1])
                           .getResult()
                     : args[0];
        });
    matmul.getResult().replaceAllUsesWith(castToType(b, loc, result, type));
    return true;
  }
  return false;
}

/// The type of an op that keeps its input's shape: the input's (lowered,
/// most static) shape with the declared element type.
static RankedTensorType getStaticResultType(Value input, Type declared) {
  auto declaredType = cast<RankedTensorType>(declared);
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  return inputType ? inputType.clone(declaredType.getElementType())
                   : declaredType;
}

FailureOr<bool> amp::lowering::lowerAMPOp(Operation *op, OpBuilder &b) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  if (lowerFP8Op(op, b)) {
    op->erase();
    return true;
  }
  Value replacement;
  // Static sizes the producer's lowering found (and the declared type
  // lacks) carry through.
  if (auto castOp = dyn_cast<CastOp>(op)) {
    replacement = convertTensor(b, loc, getMostStaticValue(castOp.getInput()),
                                castOp.getType().getElementType());
  } else if (auto unscale = dyn_cast<UnscaleOp>(op)) {
    Value input = getMostStaticValue(unscale.getInput());
    replacement = scaleBy(b, loc, input, unscale.getScale(),
                          getStaticResultType(input, unscale.getType()),
                          /*divide=*/true);
  } else if (auto scaleLoss = dyn_cast<ScaleLossOp>(op)) {
    Value input = getMostStaticValue(scaleLoss.getInput());
    replacement = scaleBy(b, loc, input, scaleLoss.getScale(),
                          getStaticResultType(input, scaleLoss.getType()),
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
