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

#include "amp/Dialect/ONNXGraph/IR/Einsum.h"

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

/// Einsum: one generic whose loops are the output's labels, then the
/// summed ones; each operand reads its labels (a label repeated in one
/// term reads a diagonal, a size-1 dimension under "..." broadcasts). Two
/// operands multiply-accumulate as the other contractions do, so that a
/// GEMM-shaped equation reaches BLAS and cuBLASLt.
static LoweringResult lowerEinsum(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  SmallVector<Value> operands;
  SmallVector<int64_t> ranks;
  for (unsigned i = 0; i < node.getNumOperands(); ++i) {
    RankedTensorType type = getRankedType(node.operand(i));
    if (!type || !type.hasStaticShape())
      return node.emitError() << "operands must have static shapes";
    operands.push_back(node.operand(i));
    ranks.push_back(type.getRank());
  }
  if (operands.empty())
    return node.emitError() << "expects at least one operand";
  std::string error;
  std::optional<onnxg::EinsumEquation> equation = onnxg::EinsumEquation::parse(
      node.getString("equation", ""), ranks, error);
  if (!equation)
    return node.emitError() << "equation: " << error;
  // Each label's size: the operands agree on it, or broadcast a 1.
  SmallVector<int64_t> labelSizes(equation->numLabels, 1);
  for (auto [operand, labels] : llvm::zip_equal(operands, equation->operands))
    for (auto [dim, label] : llvm::enumerate(labels)) {
      int64_t size = getRankedType(operand).getDimSize(dim);
      if (size != 1 && labelSizes[label] != 1 && labelSizes[label] != size)
        return node.emitError() << "equation: a label has sizes "
                                << labelSizes[label] << " and " << size;
      if (size != 1)
        labelSizes[label] = size;
    }
  SmallVector<unsigned> loopOfLabel(equation->numLabels, ~0u);
  SmallVector<int64_t> outShape;
  unsigned loops = 0;
  for (unsigned label : equation->output) {
    loopOfLabel[label] = loops++;
    outShape.push_back(labelSizes[label]);
  }
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  for (unsigned label = 0; label < equation->numLabels; ++label)
    if (loopOfLabel[label] == ~0u) {
      loopOfLabel[label] = loops++;
      iterators.push_back(utils::IteratorType::reduction);
    }
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (auto [operand, labels] : llvm::zip_equal(operands, equation->operands)) {
    SmallVector<AffineExpr> exprs;
    for (auto [dim, label] : llvm::enumerate(labels)) {
      bool broadcast =
          getRankedType(operand).getDimSize(dim) == 1 && labelSizes[label] != 1;
      exprs.push_back(broadcast ? b.getAffineConstantExpr(0)
                                : b.getAffineDimExpr(loopOfLabel[label]));
    }
    maps.push_back(AffineMap::get(loops, 0, exprs, ctx));
  }
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i < equation->output.size(); ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  maps.push_back(AffineMap::get(loops, 0, outExprs, ctx));
  Type elementType = getRankedType(operands[0]).getElementType();
  bool isFloat = isa<FloatType>(elementType);
  Type accType = isFloat ? getAccumulatorType(elementType) : elementType;
  Value acc = createFilled(b, loc, getAsIndexOpFoldResult(ctx, outShape),
                           createScalar(b, loc, accType, 0));
  auto generic = linalg::GenericOp::create(
      b, loc, acc.getType(), operands, acc, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value sum = args.back();
        if (isFloat && args.size() == 3) {
          linalg::YieldOp::create(
              nb, nl, multiplyAccumulate(nb, nl, args[0], args[1], sum));
          return;
        }
        Value product = convertScalar(nb, nl, args[0], accType);
        for (Value x : args.drop_front().drop_back()) {
          x = convertScalar(nb, nl, x, accType);
          product = isFloat
                        ? arith::MulFOp::create(nb, nl, product, x).getResult()
                        : arith::MulIOp::create(nb, nl, product, x).getResult();
        }
        linalg::YieldOp::create(
            nb, nl, combineValues(nb, nl, CombineKind::Add, sum, product));
      });
  return SmallVector<Value>{convertTensor(
      b, loc, generic.getResult(0), node.resultElementType(0, elementType))};
}

void amp::lowering::populateContractionLowerings(LoweringTable &table) {
  table.add("", "Einsum", lowerEinsum);
  table.add("", "Gemm", lowerGemm);
  table.add("", "MatMul", lowerMatMul);
  table.add("com.microsoft", "FusedMatMul", lowerMatMul);
}
