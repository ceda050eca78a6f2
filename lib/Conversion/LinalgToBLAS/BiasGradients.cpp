//===- BiasGradients.cpp - A reduction that is a GEMM's bias gradient -----===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/BiasGradients.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

/// Whether `body` is `yield(addf(acc, x))`, x the input element or its
/// extf to f32, in either order, and nothing else.
static bool isSumOfInput(Block *body) {
  auto sum = cast<linalg::YieldOp>(body->getTerminator())
                 .getOperand(0)
                 .getDefiningOp<arith::AddFOp>();
  if (!sum || !sum.getType().isF32())
    return false;
  Value accumulator = body->getArgument(1), other;
  if (sum.getLhs() == accumulator)
    other = sum.getRhs();
  else if (sum.getRhs() == accumulator)
    other = sum.getLhs();
  else
    return false;
  size_t numOps = 2; // the sum and the yield
  if (auto widen = other.getDefiningOp<arith::ExtFOp>()) {
    other = widen.getIn();
    ++numOps;
  }
  return other == body->getArgument(0) &&
         body->getOperations().size() == numOps;
}

std::optional<unsigned>
amp::getBiasGradientInput(linalg::ContractOp contraction,
                          linalg::GenericOp reduction) {
  if (reduction.getNumDpsInputs() != 1 || reduction.getNumDpsInits() != 1 ||
      contraction.getNumDpsInputs() != 2 || !isSumOfInput(reduction.getBody()))
    return std::nullopt;
  auto vectorType = dyn_cast<ShapedType>(reduction.getDpsInits()[0].getType());
  if (!vectorType || vectorType.getRank() != 1 ||
      !vectorType.getElementType().isF32() || !vectorType.hasStaticShape())
    return std::nullopt;
  Value input = reduction.getDpsInputs()[0];
  SmallVector<AffineMap> reductionMaps = reduction.getIndexingMapsArray();
  SmallVector<AffineMap> contractionMaps = contraction.getIndexingMapsArray();
  AffineMap inputMap = reductionMaps[0], vectorMap = reductionMaps[1];
  if (!inputMap.isPermutation() || vectorMap.getNumResults() != 1 ||
      !isa<AffineDimExpr>(vectorMap.getResult(0)))
    return std::nullopt;
  unsigned keptLoop = cast<AffineDimExpr>(vectorMap.getResult(0)).getPosition();
  for (auto [loop, type] : llvm::enumerate(reduction.getIteratorTypesArray()))
    if ((type == utils::IteratorType::parallel) != (loop == keptLoop))
      return std::nullopt;
  auto shape = cast<ShapedType>(input.getType()).getShape();
  for (unsigned operand : {0u, 1u}) {
    if (contraction.getDpsInputs()[operand] != input)
      continue;
    AffineMap map = contractionMaps[operand];
    if (!map.isProjectedPermutation() || map.getNumResults() != shape.size())
      continue;
    // Dimension d of the input: reduced here exactly when the contraction
    // reduces its loop (one the result does not index).
    bool matches = true, kept = false;
    for (unsigned d = 0; d < shape.size() && matches; ++d) {
      if (shape[d] == 1)
        continue;
      unsigned contractionLoop =
          cast<AffineDimExpr>(map.getResult(d)).getPosition();
      bool contracted = !contractionMaps[2].isFunctionOfDim(contractionLoop);
      bool reduced =
          cast<AffineDimExpr>(inputMap.getResult(d)).getPosition() != keptLoop;
      matches = contracted == reduced;
      if (!reduced)
        kept = shape[d] == vectorType.getDimSize(0);
    }
    if (matches && kept)
      return operand;
  }
  return std::nullopt;
}

bool amp::isBiasGradientOfAContraction(linalg::GenericOp reduction) {
  if (reduction.getNumDpsInputs() != 1)
    return false;
  return llvm::any_of(
      reduction.getDpsInputs()[0].getUsers(), [&](Operation *user) {
        auto contraction = dyn_cast<linalg::ContractOp>(user);
        return contraction && getBiasGradientInput(contraction, reduction);
      });
}
