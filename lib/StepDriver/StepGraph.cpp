//===- StepGraph.cpp - Edits the step driver makes to a step --------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/StepDriver/StepGraph.h"

#include "amp/StepDriver/HostTensor.h"

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;
using namespace amprun;

const char *amprun::toolName = "amp-run";

void amprun::fail(const llvm::Twine &message) {
  llvm::errs() << toolName << ": error: " << message << "\n";
  exit(1);
}

void amprun::addOutput(func::FuncOp func, Value value, StringRef name) {
  auto terminator =
      cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (llvm::is_contained(terminator.getOperands(), value))
    return;
  terminator->insertOperands(terminator->getNumOperands(), value);
  SmallVector<Type> results(func.getResultTypes());
  results.push_back(value.getType());
  func.setType(
      FunctionType::get(func.getContext(), func.getArgumentTypes(), results));
  func.setResultAttr(results.size() - 1, onnxg::ONNXGraphDialect::kNameAttrName,
                     StringAttr::get(func.getContext(), name));
}

/// Whether a value of type `actual` can stand for one of type `expected`:
/// the same type, or one ONNX could not infer (a contrib op's output, which
/// the lowering types).
static bool isCompatible(Type actual, Type expected) {
  return actual == expected || isa<onnxg::UnknownType>(actual);
}

/// A default-domain node `opType` at the builder (at least opset 11, which
/// has sequences), with one output named `output`.
static onnxg::NodeOp createNode(OpBuilder &builder, StringRef opType,
                                Type resultType, ValueRange inputs,
                                StringRef output,
                                ArrayRef<NamedAttribute> attrs = {}) {
  return onnxg::createNode(builder, opType, resultType, inputs,
                           ("amp_run." + output).str(), output, attrs, "",
                           /*minOpset=*/11);
}

/// `node` rebuilt with results of `types` (more of its optional outputs),
/// the uses of its old results moved to the new node's.
static onnxg::NodeOp withResults(onnxg::NodeOp node, TypeRange types) {
  OpBuilder builder(node);
  OperationState state(node.getLoc(), node->getName());
  state.addOperands(node.getOperands());
  state.addTypes(types);
  state.addAttributes(llvm::to_vector(node->getDiscardableAttrs()));
  state.useProperties(node.getProperties());
  auto rebuilt = cast<onnxg::NodeOp>(builder.create(state));
  for (auto [old, now] : llvm::zip(node.getResults(), rebuilt.getResults()))
    old.replaceAllUsesWith(now);
  node.erase();
  return rebuilt;
}

/// The sequences ONNX Runtime's training API feeds an AdamW optimizer graph,
/// one tensor per trained parameter each (training_api/optimizer.cc).
static constexpr StringLiteral kParamsInput = "params",
                               kGradientsInput = "gradients";
static constexpr StringLiteral kMomentInputs[] = {"first_order_moments",
                                                  "second_order_moments"};
/// The names amp-run gives the moments of parameter P: P<suffix>, as
/// ONNX Runtime's checkpoints name the states momentum0 and momentum1.
static constexpr StringLiteral kMomentSuffixes[] = {".momentum0", ".momentum1"};

namespace {
/// Where an ONNX Runtime optimizer over sequences (AdamWOptimizer,
/// SGDOptimizerV2) reads its gradients, and which optional outputs return
/// which inputs updated.
struct SequenceOptimizer {
  unsigned gradients;
  SmallVector<std::pair<unsigned, unsigned>> updates; ///< (output, input)
  std::optional<unsigned> stepCount;
  unsigned numOperands; ///< At least this many inputs.
};
} // namespace

static std::optional<SequenceOptimizer> getSequenceOptimizer(Operation &op) {
  auto node = dyn_cast<onnxg::NodeOp>(op);
  if (!node || node.getDomain() != "com.microsoft")
    return std::nullopt;
  if (node.getOpType() == "AdamWOptimizer")
    return SequenceOptimizer{3, {{1, 2}, {2, 4}, {3, 5}}, 1, 6};
  if (node.getOpType() == "SGDOptimizerV2")
    return SequenceOptimizer{2, {{1, 1}}, std::nullopt, 3};
  return std::nullopt;
}

/// The parameters an optimizer graph over sequences updates, in the order of
/// its sequences: the order of the gradients it collects itself
/// (SequenceConstruct of `<P>_grad` inputs), else the step's inputs that
/// have a `<P>_grad` value, in input order.
static SmallVector<Value> getTrainedParameters(func::FuncOp step,
                                               func::FuncOp optimizer,
                                               const onnxg::ValueNames &names) {
  SmallVector<Value> params;
  for (Operation &op : optimizer.getBody().front()) {
    std::optional<SequenceOptimizer> kind = getSequenceOptimizer(op);
    if (!kind || op.getNumOperands() <= kind->gradients)
      continue;
    auto construct =
        op.getOperand(kind->gradients).getDefiningOp<onnxg::NodeOp>();
    if (!construct || construct.getOpType() != "SequenceConstruct")
      continue;
    for (Value gradient : construct.getOperands()) {
      StringRef name = onnxg::getValueName(gradient);
      Value param = name.consume_back("_grad") ? names.lookup(name) : Value();
      if (!param)
        fail("--optimizer: gradient '" + onnxg::getValueName(gradient) +
             "' is not named <parameter>_grad after a value of the "
             "training graph");
      params.push_back(param);
    }
    return params;
  }
  for (BlockArgument arg : step.getArguments()) {
    StringRef name = onnxg::getValueName(arg);
    if (!name.empty() && names.lookup((name + "_grad").str()))
      params.push_back(arg);
  }
  if (params.empty())
    fail("--optimizer: no input of the training graph has a gradient named "
         "<input>_grad");
  return params;
}

/// A SequenceConstruct in `step` of what ONNX Runtime's training API feeds
/// the optimizer's sequence input `arg`: the parameters, their gradients,
/// or new step inputs for a moment (zeros at first; amp-run carries them).
static Value buildSequenceInput(func::FuncOp step, BlockArgument arg,
                                ArrayRef<Value> params,
                                llvm::function_ref<Value(StringRef)> lookup,
                                OpBuilder &builder) {
  StringRef input = onnxg::getValueName(arg);
  SmallVector<Value> elements;
  for (Value param : params) {
    std::string name = onnxg::getValueName(param).str();
    if (input == kParamsInput) {
      elements.push_back(param);
    } else if (input == kGradientsInput) {
      Value gradient = lookup(name + "_grad");
      if (!gradient || !isCompatible(gradient.getType(), param.getType()))
        fail("--optimizer: parameter '" + name + "' has no gradient '" + name +
             "_grad' of its type");
      elements.push_back(gradient);
    } else {
      auto *it = llvm::find(kMomentInputs, input);
      if (it == std::end(kMomentInputs))
        fail("--optimizer: sequence input '" + input +
             "' is none of those ONNX Runtime's training API feeds (params, "
             "gradients, first_order_moments, second_order_moments)");
      std::string moment = name + kMomentSuffixes[it - kMomentInputs].str();
      unsigned index = step.getNumArguments();
      if (failed(step.insertArgument(
              index, param.getType(), DictionaryAttr::get(step.getContext()),
              NameLoc::get(builder.getStringAttr(moment)))))
        fail("--optimizer: cannot add input '" + moment + "'");
      elements.push_back(step.getArgument(index));
    }
  }
  return createNode(builder, "SequenceConstruct", arg.getType(), elements,
                    input)
      .getResult(0);
}

/// Makes what ONNX Runtime's optimizer over sequences `node` (of `kind`)
/// updates in place outputs of `step`: each tensor of its updated weights
/// (and AdamW's moments) as `<tensor>.updated` (SequenceAt of the optional
/// outputs, which the node is rebuilt to return), and AdamW's step count
/// plus its updated flag as `<step>.updated`, as the training API counts.
static void exposeSequenceUpdates(func::FuncOp step, onnxg::NodeOp node,
                                  const SequenceOptimizer &kind) {
  if (node.getNumOperands() < kind.numOperands)
    fail("--optimizer: " + node.getOpType() + " " + node.describe() +
         " has fewer than " + Twine(kind.numOperands) + " inputs");
  OpBuilder builder(step.getBody().front().getTerminator());
  if (node.getNumResults() < kind.updates.size() + 1) {
    SmallVector<Type> types = {node.getResult(0).getType()};
    for (auto [output, input] : kind.updates)
      types.push_back(node.getOperand(input).getType());
    node = withResults(node, types);
  }
  for (auto [output, input] : kind.updates) {
    auto construct = node.getOperand(input).getDefiningOp<onnxg::NodeOp>();
    if (!construct || construct.getOpType() != "SequenceConstruct")
      fail("--optimizer: input " + Twine(input) + " of " + node.describe() +
           " is not built by SequenceConstruct");
    for (auto [i, previous] : llvm::enumerate(construct.getOperands())) {
      std::string name = (onnxg::getValueName(previous) + ".updated").str();
      auto indexType = RankedTensorType::get({}, builder.getI64Type());
      Value position =
          createNode(builder, "Constant", indexType, {}, name + ".position",
                     builder.getNamedAttr(
                         "value", DenseElementsAttr::get(
                                      indexType, builder.getI64IntegerAttr(i))))
              .getResult(0);
      Value updated = createNode(builder, "SequenceAt", previous.getType(),
                                 {node.getResult(output), position}, name)
                          .getResult(0);
      addOutput(step, updated, name);
    }
  }
  if (!kind.stepCount)
    return;
  Value count = node.getOperand(*kind.stepCount);
  auto countType = dyn_cast<RankedTensorType>(count.getType());
  if (!countType || !countType.getElementType().isInteger(64))
    fail("--optimizer: the step count of " + node.describe() + " has type " +
         printToString(count.getType()) + ", not an int64 tensor");
  std::string name = (onnxg::getValueName(count) + ".updated").str();
  constexpr int64_t kOnnxInt64 = 7;
  Value flag =
      createNode(
          builder, "Cast", countType, node.getResult(0), name + ".increment",
          builder.getNamedAttr("to", builder.getI64IntegerAttr(kOnnxInt64)))
          .getResult(0);
  addOutput(
      step,
      createNode(builder, "Add", countType, {count, flag}, name).getResult(0),
      name);
}

/// ONNX Runtime's gradient accumulators that add into an input buffer.
static SmallVector<onnxg::NodeOp> getAccumulators(func::FuncOp func) {
  SmallVector<onnxg::NodeOp> accumulators;
  func.walk([&](onnxg::NodeOp node) {
    if (node.getDomain() == "com.microsoft" &&
        node.getOpType().starts_with("InPlaceAccumulator") &&
        node.getNumOperands() >= 2 && isa<BlockArgument>(node.getOperand(0)))
      accumulators.push_back(node);
  });
  return accumulators;
}

/// The gradients an optimizer graph reads by name (`<P>_grad`) where they
/// are not the values of that name: in a step amp-opt converted, what the
/// accumulator into `<P>_grad.accumulation.buffer` reads, the unscaled
/// gradient, rather than the scaled low-precision value named `<P>_grad`.
static llvm::StringMap<Value> getAccumulatedGradients(func::FuncOp step) {
  llvm::StringMap<Value> gradients;
  for (onnxg::NodeOp node : getAccumulators(step)) {
    StringRef gradient = onnxg::getValueName(node.getOperand(0));
    if (gradient.consume_back(".accumulation.buffer") &&
        onnxg::getValueName(node.getOperand(1)) != gradient)
      gradients[gradient] = node.getOperand(1);
  }
  return gradients;
}

/// Makes the outputs of `step` from `first` on that update an input
/// (`<input>.updated`) keep the input where `finite` is false: a converted
/// step zeroes its gradients after an overflow and says so, and the
/// training API's caller then skips its optimizer step.
static void skipUpdatesUnless(func::FuncOp step, Value finite, unsigned first) {
  llvm::StringMap<BlockArgument> inputs;
  for (BlockArgument arg : step.getArguments())
    inputs[onnxg::getValueName(arg)] = arg;
  Operation *terminator = step.getBody().front().getTerminator();
  OpBuilder builder(terminator);
  for (unsigned i = first; i < terminator->getNumOperands(); ++i) {
    auto name = step.getResultAttrOfType<StringAttr>(
        i, onnxg::ONNXGraphDialect::kNameAttrName);
    StringRef stem = name ? name.getValue() : "";
    BlockArgument previous =
        stem.consume_back(".updated") ? inputs.lookup(stem) : BlockArgument();
    Value updated = terminator->getOperand(i);
    if (!previous || previous.getType() != updated.getType())
      continue;
    terminator->setOperand(i, createNode(builder, "Where", updated.getType(),
                                         {finite, updated, previous},
                                         (name.getValue() + ".if_finite").str())
                                  .getResult(0));
  }
}

void amprun::appendOptimizer(func::FuncOp step, func::FuncOp optimizer) {
  onnxg::ValueNames names(step);
  llvm::StringMap<Value> accumulated = getAccumulatedGradients(step);
  auto lookup = [&](StringRef name) {
    Value value = accumulated.lookup(name);
    return value ? value : names.lookup(name);
  };
  unsigned firstOutput = step.getNumResults();
  IRMapping mapping;
  OpBuilder builder(step.getBody().front().getTerminator());
  SmallVector<Value> params;
  for (BlockArgument arg : optimizer.getArguments()) {
    StringRef name = onnxg::getValueName(arg);
    // An input no node reads (the first_order_moments and step of ONNX
    // Runtime's SGD graph) needs no value.
    if (arg.use_empty())
      continue;
    if (isa<onnxg::SequenceType>(arg.getType())) {
      if (params.empty())
        params = getTrainedParameters(step, optimizer, names);
      mapping.map(arg, buildSequenceInput(step, arg, params, lookup, builder));
      continue;
    }
    if (Value value = lookup(name)) {
      if (!isCompatible(value.getType(), arg.getType()))
        fail("--optimizer: input '" + name + "' has type " +
             printToString(arg.getType()) + ", the training graph's " +
             printToString(value.getType()));
      mapping.map(arg, value);
      continue;
    }
    unsigned index = step.getNumArguments();
    if (failed(step.insertArgument(index, arg.getType(),
                                   optimizer.getArgAttrDict(arg.getArgNumber()),
                                   arg.getLoc())))
      fail("--optimizer: cannot add input '" + name + "'");
    mapping.map(arg, step.getArgument(index));
  }
  Block &body = optimizer.getBody().front();
  SmallVector<std::pair<onnxg::NodeOp, SequenceOptimizer>> optimizers;
  for (Operation &op : body.without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    if (std::optional<SequenceOptimizer> kind = getSequenceOptimizer(op))
      optimizers.push_back({cast<onnxg::NodeOp>(clone), *kind});
  }
  for (auto [i, value] : llvm::enumerate(body.getTerminator()->getOperands())) {
    auto name = optimizer.getResultAttrOfType<StringAttr>(
        i, onnxg::ONNXGraphDialect::kNameAttrName);
    addOutput(step, mapping.lookupOrDefault(value),
              name ? name.getValue() : onnxg::getValueName(value));
  }
  for (auto &[node, kind] : optimizers)
    exposeSequenceUpdates(step, node, kind);
  if (Value finite = names.lookup("amp.grads_finite"))
    skipUpdatesUnless(step, finite, firstOutput);
}

llvm::StringSet<> amprun::findAccumulatorBuffers(func::FuncOp func) {
  llvm::StringSet<> names;
  for (onnxg::NodeOp node : getAccumulators(func))
    names.insert(onnxg::getValueName(node.getOperand(0)));
  return names;
}

void amprun::exposeHiddenState(func::FuncOp func) {
  func.walk([&](amp::AllFiniteOp op) {
    addOutput(func, op.getResult(), "amp.grads_finite");
  });
  for (onnxg::NodeOp node : getAccumulators(func)) {
    auto buffer = cast<BlockArgument>(node.getOperand(0));
    bool v2 = node.getOpType() == "InPlaceAccumulatorV2";
    // Ask for V2's optional second output, the accumulated buffer.
    if (v2 && node.getNumResults() == 1)
      node = withResults(node, {node.getResult(0).getType(), buffer.getType()});
    addOutput(func, node.getResult(v2 ? 1 : 0),
              (onnxg::getValueName(buffer) + ".updated").str());
  }
}

llvm::StringSet<> amprun::findStepCounts(func::FuncOp func) {
  llvm::StringSet<> names;
  func.walk([&](onnxg::NodeOp node) {
    if (node.getDomain() == "com.microsoft" &&
        (node.getOpType() == "AdamOptimizer" ||
         node.getOpType() == "AdamWOptimizer") &&
        node.getNumOperands() > 1)
      if (auto arg = dyn_cast<BlockArgument>(node.getOperand(1)))
        names.insert(onnxg::getValueName(arg));
  });
  return names;
}
