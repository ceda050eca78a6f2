//===- AnalyzeTraining.cpp - Roles of a training graph's tensors ---------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-analyze-training: finds the loss, the backward seeds, the parameters,
// their gradients and the optimizer's updates of each kind of exported
// training graph (docs/TrainingGraphs.md), and records them in the
// `amp.training` function attribute and each op's `amp.region`.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPANALYZETRAINING
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;
using onnxg::NodeOp;
using onnxg::ValueNames;

namespace {
/// What the analysis found in one function.
struct TrainingRoles {
  StringRef kind = "forward";
  Value loss;
  SmallVector<Value> seeds;
  /// (parameter, gradient) pairs; a parameter is a function argument.
  SmallVector<std::pair<Value, Value>> gradients;
  /// (updated, previous) pairs of the optimizer state the step updates.
  SmallVector<std::pair<Value, Value>> updates;
  /// ORTModule's YieldOps: what they read is forward, what they return seeds.
  SmallVector<NodeOp> yieldOps;
  /// Ops of the graph that prove it is a training graph (backward ops).
  bool hasBackward = false;
};

class AnalyzeTrainingPass
    : public amp::impl::AMPAnalyzeTrainingBase<AnalyzeTrainingPass> {
public:
  using AMPAnalyzeTrainingBase::AMPAnalyzeTrainingBase;
  void runOnOperation() override;

private:
  LogicalResult analyze(func::FuncOp func, TrainingRoles &roles);
};
} // namespace

/// The node's op type when `op` is a graph node of `domain` ("" for the
/// default domain), else "".
static StringRef getOpType(Operation *op, StringRef domain = "") {
  auto node = dyn_cast<NodeOp>(op);
  if (!node)
    return "";
  bool sameDomain = domain.empty() ? onnxg::isDefaultDomain(node.getDomain())
                                   : node.getDomain() == domain;
  return sameDomain ? node.getOpType() : StringRef();
}

static constexpr StringLiteral kMicrosoft = "com.microsoft";
static constexpr StringLiteral kPreviewTraining = "ai.onnx.preview.training";

/// An op of the backward pass: ONNX Runtime's gradient ops (`ReluGrad`,
/// `SoftmaxCrossEntropyLossGrad`, also in the default domain as written by
/// some exporters), `YieldOp` and gradient accumulation, or ONNX's
/// `Gradient`.
static bool isBackwardOp(Operation *op) {
  auto node = dyn_cast<NodeOp>(op);
  if (!node)
    return false;
  StringRef type = node.getOpType();
  if (node.getDomain() == kPreviewTraining)
    return type == "Gradient";
  return type.ends_with("Grad") || type == "YieldOp" ||
         type.starts_with("InPlaceAccumulator");
}

/// Output index of each updated value's previous value among the inputs of
/// an `ai.onnx.preview.training` optimizer with `n` parameters: Adam's
/// outputs are X, V, H for inputs R, T, X, G, V, H.
static std::optional<unsigned>
getPreviousInputIndex(StringRef type, unsigned output, unsigned n) {
  unsigned block = output / n, index = output % n;
  if (type == "Adam" && block < 3)
    return 2 + (block == 0 ? 0 : (block + 1) * n) + index;
  if ((type == "Adagrad" || type == "Momentum") && block < 2)
    return 2 + (block == 0 ? 0 : 2 * n) + index;
  return std::nullopt;
}

/// The (updated, previous) pairs of ONNX Runtime's AdamOptimizer `node`:
/// its outputs new step count, moments, weights and FP16 weights replace
/// inputs 1, 4, 5, 2 and 6 (input 6 is the FP16 copy of the weights, or a
/// boolean update signal that nothing replaces).
static void addOrtAdamUpdates(NodeOp node, TrainingRoles &roles) {
  static constexpr std::pair<unsigned, unsigned> kPreviousOf[] = {
      {0, 1}, {1, 4}, {2, 5}, {3, 2}, {5, 6}};
  auto inputs = node.getInputs();
  auto outputs = node.getOutputs();
  for (auto [output, input] : kPreviousOf)
    if (output < outputs.size() && input < inputs.size() &&
        !isa<NoneType>(outputs[output].getType()) &&
        outputs[output].getType() == inputs[input].getType())
      roles.updates.push_back({outputs[output], inputs[input]});
}

/// The tensors a SequenceConstruct node collects into `sequence`.
static std::optional<ValueRange> getSequenceConstructInputs(Value sequence) {
  auto node = sequence.getDefiningOp<NodeOp>();
  if (!node || !onnxg::isDefaultDomain(node.getDomain()) ||
      node.getOpType() != "SequenceConstruct")
    return std::nullopt;
  return ValueRange(node.getInputs());
}

/// Parameters, gradients and updates of the optimizer ops in `body`:
/// `ai.onnx.preview.training` Adam, Adagrad and Momentum (inputs R, T, X...,
/// G..., state...) and ONNX Runtime's `AdamWOptimizer`, `AdamOptimizer`,
/// `SGDOptimizer` and `LambOptimizer` (weights, then gradients).
static bool collectOptimizerRoles(Block &body, TrainingRoles &roles) {
  bool found = false;
  for (Operation &op : body) {
    auto node = dyn_cast<NodeOp>(&op);
    if (!node)
      continue;
    StringRef type = node.getOpType();
    auto inputs = node.getInputs();
    if (node.getDomain() == kPreviewTraining &&
        (type == "Adam" || type == "Adagrad" || type == "Momentum")) {
      unsigned n = node.getOutputs().size() / (type == "Adam" ? 3 : 2);
      if (n == 0 || inputs.size() < 2 + 2 * n)
        continue;
      found = true;
      for (unsigned i = 0; i < n; ++i)
        roles.gradients.push_back({inputs[2 + i], inputs[2 + n + i]});
      for (auto [output, value] : llvm::enumerate(node.getOutputs()))
        if (std::optional<unsigned> input =
                getPreviousInputIndex(type, output, n))
          if (*input < inputs.size())
            roles.updates.push_back({value, inputs[*input]});
      continue;
    }
    if (node.getDomain() != kMicrosoft)
      continue;
    // ONNX Runtime's optimizers: (weights, gradients) at these positions.
    std::optional<std::pair<unsigned, unsigned>> slots;
    if (type == "AdamWOptimizer")
      slots = {2, 3};
    else if (type == "AdamOptimizer" || type == "LambOptimizer")
      slots = {2, 3};
    else if (type == "SGDOptimizer")
      slots = {1, 2};
    if (!slots || inputs.size() <= slots->second)
      continue;
    found = true;
    Value weights = inputs[slots->first], gradients = inputs[slots->second];
    // AdamWOptimizer's sequences pair up tensor by tensor where the graph
    // builds them (amp-run does); graph inputs pair as whole sequences.
    auto weightList = getSequenceConstructInputs(weights);
    auto gradientList = getSequenceConstructInputs(gradients);
    if (weightList && gradientList &&
        weightList->size() == gradientList->size()) {
      for (auto [weight, gradient] : llvm::zip(*weightList, *gradientList))
        roles.gradients.push_back({weight, gradient});
      continue;
    }
    roles.gradients.push_back({weights, gradients});
    if (type == "AdamOptimizer")
      addOrtAdamUpdates(node, roles);
  }
  return found;
}

/// Reads `amp_opt.*` metadata written by our PyTorch exporter
/// (docs/TrainingStepFormat.md); false when the module has none.
static FailureOr<bool> readAmpOptRoles(func::FuncOp func,
                                       const ValueNames &names,
                                       TrainingRoles &roles) {
  auto module = func->getParentOfType<ModuleOp>();
  auto meta = [&](StringRef key) {
    return onnxg::getMetadataProp(module, key);
  };
  if (!meta("amp_opt.format").starts_with("amp_opt.training_step."))
    return false;
  roles.kind = "amp_opt.training_step";
  roles.hasBackward = true;
  roles.loss = names.lookup(meta("amp_opt.loss"));
  if (Value seed = names.lookup(meta("amp_opt.loss_seed")))
    roles.seeds.push_back(seed);

  auto parse = [&](StringRef key) -> FailureOr<llvm::json::Value> {
    StringRef text = meta(key);
    if (text.empty())
      return llvm::json::Value(nullptr);
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
    if (!value) {
      emitError(func.getLoc())
          << "metadata '" << key
          << "' is not valid JSON: " << toString(value.takeError());
      return failure();
    }
    return std::move(*value);
  };
  auto lookupMember = [&](const llvm::json::Object *object, StringRef key) {
    std::optional<StringRef> name =
        object ? object->getString(key) : std::nullopt;
    return name ? names.lookup(*name) : Value();
  };
  auto addUpdate = [&](Value updated, Value previous) {
    if (updated && previous)
      roles.updates.push_back({updated, previous});
  };

  FailureOr<llvm::json::Value> params = parse("amp_opt.parameters");
  FailureOr<llvm::json::Value> optimizer = parse("amp_opt.optimizer");
  if (failed(params) || failed(optimizer))
    return failure();
  if (const llvm::json::Array *list = params->getAsArray()) {
    for (const llvm::json::Value &entry : *list) {
      const llvm::json::Object *param = entry.getAsObject();
      // torch.onnx drops parameters no node reads; they have no gradient.
      Value value = lookupMember(param, "name");
      Value gradient = lookupMember(param, "gradient");
      if (!value || !gradient)
        continue;
      roles.gradients.push_back({value, gradient});
      addUpdate(lookupMember(param, "updated"), value);
      const llvm::json::Object *state = param->getObject("state");
      const llvm::json::Object *stateUpdated =
          param->getObject("state_updated");
      if (!state || !stateUpdated)
        continue;
      for (const auto &[key, name] : *state)
        addUpdate(lookupMember(stateUpdated, key), lookupMember(state, key));
    }
  }
  const llvm::json::Object *opt = optimizer->getAsObject();
  addUpdate(lookupMember(opt, "step_updated"), lookupMember(opt, "step"));
  return true;
}

/// The values ONNX Runtime names `<name>_grad` for each value in `values`.
static void collectOrtGradients(const ValueNames &names, ValueRange values,
                                TrainingRoles &roles) {
  for (Value value : values) {
    StringRef name = onnxg::getValueName(value);
    if (name.empty())
      continue;
    if (Value gradient = names.lookup((name + "_grad").str()))
      roles.gradients.push_back({value, gradient});
  }
}

/// Loss candidates of a graph with a backward but no recorded loss: the
/// float outputs with one element.
static SmallVector<Value> getLossCandidates(func::FuncOp func) {
  SmallVector<Value> candidates;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (Value value : ret.getOperands()) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (type && isa<FloatType>(type.getElementType()) &&
        type.hasStaticShape() && type.getNumElements() == 1 &&
        !llvm::is_contained(candidates, value))
      candidates.push_back(value);
  }
  return candidates;
}

/// Outputs named `<input>.updated` replace that input, the convention of
/// our exporter's steps (docs/TrainingStepFormat.md, whose metadata lists
/// the updates itself), which amp-run follows for the optimizer state it
/// appends (an ONNX Runtime AdamW graph's sequences and step count).
static void addNamedUpdates(func::FuncOp func, TrainingRoles &roles) {
  llvm::StringMap<Value> inputs;
  for (BlockArgument arg : func.getArguments())
    inputs[onnxg::getValueName(arg)] = arg;
  Operation *ret = func.getBody().front().getTerminator();
  for (OpOperand &operand : ret->getOpOperands()) {
    Value updated = operand.get();
    auto name = func.getResultAttrOfType<StringAttr>(
        operand.getOperandNumber(), onnxg::ONNXGraphDialect::kNameAttrName);
    StringRef stem = name ? name.getValue() : "";
    if (!stem.consume_back(".updated"))
      continue;
    Value previous = inputs.lookup(stem);
    if (!previous || previous.getType() != updated.getType() ||
        llvm::any_of(roles.updates,
                     [&](auto pair) { return pair.first == updated; }))
      continue;
    roles.updates.push_back({updated, previous});
  }
}

LogicalResult AnalyzeTrainingPass::analyze(func::FuncOp func,
                                           TrainingRoles &roles) {
  Block &body = func.getBody().front();
  ValueNames names(func);
  FailureOr<bool> fromMetadata = readAmpOptRoles(func, names, roles);
  if (failed(fromMetadata))
    return failure();

  SmallVector<NodeOp> gradientOps, accumulators;
  for (Operation &op : body) {
    roles.hasBackward |= isBackwardOp(&op);
    if (getOpType(&op, kPreviewTraining) == "Gradient")
      gradientOps.push_back(cast<NodeOp>(op));
    if (getOpType(&op, kMicrosoft) == "YieldOp")
      roles.yieldOps.push_back(cast<NodeOp>(op));
    if (getOpType(&op, kMicrosoft).starts_with("InPlaceAccumulator"))
      accumulators.push_back(cast<NodeOp>(op));
  }

  if (*fromMetadata) {
    // Roles come from the metadata.
  } else if (!gradientOps.empty()) {
    // ONNX's Gradient: y names the loss, xs the parameters.
    roles.kind = "onnx.gradient";
    for (NodeOp op : gradientOps) {
      auto y = op.getOnnxAttrsOrEmpty().getAs<StringAttr>("y");
      auto xs = op.getOnnxAttrsOrEmpty().getAs<ArrayAttr>("xs");
      Value loss = y ? names.lookup(y.getValue()) : Value();
      if (!loss || !xs || xs.size() != op.getOutputs().size())
        return emitError(op.getLoc())
               << op.describe()
               << ": attributes 'xs' and 'y' must name values "
                  "of the graph, one 'xs' per output";
      if (roles.loss && roles.loss != loss)
        return emitError(op.getLoc())
               << op.describe() << ": differentiates '" << y.getValue()
               << "', another Gradient differentiates '"
               << onnxg::getValueName(roles.loss)
               << "'; name the loss with loss=<tensor>";
      roles.loss = loss;
      for (auto [x, gradient] : llvm::zip(xs, op.getOutputs()))
        if (Value param = names.lookup(cast<StringAttr>(x).getValue()))
          roles.gradients.push_back({param, gradient});
    }
    collectOptimizerRoles(body, roles);
  } else if (!roles.yieldOps.empty()) {
    // ORTModule: YieldOp hands the forward's outputs to PyTorch and returns
    // their gradients, the seeds; parameter gradients are `<param>_grad`.
    roles.kind = "ort.module";
    for (NodeOp op : roles.yieldOps)
      llvm::append_range(roles.seeds, op.getOutputs());
    collectOrtGradients(names, body.getArguments(), roles);
  } else if (!accumulators.empty()) {
    // ONNX Runtime's training artifact: accumulators read the gradients of
    // parameters `<param>`, named `<param>_grad`; the seed of loss `<loss>`
    // is `<loss>_grad`.
    roles.kind = "ort.training_artifact";
    for (NodeOp op : accumulators) {
      if (op.getInputs().size() < 2)
        continue;
      Value gradient = op.getInputs()[1];
      StringRef name = onnxg::getValueName(gradient);
      Value param = name.consume_back("_grad") ? names.lookup(name) : Value();
      roles.gradients.push_back({param ? param : gradient, gradient});
    }
    for (const auto &entry : names.getOutputs())
      if (Value seed = names.lookup((entry.getKey() + "_grad").str()))
        if (!llvm::is_contained(roles.seeds, seed)) {
          roles.seeds.push_back(seed);
          if (roles.loss && roles.loss != entry.getValue())
            return emitError(func.getLoc())
                   << "outputs '" << onnxg::getValueName(roles.loss)
                   << "' and '" << entry.getKey()
                   << "' both have a backward seed; name the loss with "
                      "loss=<tensor>";
          roles.loss = entry.getValue();
        }
    // With its optimizer graph appended (amp-run --optimizer), the step
    // also updates the weights and optimizer state.
    for (Operation &op : body)
      if (getOpType(&op, kMicrosoft) == "AdamOptimizer")
        addOrtAdamUpdates(cast<NodeOp>(op), roles);
  } else if (collectOptimizerRoles(body, roles)) {
    roles.kind = "optimizer";
  } else if (roles.hasBackward) {
    roles.kind = "backward";
    collectOrtGradients(names, body.getArguments(), roles);
  }

  if (!*fromMetadata)
    addNamedUpdates(func, roles);

  // loss=<tensor> names the loss where the graph does not.
  if (!lossName.empty()) {
    Value loss = names.lookup(lossName);
    if (!loss)
      return emitError(func.getLoc())
             << "loss='" << lossName << "' names no value of the graph";
    roles.loss = loss;
  } else if (!roles.loss && roles.hasBackward && roles.kind != "ort.module") {
    SmallVector<Value> candidates = getLossCandidates(func);
    if (candidates.size() > 1) {
      InFlightDiagnostic diag = emitError(func.getLoc())
                                << "found " << candidates.size()
                                << " candidate losses:";
      for (Value candidate : candidates)
        diag << " '" << onnxg::getValueName(candidate) << "'";
      return diag << "; name the loss with loss=<tensor>";
    }
    if (candidates.size() == 1)
      roles.loss = candidates.front();
  }
  return success();
}

/// Gives gradients and seeds that ONNX shape inference left untyped (it does
/// not know ONNX Runtime's gradient ops) the type of the tensor they are the
/// gradient of: the parameter, or what YieldOp hands out.
static void typeGradients(TrainingRoles &roles) {
  auto refine = [](Value value, Type type) {
    if (!isa<RankedTensorType>(value.getType()) &&
        isa<RankedTensorType>(type) && isa<OpResult>(value))
      value.setType(type);
  };
  for (auto [param, gradient] : roles.gradients)
    refine(gradient, param.getType());
  for (NodeOp op : roles.yieldOps)
    for (auto [input, output] : llvm::zip(op.getInputs(), op.getOutputs()))
      refine(output, input.getType());
}

/// The ops of `body` that `values` depend on (`upstream`) or that depend on
/// them (downstream), values that subgraphs read included.
static llvm::DenseSet<Operation *> reach(Block &body, ArrayRef<Value> values,
                                         bool upstream) {
  llvm::DenseSet<Operation *> found;
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value value = work.pop_back_val();
    auto visit = [&](Operation *op) {
      op = op ? body.findAncestorOpInBlock(*op) : nullptr;
      if (!op || op->hasTrait<OpTrait::IsTerminator>() ||
          !found.insert(op).second)
        return;
      if (!upstream) {
        llvm::append_range(work, op->getResults());
        return;
      }
      llvm::append_range(work, op->getOperands());
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(op->getRegions(), captured);
      llvm::append_range(work, captured);
    };
    if (upstream)
      visit(value.getDefiningOp());
    else
      for (Operation *user : value.getUsers())
        visit(user);
  }
  return found;
}

void AnalyzeTrainingPass::runOnOperation() {
  MLIRContext *ctx = &getContext();
  Builder builder(ctx);
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    TrainingRoles roles;
    if (failed(analyze(func, roles)))
      return signalPassFailure();
    Block &body = func.getBody().front();
    typeGradients(roles);

    // Regions: the forward computes the loss (and what YieldOp hands out),
    // the optimizer reads the gradients, the backward computes them.
    SmallVector<Value> forwardRoots, gradients;
    if (roles.loss)
      forwardRoots.push_back(roles.loss);
    for (NodeOp op : roles.yieldOps)
      llvm::append_range(forwardRoots, op.getInputs());
    for (auto [param, gradient] : roles.gradients)
      if (!llvm::is_contained(gradients, gradient))
        gradients.push_back(gradient);
    llvm::DenseSet<Operation *> forward = reach(body, forwardRoots, true);
    llvm::DenseSet<Operation *> backward = reach(body, gradients, true);
    llvm::DenseSet<Operation *> optimizer = reach(body, gradients, false);
    for (Value gradient : gradients) {
      Operation *producer = gradient.getDefiningOp();
      if (producer && forward.contains(producer) && roles.loss) {
        emitError(func.getLoc())
            << "gradient '" << onnxg::getValueName(gradient)
            << "' feeds the forward computation of loss '"
            << onnxg::getValueName(roles.loss) << "'";
        return signalPassFailure();
      }
    }
    // A gradient may feed other gradients (BatchNorm's bias gradient feeds
    // its input gradient): what computes gradients is backward, what only
    // reads them is optimizer. Ops in none of the three (constants) take
    // the region of their users when they all agree.
    enum Region { Forward, Backward, Optimizer, None };
    llvm::DenseMap<Operation *, Region> regions;
    for (Operation &op : body.without_terminator())
      regions[&op] = forward.contains(&op)     ? Forward
                     : backward.contains(&op)  ? Backward
                     : optimizer.contains(&op) ? Optimizer
                                               : None;
    for (Operation &op : llvm::reverse(body.without_terminator())) {
      if (regions[&op] != None)
        continue;
      std::optional<Region> common;
      for (Operation *user : op.getUsers()) {
        Operation *owner = body.findAncestorOpInBlock(*user);
        Region region = owner && !owner->hasTrait<OpTrait::IsTerminator>()
                            ? regions.lookup(owner)
                            : Forward;
        common = !common || *common == region ? region : None;
      }
      regions[&op] = common && *common != None ? *common : Forward;
    }
    static constexpr StringLiteral regionNames[] = {"forward", "backward",
                                                    "optimizer"};
    // A forward graph has one region: its ops are left alone.
    bool isTraining = roles.hasBackward || roles.kind == "optimizer";
    int64_t counts[3] = {0, 0, 0};
    for (Operation &op : body.without_terminator()) {
      Region region = regions[&op];
      ++counts[region];
      if (isTraining)
        op.setAttr(kRegionAttrName, builder.getStringAttr(regionNames[region]));
    }

    // A graph whose loss makes no seed here: the first backward ops that
    // read what the loss's op computed (a *LossGrad reading log_prob) are
    // linear in the implicit seed.
    if (roles.loss && roles.seeds.empty() && roles.kind != "onnx.gradient" &&
        roles.kind != "optimizer")
      if (Operation *lossOp = roles.loss.getDefiningOp())
        for (Value result : lossOp->getResults())
          for (Operation *user : result.getUsers())
            if (regions.lookup(body.findAncestorOpInBlock(*user)) == Backward)
              for (Value seed : user->getResults())
                if (!llvm::is_contained(roles.seeds, seed))
                  roles.seeds.push_back(seed);

    auto namesOf = [&](auto range) {
      SmallVector<Attribute> list;
      for (Value value : range)
        list.push_back(builder.getStringAttr(onnxg::getValueName(value)));
      return builder.getArrayAttr(list);
    };
    SmallVector<Value> params, gradientList;
    for (auto [param, gradient] : roles.gradients) {
      params.push_back(param);
      gradientList.push_back(gradient);
    }
    SmallVector<Attribute> updates;
    for (auto [updated, previous] : roles.updates)
      updates.push_back(builder.getArrayAttr(
          {builder.getStringAttr(onnxg::getValueName(updated)),
           builder.getStringAttr(onnxg::getValueName(previous))}));
    NamedAttribute fields[] = {
        builder.getNamedAttr("kind", builder.getStringAttr(roles.kind)),
        builder.getNamedAttr(
            "loss",
            builder.getStringAttr(roles.loss ? onnxg::getValueName(roles.loss)
                                             : StringRef())),
        builder.getNamedAttr("seeds", namesOf(roles.seeds)),
        builder.getNamedAttr("parameters", namesOf(params)),
        builder.getNamedAttr("gradients", namesOf(gradientList)),
        builder.getNamedAttr("updates", builder.getArrayAttr(updates)),
    };
    func->setAttr(kTrainingAttrName, builder.getDictionaryAttr(fields));

    if (!isTraining) {
      emitRemark(func.getLoc(),
                 "no backward found: converted as a forward graph");
      continue;
    }
    if (emitRemarks)
      emitRemark(func.getLoc())
          << roles.kind << ": loss '"
          << (roles.loss ? onnxg::getValueName(roles.loss) : "") << "', "
          << roles.seeds.size() << " seeds, " << roles.gradients.size()
          << " parameters with gradients, " << roles.updates.size()
          << " updates; " << counts[0] << " forward, " << counts[1]
          << " backward, " << counts[2] << " optimizer ops";
    if (!roles.loss && roles.kind != "ort.module" && roles.kind != "optimizer")
      emitWarning(func.getLoc(),
                  "no loss found: name it with loss=<tensor>; without "
                  "it no loss scaling or barrier is placed");
  }
}
