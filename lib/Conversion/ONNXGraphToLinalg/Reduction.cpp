//===- Reduction.cpp - Lower reductions and softmax -----------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Reduce* (one reduction generic accumulating in f32, or f64 for f64, then
// a finishing elementwise step for Mean, L2, LogSum...), Softmax and
// LogSoftmax (max-shifted, same accumulator) and ONNX Runtime's softmax
// gradients.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp::lowering;

/// The sorted axes a Reduce* node reduces over; empty for a no-op.
static FailureOr<SmallVector<int64_t>> getReduceAxes(NodeLowering &node,
                                                     int64_t rank) {
  bool notConstant = false;
  std::optional<SmallVector<int64_t>> axes =
      node.getIntsFromAttrOrOperand("axes", 1, notConstant);
  if (notConstant)
    return node.emitError() << "axes must be a constant";
  SmallVector<int64_t> result;
  if (!axes || axes->empty()) {
    if (node.getInt("noop_with_empty_axes", 0))
      return result;
    for (int64_t i = 0; i < rank; ++i)
      result.push_back(i);
    return result;
  }
  for (int64_t axis : *axes) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return node.emitError()
             << "axis " << axis << " is out of range for rank " << rank;
    result.push_back(*normalized);
  }
  llvm::sort(result);
  result.erase(llvm::unique(result), result.end());
  return result;
}

namespace {
enum class ReduceKind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  SumSquare,
  L1,
  L2,
  LogSum,
  LogSumExp
};
} // namespace

/// How `kind` folds an element into its accumulator.
static CombineKind getCombineKind(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Max:
    return CombineKind::Max;
  case ReduceKind::Min:
    return CombineKind::Min;
  case ReduceKind::Prod:
    return CombineKind::Mul;
  default:
    return CombineKind::Add;
  }
}

/// The lowest (or highest) value of `type`: -inf (inf) for floats, false
/// (true) for booleans, the smallest (largest) signed integer. Max (min)
/// starts from it.
static Value createExtreme(OpBuilder &b, Location loc, Type type, bool lowest) {
  if (isa<FloatType>(type))
    return createScalar(b, loc, type, lowest ? -INFINITY : INFINITY);
  if (type.isInteger(1))
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(!lowest));
  unsigned width = type.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(type, lowest ? APInt::getSignedMinValue(width)
                                    : APInt::getSignedMaxValue(width)));
}

static LoweringResult lowerReduce(NodeLowering &node, ReduceKind kind) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  auto type = getRankedType(input);
  if (!type)
    return node.emitError() << "expects a ranked tensor";
  Type elementType = type.getElementType();
  bool isFloat = isa<FloatType>(elementType);
  if (!isFloat && (kind != ReduceKind::Sum && kind != ReduceKind::Max &&
                   kind != ReduceKind::Min && kind != ReduceKind::Prod))
    return node.emitError() << "expects a float tensor";
  if (elementType.isUnsignedInteger())
    return node.emitError() << "unsigned integer tensors do not lower yet";
  FailureOr<SmallVector<int64_t>> axes = getReduceAxes(node, type.getRank());
  if (failed(axes))
    return failure();
  if (axes->empty())
    return SmallVector<Value>{input};
  Type accType = getComputeType(elementType);
  Value initValue =
      kind == ReduceKind::Max || kind == ReduceKind::Min
          ? createExtreme(b, loc, accType, /*lowest=*/kind == ReduceKind::Max)
          : createScalar(b, loc, accType, kind == ReduceKind::Prod ? 1 : 0);

  // LogSumExp subtracts the maximum first so that exp cannot overflow.
  Value shift;
  if (kind == ReduceKind::LogSumExp)
    shift = keepDims(
        b, loc,
        buildReduction(
            b, loc, input, *axes, accType,
            createScalar(b, loc, accType, -INFINITY),
            [](OpBuilder &nb, Location nl, Value x, Value acc) {
              return arith::MaximumFOp::create(nb, nl, acc, x).getResult();
            }),
        input, *axes);
  Value source = input;
  if (shift)
    source = buildElementwise(
        b, loc, type.clone(accType), ValueRange{input, shift},
        [](OpBuilder &nb, Location nl, ValueRange args) {
          Value centered = arith::SubFOp::create(nb, nl, args[0], args[1]);
          return math::ExpOp::create(nb, nl, centered).getResult();
        });
  Value reduced = buildReduction(
      b, loc, source, *axes, accType, initValue,
      [&](OpBuilder &nb, Location nl, Value x, Value acc) {
        return combineValues(nb, nl, getCombineKind(kind), acc, x);
      },
      [&](OpBuilder &nb, Location nl, Value x) -> Value {
        if (kind == ReduceKind::SumSquare || kind == ReduceKind::L2)
          return arith::MulFOp::create(nb, nl, x, x);
        if (kind == ReduceKind::L1)
          return math::AbsFOp::create(nb, nl, x);
        return x;
      });
  bool keep = node.getInt("keepdims", 1);
  Value result = keep ? keepDims(b, loc, reduced, input, *axes) : reduced;
  if (shift && !keep)
    shift = reshapeTo(b, loc, shift, cast<RankedTensorType>(result.getType()));
  Value count = kind == ReduceKind::Mean ? getElementCount(b, loc, input, *axes)
                                         : Value();
  auto resultType = cast<RankedTensorType>(result.getType());
  SmallVector<Value> operands = {result};
  if (shift)
    operands.push_back(shift);
  return SmallVector<Value>{buildElementwise(
      b, loc, resultType.clone(elementType), operands,
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value x = args[0];
        switch (kind) {
        case ReduceKind::Mean:
          return arith::DivFOp::create(
              nb, nl, x, convertScalar(nb, nl, count, x.getType()));
        case ReduceKind::L2:
          return math::SqrtOp::create(nb, nl, x);
        case ReduceKind::LogSum:
          return math::LogOp::create(nb, nl, x);
        case ReduceKind::LogSumExp:
          return arith::AddFOp::create(nb, nl, math::LogOp::create(nb, nl, x),
                                       args[1]);
        default:
          return x;
        }
      })};
}

/// The axes Softmax-like ops normalize over: `axis` alone from opset 13,
/// `axis` and every later one before (the 2-D coercion of old opsets).
static FailureOr<SmallVector<int64_t>> getSoftmaxAxes(NodeLowering &node,
                                                      int64_t rank) {
  bool old = node.getNode().getOpset() < 13 &&
             onnxg::isDefaultDomain(node.getNode().getDomain());
  std::optional<int64_t> axis =
      normalizeAxis(node.getInt("axis", old ? 1 : -1), rank);
  if (!axis)
    return node.emitError() << "axis is out of range for rank " << rank;
  SmallVector<int64_t> axes = {*axis};
  if (old)
    for (int64_t i = *axis + 1; i < rank; ++i)
      axes.push_back(i);
  return axes;
}

/// sum over `axes` of `input` (buildSum), kept as 1s.
static Value sumKept(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes) {
  return keepDims(b, loc, buildSum(b, loc, input, axes), input, axes);
}

Value amp::lowering::buildSoftmax(OpBuilder &b, Location loc, Value input,
                                  ArrayRef<int64_t> axes, bool log,
                                  Type elementType) {
  auto type = cast<RankedTensorType>(input.getType());
  Type accType = getAccumulatorType(type.getElementType());
  Value max = keepDims(b, loc, buildMax(b, loc, input, axes), input, axes);
  Value exps = buildElementwise(
      b, loc, type.clone(accType), ValueRange{input, max},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        return math::ExpOp::create(
                   nb, nl, arith::SubFOp::create(nb, nl, args[0], args[1]))
            .getResult();
      });
  Value sum = sumKept(b, loc, exps, axes);
  if (log)
    return buildElementwise(
        b, loc, type.clone(elementType), ValueRange{input, max, sum},
        [](OpBuilder &nb, Location nl, ValueRange args) {
          Value centered = arith::SubFOp::create(nb, nl, args[0], args[1]);
          return arith::SubFOp::create(nb, nl, centered,
                                       math::LogOp::create(nb, nl, args[2]))
              .getResult();
        });
  return buildElementwise(
      b, loc, type.clone(elementType), ValueRange{exps, sum},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::DivFOp::create(nb, nl, args[0], args[1]).getResult();
      });
}

static LoweringResult lowerSoftmax(NodeLowering &node) {
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects a float tensor";
  FailureOr<SmallVector<int64_t>> axes = getSoftmaxAxes(node, type.getRank());
  if (failed(axes))
    return failure();
  bool log = node.getNode().getOpType() == "LogSoftmax";
  return SmallVector<Value>{buildSoftmax(node.getBuilder(), node.getLoc(),
                                         input, *axes, log,
                                         type.getElementType())};
}

/// com.microsoft SoftmaxGrad_13(dY, Y): Y * (dY - sum(dY * Y)), and
/// LogSoftmaxGrad_13(dY, Y): dY - exp(Y) * sum(dY).
static LoweringResult lowerSoftmaxGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  bool isLog = node.getNode().getOpType().starts_with("LogSoftmax");
  Value dy = node.operand(0), y = node.operand(1);
  auto type = getRankedType(dy);
  if (!type || !y || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects float tensors dY and Y";
  FailureOr<SmallVector<int64_t>> axes = getSoftmaxAxes(node, type.getRank());
  if (failed(axes))
    return failure();
  Value weighted =
      isLog ? dy
            : buildElementwise(
                  b, loc, type.clone(getAccumulatorType(type.getElementType())),
                  ValueRange{dy, y},
                  [](OpBuilder &nb, Location nl, ValueRange args) {
                    return arith::MulFOp::create(nb, nl, args[0], args[1])
                        .getResult();
                  });
  Value sum = sumKept(b, loc, weighted, *axes);
  return SmallVector<Value>{buildElementwise(
      b, loc, type.clone(node.resultElementType(0, type.getElementType())),
      ValueRange{dy, y, sum}, [&](OpBuilder &nb, Location nl, ValueRange args) {
        if (isLog) {
          Value p = math::ExpOp::create(nb, nl, args[1]);
          return arith::SubFOp::create(
                     nb, nl, args[0], arith::MulFOp::create(nb, nl, p, args[2]))
              .getResult();
        }
        return arith::MulFOp::create(
                   nb, nl, args[1],
                   arith::SubFOp::create(nb, nl, args[0], args[2]))
            .getResult();
      })};
}

/// CumSum(x, axis): y[..., i, ...] = sum of x[..., k, ...] over k <= i
/// (k < i when exclusive; k >= i or k > i when reverse), one generic with
/// a reduction loop k over the axis, in the accumulator type.
static LoweringResult lowerCumSum(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  std::optional<SmallVector<int64_t>> axisValues = node.getConstantInts(1);
  if (!type || type.getRank() == 0)
    return node.emitError() << "expects a ranked tensor of rank >= 1";
  if (!axisValues || axisValues->size() != 1)
    return node.emitError() << "the axis must be a one-element constant";
  std::optional<int64_t> axis = normalizeAxis((*axisValues)[0], type.getRank());
  if (!axis)
    return node.emitError()
           << "axis " << (*axisValues)[0] << " is out of range";
  bool exclusive = node.getInt("exclusive", 0) != 0;
  bool reverse = node.getInt("reverse", 0) != 0;
  Type elementType = type.getElementType();
  Type accType = isa<FloatType>(elementType) ? getAccumulatorType(elementType)
                                             : elementType;
  int64_t rank = type.getRank(), k = rank;
  SmallVector<AffineExpr> inExprs, outExprs;
  for (int64_t i = 0; i < rank; ++i) {
    inExprs.push_back(b.getAffineDimExpr(i == *axis ? k : i));
    outExprs.push_back(b.getAffineDimExpr(i));
  }
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  Value acc = createFilled(b, loc, sizes, createScalar(b, loc, accType, 0));
  // The k loop's bound comes from the input's map; the output's from acc.
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank + 1, 0, inExprs, b.getContext()),
      AffineMap::get(rank + 1, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank + 1,
                                             utils::IteratorType::parallel);
  iterators[k] = utils::IteratorType::reduction;
  // Which k count towards position i.
  arith::CmpIPredicate predicate =
      reverse
          ? (exclusive ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::uge)
          : (exclusive ? arith::CmpIPredicate::ult : arith::CmpIPredicate::ule);
  auto generic = linalg::GenericOp::create(
      b, loc, acc.getType(), input, acc, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value counts = arith::CmpIOp::create(
            nb, nl, predicate, linalg::IndexOp::create(nb, nl, k),
            linalg::IndexOp::create(nb, nl, *axis));
        Value x = convertScalar(nb, nl, args[0], accType);
        Value sum = combineValues(nb, nl, CombineKind::Add, args[1], x);
        linalg::YieldOp::create(
            nb, nl,
            arith::SelectOp::create(nb, nl, counts, sum, args[1]).getResult());
      });
  return SmallVector<Value>{convertTensor(
      b, loc, generic.getResult(0), node.resultElementType(0, elementType))};
}

//===----------------------------------------------------------------------===//
// Selection: ArgMax, ArgMin, TopK
//===----------------------------------------------------------------------===//

namespace {
/// How a selection orders values: by the largest or the smallest first,
/// NaN either before or after every number.
struct SelectionOrder {
  bool largest;
  bool nanFirst;

  /// Whether `x` goes before `other`; `orEqual` also lets an equal value
  /// (or a NaN before a NaN) go first.
  Value goesBefore(OpBuilder &b, Location loc, Value x, Value other,
                   bool orEqual) const {
    if (!isa<FloatType>(x.getType())) {
      arith::CmpIPredicate predicate =
          largest ? (orEqual ? arith::CmpIPredicate::sge
                             : arith::CmpIPredicate::sgt)
                  : (orEqual ? arith::CmpIPredicate::sle
                             : arith::CmpIPredicate::slt);
      return arith::CmpIOp::create(b, loc, predicate, x, other);
    }
    arith::CmpFPredicate predicate =
        largest
            ? (orEqual ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
            : (orEqual ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT);
    auto isNaN = [&](Value v) {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
    };
    auto constant = [&](bool value) {
      return arith::ConstantOp::create(b, loc, b.getBoolAttr(value));
    };
    Value xNaN = isNaN(x), otherNaN = isNaN(other);
    // other NaN: x goes first if it is a NaN too and ties go first, or if
    // it is a number and NaNs go last.
    Value againstNaN = arith::SelectOp::create(b, loc, xNaN, constant(orEqual),
                                               constant(!nanFirst));
    Value againstNumber = arith::SelectOp::create(
        b, loc, xNaN, constant(nanFirst),
        arith::CmpFOp::create(b, loc, predicate, x, other));
    return arith::SelectOp::create(b, loc, otherNaN, againstNaN, againstNumber);
  }
};
} // namespace

/// The index along `axis` of the best element of each row of `input` in
/// `order` (the first best one, or the last with `last`), as i64 without
/// the axis: one reduction carrying the best value and its index.
static Value buildArgBest(OpBuilder &b, Location loc, Value input, int64_t axis,
                          SelectionOrder order, bool last) {
  auto type = cast<RankedTensorType>(input.getType());
  Type computeType = getComputeType(type.getElementType());
  Value sentinel = createExtreme(b, loc, computeType, order.largest);
  ReductionLoops loops = getReductionLoops(b, loc, input, axis);
  Type i64 = b.getI64Type();
  Value bestInit = createFilled(b, loc, loops.outSizes, sentinel);
  Value indexInit =
      createFilled(b, loc, loops.outSizes, createScalar(b, loc, i64, 0));
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(type.getRank()),
                                 loops.outMap, loops.outMap};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{bestInit.getType(), indexInit.getType()}, input,
      ValueRange{bestInit, indexInit}, maps, loops.iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convertScalar(nb, nl, args[0], computeType);
        Value take = order.goesBefore(nb, nl, x, args[1], last);
        Value index =
            convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, axis), i64);
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, take, x, args[1]),
                       arith::SelectOp::create(nb, nl, take, index, args[2])});
      });
  return generic.getResult(1);
}

/// ArgMax and ArgMin: the first best index, or the last with
/// select_last_index. A NaN is taken over any number, as numpy's argmax
/// and argmin do.
static LoweringResult lowerArgMax(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type || type.getRank() == 0)
    return node.emitError() << "expects a ranked tensor of rank >= 1";
  std::optional<int64_t> axis =
      normalizeAxis(node.getInt("axis", 0), type.getRank());
  if (!axis)
    return node.emitError() << "axis " << node.getInt("axis", 0)
                            << " is out of range for rank " << type.getRank();
  SelectionOrder order{node.getNode().getOpType() == "ArgMax",
                       /*nanFirst=*/true};
  Value indices = buildArgBest(b, loc, input, *axis, order,
                               node.getInt("select_last_index", 0) != 0);
  if (node.getInt("keepdims", 1))
    indices = keepDims(b, loc, indices, input, *axis);
  return SmallVector<Value>{indices};
}

/// Hardmax: 1 at the first largest element along `axis`, 0 elsewhere;
/// before opset 13 along the flattened dimensions from `axis` on.
static LoweringResult lowerHardmax(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type || type.getRank() == 0 || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType()))
    return node.emitError()
           << "expects a float tensor of static shape and rank >= 1";
  bool old = node.getNode().getOpset() < 13;
  std::optional<int64_t> axis =
      normalizeAxis(node.getInt("axis", old ? 1 : -1), type.getRank());
  if (!axis)
    return node.emitError()
           << "axis is out of range for rank " << type.getRank();
  Value rows = input;
  int64_t rowAxis = *axis;
  if (old) {
    // The 2-D coercion: [prod(dims before axis), prod(dims from axis)].
    int64_t outer = 1;
    for (int64_t i = 0; i < *axis; ++i)
      outer *= type.getDimSize(i);
    rows = reshapeTo(b, loc, input,
                     type.clone({outer, type.getNumElements() / outer}));
    rowAxis = 1;
  }
  Value best = keepDims(
      b, loc,
      buildArgBest(b, loc, rows, rowAxis, SelectionOrder{true, true}, false),
      rows, rowAxis);
  auto rowsType = cast<RankedTensorType>(rows.getType());
  Value oneHot = buildElementwise(
      b, loc, rowsType.clone(node.resultElementType(0, type.getElementType())),
      ValueRange{rows, best}, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value index = convertScalar(
            nb, nl, linalg::IndexOp::create(nb, nl, rowAxis), nb.getI64Type());
        Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                          index, args[1]);
        return convertScalar(nb, nl, hit, args[0].getType());
      });
  return SmallVector<Value>{old ? reshapeTo(b, loc, oneHot,
                                            type.clone(node.resultElementType(
                                                0, type.getElementType())))
                                : oneHot};
}

/// Axes longer than this sort by a bitonic network in TopK; shorter ones
/// count ranks (n² comparisons, fewer kernels).
static constexpr int64_t kBitonicMinLength = 128;

/// `input` (static shape) sorted along `axis` in `order`, ties by the lower
/// index, as (values in `computeType`, i64 indices), the axis padded to a
/// power of two P whose padding sorts last: a bitonic sorting network,
/// log2(P) (log2(P) + 1) / 2 compare-exchange stages, each one parallel
/// generic over P elements per row that reads an element and its partner
/// (O(P log² P) where counting ranks compares all n² pairs).
static std::pair<Value, Value> sortBitonic(OpBuilder &b, Location loc,
                                           Value input, int64_t axis,
                                           SelectionOrder order,
                                           Type computeType) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank(), length = type.getDimSize(axis);
  int64_t padded = int64_t(llvm::PowerOf2Ceil(length));
  Type i64 = b.getI64Type();
  SmallVector<int64_t> high(rank, 0), low(rank, 0);
  high[axis] = padded - length;
  Value values = padTensor(b, loc, convertTensor(b, loc, input, computeType),
                           low, high, createScalar(b, loc, computeType, 0));
  auto paddedType = cast<RankedTensorType>(values.getType());
  Value indices = buildGenericOverIndices(
      b, loc, tensor::EmptyOp::create(b, loc, paddedType.getShape(), i64),
      [&](OpBuilder &nb, Location nl) -> Value {
        return convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, axis),
                             i64);
      });
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  for (int64_t block = 2; block <= padded; block *= 2) {
    for (int64_t stride = block / 2; stride >= 1; stride /= 2) {
      Value valueInit =
          tensor::EmptyOp::create(b, loc, paddedType.getShape(), computeType);
      Value indexInit =
          tensor::EmptyOp::create(b, loc, paddedType.getShape(), i64);
      auto stage = linalg::GenericOp::create(
          b, loc, TypeRange{valueInit.getType(), indexInit.getType()},
          ValueRange{}, ValueRange{valueInit, indexInit}, maps, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange) {
            auto index = [&](int64_t value) {
              return arith::ConstantIndexOp::create(nb, nl, value).getResult();
            };
            SmallVector<Value> self, partner;
            for (int64_t d = 0; d < rank; ++d)
              self.push_back(linalg::IndexOp::create(nb, nl, d));
            partner = self;
            Value i = self[axis];
            partner[axis] = arith::XOrIOp::create(nb, nl, i, index(stride));
            Value x = tensor::ExtractOp::create(nb, nl, values, self);
            Value xIndex = tensor::ExtractOp::create(nb, nl, indices, self);
            Value y = tensor::ExtractOp::create(nb, nl, values, partner);
            Value yIndex = tensor::ExtractOp::create(nb, nl, indices, partner);
            // x goes first: a number before padding, else by `order`,
            // equal values by the lower index.
            auto cmp = [&](arith::CmpIPredicate predicate, Value l, Value r) {
              return arith::CmpIOp::create(nb, nl, predicate, l, r).getResult();
            };
            Value end = createScalar(nb, nl, i64, length);
            Value xFirst = arith::SelectOp::create(
                nb, nl, cmp(arith::CmpIPredicate::slt, xIndex, yIndex),
                order.goesBefore(nb, nl, x, y, true),
                order.goesBefore(nb, nl, x, y, false));
            xFirst = arith::SelectOp::create(
                nb, nl, cmp(arith::CmpIPredicate::sge, yIndex, end),
                arith::ConstantOp::create(nb, nl, nb.getBoolAttr(true)),
                xFirst);
            xFirst = arith::SelectOp::create(
                nb, nl, cmp(arith::CmpIPredicate::sge, xIndex, end),
                arith::ConstantOp::create(nb, nl, nb.getBoolAttr(false)),
                xFirst);
            // The pair's lower position takes the first element in an
            // ascending block ((i & block) == 0), the second in the others.
            Value zero = index(0);
            Value lower = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq,
                arith::AndIOp::create(nb, nl, i, index(stride)), zero);
            Value ascending = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq,
                arith::AndIOp::create(nb, nl, i, index(block)), zero);
            Value wantFirst = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq, lower, ascending);
            Value keep = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                               wantFirst, xFirst);
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{
                    arith::SelectOp::create(nb, nl, keep, x, y),
                    arith::SelectOp::create(nb, nl, keep, xIndex, yIndex)});
          });
      values = stage.getResult(0);
      indices = stage.getResult(1);
    }
  }
  return {values, indices};
}

/// TopK(x, K): the K first values along `axis` in the order (largest or
/// smallest first, the lower index first among equal values, NaN as the
/// largest) and their indices. Up to kBitonicMinLength elements, two
/// generics with a reduction loop over the axis each, O(n^2) per row: each
/// element's rank (how many elements go before it), then, for each output
/// position k, the element of rank k; longer axes sortBitonic's first K.
static LoweringResult lowerTopK(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type || type.getRank() == 0 || !type.hasStaticShape())
    return node.emitError() << "expects a tensor of static shape and rank >= 1";
  int64_t rank = type.getRank();
  std::optional<int64_t> axis = normalizeAxis(node.getInt("axis", -1), rank);
  if (!axis)
    return node.emitError() << "axis " << node.getInt("axis", -1)
                            << " is out of range for rank " << rank;
  std::optional<SmallVector<int64_t>> kValues = node.getConstantInts(1);
  if (!kValues || kValues->size() != 1)
    return node.emitError() << "K must be a one-element constant";
  int64_t n = type.getDimSize(*axis), k = (*kValues)[0];
  if (k < 0 || k > n)
    return node.emitError() << "K = " << k << " is not in [0, " << n
                            << "], the size of axis " << *axis;
  SelectionOrder order{node.getInt("largest", 1) != 0,
                       /*nanFirst=*/node.getInt("largest", 1) != 0};
  Type elementType = type.getElementType();
  Type computeType = getComputeType(elementType);
  Type i64 = b.getI64Type();
  MLIRContext *ctx = b.getContext();
  if (n > kBitonicMinLength) {
    auto [values, indices] =
        sortBitonic(b, loc, input, *axis, order, computeType);
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
        strides(rank, b.getIndexAttr(1)),
        sizes = getAsIndexOpFoldResult(ctx, type.getShape());
    sizes[*axis] = b.getIndexAttr(k);
    auto first = [&](Value sorted) {
      return tensor::ExtractSliceOp::create(b, loc, sorted, offsets, sizes,
                                            strides)
          .getResult();
    };
    return SmallVector<Value>{
        convertTensor(b, loc, first(values),
                      node.resultElementType(0, elementType)),
        first(indices)};
  }
  // Loop `rank` runs over the axis a second time.
  SmallVector<AffineExpr> alongSecond, identity;
  for (int64_t i = 0; i < rank; ++i) {
    identity.push_back(b.getAffineDimExpr(i));
    alongSecond.push_back(b.getAffineDimExpr(i == *axis ? rank : i));
  }
  SmallVector<utils::IteratorType> iterators(rank + 1,
                                             utils::IteratorType::parallel);
  iterators[rank] = utils::IteratorType::reduction;
  AffineMap identityMap = AffineMap::get(rank + 1, 0, identity, ctx);
  AffineMap secondMap = AffineMap::get(rank + 1, 0, alongSecond, ctx);

  // ranks[i] = #{j : x[j] goes before x[i]}, a lower j first among equals.
  Value zero = createScalar(b, loc, i64, 0);
  Value rankInit = createFilled(b, loc, getSizes(b, loc, input), zero);
  auto ranks = linalg::GenericOp::create(
      b, loc, rankInit.getType(), ValueRange{input, input}, rankInit,
      SmallVector<AffineMap>{secondMap, identityMap, identityMap}, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value other = convertScalar(nb, nl, args[0], computeType);
        Value x = convertScalar(nb, nl, args[1], computeType);
        Value earlier =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult,
                                  linalg::IndexOp::create(nb, nl, rank),
                                  linalg::IndexOp::create(nb, nl, *axis));
        Value before = arith::SelectOp::create(
            nb, nl, earlier, order.goesBefore(nb, nl, other, x, true),
            order.goesBefore(nb, nl, other, x, false));
        Value count = arith::AddIOp::create(nb, nl, args[2],
                                            convertScalar(nb, nl, before, i64));
        linalg::YieldOp::create(nb, nl, count);
      });

  // out[k] = the element of rank k; loop `rank` runs over the input's axis.
  SmallVector<int64_t> outShape(type.getShape());
  outShape[*axis] = k;
  SmallVector<OpFoldResult> outSizes = getAsIndexOpFoldResult(ctx, outShape);
  Value valueInit =
      createFilled(b, loc, outSizes, createScalar(b, loc, computeType, 0));
  Value indexInit = createFilled(b, loc, outSizes, zero);
  auto selected = linalg::GenericOp::create(
      b, loc, TypeRange{valueInit.getType(), indexInit.getType()},
      ValueRange{input, ranks.getResult(0)}, ValueRange{valueInit, indexInit},
      SmallVector<AffineMap>{secondMap, secondMap, identityMap, identityMap},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value position =
            convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, *axis), i64);
        Value match = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                            args[1], position);
        Value x = convertScalar(nb, nl, args[0], computeType);
        Value index =
            convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, rank), i64);
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, match, x, args[2]),
                       arith::SelectOp::create(nb, nl, match, index, args[3])});
      });
  return SmallVector<Value>{
      convertTensor(b, loc, selected.getResult(0),
                    node.resultElementType(0, elementType)),
      selected.getResult(1)};
}

void amp::lowering::populateReductionLowerings(LoweringTable &table) {
  table.add("", "ArgMax", lowerArgMax);
  table.add("", "ArgMin", lowerArgMax);
  table.add("", "TopK", lowerTopK);
  table.add("", "Hardmax", lowerHardmax);
  table.add("", "CumSum", lowerCumSum);
#define REDUCE(NAME, KIND)                                                     \
  table.add("", NAME, [](NodeLowering &node) {                                 \
    return lowerReduce(node, ReduceKind::KIND);                                \
  })
  REDUCE("ReduceSum", Sum);
  REDUCE("ReduceMean", Mean);
  REDUCE("ReduceMax", Max);
  REDUCE("ReduceMin", Min);
  REDUCE("ReduceProd", Prod);
  REDUCE("ReduceSumSquare", SumSquare);
  REDUCE("ReduceL1", L1);
  REDUCE("ReduceL2", L2);
  REDUCE("ReduceLogSum", LogSum);
  REDUCE("ReduceLogSumExp", LogSumExp);
#undef REDUCE
  table.add("", "Softmax", lowerSoftmax);
  table.add("", "LogSoftmax", lowerSoftmax);
  table.add("com.microsoft", "SoftmaxGrad_13", lowerSoftmaxGrad);
  table.add("com.microsoft", "SoftmaxGrad", lowerSoftmaxGrad);
  table.add("com.microsoft", "LogSoftmaxGrad_13", lowerSoftmaxGrad);
  table.add("com.microsoft", "LogSoftmaxGrad", lowerSoftmaxGrad);
}
