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
  double init = 0;
  if (kind == ReduceKind::Max)
    init = isFloat ? -INFINITY : double(INT64_MIN);
  else if (kind == ReduceKind::Min)
    init = isFloat ? INFINITY : double(INT64_MAX);
  else if (kind == ReduceKind::Prod)
    init = 1;
  Value initValue;
  if (!isFloat && (kind == ReduceKind::Max || kind == ReduceKind::Min)) {
    unsigned width = elementType.getIntOrFloatBitWidth();
    APInt bound = kind == ReduceKind::Max ? APInt::getSignedMinValue(width)
                                          : APInt::getSignedMaxValue(width);
    initValue =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(elementType, bound));
  } else {
    initValue = createScalar(b, loc, accType, init);
  }

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

void amp::lowering::populateReductionLowerings(LoweringTable &table) {
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
