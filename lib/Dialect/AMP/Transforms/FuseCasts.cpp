//===- FuseCasts.cpp - Fold casts into the ops next to them ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-fuse-casts: an amp.cast disappears into an existing conversion of the
// same value to the same type (a Cast node of the input graph, reused), into
// its producer when the producer can write the cast's type itself (a
// constant converted in place, a cast node retargeted), or into its
// consumers when they can read the narrower value an exact widening came
// from.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Interfaces/CastFusionOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFUSECASTS
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
class FuseCastsPass : public amp::impl::AMPFuseCastsBase<FuseCastsPass> {
public:
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        fuse(func);
  }

private:
  void fuse(func::FuncOp func);
  /// Replaces `castOp` by another op that converts the same value to the
  /// same type, moved up to it when it came later; returns 1 when the cast
  /// went.
  static int64_t reuseExistingConversion(CastOp castOp);
  /// Folds every cast of `castOp`'s input to the same type into the input's
  /// producer; adds the erased casts to `gone`, the producer to `touched`,
  /// and returns how many went.
  static int64_t fuseIntoProducer(CastOp castOp,
                                  llvm::DenseSet<Operation *> &gone,
                                  llvm::SetVector<Operation *> &touched);
  /// Lets the consumers of an exact widening read its input; returns 1 when
  /// the cast went. Adds the consumers to `touched`.
  static int64_t fuseIntoConsumers(CastOp castOp,
                                   llvm::SetVector<Operation *> &touched);
  /// Removes the ops of `touched` that fusion left converting a value to its
  /// own type (a Cast node now reading and writing f16), unless a
  /// terminator reads them; returns how many went.
  static int64_t removeIdentityConversions(llvm::ArrayRef<Operation *> touched);
};
} // namespace

/// Whether `user` is an amp.cast to `element`.
static bool isPlainCastTo(Operation *user, Type element) {
  auto castOp = dyn_cast<CastOp>(user);
  return castOp && castOp.getType().getElementType() == element;
}

int64_t FuseCastsPass::reuseExistingConversion(CastOp castOp) {
  for (OpOperand &use : castOp.getInput().getUses()) {
    Operation *other = use.getOwner();
    if (other->getBlock() != castOp->getBlock() ||
        !isConversionTo(use, castOp.getType()))
      continue;
    // A later conversion moves up to the cast, where its operands exist.
    if (castOp->isBeforeInBlock(other)) {
      bool operandsReady = llvm::all_of(other->getOperands(), [&](Value v) {
        Operation *producer = v.getDefiningOp();
        return !producer || producer->getBlock() != castOp->getBlock() ||
               producer->isBeforeInBlock(castOp);
      });
      if (!operandsReady)
        continue;
      other->moveBefore(castOp);
    }
    castOp.getResult().replaceAllUsesWith(other->getResult(0));
    castOp->erase();
    return 1;
  }
  return 0;
}

int64_t FuseCastsPass::fuseIntoProducer(CastOp castOp,
                                        llvm::DenseSet<Operation *> &gone,
                                        llvm::SetVector<Operation *> &touched) {
  auto type = cast<FloatType>(castOp.getType().getElementType());
  auto result = dyn_cast<OpResult>(castOp.getInput());
  auto producer =
      result ? dyn_cast<CastFusionOpInterface>(result.getOwner()) : nullptr;
  // Other users still need the value as it is.
  if (!producer ||
      !llvm::all_of(
          result.getUsers(),
          [&](Operation *user) { return isPlainCastTo(user, type); }) ||
      !producer.canWriteResultAs(result.getResultNumber(), type))
    return 0;
  producer.writeResultAs(result.getResultNumber(), type);
  touched.insert(producer);
  int64_t fused = 0;
  for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
    user->getResult(0).replaceAllUsesWith(result);
    gone.insert(user);
    user->erase();
    ++fused;
  }
  return fused;
}

int64_t
FuseCastsPass::fuseIntoConsumers(CastOp castOp,
                                 llvm::SetVector<Operation *> &touched) {
  Value input = castOp.getInput();
  auto narrow = cast<FloatType>(getElementTypeOrSelf(input.getType()));
  if (!isExactIn(narrow, cast<FloatType>(castOp.getType().getElementType())))
    return 0;
  for (OpOperand &use : llvm::make_early_inc_range(castOp->getUses())) {
    auto consumer = dyn_cast<CastFusionOpInterface>(use.getOwner());
    if (consumer && consumer.canReadOperandAs(use.getOperandNumber(), narrow)) {
      use.set(input);
      touched.insert(consumer);
    }
  }
  if (!castOp->use_empty())
    return 0;
  castOp->erase();
  return 1;
}

int64_t
FuseCastsPass::removeIdentityConversions(llvm::ArrayRef<Operation *> touched) {
  int64_t removed = 0;
  for (Operation *op : touched) {
    auto conversion = cast<CastFusionOpInterface>(op);
    if (op->getNumResults() != 1 || op->getNumOperands() < 1 ||
        op->getOperand(0).getType() != op->getResult(0).getType() ||
        !conversion.isConversionOf(0, 0) ||
        llvm::any_of(op->getUsers(), [](Operation *user) {
          return user->hasTrait<OpTrait::IsTerminator>();
        }))
      continue;
    op->getResult(0).replaceAllUsesWith(op->getOperand(0));
    op->erase();
    ++removed;
  }
  return removed;
}

void FuseCastsPass::fuse(func::FuncOp func) {
  SmallVector<CastOp> casts;
  func.walk([&](CastOp castOp) { casts.push_back(castOp); });
  // Casts folded away; a producer takes all casts of its result at once.
  llvm::DenseSet<Operation *> gone;
  // Ops that now produce or read another type.
  llvm::SetVector<Operation *> touched;
  int64_t fused = 0;
  for (CastOp castOp : casts) {
    if (gone.contains(castOp))
      continue;
    if (int64_t count = reuseExistingConversion(castOp)) {
      fused += count;
      continue;
    }
    if (int64_t count = fuseIntoProducer(castOp, gone, touched)) {
      fused += count;
      continue;
    }
    fused += fuseIntoConsumers(castOp, touched);
  }
  fused += removeIdentityConversions(touched.getArrayRef());
  if (auto before = func->getAttrOfType<IntegerAttr>(kCastsFusedAttrName))
    fused += before.getInt();
  func->setAttr(kCastsFusedAttrName, Builder(func).getI64IntegerAttr(fused));
}
