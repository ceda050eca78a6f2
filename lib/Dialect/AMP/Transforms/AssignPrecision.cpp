//===- AssignPrecision.cpp - Decide the precision of each op --------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-assign-precision: seeds low precision at always ops the cost model
// favours, denies it downstream of keep-fp32 ops and of amp.unscale, and
// spreads it through infer and follow ops by TensorFlow's "between" rule or
// PAI's "downstream" rule. Decisions become attributes; no type changes.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/CostModel.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Interfaces/CastFusionOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPASSIGNPRECISION
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
/// What the pass knows about one op of the body.
struct OpState {
  PrecisionClass precisionClass;
  PolicySource source;
  bool low = false;
  bool denied = false;
  /// The op holds subgraphs, decided after the block.
  bool hasSubgraph = false;
  /// A constant data input would overflow or flush to zero in low precision.
  bool outOfRange = false;
  StringRef reason;
  /// Dynamic dimensions whose sizes the cost model guessed, comma-separated.
  std::string guessedDims;
};

class AssignPrecisionPass
    : public amp::impl::AMPAssignPrecisionBase<AssignPrecisionPass> {
public:
  using AMPAssignPrecisionBase::AMPAssignPrecisionBase;

  void runOnOperation() override;

private:
  /// What the decisions of one function share, across its subgraphs.
  struct Options {
    const PrecisionPolicy &policy;
    CostModel &model;
    FloatType low;
    bool between;
    /// amp.unscale and every op after it, in any block of the function.
    llvm::DenseSet<Operation *> barrier;
  };

  /// Decides the ops of `body`, then those of the subgraphs of its ops.
  /// `afterBarrier`: the op that holds `body` is after amp.unscale.
  void assign(Block &body, Options &options, bool afterBarrier);

  /// Data results of `op` (all results for ops without the interface).
  static SmallVector<Value> getDataResults(Operation *op);
  /// Users of `op`'s data results, in the same block.
  static SmallVector<Operation *> getDataUsers(Operation *op, Block &body);
  /// Producers of `op`'s data operands, in the same block.
  static SmallVector<Operation *> getDataProducers(Operation *op, Block &body);
  /// Whether a data operand of `op` is a constant that `low` cannot hold;
  /// says so in a remark with `remark`. `checked` remembers each constant's
  /// answer, so that a shared weight is scanned once.
  static bool hasConstantOutOfRange(Operation *op, FloatType low, bool remark,
                                    llvm::DenseMap<Value, bool> &checked);
  /// Constants follow their users: a follow op computed from constants only
  /// (a Constant, an Unsqueeze of an initializer) goes low when all its uses
  /// are data inputs of low ops, so that the cast lands on the constant,
  /// which amp-fuse-casts converts in place, instead of after it.
  static void
  followUsersOfConstants(ArrayRef<Operation *> ops, Block &body,
                         llvm::DenseMap<Operation *, OpState> &states,
                         FloatType low,
                         const llvm::DenseSet<Operation *> &barrier);
  /// Whether `op` has data operands and low ops of `body` produce them all.
  static bool
  allDataProducersLow(Operation *op, Block &body,
                      const llvm::DenseMap<Operation *, OpState> &states);
};
} // namespace

/// Ends a remark with the op's ONNX node name, when it has one: imported
/// graphs have no source lines to point at.
static void appendNodeName(InFlightDiagnostic &remark, Operation *op) {
  StringRef name = PrecisionPolicy::getNodeName(op);
  if (!name.empty())
    remark << " at node '" << name << "'";
}

/// The value `value` takes its values from through follow ops with one data
/// input (Unsqueeze, Reshape, Relu...): their results hold a subset of their
/// input's magnitudes, so a range check can look at the source instead.
static Value getValueSource(Value value) {
  while (auto producer = value.getDefiningOp<PrecisionOpInterface>()) {
    if (producer.getPrecisionClass() != PrecisionClass::Follow)
      break;
    Value only;
    unsigned count = 0;
    for (auto [index, operand] : llvm::enumerate(producer->getOperands()))
      if (producer.isPrecisionDataOperand(index)) {
        only = operand;
        ++count;
      }
    if (count != 1)
      break;
    value = only;
  }
  return value;
}

/// Whether `op` has regions holding ops with PrecisionOpInterface.
static bool hasSubgraph(Operation &op) {
  for (Region &region : op.getRegions()) {
    WalkResult found = region.walk(
        [](PrecisionOpInterface) { return WalkResult::interrupt(); });
    if (found.wasInterrupted())
      return true;
  }
  return false;
}

/// Whether a float data slot of `op` is wider than 32 bits.
static bool hasFP64Data(PrecisionOpInterface op) {
  auto isWide = [](Value value) {
    auto type = dyn_cast<FloatType>(getElementTypeOrSelf(value.getType()));
    return type && type.getWidth() > 32;
  };
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    if (op.isPrecisionDataOperand(index) && isWide(operand))
      return true;
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    if (op.isPrecisionDataResult(index) && isWide(result))
      return true;
  return false;
}

SmallVector<Value> AssignPrecisionPass::getDataResults(Operation *op) {
  SmallVector<Value> results;
  auto precisionOp = dyn_cast<PrecisionOpInterface>(op);
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    if (!precisionOp || precisionOp.isPrecisionDataResult(index))
      results.push_back(result);
  return results;
}

SmallVector<Operation *> AssignPrecisionPass::getDataUsers(Operation *op,
                                                           Block &body) {
  SmallVector<Operation *> users;
  for (Value result : getDataResults(op)) {
    for (OpOperand &use : result.getUses()) {
      Operation *user = body.findAncestorOpInBlock(*use.getOwner());
      auto precisionUser = dyn_cast_or_null<PrecisionOpInterface>(user);
      if (precisionUser && user == use.getOwner() &&
          precisionUser.isPrecisionDataOperand(use.getOperandNumber()))
        users.push_back(user);
    }
  }
  return users;
}

SmallVector<Operation *> AssignPrecisionPass::getDataProducers(Operation *op,
                                                               Block &body) {
  SmallVector<Operation *> producers;
  auto precisionOp = dyn_cast<PrecisionOpInterface>(op);
  if (!precisionOp)
    return producers;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    Operation *producer = operand.getDefiningOp();
    if (precisionOp.isPrecisionDataOperand(index) && producer &&
        producer->getBlock() == &body)
      producers.push_back(producer);
  }
  return producers;
}

bool AssignPrecisionPass::hasConstantOutOfRange(
    Operation *op, FloatType low, bool remark,
    llvm::DenseMap<Value, bool> &checked) {
  auto precisionOp = cast<PrecisionOpInterface>(op);
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    if (!precisionOp.isPrecisionDataOperand(index))
      continue;
    auto result = dyn_cast<OpResult>(getValueSource(operand));
    auto constant =
        result ? dyn_cast<CastFusionOpInterface>(result.getOwner()) : nullptr;
    if (!constant)
      continue;
    auto [it, inserted] = checked.try_emplace(result, false);
    if (inserted)
      it->second = constant.hasValuesOutOfRange(result.getResultNumber(), low);
    if (!it->second)
      continue;
    if (remark) {
      InFlightDiagnostic diag = op->emitRemark()
                                << "stays f32: constant operand " << index
                                << " has values outside the range of " << low
                                << " (they would overflow or flush to zero)";
      appendNodeName(diag, op);
    }
    return true;
  }
  return false;
}

void AssignPrecisionPass::followUsersOfConstants(
    ArrayRef<Operation *> ops, Block &body,
    llvm::DenseMap<Operation *, OpState> &states, FloatType low,
    const llvm::DenseSet<Operation *> &barrier) {
  llvm::DenseSet<Operation *> fromConstants;
  // A constant value: an initializer, or the result of a follow op computed
  // from constants only.
  auto isConstant = [&](Value value) {
    Operation *producer = value.getDefiningOp();
    return producer && producer->getBlock() == &body &&
           (fromConstants.contains(producer) ||
            (isa<CastFusionOpInterface>(producer) &&
             !isa<PrecisionOpInterface>(producer)));
  };
  for (Operation *op : ops) {
    const OpState &state = states[op];
    auto precisionOp = cast<PrecisionOpInterface>(op);
    if (state.precisionClass != PrecisionClass::Follow || state.low ||
        state.denied || state.outOfRange || barrier.contains(op))
      continue;
    bool constantInputs = true;
    for (auto [index, operand] : llvm::enumerate(op->getOperands()))
      if (precisionOp.isPrecisionDataOperand(index) && !isConstant(operand))
        constantInputs = false;
    // A constant node's own value must fit the low type.
    auto constant = dyn_cast<CastFusionOpInterface>(op);
    bool inRange = llvm::none_of(op->getResults(), [&](OpResult result) {
      return constant &&
             constant.hasValuesOutOfRange(result.getResultNumber(), low);
    });
    if (constantInputs && inRange)
      fromConstants.insert(op);
  }
  // Users first: a chain of such ops goes low from its low end.
  for (Operation *op : llvm::reverse(ops)) {
    if (!fromConstants.contains(op))
      continue;
    auto precisionOp = cast<PrecisionOpInterface>(op);
    bool anyData = false, allLowData = true;
    for (auto [index, result] : llvm::enumerate(op->getResults())) {
      if (!precisionOp.isPrecisionDataResult(index))
        continue;
      for (OpOperand &use : result.getUses()) {
        auto it = states.find(use.getOwner());
        auto user = dyn_cast<PrecisionOpInterface>(use.getOwner());
        anyData = true;
        allLowData &= it != states.end() && it->second.low &&
                      user.isPrecisionDataOperand(use.getOperandNumber());
      }
    }
    if (anyData && allLowData)
      states[op].low = true;
  }
}

bool AssignPrecisionPass::allDataProducersLow(
    Operation *op, Block &body,
    const llvm::DenseMap<Operation *, OpState> &states) {
  auto precisionOp = dyn_cast<PrecisionOpInterface>(op);
  if (!precisionOp)
    return false;
  bool any = false;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    if (!precisionOp.isPrecisionDataOperand(index))
      continue;
    Operation *producer = operand.getDefiningOp();
    auto it = producer && producer->getBlock() == &body ? states.find(producer)
                                                        : states.end();
    if (it == states.end() || !it->second.low)
      return false;
    any = true;
  }
  return any;
}

void AssignPrecisionPass::assign(Block &body, Options &options,
                                 bool afterBarrier) {
  const PrecisionPolicy &policy = options.policy;
  CostModel &model = options.model;
  DimSizes &sizes = model.getSizes();
  FloatType low = options.low;
  bool between = options.between;
  llvm::DenseSet<Operation *> &barrier = options.barrier;
  // Every op of the body in order; the block is a DAG in that order.
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, OpState> states;
  llvm::DenseMap<Value, bool> rangeChecked;
  for (Operation &op : body) {
    // Only ops that implement PrecisionOpInterface are decided; others
    // (initializers, terminators, unknown dialects) keep their types.
    if (!isa<PrecisionOpInterface>(op))
      continue;
    OpState state;
    state.precisionClass = policy.classify(&op, &state.source);
    // An op with subgraphs (regions holding ops this pass decides, unlike a
    // linalg body) keeps its types while its bodies are decided after the
    // block; ops with untyped data cannot be retyped consistently.
    state.hasSubgraph = hasSubgraph(op);
    bool unknownType = cast<PrecisionOpInterface>(op).hasUnknownDataType();
    // FP64 computations are deliberate: mixed precision leaves them alone.
    bool fp64 = hasFP64Data(cast<PrecisionOpInterface>(op));
    if (state.hasSubgraph || unknownType || fp64)
      state.precisionClass = PrecisionClass::NeverTouch;
    if (unknownType)
      state.reason = "unknown-type";
    else if (fp64)
      state.reason = "fp64";
    // An op that cannot hold the low type computes in FP32 and stops
    // propagation, as a keep-fp32 op.
    bool decidable = state.precisionClass != PrecisionClass::NeverTouch &&
                     state.precisionClass != PrecisionClass::KeepFP32;
    if (decidable && !cast<PrecisionOpInterface>(op).supportsDataType(low)) {
      state.precisionClass = PrecisionClass::KeepFP32;
      state.reason = "unsupported-type";
    }
    if (state.precisionClass != PrecisionClass::KeepFP32 &&
        state.precisionClass != PrecisionClass::NeverTouch)
      state.outOfRange =
          hasConstantOutOfRange(&op, low, emitRemarks, rangeChecked);
    states[&op] = state;
    ops.push_back(&op);
  }
  auto isPropagating = [&](Operation *op) {
    PrecisionClass c = states[op].precisionClass;
    return c == PrecisionClass::Infer || c == PrecisionClass::Follow;
  };
  auto fromPolicy = [&](const OpState &state) {
    return state.source == PolicySource::OpType ||
           state.source == PolicySource::NodeName;
  };

  // The barrier: amp.unscale and everything after it stays FP32, also in
  // subgraphs, which may read values of enclosing blocks directly; so does
  // the optimizer region amp-analyze-training found.
  for (Operation *op : ops) {
    auto region = op->getAttrOfType<StringAttr>(kRegionAttrName);
    bool after = afterBarrier || isa<UnscaleOp>(op) ||
                 (region && region.getValue() == "optimizer") ||
                 llvm::any_of(op->getOperands(), [&](Value operand) {
                   Operation *producer = operand.getDefiningOp();
                   return producer && barrier.contains(producer);
                 });
    if (after)
      barrier.insert(op);
  }

  // One forward walk, in block order: deny low precision downstream of
  // keep-fp32 ops through infer and follow ops; seed always ops the cost
  // model favours; note the infer and follow ops reachable from a low op.
  // An input from a low op, or from one reachable from it, needs no cast.
  llvm::DenseSet<Operation *> afterLow;
  auto isLow = [&](Value value) {
    if (getElementTypeOrSelf(value.getType()) == low)
      return true;
    Operation *producer = value.getDefiningOp();
    auto it = producer ? states.find(producer) : states.end();
    return it != states.end() &&
           (it->second.low || afterLow.contains(producer));
  };
  // A result some user surely reads in FP32: not as data of an op that may
  // go low (function results, keep-fp32 and never-touch ops, other slots).
  auto readInFP32 = [&](Value result) {
    return llvm::any_of(result.getUses(), [&](OpOperand &use) {
      auto it = states.find(use.getOwner());
      if (it == states.end() || barrier.contains(use.getOwner()))
        return true;
      PrecisionClass userClass = it->second.precisionClass;
      return userClass == PrecisionClass::KeepFP32 ||
             userClass == PrecisionClass::NeverTouch ||
             !cast<PrecisionOpInterface>(use.getOwner())
                  .isPrecisionDataOperand(use.getOperandNumber());
    });
  };
  for (Operation *op : ops) {
    OpState &state = states[op];
    if (isPropagating(op)) {
      SmallVector<Operation *> producers = getDataProducers(op, body);
      for (Operation *producer : producers) {
        const OpState &from = states[producer];
        if (from.precisionClass == PrecisionClass::KeepFP32 ||
            (from.denied && isPropagating(producer)))
          state.denied = true;
      }
      if (!state.denied && !state.outOfRange && !barrier.contains(op) &&
          llvm::any_of(producers, [&](Operation *producer) {
            return states[producer].low || afterLow.contains(producer);
          }))
        afterLow.insert(op);
      continue;
    }
    if (state.precisionClass != PrecisionClass::Always ||
        barrier.contains(op) || state.outOfRange)
      continue;
    // An op the policy makes always goes low without asking the cost model.
    if (fromPolicy(state)) {
      state.low = true;
      state.reason = "policy";
      continue;
    }
    sizes.resetGuesses();
    state.low =
        model.compare(cast<PrecisionOpInterface>(op), low, isLow, readInFP32)
            .prefersLow();
    state.reason = state.low ? "always-list" : "cost-model";
    state.guessedDims = llvm::join(sizes.getGuesses(), ",");
  }
  // Reaching a low op, upstream through infer and follow ops.
  llvm::DenseSet<Operation *> beforeLow;
  for (Operation *op : llvm::reverse(ops)) {
    if (!isPropagating(op))
      continue;
    for (Operation *user : getDataUsers(op, body))
      if (states[user].low || beforeLow.contains(user))
        beforeLow.insert(op);
  }

  for (Operation *op : ops) {
    OpState &state = states[op];
    switch (state.precisionClass) {
    case PrecisionClass::Always:
      if (barrier.contains(op))
        state.reason = "barrier";
      else if (state.outOfRange)
        state.reason = "range";
      break;
    case PrecisionClass::Infer:
    case PrecisionClass::Follow: {
      bool isFollow = state.precisionClass == PrecisionClass::Follow;
      state.reason = barrier.contains(op) ? "barrier"
                     : state.outOfRange   ? "range"
                     : fromPolicy(state)  ? "policy"
                     : isFollow           ? "follow"
                                          : "infer";
      bool onPath =
          afterLow.contains(op) && (!between || beforeLow.contains(op));
      // A follow op takes the precision of its data producers when they
      // are all low (graph inputs are FP32).
      bool producersLow = isFollow && allDataProducersLow(op, body, states);
      state.low = !state.denied && !state.outOfRange && !barrier.contains(op) &&
                  (onPath || producersLow);
      break;
    }
    case PrecisionClass::KeepFP32:
      if (barrier.contains(op) && !isa<UnscaleOp>(op))
        state.reason = "barrier";
      else if (state.reason.empty())
        state.reason = fromPolicy(state) ? "policy" : "keep-fp32";
      break;
    case PrecisionClass::NeverTouch:
      if (state.reason.empty())
        state.reason = fromPolicy(state) ? "policy" : "never-touch";
      break;
    }
  }
  followUsersOfConstants(ops, body, states, low, barrier);

  Builder builder(&getContext());
  for (Operation *op : ops) {
    const OpState &state = states[op];
    Type type = state.low ? Type(low) : builder.getF32Type();
    op->setAttr(kPrecisionAttrName, TypeAttr::get(type));
    op->setAttr(kReasonAttrName, builder.getStringAttr(state.reason));
    if (!emitRemarks)
      continue;
    InFlightDiagnostic remark = op->emitRemark()
                                << type << " (" << state.reason << ")";
    if (!state.guessedDims.empty())
      remark << "; guessed sizes of dims " << state.guessedDims;
    appendNodeName(remark, op);
  }

  // Subgraph bodies are decided like function bodies: their arguments and
  // results keep their types, so each loop-carried value has one precision,
  // and casts at the body's edges connect it to low-precision ops inside.
  for (Operation *op : ops)
    if (states[op].hasSubgraph)
      for (Region &region : op->getRegions())
        for (Block &block : region)
          assign(block, options, barrier.contains(op));
}

void AssignPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  FloatType low = parseLowPrecision(&getContext(), precision);
  if (!low) {
    module.emitError() << "amp-assign-precision: unknown precision '"
                       << precision << "'; expected fp16 or bf16";
    return signalPassFailure();
  }
  std::string infer =
      rule.empty() ? (low.isF16() ? "between" : "downstream") : rule.getValue();
  if (infer != "between" && infer != "downstream") {
    module.emitError() << "amp-assign-precision: unknown rule '" << rule
                       << "'; expected between or downstream";
    return signalPassFailure();
  }
  std::optional<CostModel> model = CostModel::create(
      device, defaultDimSize, dimSizes, module, "amp-assign-precision");
  if (!model)
    return signalPassFailure();
  if (!model->supports(low)) {
    module.emitError() << "amp-assign-precision: device " << device
                       << " has no " << precision;
    return signalPassFailure();
  }
  PrecisionPolicy policy;
  if (failed(policy.addSources(policyFile, opClasses, nodeClasses,
                               module.getLoc())))
    return signalPassFailure();
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    Options options{policy, *model, low, infer == "between", {}};
    assign(func.getBody().front(), options, /*afterBarrier=*/false);
  }
}
