//===- Contraction.cpp - Lower MatMul, Gemm and FusedMatMul ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// One batched contraction generic (f32 accumulator, operands widened in the
// body, transposes and batch broadcasting in the indexing maps), followed
// by an elementwise epilogue for alpha, beta and C that rounds once to the
// output type.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

using namespace mlir;
using namespace mlir::amp::lowering;

Value amp::lowering::buildContraction(OpBuilder &b, Location loc,
                                      ContractionOperand a,
                                      ContractionOperand bOperand) {
  auto aType = cast<RankedTensorType>(a.value.getType());
  auto bType = cast<RankedTensorType>(bOperand.value.getType());
  int64_t batchRank = std::max(aType.getRank(), bType.getRank()) - 2;
  int64_t m = batchRank, n = batchRank + 1, k = batchRank + 2;
  int64_t loops = batchRank + 3;

  // Batch sizes: the broadcast of both operands' batch dimensions.
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < batchRank; ++i) {
    OpFoldResult size = b.getIndexAttr(1);
    for (Value operand : {a.value, bOperand.value}) {
      auto type = cast<RankedTensorType>(operand.getType());
      int64_t position = i - (batchRank - (type.getRank() - 2));
      if (position >= 0 && type.getDimSize(position) != 1) {
        size = tensor::getMixedSize(b, loc, operand, position);
        break;
      }
    }
    sizes.push_back(size);
  }
  auto mapFor = [&](ContractionOperand operand, int64_t rows, int64_t cols) {
    auto type = cast<RankedTensorType>(operand.value.getType());
    int64_t operandBatch = type.getRank() - 2;
    SmallVector<AffineExpr> exprs;
    for (int64_t p = 0; p < operandBatch; ++p) {
      int64_t loop = batchRank - operandBatch + p;
      bool broadcast = type.getDimSize(p) == 1 &&
                       getConstantIntValue(sizes[loop]) != int64_t(1);
      exprs.push_back(broadcast ? b.getAffineConstantExpr(0)
                                : b.getAffineDimExpr(loop));
    }
    exprs.push_back(b.getAffineDimExpr(operand.transposed ? cols : rows));
    exprs.push_back(b.getAffineDimExpr(operand.transposed ? rows : cols));
    return AffineMap::get(loops, 0, exprs, b.getContext());
  };
  int64_t aRank = aType.getRank(), bRank = bType.getRank();
  sizes.push_back(tensor::getMixedSize(b, loc, a.value,
                                       a.transposed ? aRank - 1 : aRank - 2));
  sizes.push_back(tensor::getMixedSize(
      b, loc, bOperand.value, bOperand.transposed ? bRank - 2 : bRank - 1));
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < batchRank + 2; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  SmallVector<AffineMap> maps = {
      mapFor(a, m, k), mapFor(bOperand, k, n),
      AffineMap::get(loops, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  iterators[k] = utils::IteratorType::reduction;
  Type accType = getAccumulatorType(aType.getElementType());
  if (bType.getElementType().isF64())
    accType = bType.getElementType();
  Value acc = createFilled(b, loc, sizes, createScalar(b, loc, accType, 0));
  auto generic = linalg::GenericOp::create(
      b, loc, acc.getType(), ValueRange{a.value, bOperand.value}, acc, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(
            nested, nestedLoc,
            multiplyAccumulate(nested, nestedLoc, args[0], args[1], args[2]));
      });
  return generic.getResult(0);
}

/// Checks that the contraction's operands are float tensors.
static LogicalResult checkFloatOperands(NodeLowering &node, Value a, Value b) {
  for (Value operand : {a, b}) {
    auto type = getRankedType(operand);
    if (!type || !isa<FloatType>(type.getElementType()))
      return node.emitError() << "operands must be float tensors";
  }
  return success();
}

/// Rounds `acc * alpha (+ beta * c)` to the node's output type.
static Value buildEpilogue(NodeLowering &node, Value acc, double alpha, Value c,
                           double beta) {
  OpBuilder &b = node.getBuilder();
  auto accType = cast<RankedTensorType>(acc.getType());
  RankedTensorType type = accType.clone(node.resultElementType(
      0, getRankedType(node.operand(0)).getElementType()));
  SmallVector<Value> operands = {acc};
  if (c && beta != 0)
    operands.push_back(c);
  return buildElementwise(
      b, node.getLoc(), type, operands,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        Value y = args[0];
        if (alpha != 1)
          y = arith::MulFOp::create(
              nested, loc, y, createScalar(nested, loc, y.getType(), alpha));
        if (args.size() > 1) {
          Value scaled = convertScalar(nested, loc, args[1], y.getType());
          if (beta != 1)
            scaled = arith::MulFOp::create(
                nested, loc, scaled,
                createScalar(nested, loc, scaled.getType(), beta));
          y = arith::AddFOp::create(nested, loc, y, scaled);
        }
        return y;
      });
}

static LoweringResult lowerGemm(NodeLowering &node) {
  Value a = node.operand(0), bValue = node.operand(1), c = node.operand(2);
  if (failed(checkFloatOperands(node, a, bValue)))
    return failure();
  if (cast<RankedTensorType>(a.getType()).getRank() != 2 ||
      cast<RankedTensorType>(bValue.getType()).getRank() != 2)
    return node.emitError() << "A and B must be matrices";
  Value acc = buildContraction(node.getBuilder(), node.getLoc(),
                               {a, node.getInt("transA", 0) != 0},
                               {bValue, node.getInt("transB", 0) != 0});
  return SmallVector<Value>{buildEpilogue(node, acc, node.getFloat("alpha", 1),
                                          c, node.getFloat("beta", 1))};
}

/// MatMul and com.microsoft FusedMatMul (transA, transB, alpha).
static LoweringResult lowerMatMul(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value a = node.operand(0), bValue = node.operand(1);
  if (failed(checkFloatOperands(node, a, bValue)))
    return failure();
  if (node.getInt("transBatchA", 0) || node.getInt("transBatchB", 0))
    return node.emitError() << "transBatchA and transBatchB do not lower yet";
  // 1-D operands become a row (A) or a column (B), dropped again after.
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(bValue.getType());
  if (aType.getRank() == 0 || bType.getRank() == 0)
    return node.emitError() << "operands must have rank 1 or more";
  bool vectorA = aType.getRank() == 1, vectorB = bType.getRank() == 1;
  if (vectorA)
    a = reshapeTo(b, loc, a,
                  RankedTensorType::get({1, aType.getDimSize(0)},
                                        aType.getElementType()));
  if (vectorB)
    bValue = reshapeTo(b, loc, bValue,
                       RankedTensorType::get({bType.getDimSize(0), 1},
                                             bType.getElementType()));
  Value acc = buildContraction(b, loc, {a, node.getInt("transA", 0) != 0},
                               {bValue, node.getInt("transB", 0) != 0});
  Value result = buildEpilogue(node, acc, node.getFloat("alpha", 1), {}, 0);
  if (vectorA || vectorB) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> shape(type.getShape());
    if (vectorB)
      shape.erase(shape.end() - 1);
    if (vectorA)
      shape.erase(shape.end() - (vectorB ? 1 : 2));
    result = reshapeTo(b, loc, result, type.clone(shape));
  }
  return SmallVector<Value>{result};
}

void amp::lowering::populateContractionLowerings(LoweringTable &table) {
  table.add("", "Gemm", lowerGemm);
  table.add("", "MatMul", lowerMatMul);
  table.add("com.microsoft", "FusedMatMul", lowerMatMul);
}
