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
#include "amp/Dialect/AMP/Transforms/TrainingDataflow.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

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
  /// (updated, previous) pairs of the parameters and optimizer state the
  /// step updates; an overflow keeps them.
  SmallVector<std::pair<Value, Value>> updates;
  /// (updated, previous) pairs of buffers (running statistics): carried
  /// from step to step, updated after an overflow too.
  SmallVector<std::pair<Value, Value>> buffers;
  /// Where loss scaling takes the scale out, when more than the gradients.
  SmallVector<Value> unscale;
  /// ORTModule's YieldOps: what they read is forward, what they return seeds.
  SmallVector<NodeOp> yieldOps;
  /// Ops of the graph that prove it is a training graph (backward ops).
  bool hasBackward = false;

  /// Records that `gradient` is `param`'s, once (a Gradient node and the
  /// optimizer that reads its output both say so).
  void addGradient(Value param, Value gradient) {
    if (!llvm::is_contained(gradients, std::make_pair(param, gradient)))
      gradients.emplace_back(param, gradient);
  }

  /// Whether `value` is the new value of an update (`asUpdate`) or the
  /// input one replaces.
  bool isInUpdate(Value value, bool asUpdate) const {
    return llvm::any_of(updates, [&](auto pair) {
      return (asUpdate ? pair.first : pair.second) == value;
    });
  }
};

class AnalyzeTrainingPass
    : public amp::impl::AMPAnalyzeTrainingBase<AnalyzeTrainingPass> {
public:
  using AMPAnalyzeTrainingBase::AMPAnalyzeTrainingBase;
  void runOnOperation() override;

private:
  LogicalResult analyze(func::FuncOp func, TrainingRoles &roles);
  /// Reads `roles` into the options it does not override.
  LogicalResult readRolesFile(ModuleOp module);
  /// Outputs that update inputs: `updates`, then, `byName`, the naming
  /// conventions.
  LogicalResult findUpdates(func::FuncOp func, const ValueNames &names,
                            TrainingRoles &roles, bool byName);
  /// A whole step without markers, from its dataflow; `inferred` are the
  /// updates found by their arithmetic.
  LogicalResult analyzeDataflow(func::FuncOp func, TrainingRoles &roles,
                                SmallVector<std::pair<Value, Value>> inferred);

  std::string loss, seed;
  SmallVector<std::string> updatePairs;
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

/// The tensors a SequenceConstruct node collects into `sequence`, also
/// through ONNX Runtime's InplaceClipGradNorm (which scales each tensor of
/// a gradient sequence: loss scaling unscales before it).
static std::optional<ValueRange> getSequenceConstructInputs(Value sequence) {
  auto node = sequence.getDefiningOp<NodeOp>();
  if (node && node.getDomain() == kMicrosoft &&
      node.getOpType() == "InplaceClipGradNorm" && node.getNumOperands() == 1)
    node = node.getOperand(0).getDefiningOp<NodeOp>();
  if (!node || !onnxg::isDefaultDomain(node.getDomain()) ||
      node.getOpType() != "SequenceConstruct")
    return std::nullopt;
  return ValueRange(node.getInputs());
}

/// Parameters, gradients and updates of the optimizer ops in `body`:
/// `ai.onnx.preview.training` Adam, Adagrad and Momentum (inputs R, T, X...,
/// G..., state...) and ONNX Runtime's `AdamWOptimizer`, `AdamOptimizer`,
/// `SGDOptimizer(V2)` and `LambOptimizer` (weights, then gradients).
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
        roles.addGradient(inputs[2 + i], inputs[2 + n + i]);
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
    else if (type == "SGDOptimizer" || type == "SGDOptimizerV2")
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
        roles.addGradient(weight, gradient);
      continue;
    }
    roles.addGradient(weights, gradients);
    if (type == "AdamOptimizer")
      addOrtAdamUpdates(node, roles);
  }
  return found;
}

/// The loss scale input of a step amp-opt converted (its loss-scaling
/// metadata names it); null in other steps.
static Value getLossScaleInput(func::FuncOp func, const ValueNames &names) {
  StringRef settings = onnxg::getMetadataProp(func->getParentOfType<ModuleOp>(),
                                              kLossScalingMetadataKey);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(settings);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return Value();
  }
  const llvm::json::Object *object = parsed->getAsObject();
  std::optional<StringRef> scaleName =
      object ? object->getString("scale") : std::nullopt;
  return scaleName ? names.lookup(*scaleName) : Value();
}

/// Whether `value` is computed from `scale` and constants only.
static bool isComputedFromScale(Value value, Value scale) {
  SmallVector<Value> work = {value};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value next = work.pop_back_val();
    if (next == scale || !seen.insert(next).second)
      continue;
    Operation *op = next.getDefiningOp();
    if (!op || seen.size() > 16)
      return false;
    llvm::append_range(work, op->getOperands());
  }
  return true;
}

/// The graph output that holds the unscaled `gradient` in a step amp-opt
/// converted: the gradient times (or over) the scale's reciprocal (or the
/// scale), kept where the step's gradients are finite; `gradient` itself
/// where no output does.
static Value getUnscaledGradient(Value gradient, Value scale,
                                 const llvm::DenseSet<Value> &outputs) {
  Value value = gradient;
  for (bool progress = true; progress && !outputs.contains(value);) {
    progress = false;
    for (Operation *user : value.getUsers()) {
      auto node = dyn_cast<onnxg::NodeOp>(user);
      // (Types may be unknown: ONNX does not type Gradient's outputs.)
      if (!node || node.getNumOperands() < 2 || node.getNumResults() != 1)
        continue;
      StringRef type = node.getOpType();
      bool unscales = (type == "Mul" || type == "Div") &&
                      node.getOperand(0) == value &&
                      isComputedFromScale(node.getOperand(1), scale);
      bool keeps = type == "Where" && node.getNumOperands() == 3 &&
                   node.getOperand(1) == value;
      if (unscales || keeps) {
        value = node.getResult(0);
        progress = true;
        break;
      }
    }
  }
  return outputs.contains(value) ? value : gradient;
}

/// The loss whose scaled value `y` is, in a step amp-opt converted (`scale`
/// its loss scale input): a Gradient then differentiates `Mul(loss,
/// scale)`, and the graph outputs the loss. Otherwise (or without a scale)
/// `y` itself.
static Value getUnscaledLoss(Value scale, Value y) {
  auto mul = y.getDefiningOp<onnxg::NodeOp>();
  if (!scale || !mul || mul.getOpType() != "Mul" || mul.getNumOperands() != 2 ||
      !onnxg::isDefaultDomain(mul.getDomain()))
    return y;
  if (mul.getOperand(1) == scale)
    return mul.getOperand(0);
  if (mul.getOperand(0) == scale)
    return mul.getOperand(1);
  return y;
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
      roles.addGradient(value, gradient);
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
      roles.addGradient(value, gradient);
  }
}

/// The (forward output, gradient) pairs of an ORTModule YieldOp: its
/// outputs are the gradients of its inputs but those listed in
/// non_differentiable_outputs.
static SmallVector<std::pair<Value, Value>> getYieldGradients(NodeOp yield) {
  SmallVector<int64_t> skipped;
  if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(
          yield.getOnnxAttrsOrEmpty().get("non_differentiable_outputs")))
    llvm::append_range(skipped, attr.asArrayRef());
  SmallVector<std::pair<Value, Value>> pairs;
  auto outputs = yield.getOutputs();
  unsigned next = 0;
  for (auto [i, input] : llvm::enumerate(yield.getInputs()))
    if (!llvm::is_contained(skipped, int64_t(i)) && next < outputs.size())
      pairs.push_back({input, outputs[next++]});
  return pairs;
}

/// Loss candidates of a graph with a backward but no recorded loss: the
/// float outputs with one element that update no input (of `roles`, or of
/// `inferred` pairs).
static SmallVector<Value>
getLossCandidates(func::FuncOp func, const TrainingRoles &roles,
                  ArrayRef<std::pair<Value, Value>> inferred = {}) {
  SmallVector<Value> candidates;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (Value value : ret.getOperands()) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (type && isa<FloatType>(type.getElementType()) &&
        type.hasStaticShape() && type.getNumElements() == 1 &&
        !llvm::is_contained(candidates, value) &&
        llvm::none_of(llvm::concat<const std::pair<Value, Value>>(roles.updates,
                                                                  inferred),
                      [&](auto pair) { return pair.first == value; }))
      candidates.push_back(value);
  }
  return candidates;
}

LogicalResult AnalyzeTrainingPass::readRolesFile(ModuleOp module) {
  loss = lossName;
  seed = seedName;
  updatePairs.assign(updateNames.begin(), updateNames.end());
  if (rolesFile.empty())
    return success();
  auto fail = [&](const Twine &message) {
    return emitError(module.getLoc())
           << "roles file '" << rolesFile << "': " << message;
  };
  auto buffer = llvm::MemoryBuffer::getFile(rolesFile);
  if (!buffer)
    return fail(buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail(toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return fail("expected a JSON object");
  for (const auto &[key, value] : *object) {
    if (key == "loss" || key == "seed") {
      std::optional<StringRef> name = value.getAsString();
      if (!name)
        return fail("'" + key.str() + "' must be a tensor name");
      std::string &option = key == "loss" ? loss : seed;
      if (option.empty())
        option = name->str();
    } else if (key == "updates") {
      const llvm::json::Object *pairs = value.getAsObject();
      if (!pairs)
        return fail("'updates' must map input names to output names");
      for (const auto &[input, output] : *pairs) {
        std::optional<StringRef> name = output.getAsString();
        if (!name)
          return fail("'updates' must map input names to output names");
        updatePairs.push_back((input.str() + ":" + *name).str());
      }
    } else {
      return fail("unknown key '" + key.str() +
                  "'; expected loss, seed or updates");
    }
  }
  return success();
}

/// The ops of `body` that `values` depend on (`upstream`) or that depend on
/// them (downstream), values that subgraphs read included.
static llvm::DenseSet<Operation *> reach(Block &body, ArrayRef<Value> values,
                                         bool upstream);

LogicalResult AnalyzeTrainingPass::findUpdates(func::FuncOp func,
                                               const ValueNames &names,
                                               TrainingRoles &roles,
                                               bool byName) {
  llvm::StringMap<BlockArgument> inputs;
  for (BlockArgument arg : func.getArguments())
    inputs[onnxg::getValueName(arg)] = arg;
  const llvm::StringMap<Value> &outputs = names.getOutputs();

  // updates=<input>:<output>.
  for (StringRef entry : updatePairs) {
    auto splits = getNamePairSplits(entry, [&](StringRef in, StringRef out) {
      return inputs.count(in) && outputs.count(out);
    });
    if (splits.size() != 1)
      return emitError(func.getLoc())
             << "updates='" << entry << "': "
             << (splits.empty() ? "expected <input>:<output> naming an "
                                  "input and an output of the graph"
                                : "several splits name an input and an "
                                  "output; rename them");
    BlockArgument input = inputs.lookup(splits.front().first);
    Value output = outputs.lookup(splits.front().second);
    if (input.getType() != output.getType())
      return emitError(func.getLoc())
             << "updates='" << entry << "': input type " << input.getType()
             << " differs from output type " << output.getType();
    if (roles.isInUpdate(input, false) || roles.isInUpdate(output, true))
      return emitError(func.getLoc())
             << "updates='" << entry << "': '" << onnxg::getValueName(input)
             << "' or its output is named in another update";
    roles.updates.push_back({output, input});
  }

  if (!byName)
    return success();
  // The naming conventions, on the whole input name, else without a role
  // prefix (`param.w` is updated by `new_param.w`, `w_new` or `w'`).
  llvm::DenseMap<Value, StringRef> updatedBy;
  for (BlockArgument arg : func.getArguments())
    for (auto pair : roles.updates)
      if (pair.second == arg)
        updatedBy[arg] = "";
  for (OpOperand &operand :
       func.getBody().front().getTerminator()->getOpOperands()) {
    Value updated = operand.get();
    auto nameAttr = func.getResultAttrOfType<StringAttr>(
        operand.getOperandNumber(), onnxg::ONNXGraphDialect::kNameAttrName);
    if (!nameAttr || roles.isInUpdate(updated, true))
      continue;
    StringRef output = nameAttr.getValue();
    SmallVector<BlockArgument> candidates;
    for (bool stripped : {false, true}) {
      for (BlockArgument arg : func.getArguments()) {
        StringRef input = onnxg::getValueName(arg);
        StringRef stem = stripped ? stripRolePrefix(input) : input;
        if (!input.empty() && (!stripped || stem != input) &&
            arg.getType() == updated.getType() && isUpdateName(output, stem))
          candidates.push_back(arg);
      }
      if (!candidates.empty())
        break;
    }
    if (candidates.size() > 1) {
      InFlightDiagnostic diag = emitError(func.getLoc())
                                << "output '" << output
                                << "' may update several inputs:";
      for (BlockArgument arg : candidates)
        diag << " '" << onnxg::getValueName(arg) << "'";
      return diag << "; say which with updates=<input>:<output>";
    }
    if (candidates.empty())
      continue;
    BlockArgument input = candidates.front();
    if (auto it = updatedBy.find(input); it != updatedBy.end()) {
      // An optimizer's update that is no output, which this output is
      // computed from (the skip on overflow of a step amp-opt converted):
      // the output carries into the next step.
      Operation *terminator = func.getBody().front().getTerminator();
      auto *pair = llvm::find_if(
          roles.updates, [&](auto pair) { return pair.second == input; });
      if (it->second.empty() && pair != roles.updates.end() &&
          !llvm::is_contained(terminator->getOperands(), pair->first) &&
          reach(func.getBody().front(), {updated}, /*upstream=*/true)
              .contains(pair->first.getDefiningOp())) {
        pair->first = updated;
        it->second = output;
        continue;
      }
      return emitError(func.getLoc())
             << "input '" << onnxg::getValueName(input)
             << "' may be updated by '" << output << "' and by '"
             << (it->second.empty() ? StringRef("updates=") : it->second)
             << "'; say which with updates=<input>:<output>";
    }
    updatedBy[input] = output;
    roles.updates.push_back({updated, input});
  }
  return success();
}

/// The gradient of `param` in its update `updated`: the first value linear
/// in the seed, of the parameter's type, met walking up from the update
/// through values that depend on the seed non-linearly; then up through
/// scalings by a constant factor (`lr * g`, `(1 - beta1) * g`).
static Value findGradient(Value updated, Value param,
                          const SeedLinearity &linearity) {
  SmallVector<Value> queue = {updated};
  llvm::DenseSet<Value> seen = {updated};
  Value gradient, anyLinear;
  for (size_t i = 0; i < queue.size() && !gradient; ++i) {
    Value value = queue[i];
    if (linearity.isLinear(value)) {
      if (value.getType() == param.getType())
        gradient = value;
      else if (!anyLinear)
        anyLinear = value;
      continue;
    }
    Operation *op = value.getDefiningOp();
    if (!op || !linearity.dependsOnSeed(value))
      continue;
    for (Value operand : op->getOperands())
      if (seen.insert(operand).second)
        queue.push_back(operand);
  }
  if (!gradient)
    gradient = anyLinear;
  while (gradient) {
    auto node = gradient.getDefiningOp<NodeOp>();
    if (!node || !onnxg::isDefaultDomain(node.getDomain()))
      break;
    StringRef type = node.getOpType();
    Value next;
    auto inputs = node.getInputs();
    auto isFactor = [&](Value value) {
      return hasOneElement(value) && !linearity.dependsOnSeed(value);
    };
    if ((type == "Mul" || type == "Div") && inputs.size() == 2 &&
        isFactor(inputs[1]))
      next = inputs[0];
    else if (type == "Mul" && inputs.size() == 2 && isFactor(inputs[0]))
      next = inputs[1];
    if (!next || !linearity.isLinear(next) ||
        next.getType() != gradient.getType())
      break;
    gradient = next;
  }
  return gradient;
}

/// Whether the ops that are not `forward` ops carry `value` into one of
/// `updates` (a step counter reaches Adam's bias correction).
static bool feedsUpdate(Block &body, Value value, ArrayRef<Value> updates,
                        const llvm::DenseSet<Operation *> &forward) {
  llvm::DenseSet<Operation *> found;
  SmallVector<Value> work = {value};
  while (!work.empty()) {
    Value current = work.pop_back_val();
    if (llvm::is_contained(updates, current))
      return true;
    for (Operation *user : current.getUsers()) {
      Operation *owner = body.findAncestorOpInBlock(*user);
      if (owner && !owner->hasTrait<OpTrait::IsTerminator>() &&
          !forward.contains(owner) && found.insert(owner).second)
        llvm::append_range(work, owner->getResults());
    }
  }
  return false;
}

/// Seed-linear values that a non-linear op or an output reads outside what
/// unscaling `gradients` covers (the ops that only read them).
static SmallVector<Value> getUncoveredFrontier(Block &body,
                                               const SeedLinearity &linearity,
                                               ArrayRef<Value> gradients) {
  llvm::DenseSet<Operation *> upstream = reach(body, gradients, true);
  llvm::DenseSet<Operation *> downstream = reach(body, gradients, false);
  SmallVector<Value> uncovered;
  for (Value value : linearity.getFrontier()) {
    Operation *producer = value.getDefiningOp();
    bool covered = llvm::is_contained(gradients, value) ||
                   (producer && downstream.contains(producer) &&
                    !upstream.contains(producer));
    if (!covered)
      uncovered.push_back(value);
  }
  return uncovered;
}

/// The (updated, previous) pairs of the outputs that no name or option
/// pairs, found by their arithmetic (getAffineUpdateSources): each output
/// takes its nearest input not paired yet, when that one is unique;
/// pairing one output can settle another's tie (SGD's momentum buffer reads
/// the parameter through weight decay as near as its own buffer).
static SmallVector<std::pair<Value, Value>>
inferUpdates(func::FuncOp func, const TrainingRoles &roles) {
  SmallVector<std::pair<Value, Value>> inferred;
  auto isPaired = [&](Value value, bool asUpdate) {
    return roles.isInUpdate(value, asUpdate) ||
           llvm::any_of(inferred, [&](auto pair) {
             return (asUpdate ? pair.first : pair.second) == value;
           });
  };
  SmallVector<std::pair<Value, SmallVector<std::pair<BlockArgument, unsigned>>>>
      open;
  for (Value output : func.getBody().front().getTerminator()->getOperands())
    if (isa<RankedTensorType>(output.getType()) && !isPaired(output, true) &&
        llvm::none_of(open, [&](auto &entry) { return entry.first == output; }))
      if (auto sources = getAffineUpdateSources(output); !sources.empty())
        open.push_back({output, std::move(sources)});
  for (bool progress = true; progress;) {
    progress = false;
    for (auto &[output, sources] : open) {
      if (isPaired(output, true))
        continue;
      llvm::erase_if(
          sources, [&](auto source) { return isPaired(source.first, false); });
      if (sources.empty())
        continue;
      unsigned nearest = sources.front().second;
      if (sources.size() > 1 && sources[1].second == nearest)
        continue;
      inferred.push_back({output, sources.front().first});
      progress = true;
    }
  }
  return inferred;
}

/// A graph that updates nothing but computes a backward of its loss (named,
/// or its one candidate): a gradient graph, or a step whose update names
/// follow no convention. It is converted as a forward graph: say so.
static void warnOfHiddenBackward(func::FuncOp func,
                                 const TrainingRoles &roles) {
  Value loss = roles.loss;
  if (!loss) {
    SmallVector<Value> candidates = getLossCandidates(func, roles);
    if (candidates.size() != 1)
      return;
    loss = candidates.front();
  }
  Block &body = func.getBody().front();
  std::string why;
  SmallVector<Value> seeds =
      findSeeds(body, loss, reach(body, loss, true), {}, why);
  if (seeds.empty())
    return;
  emitWarning(func.getLoc())
      << "'" << onnxg::getValueName(loss) << "' has a backward (seed '"
      << onnxg::getValueName(seeds.front())
      << "'), but no output updates an input by a known name: converted as "
         "a forward graph, without loss scaling; name the updates with "
         "updates=<input>:<output>";
}

LogicalResult AnalyzeTrainingPass::analyzeDataflow(
    func::FuncOp func, TrainingRoles &roles,
    SmallVector<std::pair<Value, Value>> inferred) {
  Block &body = func.getBody().front();
  llvm::DenseSet<Operation *> forward = reach(body, roles.loss, true);
  // An update found by its arithmetic never feeds the loss, and counts only
  // in a step with a backward seed: arithmetic alone does not make a step.
  llvm::erase_if(inferred, [&](auto pair) {
    Operation *producer = pair.first.getDefiningOp();
    return producer && forward.contains(producer);
  });
  std::string why;
  if (roles.seeds.empty()) {
    SmallVector<Value> updatedInputs;
    for (auto [updated, previous] :
         llvm::concat<std::pair<Value, Value>>(roles.updates, inferred))
      updatedInputs.push_back(previous);
    roles.seeds = findSeeds(body, roles.loss, forward, updatedInputs, why);
  }
  if (!roles.seeds.empty())
    llvm::append_range(roles.updates, inferred);
  if (roles.updates.empty())
    return success();
  roles.kind = "training_step";
  roles.hasBackward = true;
  roles.gradients.clear();
  if (roles.seeds.empty()) {
    emitWarning(func.getLoc())
        << "training step with " << roles.updates.size()
        << " updated inputs and loss '" << onnxg::getValueName(roles.loss)
        << "', but no backward seed found: " << why
        << "; name it with seed=<tensor>. Without it no loss scaling or "
           "barrier is placed";
    return success();
  }
  SeedLinearity linearity(body, roles.seeds);

  // Parameters: updated inputs that the forward reads and whose update
  // depends on the seed. State: the other updates that depend on it or
  // that carry into a parameter's update (step counts). Buffers: the rest.
  auto readByForward = [&](Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      return forward.contains(body.findAncestorOpInBlock(*user));
    });
  };
  SmallVector<std::pair<Value, Value>> all = std::move(roles.updates);
  roles.updates.clear();
  SmallVector<Value> paramUpdates;
  for (auto [updated, previous] : all) {
    if (!readByForward(previous) || !linearity.dependsOnSeed(updated))
      continue;
    Value gradient = findGradient(updated, previous, linearity);
    if (!gradient) {
      emitWarning(func.getLoc())
          << "parameter '" << onnxg::getValueName(previous)
          << "': its update depends on the seed, but no value on the way "
             "is linear in it; it has no gradient";
      continue;
    }
    roles.addGradient(previous, gradient);
    roles.updates.push_back({updated, previous});
    paramUpdates.push_back(updated);
  }
  for (auto [updated, previous] : all) {
    if (llvm::is_contained(paramUpdates, updated))
      continue;
    bool isState = linearity.dependsOnSeed(updated) ||
                   feedsUpdate(body, previous, paramUpdates, forward);
    (isState ? roles.updates : roles.buffers).push_back({updated, previous});
  }
  SmallVector<Value> gradients;
  for (auto [param, gradient] : roles.gradients)
    if (!llvm::is_contained(gradients, gradient))
      gradients.push_back(gradient);
  roles.unscale = gradients;
  llvm::append_range(roles.unscale,
                     getUncoveredFrontier(body, linearity, gradients));
  return success();
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
    // A converted step's outputs are the unscaled loss and gradients.
    Value scale = getLossScaleInput(func, names);
    llvm::DenseSet<Value> outputs(body.getTerminator()->getOperands().begin(),
                                  body.getTerminator()->getOperands().end());
    for (NodeOp op : gradientOps) {
      auto y = op.getOnnxAttrsOrEmpty().getAs<StringAttr>("y");
      auto xs = op.getOnnxAttrsOrEmpty().getAs<ArrayAttr>("xs");
      Value differentiated = y ? names.lookup(y.getValue()) : Value();
      if (!differentiated || !xs || xs.size() != op.getOutputs().size())
        return emitError(op.getLoc())
               << op.describe()
               << ": attributes 'xs' and 'y' must name values "
                  "of the graph, one 'xs' per output";
      Value loss = getUnscaledLoss(scale, differentiated);
      if (roles.loss && roles.loss != loss)
        return emitError(op.getLoc())
               << op.describe() << ": differentiates '" << y.getValue()
               << "', another Gradient differentiates '"
               << onnxg::getValueName(roles.loss)
               << "'; name the loss with loss=<tensor>";
      roles.loss = loss;
      for (auto [x, gradient] : llvm::zip(xs, op.getOutputs()))
        if (Value param = names.lookup(cast<StringAttr>(x).getValue()))
          roles.addGradient(
              param,
              scale ? getUnscaledGradient(gradient, scale, outputs) : gradient);
    }
    collectOptimizerRoles(body, roles);
  } else if (!roles.yieldOps.empty()) {
    // ORTModule: YieldOp hands the forward's outputs to PyTorch and returns
    // their gradients, the seeds; parameter gradients are `<param>_grad`.
    roles.kind = "ort.module";
    SmallVector<Value> differentiated;
    for (NodeOp op : roles.yieldOps) {
      llvm::append_range(roles.seeds, op.getOutputs());
      for (auto [output, gradient] : getYieldGradients(op))
        differentiated.push_back(output);
    }
    // A module that returns one float element with a gradient returns its
    // loss (PyTorch's backward starts there).
    if (differentiated.size() == 1)
      if (auto type = dyn_cast<RankedTensorType>(differentiated[0].getType());
          type && isa<FloatType>(type.getElementType()) &&
          type.hasStaticShape() && type.getNumElements() == 1)
        roles.loss = differentiated[0];
    collectOrtGradients(names, body.getArguments(), roles);
  } else if (!accumulators.empty()) {
    // ONNX Runtime's training artifact: accumulators read the gradients of
    // parameters `<param>`, named `<param>_grad`, into buffers named
    // `<param>_grad.accumulation.buffer` (which keep their names where
    // amp-opt converted the step and the gradient read is unscaled); the
    // seed of loss `<loss>` is `<loss>_grad`.
    roles.kind = "ort.training_artifact";
    for (NodeOp op : accumulators) {
      if (op.getInputs().size() < 2)
        continue;
      Value gradient = op.getInputs()[1];
      StringRef name = onnxg::getValueName(gradient);
      StringRef buffer = onnxg::getValueName(op.getInputs()[0]);
      Value param = name.consume_back("_grad") ? names.lookup(name) : Value();
      if (!param && buffer.consume_back("_grad.accumulation.buffer"))
        param = names.lookup(buffer);
      roles.addGradient(param ? param : gradient, gradient);
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

  // Our metadata lists its updates; updates= adds to any kind.
  if (failed(findUpdates(func, names, roles, /*byName=*/!*fromMetadata)))
    return failure();
  // A step without markers: outputs that update its inputs, by name or, for
  // the outputs no name explains, by their arithmetic.
  bool unmarked =
      (roles.kind == "forward" || roles.kind == "backward") && !*fromMetadata;
  SmallVector<std::pair<Value, Value>> inferred;
  if (unmarked)
    inferred = inferUpdates(func, roles);
  bool plainStep = unmarked && (!roles.updates.empty() || !inferred.empty());

  // loss=<tensor> names the loss where the graph does not.
  if (!loss.empty()) {
    Value value = names.lookup(loss);
    if (!value)
      return emitError(func.getLoc())
             << "loss='" << loss << "' names no value of the graph";
    roles.loss = value;
  } else if (!roles.loss && (roles.hasBackward || plainStep) &&
             roles.kind != "ort.module") {
    SmallVector<Value> candidates = getLossCandidates(func, roles, inferred);
    if (candidates.size() > 1 &&
        (roles.hasBackward || !roles.updates.empty())) {
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
  // seed=<tensor> names the backward seed.
  if (!seed.empty()) {
    Value value = names.lookup(seed);
    if (!value || !isFloatTensor(value.getType()))
      return emitError(func.getLoc())
             << "seed='" << seed << "' names no float tensor of the graph";
    roles.seeds.assign({value});
  }
  if (!plainStep) {
    if (roles.kind == "forward")
      warnOfHiddenBackward(func, roles);
    return success();
  }
  if (!roles.loss) {
    if (!updatePairs.empty() || !seed.empty())
      return emitError(func.getLoc())
             << "the graph updates " << roles.updates.size()
             << " inputs, but has no loss: name it with loss=<tensor>";
    // Names alone do not make a training step.
    roles.updates.clear();
    return success();
  }
  return analyzeDataflow(func, roles, std::move(inferred));
}

/// Gives gradients, seeds and updates whose shapes ONNX shape inference
/// could not find (it does not know ONNX Runtime's gradient ops, nor the
/// shape arithmetic of nn.Unfold's backward) the type of the tensor they
/// stand for: the parameter, what YieldOp hands out, or the value an update
/// replaces. The function returns them with those types.
static void typeGradients(func::FuncOp func, TrainingRoles &roles) {
  auto refine = [](Value value, Type type) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked || !isa<OpResult>(value) || value.getType() == type)
      return;
    auto current = dyn_cast<RankedTensorType>(value.getType());
    // Untyped or unranked: any ranked type; of a rank only: a static type
    // of its element type and a compatible shape.
    if (!current || (ranked.hasStaticShape() &&
                     current.getElementType() == ranked.getElementType() &&
                     succeeded(verifyCompatibleShape(current, ranked))))
      value.setType(type);
  };
  for (auto [param, gradient] : roles.gradients)
    refine(gradient, param.getType());
  for (NodeOp op : roles.yieldOps)
    for (auto [input, output] : getYieldGradients(op))
      refine(output, input.getType());
  for (auto [updated, previous] : roles.updates)
    refine(updated, previous.getType());
  Operation *terminator = func.getBody().front().getTerminator();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 terminator->getOperandTypes()));
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

/// Checks what markers say against seed linearity: each gradient they name
/// must be linear in the seeds, and no other seed-linear value may reach a
/// non-linear op or an output; such values are unscaled too. A named
/// gradient that is not linear (clipped by its norm) is computed from
/// unscaled values then, so it is not unscaled itself: that would divide
/// it by the scale twice.
static void checkMarkers(func::FuncOp func, TrainingRoles &roles,
                         ArrayRef<Value> gradients) {
  if (roles.seeds.empty() || gradients.empty())
    return;
  Block &body = func.getBody().front();
  SeedLinearity linearity(body, roles.seeds);
  SmallVector<Value> linear;
  for (Value gradient : gradients) {
    if (linearity.isLinear(gradient)) {
      linear.push_back(gradient);
      continue;
    }
    emitWarning(func.getLoc())
        << roles.kind << ": gradient '" << onnxg::getValueName(gradient)
        << "' is not linear in the backward seeds; the seed-linear values "
           "it is computed from are unscaled instead of it";
  }
  SmallVector<Value> uncovered = getUncoveredFrontier(body, linearity, linear);
  for (Value value : uncovered)
    emitWarning(func.getLoc())
        << roles.kind << ": '" << onnxg::getValueName(value)
        << "' is linear in the backward seeds and read outside the "
           "gradients the markers name; it is unscaled too";
  if (uncovered.empty() && linear.size() == gradients.size())
    return;
  roles.unscale = linear;
  llvm::append_range(roles.unscale, uncovered);
}

void AnalyzeTrainingPass::runOnOperation() {
  MLIRContext *ctx = &getContext();
  Builder builder(ctx);
  if (failed(readRolesFile(getOperation())))
    return signalPassFailure();
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    TrainingRoles roles;
    if (failed(analyze(func, roles)))
      return signalPassFailure();
    Block &body = func.getBody().front();
    typeGradients(func, roles);

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
    for (Value value : roles.unscale)
      if (!llvm::is_contained(gradients, value))
        gradients.push_back(value);
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
        roles.kind != "optimizer" && roles.kind != "training_step")
      if (Operation *lossOp = roles.loss.getDefiningOp())
        for (Value result : lossOp->getResults())
          for (Operation *user : result.getUsers())
            if (regions.lookup(body.findAncestorOpInBlock(*user)) == Backward)
              for (Value seed : user->getResults())
                if (!llvm::is_contained(roles.seeds, seed))
                  roles.seeds.push_back(seed);

    // A step amp-opt converted names the unscaled gradients: the markers
    // are right by construction, and not linear in the (scaled) seeds.
    bool converted = !onnxg::getMetadataProp(func->getParentOfType<ModuleOp>(),
                                             kLossScalingMetadataKey)
                          .empty();
    if (isTraining && roles.kind != "training_step" && !converted)
      checkMarkers(func, roles, gradients);

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
    auto pairsOf = [&](ArrayRef<std::pair<Value, Value>> pairs) {
      SmallVector<Attribute> list;
      for (auto [updated, previous] : pairs)
        list.push_back(builder.getArrayAttr(
            {builder.getStringAttr(onnxg::getValueName(updated)),
             builder.getStringAttr(onnxg::getValueName(previous))}));
      return builder.getArrayAttr(list);
    };
    NamedAttribute fields[] = {
        builder.getNamedAttr("kind", builder.getStringAttr(roles.kind)),
        builder.getNamedAttr(
            "loss",
            builder.getStringAttr(roles.loss ? onnxg::getValueName(roles.loss)
                                             : StringRef())),
        builder.getNamedAttr("seeds", namesOf(roles.seeds)),
        builder.getNamedAttr("parameters", namesOf(params)),
        builder.getNamedAttr("gradients", namesOf(gradientList)),
        builder.getNamedAttr("updates", pairsOf(roles.updates)),
        builder.getNamedAttr("buffers", pairsOf(roles.buffers)),
        builder.getNamedAttr("unscale", namesOf(roles.unscale)),
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
          << " updates, " << roles.buffers.size() << " buffers; " << counts[0]
          << " forward, " << counts[1] << " backward, " << counts[2]
          << " optimizer ops";
    if (!roles.loss && roles.kind != "ort.module" && roles.kind != "optimizer")
      emitWarning(func.getLoc(),
                  "no loss found: name it with loss=<tensor>; without "
                  "it no loss scaling or barrier is placed");
  }
}
