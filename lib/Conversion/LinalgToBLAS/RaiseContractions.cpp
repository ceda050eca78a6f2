//===- RaiseContractions.cpp - GEMM-like generics to linalg.contract ------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-raise-contractions pass: recognizes the multiply-accumulate
// generics that the graph lowering builds for GEMMs (and any other generic
// of the same form) and rewrites them as linalg.contract, which the BLAS
// path of the CPU pipeline calls OpenBLAS for after bufferization.
//
//===----------------------------------------------------------------------===//

#include "EntryPoints.h"

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::amp {
#define GEN_PASS_DEF_RAISECONTRACTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The block argument `value` is, possibly through one arith.extf to
/// `accType`.
static BlockArgument getWidenedArgument(Value value, Type accType) {
  if (value.getType() != accType)
    return {};
  if (auto extend = value.getDefiningOp<arith::ExtFOp>())
    value = extend.getIn();
  return dyn_cast<BlockArgument>(value);
}

/// Whether the body of `op` is `acc + widen(a) * widen(b)`, in either
/// order, and nothing else.
static bool isMultiplyAccumulate(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  Block &body = op.getRegion().front();
  BlockArgument a = body.getArgument(0), b = body.getArgument(1),
                acc = body.getArgument(2);
  Type accType = acc.getType();
  if (amp::getContractEntryName(a.getType(), b.getType(), accType).empty())
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto multiply = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!multiply)
    return false;
  BlockArgument x = getWidenedArgument(multiply.getLhs(), accType);
  BlockArgument y = getWidenedArgument(multiply.getRhs(), accType);
  if (!((x == a && y == b) || (x == b && y == a)))
    return false;
  // The add, the multiply, the yield, and one extf per widened input.
  size_t widened = (a.getType() != accType) + (b.getType() != accType);
  return body.getOperations().size() == 3 + widened;
}

/// The loops that `map`'s dimension results index, as a bit mask.
static uint64_t getIndexedLoops(AffineMap map) {
  uint64_t loops = 0;
  for (AffineExpr expr : map.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      loops |= uint64_t(1) << dim.getPosition();
  return loops;
}

/// Whether the maps and iterators of `op` are those of a GEMM: projected
/// permutations (inputs may index a size-1 dimension with 0), every
/// reduction loop in both inputs and not in the output, every parallel loop
/// in the output and an input, and one of them in only one input.
static bool isContraction(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (op.getNumLoops() > 64 || !maps[2].isProjectedPermutation())
    return false;
  for (unsigned input = 0; input < 2; ++input) {
    if (!maps[input].isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    // Constants are dropped by slicing, which needs a tensor.
    auto type = cast<ShapedType>(op.getDpsInputs()[input].getType());
    for (auto [position, expr] : llvm::enumerate(maps[input].getResults()))
      if (isa<AffineConstantExpr>(expr) &&
          (type.getDimSize(position) != 1 || !isa<RankedTensorType>(type)))
        return false;
  }
  uint64_t inA = getIndexedLoops(maps[0]), inB = getIndexedLoops(maps[1]),
           inC = getIndexedLoops(maps[2]);
  for (auto [loop, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    uint64_t bit = uint64_t(1) << loop;
    bool reduction = iterator == utils::IteratorType::reduction;
    if (reduction ? (inC & bit) || !(inA & bit) || !(inB & bit)
                  : !(inC & bit) || !((inA | inB) & bit))
      return false;
  }
  // An M or an N loop: batched dot products (every output loop in both
  // inputs) would be one 1 x 1 GEMM per output element.
  return (inC & ~(inA & inB)) != 0;
}

/// `operand` without the dimensions that `map` indexes by a constant (all
/// of size 1), and `map` without those results.
static std::pair<Value, AffineMap>
dropConstantDims(OpBuilder &b, Location loc, Value operand, AffineMap map) {
  SmallVector<int64_t> kept;
  for (auto [position, expr] : llvm::enumerate(map.getResults()))
    if (!isa<AffineConstantExpr>(expr))
      kept.push_back(position);
  if (kept.size() == map.getNumResults())
    return {operand, map};
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape;
  for (int64_t position : kept)
    shape.push_back(type.getDimSize(position));
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, operand);
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), operand,
      offsets, sizes, strides);
  return {slice, map.getSubMap(llvm::to_vector_of<unsigned>(kept))};
}

namespace {
struct RaiseContractionsPass
    : amp::impl::RaiseContractionsBase<RaiseContractionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> contractions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isMultiplyAccumulate(op) && isContraction(op))
        contractions.push_back(op);
    });
    for (linalg::GenericOp op : contractions) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      SmallVector<Value> inputs;
      for (unsigned input = 0; input < 2; ++input) {
        auto [operand, map] =
            dropConstantDims(b, loc, op.getDpsInputs()[input], maps[input]);
        inputs.push_back(operand);
        maps[input] = map;
      }
      auto contract = linalg::ContractOp::create(b, loc, op.getResultTypes(),
                                                 inputs, op.getDpsInits(),
                                                 b.getAffineMapArrayAttr(maps));
      op.replaceAllUsesWith(contract.getResults());
      op.erase();
    }
  }
};
} // namespace
