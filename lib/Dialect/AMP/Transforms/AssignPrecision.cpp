//===- AssignPrecision.cpp - Decide the precision of each op --------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-assign-precision: with assign=optimal, one min-cut over every op's
// modeled time and the casts between them decides the whole function (the
// class and policy pin some ops); with assign=propagate, low precision is
// seeded at always ops the cost model favours, denied downstream of keep-fp32
// ops and of amp.unscale, and spread through infer and follow ops by
// TensorFlow's "between" rule or PAI's "downstream" rule. Decisions become
// attributes; no type changes.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/CostModel.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Dialect/AMP/Transforms/PrecisionCut.h"
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
struct DecisionState {
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

/// The ops of a function body and of its subgraphs, in pre-order, with what
/// the pass knows of each, and the blocks that hold them.
struct Decisions {
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, DecisionState> states;
  SmallVector<Block *> blocks;
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
    /// The cost model with 8x the default dimension size, for the
    /// sensitivity of the optimal assignment.
    CostModel *scaledModel;
    /// amp.unscale and every op after it, in any block of the function.
    llvm::DenseSet<Operation *> barrier;
  };

  /// Decides the ops of `body` by propagation, then those of the subgraphs
  /// of its ops, and adds them to `decisions`. `afterBarrier`: the op that
  /// holds `body` is after amp.unscale.
  void propagate(Block &body, Options &options, bool afterBarrier,
                 Decisions &decisions);
  /// Decides the ops of `decisions` again by the min-cut, keeping the
  /// propagated labels for comparison; records the objective's values on
  /// `func`.
  void assignOptimal(func::FuncOp func, Decisions &decisions, Options &options);
  /// Sets the decision attributes, with remarks when asked.
  void writeDecisions(const Decisions &decisions, FloatType low);

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
  /// Whether `op` multiplies a loss-scaled gradient (a value of `scaled`)
  /// by a constant of magnitude above kScaledGradientGrowthLimit; says so
  /// in a remark with `remark`.
  static bool scalesUpScaledGradient(Operation *op,
                                     const llvm::DenseSet<Value> &scaled,
                                     bool remark);
  /// Constants follow their users: a follow op computed from constants only
  /// (a Constant, an Unsqueeze of an initializer) goes low when all its uses
  /// are data inputs of low ops, so that the cast lands on the constant,
  /// which amp-fuse-casts converts in place, instead of after it.
  static void
  followUsersOfConstants(ArrayRef<Operation *> ops, Block &body,
                         llvm::DenseMap<Operation *, DecisionState> &states,
                         FloatType low,
                         const llvm::DenseSet<Operation *> &barrier);
  /// Whether `op` has data operands and low ops of `body` produce them all.
  static bool
  allDataProducersLow(Operation *op, Block &body,
                      const llvm::DenseMap<Operation *, DecisionState> &states);
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

/// The constant result `value` takes its values from (getValueSource), with
/// its op, or a null pair when it comes from no constant.
static std::pair<OpResult, CastFusionOpInterface>
getConstantSource(Value value) {
  auto result = dyn_cast<OpResult>(getValueSource(value));
  auto constant =
      result ? dyn_cast<CastFusionOpInterface>(result.getOwner()) : nullptr;
  if (!constant)
    return {};
  return {result, constant};
}

/// Whether the policy, not the op table, gave the op its class.
static bool isFromPolicy(const DecisionState &state) {
  return state.source == PolicySource::OpType ||
         state.source == PolicySource::NodeName;
}

/// Whether `op` is a constant whose own value `low` cannot hold.
static bool isConstantOutOfRange(Operation *op, FloatType low) {
  auto constant = dyn_cast<CastFusionOpInterface>(op);
  return constant && llvm::any_of(op->getResults(), [&](OpResult result) {
           return constant.hasValuesOutOfRange(result.getResultNumber(), low);
         });
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
    auto [result, constant] = getConstantSource(operand);
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

/// Dynamic loss scaling keeps the largest scaled gradient within a factor
/// of 2 of the low type's largest value (it doubles the scale after a run of
/// finite steps); a product by more than this overflows there before the
/// scale can adapt.
static constexpr double kScaledGradientGrowthLimit = 2.0;

bool AssignPrecisionPass::scalesUpScaledGradient(
    Operation *op, const llvm::DenseSet<Value> &scaled, bool remark) {
  auto precisionOp = cast<PrecisionOpInterface>(op);
  if (!precisionOp.isElementwiseProduct())
    return false;
  bool readsScaled = false;
  std::optional<std::pair<unsigned, double>> factor;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    if (!precisionOp.isPrecisionDataOperand(index))
      continue;
    readsScaled |= scaled.contains(operand);
    auto [result, constant] = getConstantSource(operand);
    std::optional<double> magnitude =
        constant ? constant.getLargestMagnitude(result.getResultNumber())
                 : std::nullopt;
    if (magnitude && *magnitude > kScaledGradientGrowthLimit)
      factor = std::make_pair(static_cast<unsigned>(index), *magnitude);
  }
  if (!readsScaled || !factor)
    return false;
  if (remark) {
    InFlightDiagnostic diag =
        op->emitRemark() << "stays f32: multiplies a loss-scaled gradient by "
                            "constant operand "
                         << factor->first << " of magnitude up to "
                         << factor->second
                         << " (more than 2: it would overflow before dynamic "
                            "loss scaling adapts)";
    appendNodeName(diag, op);
  }
  return true;
}

void AssignPrecisionPass::followUsersOfConstants(
    ArrayRef<Operation *> ops, Block &body,
    llvm::DenseMap<Operation *, DecisionState> &states, FloatType low,
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
    const DecisionState &state = states[op];
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
    const llvm::DenseMap<Operation *, DecisionState> &states) {
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

void AssignPrecisionPass::propagate(Block &body, Options &options,
                                    bool afterBarrier, Decisions &decisions) {
  const PrecisionPolicy &policy = options.policy;
  CostModel &model = options.model;
  DimSizes &sizes = model.getSizes();
  FloatType low = options.low;
  bool between = options.between;
  llvm::DenseSet<Operation *> &barrier = options.barrier;
  // Every op of the body in order; the block is a DAG in that order.
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, DecisionState> states;
  llvm::DenseMap<Value, bool> rangeChecked;
  // The loss's gradient: values computed from a scaled seed before any
  // always op (GEMM, convolution) reads it.
  llvm::DenseSet<Value> lossGradient;
  // Every value computed from a scaled seed, up to amp.unscale; those
  // computed from one multiplied up, up to the next always op.
  llvm::DenseSet<Value> scaledGradient, scaledUpGradient;
  for (Operation &op : body) {
    if (isa<ScaleLossOp>(op)) {
      lossGradient.insert(op.getResult(0));
      scaledGradient.insert(op.getResult(0));
    }
    // Only ops that implement PrecisionOpInterface are decided; others
    // (initializers, terminators, unknown dialects) keep their types.
    if (!isa<PrecisionOpInterface>(op))
      continue;
    DecisionState state;
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
    if (decidable && onnxTypes &&
        !cast<PrecisionOpInterface>(op).supportsDataType(low)) {
      state.precisionClass = PrecisionClass::KeepFP32;
      state.reason = "unsupported-type";
    }
    auto readsAny = [&](const llvm::DenseSet<Value> &values) {
      return llvm::any_of(op.getOperands(),
                          [&](Value v) { return values.contains(v); });
    };
    // A chain that stays FP32 up to the next always op: an op that starts
    // it (`starts`) or reads it joins it, its infer and follow ops with
    // `reason`.
    auto keepUntilAlwaysOp = [&](llvm::DenseSet<Value> &chain,
                                 llvm::function_ref<bool()> starts,
                                 StringRef reason) {
      if (isa<UnscaleOp>(op) ||
          state.precisionClass == PrecisionClass::Always ||
          !(readsAny(chain) || starts()))
        return;
      chain.insert(op.getResults().begin(), op.getResults().end());
      if (state.precisionClass == PrecisionClass::Infer ||
          state.precisionClass == PrecisionClass::Follow) {
        state.precisionClass = PrecisionClass::KeepFP32;
        state.reason = reason;
      }
    };
    // The loss's gradient stays FP32 up to the first always op, as autocast
    // runs a loss's backward in the loss's FP32: scaled by the loss scale
    // before the loss's own divisions (an MSE's 2 (y - t) before / N), it
    // would overflow FP16 at the first step.
    keepUntilAlwaysOp(
        lossGradient, [] { return false; }, "loss-gradient");
    // A loss-scaled gradient multiplied up (a decomposed normalization's
    // backward multiplies by the row size) stays FP32, and so does what is
    // computed from it up to the next always op, as autocast runs a
    // normalization's backward in FP32 and adds its FP32 result into the
    // residual stream's gradient.
    if (!isa<UnscaleOp>(op) && readsAny(scaledGradient)) {
      scaledGradient.insert(op.getResults().begin(), op.getResults().end());
      keepUntilAlwaysOp(
          scaledUpGradient,
          [&] {
            return (state.precisionClass == PrecisionClass::Infer ||
                    state.precisionClass == PrecisionClass::Follow) &&
                   scalesUpScaledGradient(&op, scaledGradient, emitRemarks);
          },
          "gradient-range");
    }
    if (state.precisionClass != PrecisionClass::KeepFP32 &&
        state.precisionClass != PrecisionClass::NeverTouch)
      state.outOfRange =
          hasConstantOutOfRange(&op, low, emitRemarks, rangeChecked);
    states[&op] = state;
    ops.push_back(&op);
  }
  // Producers and users outside this block (the enclosing graph's) have no
  // state here and read as a default one. Lookups must not insert: a rehash
  // would move the state a loop below is writing.
  const DecisionState outside{};
  auto stateOf = [&](Operation *op) -> const DecisionState & {
    auto it = states.find(op);
    return it == states.end() ? outside : it->second;
  };
  auto isPropagating = [&](Operation *op) {
    PrecisionClass c = stateOf(op).precisionClass;
    return c == PrecisionClass::Infer || c == PrecisionClass::Follow;
  };
  // The barrier: amp.unscale and everything after it stays FP32, also in
  // subgraphs, which may read values of enclosing blocks directly; so does
  // the optimizer region amp-analyze-training found.
  for (Operation *op : ops) {
    bool after = afterBarrier || isa<UnscaleOp>(op) ||
                 getRegionName(op) == "optimizer" ||
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
    DecisionState &state = states[op];
    if (isPropagating(op)) {
      SmallVector<Operation *> producers = getDataProducers(op, body);
      for (Operation *producer : producers) {
        const DecisionState &from = stateOf(producer);
        if (from.precisionClass == PrecisionClass::KeepFP32 ||
            (from.denied && isPropagating(producer)))
          state.denied = true;
      }
      if (!state.denied && !state.outOfRange && !barrier.contains(op) &&
          llvm::any_of(producers, [&](Operation *producer) {
            return stateOf(producer).low || afterLow.contains(producer);
          }))
        afterLow.insert(op);
      continue;
    }
    if (state.precisionClass != PrecisionClass::Always ||
        barrier.contains(op) || state.outOfRange)
      continue;
    // An op the policy makes always goes low without asking the cost model.
    if (isFromPolicy(state)) {
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
      if (stateOf(user).low || beforeLow.contains(user))
        beforeLow.insert(op);
  }

  for (Operation *op : ops) {
    DecisionState &state = states[op];
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
      state.reason = barrier.contains(op)  ? "barrier"
                     : state.outOfRange    ? "range"
                     : isFromPolicy(state) ? "policy"
                     : isFollow            ? "follow"
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
        state.reason = isFromPolicy(state) ? "policy" : "keep-fp32";
      break;
    case PrecisionClass::NeverTouch:
      if (state.reason.empty())
        state.reason = isFromPolicy(state) ? "policy" : "never-touch";
      break;
    }
  }
  followUsersOfConstants(ops, body, states, low, barrier);

  decisions.blocks.push_back(&body);
  for (Operation *op : ops) {
    decisions.ops.push_back(op);
    decisions.states[op] = states[op];
  }
  // Subgraph bodies are decided like function bodies: their arguments and
  // results keep their types, so each loop-carried value has one precision,
  // and casts at the body's edges connect it to low-precision ops inside.
  for (Operation *op : ops)
    if (states[op].hasSubgraph)
      for (Region &region : op->getRegions())
        for (Block &block : region)
          propagate(block, options, barrier.contains(op), decisions);
}

void AssignPrecisionPass::writeDecisions(const Decisions &decisions,
                                         FloatType low) {
  Builder builder(&getContext());
  ModuleOp module = getOperation();
  for (Operation *op : decisions.ops) {
    const DecisionState &state = decisions.states.at(op);
    Type type = state.low ? Type(low) : builder.getF32Type();
    op->setAttr(kPrecisionAttrName, TypeAttr::get(type));
    op->setAttr(kReasonAttrName, builder.getStringAttr(state.reason));
    if (state.low && !onnxTypes && !module->hasAttr(kBeyondONNXTypesAttrName))
      if (auto precisionOp = dyn_cast<PrecisionOpInterface>(op);
          precisionOp && !precisionOp.supportsDataType(low))
        module->setAttr(kBeyondONNXTypesAttrName,
                        builder.getStringAttr(PrecisionPolicy::describe(op)));
    if (!emitRemarks)
      continue;
    InFlightDiagnostic remark = op->emitRemark()
                                << type << " (" << state.reason << ")";
    if (!state.guessedDims.empty())
      remark << "; guessed sizes of dims " << state.guessedDims;
    appendNodeName(remark, op);
  }
}

/// How the min-cut treats `op`: pinned FP32 by its class, by the barrier or
/// by a constant out of range (an input, or `ownValueOutOfRange`: its own
/// value); pinned low by a policy `always`; else free.
static PrecisionCut::Pin getPin(Operation *op, const DecisionState &state,
                                bool ownValueOutOfRange,
                                const llvm::DenseSet<Operation *> &barrier) {
  PrecisionClass precisionClass = state.precisionClass;
  if (precisionClass == PrecisionClass::KeepFP32 ||
      precisionClass == PrecisionClass::NeverTouch || barrier.contains(op) ||
      state.outOfRange || ownValueOutOfRange)
    return PrecisionCut::Pin::FP32;
  if (precisionClass == PrecisionClass::Always && isFromPolicy(state))
    return PrecisionCut::Pin::Low;
  return PrecisionCut::Pin::None;
}

namespace {
/// The assignment problem of one function under one cost model: every op of
/// `decisions` with its times, and every float value read or written as data
/// with the casts it would need, as amp-materialize-casts and amp-fuse-casts
/// make them.
class ProblemBuilder {
public:
  ProblemBuilder(const Decisions &decisions, ArrayRef<PrecisionCut::Pin> pins,
                 CostModel &model, FloatType low)
      : decisions(decisions), pins(pins), model(model), low(low) {
    for (auto [position, op] : llvm::enumerate(decisions.ops))
      index[op] = position;
  }

  /// The problem; `guesses` receives, per op, the dimensions whose sizes its
  /// times guessed.
  PrecisionCut build(SmallVectorImpl<std::string> *guesses = nullptr);

private:
  void addValue(Value value);

  const Decisions &decisions;
  ArrayRef<PrecisionCut::Pin> pins;
  CostModel &model;
  FloatType low;
  llvm::DenseMap<Operation *, unsigned> index;
  PrecisionCut problem;
};
} // namespace

PrecisionCut ProblemBuilder::build(SmallVectorImpl<std::string> *guesses) {
  problem = PrecisionCut();
  DimSizes &sizes = model.getSizes();
  auto f32 = Float32Type::get(low.getContext());
  for (auto [position, op] : llvm::enumerate(decisions.ops)) {
    auto precisionOp = cast<PrecisionOpInterface>(op);
    sizes.resetGuesses();
    double fp32Us = model.getOpTimeUs(precisionOp, f32);
    double lowUs = pins[position] == PrecisionCut::Pin::FP32
                       ? fp32Us
                       : model.getOpTimeUs(precisionOp, low);
    if (guesses)
      guesses->push_back(llvm::join(sizes.getGuesses(), ","));
    problem.addOp(fp32Us, lowUs, pins[position]);
  }
  for (Block *block : decisions.blocks) {
    for (BlockArgument argument : block->getArguments())
      addValue(argument);
    for (Operation &op : *block)
      for (Value result : op.getResults())
        addValue(result);
  }
  return std::move(problem);
}

void ProblemBuilder::addValue(Value value) {
  if (!isFloatTensor(value.getType()))
    return;
  auto type = cast<FloatType>(getElementTypeOrSelf(value.getType()));
  // A value already in the low type is read as it is by every op.
  if (type == low)
    return;
  Type lowTensor = cast<TensorType>(value.getType()).clone(low);
  SmallVector<unsigned> consumers;
  // Readers of the value in its type before; readers of either type (a
  // Cast node, an amp.cast), which keep a constant from converting itself.
  bool otherReaders = false, anyTypeReaders = false;
  // A Cast node of the graph already converts it to the low type, and
  // amp-fuse-casts reuses it.
  bool converted = false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    unsigned operand = use.getOperandNumber();
    auto it = index.find(user);
    if (it != index.end() &&
        cast<PrecisionOpInterface>(user).isPrecisionDataOperand(operand)) {
      consumers.push_back(it->second);
      continue;
    }
    if (isa<CastOp>(user)) {
      anyTypeReaders = true;
      continue;
    }
    converted |= user->getBlock() == value.getParentBlock() &&
                 isConversionTo(use, lowTensor);
    if (auto conversion = dyn_cast<CastFusionOpInterface>(user)) {
      if (conversion.canReadOperandAs(operand, low)) {
        anyTypeReaders = true;
        continue;
      }
    }
    otherReaders = true;
  }
  double downUs = converted ? 0 : model.getCastTimeUs(value, type, low);
  auto result = dyn_cast<OpResult>(value);
  auto producer = result ? index.find(result.getOwner()) : index.end();
  if (producer != index.end() &&
      cast<PrecisionOpInterface>(result.getOwner())
          .isPrecisionDataResult(result.getResultNumber())) {
    problem.addResult(producer->second, consumers, otherReaders,
                      model.getCastTimeUs(value, low, type), downUs);
    return;
  }
  // A constant converts itself when only low ops read it.
  auto constant =
      result ? dyn_cast<CastFusionOpInterface>(result.getOwner()) : nullptr;
  bool foldable =
      constant && constant.canWriteResultAs(result.getResultNumber(), low);
  problem.addInput(consumers, otherReaders || anyTypeReaders, downUs, foldable);
}

void AssignPrecisionPass::assignOptimal(func::FuncOp func, Decisions &decisions,
                                        Options &options) {
  SmallVector<PrecisionCut::Pin> pins;
  SmallVector<bool> propagated, ownValueOutOfRange;
  for (Operation *op : decisions.ops) {
    const DecisionState &state = decisions.states[op];
    ownValueOutOfRange.push_back(isConstantOutOfRange(op, options.low));
    pins.push_back(
        getPin(op, state, ownValueOutOfRange.back(), options.barrier));
    propagated.push_back(state.low);
  }
  SmallVector<std::string> guesses;
  PrecisionCut problem =
      ProblemBuilder(decisions, pins, options.model, options.low)
          .build(&guesses);
  SmallVector<bool> cut = problem.solve();
  // The cut is optimal to the nanosecond; in exact arithmetic, the
  // propagation rules' labeling or the baseline may still win a near-tie.
  double cutUs = problem.evaluate(cut);
  double propagateUs = problem.evaluate(propagated);
  SmallVector<bool> baseline = problem.getBaseline();
  double baselineUs = problem.evaluate(baseline);
  if (propagateUs < cutUs) {
    cut = propagated;
    cutUs = propagateUs;
  }
  if (baselineUs < cutUs) {
    cut = baseline;
    cutUs = baselineUs;
  }
  int64_t freeOps = 0;
  bool guessed = false;
  for (auto [position, op] : llvm::enumerate(decisions.ops)) {
    DecisionState &state = decisions.states[op];
    switch (pins[position]) {
    case PrecisionCut::Pin::FP32:
      state.low = false;
      if (ownValueOutOfRange[position])
        state.reason = "range";
      continue;
    case PrecisionCut::Pin::Low:
      state.low = true;
      state.reason = "policy";
      continue;
    case PrecisionCut::Pin::None:
      break;
    }
    ++freeOps;
    state.low = cut[position];
    state.guessedDims = guesses[position];
    guessed |= !state.guessedDims.empty();
    if (isFromPolicy(state))
      state.reason = "policy";
    else if (state.precisionClass == PrecisionClass::Always)
      state.reason = state.low ? "always-list" : "cost-model";
    else
      state.reason =
          state.precisionClass == PrecisionClass::Infer ? "infer" : "follow";
  }

  Builder builder(&getContext());
  SmallVector<NamedAttribute> summary{
      builder.getNamedAttr("mode", builder.getStringAttr("optimal")),
      builder.getNamedAttr("low", TypeAttr::get(options.low)),
      builder.getNamedAttr("cut_us", builder.getF64FloatAttr(cutUs)),
      builder.getNamedAttr("propagate_us",
                           builder.getF64FloatAttr(propagateUs)),
      builder.getNamedAttr("baseline_us", builder.getF64FloatAttr(baselineUs)),
      builder.getNamedAttr("free_ops", builder.getI64IntegerAttr(freeOps))};
  // How many decisions change when every guessed dimension is 8x larger.
  if (guessed && options.scaledModel) {
    SmallVector<bool> scaled =
        ProblemBuilder(decisions, pins, *options.scaledModel, options.low)
            .build()
            .solve();
    int64_t changed = 0;
    for (auto [position, pin] : llvm::enumerate(pins))
      changed +=
          pin == PrecisionCut::Pin::None && scaled[position] != cut[position];
    summary.push_back(builder.getNamedAttr("sensitivity_changed",
                                           builder.getI64IntegerAttr(changed)));
    summary.push_back(builder.getNamedAttr(
        "sensitivity_dim_size",
        builder.getI64IntegerAttr(
            options.scaledModel->getSizes().getDefaultSize())));
  }
  func->setAttr(kAssignmentAttrName, builder.getDictionaryAttr(summary));
}

void AssignPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  FloatType low = parseLowPrecision(&getContext(), precision);
  if (!low) {
    emitError(module.getLoc()) << "amp-assign-precision: unknown precision '"
                               << precision << "'; expected fp16 or bf16";
    return signalPassFailure();
  }
  if (assignMode != "optimal" && assignMode != "propagate") {
    emitError(module.getLoc())
        << "amp-assign-precision: unknown assign '" << assignMode
        << "'; expected optimal or propagate";
    return signalPassFailure();
  }
  bool optimal = assignMode == "optimal";
  std::string infer =
      rule.empty() ? (low.isF16() ? "between" : "downstream") : rule.getValue();
  if (infer != "between" && infer != "downstream") {
    emitError(module.getLoc()) << "amp-assign-precision: unknown rule '" << rule
                               << "'; expected between or downstream";
    return signalPassFailure();
  }
  if (optimal && !rule.empty())
    emitWarning(module.getLoc())
        << "amp-assign-precision: rule=" << rule
        << " applies to assign=propagate; assign=optimal "
           "decides infer and follow ops by their cost";
  std::optional<CostModel> model = CostModel::create(
      device, casts, defaultDimSize, dimSizes, module, "amp-assign-precision");
  if (!model)
    return signalPassFailure();
  if (!model->supports(low)) {
    emitError(module.getLoc())
        << "amp-assign-precision: device " << device << " has no " << precision;
    return signalPassFailure();
  }
  std::optional<CostModel> scaledModel =
      CostModel::create(device, casts, defaultDimSize * kSensitivityFactor,
                        dimSizes, module, "amp-assign-precision");
  PrecisionPolicy policy;
  if (failed(policy.addSources(policyFile, opClasses, nodeClasses,
                               module.getLoc())))
    return signalPassFailure();
  Builder builder(&getContext());
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    Options options{policy,
                    *model,
                    low,
                    infer == "between",
                    scaledModel ? &*scaledModel : nullptr,
                    {}};
    Decisions decisions;
    propagate(func.getBody().front(), options, /*afterBarrier=*/false,
              decisions);
    if (optimal)
      assignOptimal(func, decisions, options);
    else
      func->setAttr(
          kAssignmentAttrName,
          builder.getDictionaryAttr(
              {builder.getNamedAttr("mode", builder.getStringAttr("propagate")),
               builder.getNamedAttr("low", TypeAttr::get(low))}));
    writeDecisions(decisions, low);
  }
}
