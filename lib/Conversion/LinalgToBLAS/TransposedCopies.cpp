//===- TransposedCopies.cpp - Copies that permute dimensions --------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/TransposedCopies.h"

using namespace mlir;

bool amp::isOneToOneParallel(linalg::GenericOp generic) {
  return generic && generic.getNumDpsInputs() == 1 &&
         generic.getNumDpsInits() == 1 &&
         generic.getNumParallelLoops() == generic.getNumLoops() &&
         generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
             .isIdentity();
}

bool amp::yieldsItsInput(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  return body.getOperations().size() == 1 &&
         body.getTerminator()->getOperand(0) == body.getArgument(0);
}

std::optional<amp::TransposedCopy> amp::matchTransposedCopy(Operation *op) {
  if (auto transpose = dyn_cast_if_present<linalg::TransposeOp>(op))
    return TransposedCopy{op, transpose.getInput(), transpose.getInit(),
                          SmallVector<int64_t>(transpose.getPermutation())};
  auto generic = dyn_cast_if_present<linalg::GenericOp>(op);
  if (!isOneToOneParallel(generic) || !yieldsItsInput(generic))
    return std::nullopt;
  AffineMap map = generic.getMatchingIndexingMap(generic.getDpsInputOperand(0));
  if (!map.isPermutation())
    return std::nullopt;
  TransposedCopy copy{op, generic.getDpsInputs().front(),
                      generic.getDpsInits().front(),
                      SmallVector<int64_t>(map.getNumResults())};
  for (auto [sourceDim, expr] : llvm::enumerate(map.getResults()))
    copy.permutation[cast<AffineDimExpr>(expr).getPosition()] = sourceDim;
  return copy;
}
