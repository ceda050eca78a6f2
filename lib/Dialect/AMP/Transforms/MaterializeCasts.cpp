//===- MaterializeCasts.cpp - Apply the precision decisions ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-materialize-casts: retypes the float data of ops that
// amp-assign-precision decided low, with one amp.cast per value and target
// type shared by all consumers, in subgraphs too; everything else keeps its
// types.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Interfaces/PrecisionOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPMATERIALIZECASTS
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
/// The casts of one function body, one per (value, element type).
class CastCache {
public:
  /// `value` as a tensor of `element`: itself, or a shared amp.cast placed
  /// right after its definition.
  Value get(Value value, Type element) {
    auto type = cast<TensorType>(value.getType());
    if (type.getElementType() == element)
      return value;
    Value &cached = casts[{value, element}];
    if (!cached) {
      OpBuilder builder(value.getContext());
      if (Operation *def = value.getDefiningOp())
        builder.setInsertionPointAfter(def);
      else
        builder.setInsertionPointToStart(value.getParentBlock());
      cached =
          CastOp::create(builder, value.getLoc(), type.clone(element), value)
              .getResult();
    }
    return cached;
  }

  unsigned size() const { return casts.size(); }

private:
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
};

class MaterializeCastsPass
    : public amp::impl::AMPMaterializeCastsBase<MaterializeCastsPass> {
public:
  using AMPMaterializeCastsBase::AMPMaterializeCastsBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(materialize(func)))
        return signalPassFailure();
  }

private:
  LogicalResult materialize(func::FuncOp func);
  /// Retypes the arguments that only ops decided low read as data.
  static void retypeArguments(func::FuncOp func);
};
} // namespace

/// The low type `use` is a data input of an op decided in, or null (an FP32
/// op, another slot, an undecided op).
static Type getLowDataDecision(OpOperand &use) {
  auto user = dyn_cast<PrecisionOpInterface>(use.getOwner());
  auto decision = use.getOwner()->getAttrOfType<TypeAttr>(kPrecisionAttrName);
  if (!user || !decision || decision.getValue().isF32() ||
      !user.isPrecisionDataOperand(use.getOperandNumber()))
    return {};
  return decision.getValue();
}

void MaterializeCastsPass::retypeArguments(func::FuncOp func) {
  // Parameters are FP32 master weights, whoever reads them.
  llvm::StringSet<> parameters;
  if (auto roles = func->getAttrOfType<DictionaryAttr>(kTrainingAttrName))
    if (auto names = roles.getAs<ArrayAttr>("parameters"))
      for (auto name : names.getAsValueRange<StringAttr>())
        parameters.insert(name);
  for (BlockArgument arg : func.getArguments()) {
    if (!isFloatTensor(arg.getType()) || arg.use_empty() ||
        parameters.contains(onnxg::getValueName(arg)))
      continue;
    Type low;
    bool onlyLowData = llvm::all_of(arg.getUses(), [&](OpOperand &use) {
      Type decision = getLowDataDecision(use);
      if (!decision || (low && decision != low))
        return false;
      low = decision;
      return true;
    });
    if (onlyLowData && isa<FloatType>(low))
      arg.setType(cast<TensorType>(arg.getType()).clone(low));
  }
}

LogicalResult MaterializeCastsPass::materialize(func::FuncOp func) {
  Block &body = func.getBody().front();
  if (!keepIOTypes)
    retypeArguments(func);
  CastCache casts;
  // Results retyped so far, with their type before.
  llvm::MapVector<Value, Type> retyped;
  // Producers before their users, enclosing blocks before subgraphs: a
  // value is retyped before any cast of it is made. A cast of a value from
  // an enclosing block goes there, once per step rather than per iteration.
  SmallVector<Operation *> ops;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op != func)
      ops.push_back(op);
  });

  for (Operation *op : ops) {
    auto precisionOp = dyn_cast<PrecisionOpInterface>(op);
    Attribute attr = op->getAttr(kPrecisionAttrName);
    if (!precisionOp || !attr)
      continue;
    auto decision = dyn_cast<TypeAttr>(attr);
    if (!decision || !isa<FloatType>(decision.getValue()))
      return op->emitOpError("has ")
             << kPrecisionAttrName << " = " << attr
             << "; amp-materialize-casts expects a float type such as f16";
    // An op decided FP32 keeps its types; the fix-up below gives it the
    // values it read before in their old types. (Casting all its inputs to
    // f32 would narrow f64 and widen what the graph computes in f16.)
    Type element = decision.getValue();
    if (element.isF32())
      continue;
    for (OpOperand &operand : op->getOpOperands())
      if (precisionOp.isPrecisionDataOperand(operand.getOperandNumber()) &&
          isFloatTensor(operand.get().getType()))
        operand.set(casts.get(operand.get(), element));
    for (OpResult result : op->getResults()) {
      if (!precisionOp.isPrecisionDataResult(result.getResultNumber()) ||
          !isFloatTensor(result.getType()))
        continue;
      auto type = cast<TensorType>(result.getType());
      if (type.getElementType() == element)
        continue;
      retyped[result] = type;
      result.setType(type.clone(element));
    }
    precisionOp.adaptToDataType(cast<FloatType>(element));
  }

  // Every other use of a retyped value (FP32 ops, non-data slots, undecided
  // ops, the function's results) reads it in its type before.
  for (auto [value, before] : retyped) {
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      Operation *user = use.getOwner();
      if (isa<CastOp>(user))
        continue;
      bool lowData = static_cast<bool>(getLowDataDecision(use));
      bool returnedAsIs = !keepIOTypes && isa<func::ReturnOp>(user);
      if (!lowData && !returnedAsIs)
        use.set(casts.get(value, cast<TensorType>(before).getElementType()));
    }
  }
  if (!keepIOTypes)
    func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                   body.getTerminator()->getOperandTypes()));
  // For the report: amp-eliminate-casts may remove some of them.
  func->setAttr(kCastsInsertedAttrName,
                Builder(func).getI64IntegerAttr(casts.size()));
  return success();
}
