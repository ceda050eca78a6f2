//===- Training.cpp - Lower losses, their gradients and accumulators ------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (f32 or f64, with class
// weights, ignore_index and every reduction), ONNX Runtime's
// SoftmaxCrossEntropyLossGrad, and its gradient accumulators.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp::lowering;

namespace {
/// What a loss node says about its labels: reduction, ignored label, class
/// weights.
struct LossOptions {
  StringRef reduction;
  std::optional<int64_t> ignoreIndex;
  Value weights;
  /// What losses and weights accumulate in: f32, or f64 for f64 scores.
  Type accType;
};
} // namespace

static FailureOr<LossOptions> getLossOptions(NodeLowering &node,
                                             unsigned scoresOperand,
                                             unsigned weightsOperand) {
  LossOptions options;
  options.accType = getAccumulatorType(
      getRankedType(node.operand(scoresOperand)).getElementType());
  options.reduction = node.getString("reduction", "mean");
  if (!llvm::is_contained({"mean", "sum", "none"}, options.reduction))
    return node.emitError()
           << "unknown reduction '" << options.reduction << "'";
  if (auto attr = dyn_cast_or_null<IntegerAttr>(node.getAttr("ignore_index")))
    options.ignoreIndex = attr.getInt();
  options.weights = node.operand(weightsOperand);
  return options;
}

/// weight[label] (1 without weights), 0 for the ignored label.
static Value getLabelWeight(OpBuilder &b, Location loc, Value label,
                            const LossOptions &options) {
  Type accType = options.accType;
  Value weight = createScalar(b, loc, accType, 1);
  if (options.weights)
    weight = convertScalar(b, loc,
                           tensor::ExtractOp::create(
                               b, loc, options.weights,
                               convertScalar(b, loc, label, b.getIndexType())),
                           accType);
  if (!options.ignoreIndex)
    return weight;
  Value ignored = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, label,
      createScalar(b, loc, label.getType(), *options.ignoreIndex));
  return arith::SelectOp::create(b, loc, ignored,
                                 createScalar(b, loc, accType, 0), weight);
}

/// Per-position losses -logProb[n, label, d...] * w and their weights, both
/// shaped like `labels`, in the accumulator type.
static std::pair<Value, Value> buildWeightedLosses(OpBuilder &b, Location loc,
                                                   Value logProb, Value labels,
                                                   const LossOptions &options) {
  auto labelsType = cast<RankedTensorType>(labels.getType());
  int64_t rank = labelsType.getRank();
  Type accType = options.accType;
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, labels);
  Value lossInit = createEmpty(b, loc, sizes, accType);
  Value weightInit = createEmpty(b, loc, sizes, accType);
  SmallVector<AffineMap> maps(3, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{lossInit.getType(), weightInit.getType()}, labels,
      ValueRange{lossInit, weightInit}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value label = args[0];
        Value weight = getLabelWeight(nb, nl, label, options);
        // An ignored label may be out of range: read class 0 instead.
        Value zero = createScalar(nb, nl, label.getType(), 0);
        Value safe = arith::SelectOp::create(
            nb, nl,
            arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, weight,
                                  createScalar(nb, nl, accType, 0)),
            zero, label);
        SmallVector<Value> at = {linalg::IndexOp::create(nb, nl, 0)};
        at.push_back(convertScalar(nb, nl, safe, nb.getIndexType()));
        for (int64_t i = 1; i < rank; ++i)
          at.push_back(linalg::IndexOp::create(nb, nl, i));
        Value logp = convertScalar(
            nb, nl, tensor::ExtractOp::create(nb, nl, logProb, at), accType);
        Value loss = arith::MulFOp::create(
            nb, nl, arith::NegFOp::create(nb, nl, logp), weight);
        linalg::YieldOp::create(nb, nl, ValueRange{loss, weight});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// Reduces per-position losses to the node's loss output.
static Value reduceLosses(OpBuilder &b, Location loc, Value losses,
                          Value weights, const LossOptions &options,
                          Type elementType) {
  if (options.reduction == "none")
    return convertTensor(b, loc, losses, elementType);
  auto rank = cast<RankedTensorType>(losses.getType()).getRank();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  SmallVector<Value> operands = {buildSum(b, loc, losses, axes)};
  if (options.reduction == "mean")
    operands.push_back(buildSum(b, loc, weights, axes));
  return buildElementwise(
      b, loc, RankedTensorType::get({}, elementType), operands,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        if (args.size() == 1)
          return args[0];
        return arith::DivFOp::create(nb, nl, args[0], args[1]).getResult();
      });
}

/// Checks scores (N, C, d...) against labels (N, d...).
static LogicalResult checkScoresAndLabels(NodeLowering &node, Value scores,
                                          Value labels) {
  auto scoresType = getRankedType(scores);
  auto labelsType = getRankedType(labels);
  if (!scoresType || !labelsType || scoresType.getRank() < 2 ||
      labelsType.getRank() != scoresType.getRank() - 1 ||
      !isa<FloatType>(scoresType.getElementType()) ||
      !isa<IntegerType>(labelsType.getElementType()))
    return node.emitError()
           << "expects float scores (N, C, ...) and integer labels (N, ...)";
  return success();
}

/// SoftmaxCrossEntropyLoss (+ com.microsoft ...Internal) and
/// NegativeLogLikelihoodLoss (whose input already is a log-probability).
static LoweringResult lowerLoss(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  bool softmax = node.getNode().getOpType() != "NegativeLogLikelihoodLoss";
  Value scores = node.operand(0), labels = node.operand(1);
  if (failed(checkScoresAndLabels(node, scores, labels)))
    return failure();
  FailureOr<LossOptions> options = getLossOptions(node, 0, 2);
  if (failed(options))
    return failure();
  if (node.getNode().getDomain() == "com.microsoft" && node.operand(3))
    return node.emitError() << "ignore_index as an input does not lower yet";
  Value logProb = softmax ? buildSoftmax(b, loc, scores, {1}, /*log=*/true,
                                         options->accType)
                          : scores;
  auto [losses, weights] =
      buildWeightedLosses(b, loc, logProb, labels, *options);
  SmallVector<Value> results = {reduceLosses(
      b, loc, losses, weights, *options,
      node.resultElementType(0, getRankedType(scores).getElementType()))};
  // log_prob has the scores' type where ONNX could not type it (scores
  // from a contrib op).
  if (softmax && node.getNumResults() > 1)
    results.push_back(convertTensor(
        b, loc, logProb,
        node.resultElementType(1, getRankedType(scores).getElementType())));
  results.resize(node.getNumResults());
  return results;
}

/// com.microsoft SoftmaxCrossEntropyLossGrad(dY, log_prob, label, weight):
/// (softmax - onehot(label)) * weight[label] * dY (/ the weight sum for
/// mean).
static LoweringResult lowerLossGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0), logProb = node.operand(1),
        labels = node.operand(2);
  if (failed(checkScoresAndLabels(node, logProb, labels)))
    return failure();
  FailureOr<LossOptions> options = getLossOptions(node, 1, 3);
  if (failed(options))
    return failure();
  if (node.operand(4))
    return node.emitError() << "ignore_index as an input does not lower yet";
  Type accType = options->accType;
  Value weights = buildWeightedLosses(b, loc, logProb, labels, *options).second;
  Value denominator;
  if (options->reduction == "mean") {
    auto rank = cast<RankedTensorType>(weights.getType()).getRank();
    denominator =
        buildSum(b, loc, weights, llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  }
  // Per-position factor weight * dY (/ denominator), shaped like labels.
  auto labelsType = cast<RankedTensorType>(labels.getType());
  SmallVector<Value> operands = {weights, dy};
  if (denominator)
    operands.push_back(denominator);
  Value factor =
      buildElementwise(b, loc, labelsType.clone(accType), operands,
                       [](OpBuilder &nb, Location nl, ValueRange args) {
                         Value y =
                             arith::MulFOp::create(nb, nl, args[0], args[1]);
                         if (args.size() > 2)
                           y = arith::DivFOp::create(nb, nl, y, args[2]);
                         return y;
                       });
  // (N, d...) -> (N, 1, d...) to broadcast over the classes.
  SmallVector<int64_t> keptShape(labelsType.getShape());
  keptShape.insert(keptShape.begin() + 1, 1);
  SmallVector<ReassociationIndices> groups = {{0, 1}};
  for (int64_t i = 1; i < labelsType.getRank(); ++i)
    groups.push_back({i + 1});
  SmallVector<OpFoldResult> keptSizes = getSizes(b, loc, labels);
  keptSizes.insert(keptSizes.begin() + 1, b.getIndexAttr(1));
  auto expand = [&](Value value, Type elementType) -> Value {
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(keptShape, elementType), value, groups,
        keptSizes);
  };
  Value keptFactor = expand(factor, accType);
  Value keptLabels = expand(labels, labelsType.getElementType());
  auto type = cast<RankedTensorType>(logProb.getType());
  return SmallVector<Value>{buildElementwise(
      b, loc, type.clone(node.resultElementType(0, type.getElementType())),
      ValueRange{logProb, keptLabels, keptFactor},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value p = math::ExpOp::create(nb, nl, args[0]);
        Value cls = convertScalar(nb, nl, linalg::IndexOp::create(nb, nl, 1),
                                  args[1].getType());
        Value isLabel = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                              cls, args[1]);
        Value target = convertScalar(nb, nl, isLabel, accType);
        return arith::MulFOp::create(
                   nb, nl, arith::SubFOp::create(nb, nl, p, target), args[2])
            .getResult();
      })};
}

/// com.microsoft InPlaceAccumulatorV2(buffer, value, overwrite?) ->
/// (updated, buffer'), and InPlaceAccumulator(buffer, value, signal?) ->
/// buffer'.
static LoweringResult lowerAccumulator(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  bool v2 = node.getNode().getOpType() == "InPlaceAccumulatorV2";
  Value buffer = node.operand(0), value = node.operand(1),
        flag = node.operand(2);
  auto type = getRankedType(buffer);
  if (!type || !value || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects float buffer and value tensors";
  SmallVector<Value> operands = {buffer, value};
  if (flag)
    operands.push_back(flag);
  Value accumulated = buildElementwise(
      b, loc, type, operands, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value sum = arith::AddFOp::create(nb, nl, args[0], args[1]);
        if (args.size() < 3)
          return sum;
        Value set = convertScalar(nb, nl, args[2], nb.getI1Type());
        // V2: the flag overwrites; v1: the signal enables accumulation.
        return v2 ? arith::SelectOp::create(nb, nl, set, args[1], sum)
                        .getResult()
                  : arith::SelectOp::create(nb, nl, set, sum, args[0])
                        .getResult();
      });
  if (!v2)
    return SmallVector<Value>{accumulated};
  RankedTensorType flagType = node.resultType(0);
  if (!flagType)
    flagType = RankedTensorType::get({1}, b.getI1Type());
  if (!flagType.hasStaticShape() || !flagType.getElementType().isInteger(1))
    return node.emitError()
           << "the updated flag (output 0) must be a bool tensor of static "
              "shape, not "
           << flagType;
  Value updated =
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(flagType, true));
  return SmallVector<Value>{updated, accumulated};
}

void amp::lowering::populateTrainingLowerings(LoweringTable &table) {
  table.add("", "SoftmaxCrossEntropyLoss", lowerLoss);
  table.add("", "NegativeLogLikelihoodLoss", lowerLoss);
  table.add("com.microsoft", "SoftmaxCrossEntropyLossInternal", lowerLoss);
  table.add("com.microsoft", "SoftmaxCrossEntropyLossGrad", lowerLossGrad);
  table.add("com.microsoft", "SoftmaxCrossEntropyLossInternalGrad",
            lowerLossGrad);
  table.add("com.microsoft", "InPlaceAccumulatorV2", lowerAccumulator);
  table.add("com.microsoft", "InPlaceAccumulator", lowerAccumulator);
}
