//===- ExpandRecurrent.cpp - RNN, GRU and LSTM as unrolled nodes ----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The onnxg-expand-recurrent pass: each default-domain RNN, GRU and LSTM node
// becomes the ONNX nodes of its equations, unrolled over its time steps: one
// MatMul projects the inputs of every step, then each step multiplies the
// hidden state by the recurrence weights and computes the gates.
//
//===----------------------------------------------------------------------===//

#include "NodeEmitter.h"

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::onnxg {
#define GEN_PASS_DEF_ONNXGRAPHEXPANDRECURRENT
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"
} // namespace mlir::onnxg

using namespace mlir;
using namespace mlir::onnxg;

namespace {
/// An entry of the `activations` attribute, lower case, with its alpha and
/// beta.
struct Activation {
  std::string name;
  float alpha = 0;
  float beta = 0;
};

/// The hidden state (and LSTM's cell state) between two steps, in the
/// compute type; null before the first step without an initial state
/// (zero).
struct State {
  Value hidden;
  Value cell;
};

/// What one direction's steps share: the projected inputs of every step
/// with their biases, the transposed recurrence weights, the peepholes and
/// the activations.
struct Direction {
  /// [steps, batch, gates, hidden], compute type.
  Value inputGates;
  /// [hidden, gates * hidden], data type; GRU without
  /// linear_before_reset splits it: `recurrence` for z and r,
  /// `recurrenceHidden` for h.
  Value recurrence;
  Value recurrenceHidden;
  /// GRU with linear_before_reset: Rb, [gates, hidden], compute type.
  Value recurrenceBias;
  /// LSTM's peepholes for the gates i, o, f: [hidden], compute type.
  Value peepholes[3];
  State initial;
  SmallVector<Activation, 3> activations;
};

/// Expands one RNN, GRU or LSTM node.
class RecurrentExpansion {
public:
  RecurrentExpansion(NodeOp node, OpBuilder &builder)
      : node(node), nodes(node, builder, node.getOpType()) {}

  /// Replaces the node's results; fails after an error.
  LogicalResult run();

private:
  InFlightDiagnostic emitError() {
    return mlir::emitError(node.getLoc()) << node.describe() << ": ";
  }
  /// Reads the attributes and checks the operands' types.
  LogicalResult readAttributes();
  /// The activations of direction `index`, from `activations`,
  /// `activation_alpha` and `activation_beta` or the op's defaults.
  FailureOr<SmallVector<Activation, 3>> readActivations(unsigned index);
  /// Operand `i`, or null when it is missing.
  Value getOperand(unsigned i) {
    return i < node.getNumOperands() &&
                   !isa<NoneType>(node.getOperand(i).getType())
               ? node.getOperand(i)
               : Value();
  }
  /// Whether sequence_lens is missing or a constant of the sequence length.
  bool hasFullLengths(Value lengths);

  static RankedTensorType getType(ArrayRef<int64_t> shape, Type elementType) {
    return RankedTensorType::get(shape, elementType);
  }
  /// A 0-d constant of the compute type.
  Value scalar(double value) { return nodes.scalar(computeType, value); }
  Value activate(const Activation &activation, Value value);
  /// `value` clipped to [-clip, clip] when the node has `clip`.
  Value clip(Value value);

  /// The state after one step of `direction` from `state`, the gates' input
  /// parts of that step being `input` ([batch, gates, hidden]).
  State step(const Direction &direction, Value input, const State &state);
  State stepLSTM(const Direction &direction, Value input, const State &state);
  State stepGRU(const Direction &direction, Value input, const State &state);
  /// `hidden` ([batch, hidden]) times a transposed recurrence weight of
  /// `gates` gates: [batch, gates, hidden] in the compute type.
  Value project(Value hidden, Value weight, int64_t gates);
  /// Gate `index` of [batch, gates, hidden] values.
  Value gate(Value gates, int64_t index) { return nodes.pick(gates, index, 1); }
  /// Prepares direction `index` (weights, biases, initial state).
  FailureOr<Direction> prepare(Value input, unsigned index);

  NodeOp node;
  NodeEmitter nodes;
  StringRef kind;
  int64_t numGates = 1;
  int64_t numDirections = 1;
  bool reverse = false;
  int64_t hiddenSize = 0;
  int64_t numSteps = 0;
  int64_t batch = 0;
  int64_t layout = 0;
  std::optional<float> clipValue;
  bool inputForget = false;
  bool linearBeforeReset = false;
  Type dataType;
  Type computeType;
};
} // namespace

/// The activations an op type uses per direction, by default.
static ArrayRef<StringLiteral> getDefaultActivations(StringRef kind) {
  static constexpr StringLiteral kLSTM[] = {"sigmoid", "tanh", "tanh"};
  static constexpr StringLiteral kGRU[] = {"sigmoid", "tanh"};
  static constexpr StringLiteral kRNN[] = {"tanh"};
  if (kind == "LSTM")
    return kLSTM;
  if (kind == "GRU")
    return kGRU;
  return kRNN;
}

/// Whether an activation takes alpha and beta, and their defaults: those of
/// the ONNX op of that name, as the RNN ops' specification says.
struct ActivationParams {
  bool known = false;
  bool takesAlpha = false;
  bool takesBeta = false;
  float alpha = 0;
  float beta = 0;
};

static ActivationParams getActivationParams(StringRef name) {
  return llvm::StringSwitch<ActivationParams>(name)
      .Cases({"relu", "tanh", "sigmoid", "softsign", "softplus"},
             ActivationParams{true})
      .Case("affine", {true, true, true, 1.0f, 0.0f})
      .Case("leakyrelu", {true, true, false, 0.01f})
      .Case("thresholdedrelu", {true, true, false, 1.0f})
      .Case("scaledtanh", {true, true, true, 1.0f, 1.0f})
      .Case("hardsigmoid", {true, true, true, 0.2f, 0.5f})
      .Case("elu", {true, true, false, 1.0f})
      .Default({});
}

LogicalResult RecurrentExpansion::readAttributes() {
  kind = node.getOpType();
  numGates = kind == "LSTM" ? 4 : kind == "GRU" ? 3 : 1;
  if (node.getOpset() < 7)
    return emitError() << "expands from opset 7 on (this node is opset "
                       << node.getOpset() << ")";
  DictionaryAttr attrs = node.getOnnxAttrsOrEmpty();
  auto direction = attrs.getAs<StringAttr>("direction");
  StringRef directionName = direction ? direction.getValue() : "forward";
  if (directionName != "forward" && directionName != "reverse" &&
      directionName != "bidirectional")
    return emitError() << "direction '" << directionName
                       << "' is none of forward, reverse and bidirectional";
  reverse = directionName == "reverse";
  numDirections = directionName == "bidirectional" ? 2 : 1;
  if (auto attr = attrs.getAs<IntegerAttr>("layout"))
    layout = attr.getInt();
  if (layout != 0 && layout != 1)
    return emitError() << "layout must be 0 or 1, not " << layout;
  if (auto attr = attrs.getAs<FloatAttr>("clip"))
    clipValue = attr.getValueAsDouble();
  if (auto attr = attrs.getAs<IntegerAttr>("input_forget"))
    inputForget = attr.getInt() != 0;
  if (auto attr = attrs.getAs<IntegerAttr>("linear_before_reset"))
    linearBeforeReset = attr.getInt() != 0;

  auto input = dyn_cast<RankedTensorType>(node.getOperand(0).getType());
  if (!input || input.getRank() != 3 || !isa<FloatType>(input.getElementType()))
    return emitError() << "X must be a 3-D float tensor, not "
                       << node.getOperand(0).getType();
  dataType = input.getElementType();
  computeType = dataType.getIntOrFloatBitWidth() < 32
                    ? Float32Type::get(dataType.getContext())
                    : dataType;
  numSteps = input.getDimSize(layout == 0 ? 0 : 1);
  batch = input.getDimSize(layout == 0 ? 1 : 0);
  if (ShapedType::isDynamic(numSteps) || numSteps == 0)
    return emitError() << "the sequence length (dimension " << layout
                       << " of X) must be static and positive to unroll the "
                          "steps";
  if (auto attr = attrs.getAs<IntegerAttr>("hidden_size"))
    hiddenSize = attr.getInt();
  auto recurrence = dyn_cast<RankedTensorType>(node.getOperand(2).getType());
  if (!hiddenSize && recurrence && recurrence.getRank() == 3)
    hiddenSize = recurrence.getDimSize(2);
  if (hiddenSize <= 0)
    return emitError() << "the hidden size must be known: give hidden_size "
                          "or R a static last dimension";
  for (unsigned i : {1u, 2u}) {
    auto weight = dyn_cast<RankedTensorType>(node.getOperand(i).getType());
    if (!weight || weight.getRank() != 3 ||
        !isa<FloatType>(weight.getElementType()) ||
        (!weight.isDynamicDim(0) && weight.getDimSize(0) != numDirections) ||
        (!weight.isDynamicDim(1) &&
         weight.getDimSize(1) != numGates * hiddenSize))
      return emitError() << (i == 1 ? "W" : "R") << " must be a float tensor "
                         << "of " << numDirections << "x"
                         << numGates * hiddenSize << "x..., not "
                         << node.getOperand(i).getType();
  }
  if (Value lengths = getOperand(4))
    if (!hasFullLengths(lengths) && node.getOpset() < 9)
      return emitError() << "sequence_lens needs opset 9 or later (Where)";
  return success();
}

FailureOr<SmallVector<Activation, 3>>
RecurrentExpansion::readActivations(unsigned index) {
  DictionaryAttr attrs = node.getOnnxAttrsOrEmpty();
  ArrayRef<StringLiteral> defaults = getDefaultActivations(kind);
  SmallVector<std::string> names;
  if (auto list = attrs.getAs<ArrayAttr>("activations")) {
    if (list.size() != defaults.size() * numDirections)
      return emitError() << "has " << list.size() << " activations; " << kind
                         << " takes " << defaults.size() << " per direction",
             failure();
    for (Attribute name : list)
      names.push_back(cast<StringAttr>(name).getValue().lower());
  } else {
    for (unsigned d = 0; d < numDirections; ++d)
      for (StringLiteral name : defaults)
        names.push_back(name.str());
  }
  // alpha and beta are consumed in the order of the activations that take
  // them, over both directions.
  auto alphas = attrs.getAs<DenseF32ArrayAttr>("activation_alpha");
  auto betas = attrs.getAs<DenseF32ArrayAttr>("activation_beta");
  int64_t nextAlpha = 0, nextBeta = 0;
  SmallVector<Activation, 3> result;
  for (auto [position, name] : llvm::enumerate(names)) {
    ActivationParams params = getActivationParams(name);
    if (!params.known)
      return emitError() << "activation '" << name
                         << "' is none of Relu, Tanh, Sigmoid, Affine, "
                            "LeakyRelu, ThresholdedRelu, ScaledTanh, "
                            "HardSigmoid, Elu, Softsign and Softplus",
             failure();
    Activation activation{name, params.alpha, params.beta};
    if (params.takesAlpha && alphas && nextAlpha < alphas.size())
      activation.alpha = alphas[nextAlpha++];
    if (params.takesBeta && betas && nextBeta < betas.size())
      activation.beta = betas[nextBeta++];
    if (position / defaults.size() == index)
      result.push_back(activation);
  }
  return result;
}

bool RecurrentExpansion::hasFullLengths(Value lengths) {
  ElementsAttr value;
  if (auto init = lengths.getDefiningOp<InitializerOp>())
    value = init.getValue();
  else if (Operation *op = lengths.getDefiningOp(); op && isConstantNode(op))
    value = cast<NodeOp>(op).getOnnxAttrsOrEmpty().getAs<ElementsAttr>("value");
  auto uniform = value ? dyn_cast_or_null<IntegerAttr>(getUniformElement(value))
                       : IntegerAttr();
  return uniform && uniform.getInt() == numSteps;
}

Value RecurrentExpansion::activate(const Activation &activation, Value value) {
  OpBuilder &builder = nodes.getBuilder();
  StringRef name = activation.name;
  auto alpha =
      builder.getNamedAttr("alpha", builder.getF32FloatAttr(activation.alpha));
  auto beta =
      builder.getNamedAttr("beta", builder.getF32FloatAttr(activation.beta));
  if (name == "relu")
    return nodes.unary("Relu", value);
  if (name == "tanh")
    return nodes.unary("Tanh", value);
  if (name == "sigmoid")
    return nodes.unary("Sigmoid", value);
  if (name == "softsign")
    return nodes.unary("Softsign", value);
  if (name == "softplus")
    return nodes.unary("Softplus", value);
  if (name == "leakyrelu")
    return nodes.unary("LeakyRelu", value, alpha);
  if (name == "elu")
    return nodes.unary("Elu", value, alpha);
  if (name == "hardsigmoid")
    return nodes.unary("HardSigmoid", value, {alpha, beta});
  if (name == "affine")
    return nodes.binary("Add",
                        nodes.binary("Mul", value, scalar(activation.alpha)),
                        scalar(activation.beta));
  if (name == "scaledtanh")
    return nodes.binary(
        "Mul",
        nodes.unary("Tanh",
                    nodes.binary("Mul", value, scalar(activation.beta))),
        scalar(activation.alpha));
  assert(name == "thresholdedrelu" && "readActivations checked the names");
  // x where x > alpha, else 0; ThresholdedRelu itself is opset 10.
  Value above = nodes.create(
      "Greater",
      cast<RankedTensorType>(value.getType()).clone(builder.getI1Type()),
      {value, scalar(activation.alpha)});
  return nodes.binary("Mul", value, nodes.castTo(above, computeType));
}

Value RecurrentExpansion::clip(Value value) {
  if (!clipValue)
    return value;
  OpBuilder &builder = nodes.getBuilder();
  float bound = *clipValue;
  // Clip takes its bounds as attributes before opset 11, inputs after.
  if (nodes.getOpset() < 11)
    return nodes.unary(
        "Clip", value,
        {builder.getNamedAttr("min", builder.getF32FloatAttr(-bound)),
         builder.getNamedAttr("max", builder.getF32FloatAttr(bound))});
  return nodes.create("Clip", value.getType(),
                      {value, scalar(-bound), scalar(bound)});
}

Value RecurrentExpansion::project(Value hidden, Value weight, int64_t gates) {
  Value product = nodes.castTo(
      nodes.matmul(nodes.castTo(hidden, dataType), weight), computeType);
  return nodes.reshape(product, {-1, gates, hiddenSize},
                       {batch, gates, hiddenSize});
}

FailureOr<Direction> RecurrentExpansion::prepare(Value input, unsigned index) {
  Direction direction;
  FailureOr<SmallVector<Activation, 3>> activations = readActivations(index);
  if (failed(activations))
    return failure();
  direction.activations = std::move(*activations);

  // All steps' inputs at once: X·Wᵀ (+ Wb + Rb), [steps, batch, gates,
  // hidden].
  Value weight = nodes.transpose(
      nodes.pick(nodes.castTo(node.getOperand(1), dataType), index), {1, 0});
  Value gates =
      nodes.reshape(nodes.castTo(nodes.matmul(input, weight), computeType),
                    {numSteps, -1, numGates, hiddenSize},
                    {numSteps, batch, numGates, hiddenSize});
  if (Value bias = getOperand(3)) {
    Value both =
        nodes.reshape(nodes.pick(nodes.castTo(bias, computeType), index),
                      {2, numGates, hiddenSize}, {2, numGates, hiddenSize});
    Value inputBias = nodes.pick(both, 0);
    Value recurrenceBias = nodes.pick(both, 1);
    // GRU with linear_before_reset adds Rb before multiplying by r.
    if (kind == "GRU" && linearBeforeReset)
      direction.recurrenceBias = recurrenceBias;
    else
      inputBias = nodes.binary("Add", inputBias, recurrenceBias);
    gates = nodes.binary("Add", gates, inputBias);
  }
  direction.inputGates = gates;

  Value recurrence =
      nodes.pick(nodes.castTo(node.getOperand(2), dataType), index);
  if (kind == "GRU" && !linearBeforeReset) {
    // z and r multiply the hidden state, h the hidden state times r.
    Value split = nodes.reshape(recurrence, {numGates, hiddenSize, hiddenSize},
                                {numGates, hiddenSize, hiddenSize});
    OpBuilder &builder = nodes.getBuilder();
    auto rowsType = getType({2}, builder.getI64Type());
    Value rows = nodes.create(
        "Constant", rowsType, {},
        builder.getNamedAttr("value", DenseElementsAttr::get(
                                          rowsType, ArrayRef<int64_t>{0, 1})));
    Value updateReset = nodes.create(
        "Gather", getType({2, hiddenSize, hiddenSize}, dataType), {split, rows},
        builder.getNamedAttr("axis", builder.getI64IntegerAttr(0)));
    direction.recurrence =
        nodes.transpose(nodes.reshape(updateReset, {2 * hiddenSize, hiddenSize},
                                      {2 * hiddenSize, hiddenSize}),
                        {1, 0});
    direction.recurrenceHidden = nodes.transpose(nodes.pick(split, 2), {1, 0});
  } else {
    direction.recurrence = nodes.transpose(recurrence, {1, 0});
  }

  if (Value peepholes = getOperand(7)) {
    Value split =
        nodes.reshape(nodes.pick(nodes.castTo(peepholes, computeType), index),
                      {3, hiddenSize}, {3, hiddenSize});
    for (int64_t gateIndex = 0; gateIndex < 3; ++gateIndex)
      direction.peepholes[gateIndex] = nodes.pick(split, gateIndex);
  }
  // Initial states are [directions, batch, hidden], [batch, directions,
  // hidden] in layout 1.
  if (Value hidden = getOperand(5))
    direction.initial.hidden =
        nodes.pick(nodes.castTo(hidden, computeType), index, layout);
  if (Value cell = getOperand(6); cell && kind == "LSTM")
    direction.initial.cell =
        nodes.pick(nodes.castTo(cell, computeType), index, layout);
  return direction;
}

State RecurrentExpansion::stepLSTM(const Direction &direction, Value input,
                                   const State &state) {
  const Activation &f = direction.activations[0];
  const Activation &g = direction.activations[1];
  const Activation &h = direction.activations[2];
  Value gates = input;
  if (state.hidden)
    gates = nodes.binary("Add", gates,
                         project(state.hidden, direction.recurrence, numGates));
  // Gate order i, o, f, c; peepholes i, o, f.
  Value inputGate = gate(gates, 0);
  Value outputGate = gate(gates, 1);
  Value forgetGate = gate(gates, 2);
  Value candidate = activate(g, clip(gate(gates, 3)));
  auto peephole = [&](Value pre, unsigned index, Value cell) {
    if (!direction.peepholes[index] || !cell)
      return pre;
    return nodes.binary("Add", pre,
                        nodes.binary("Mul", direction.peepholes[index], cell));
  };
  inputGate = activate(f, clip(peephole(inputGate, 0, state.cell)));
  // input_forget couples the gates: f = 1 - i.
  forgetGate = inputForget
                   ? nodes.binary("Sub", scalar(1), inputGate)
                   : activate(f, clip(peephole(forgetGate, 2, state.cell)));
  Value cell = nodes.binary("Mul", inputGate, candidate);
  if (state.cell)
    cell =
        nodes.binary("Add", nodes.binary("Mul", forgetGate, state.cell), cell);
  outputGate = activate(f, clip(peephole(outputGate, 1, cell)));
  return {nodes.binary("Mul", outputGate, activate(h, cell)), cell};
}

State RecurrentExpansion::stepGRU(const Direction &direction, Value input,
                                  const State &state) {
  const Activation &f = direction.activations[0];
  const Activation &g = direction.activations[1];
  Value update = gate(input, 0);
  Value reset = gate(input, 1);
  Value candidate = gate(input, 2);
  // With linear_before_reset: h = g(x·Whᵀ + Wbh + r ⊙ (H·Rhᵀ + Rbh)).
  Value recurrentCandidate;
  if (linearBeforeReset) {
    Value product;
    if (state.hidden)
      product = project(state.hidden, direction.recurrence, numGates);
    if (direction.recurrenceBias)
      product = product ? nodes.binary("Add", product, direction.recurrenceBias)
                        : direction.recurrenceBias;
    if (product) {
      // [batch, gates, hidden], or Rb's [gates, hidden] alone.
      int64_t gateAxis = state.hidden ? 1 : 0;
      update = nodes.binary("Add", update, nodes.pick(product, 0, gateAxis));
      reset = nodes.binary("Add", reset, nodes.pick(product, 1, gateAxis));
      recurrentCandidate = nodes.pick(product, 2, gateAxis);
    }
  } else if (state.hidden) {
    Value product = project(state.hidden, direction.recurrence, 2);
    update = nodes.binary("Add", update, gate(product, 0));
    reset = nodes.binary("Add", reset, gate(product, 1));
  }
  update = activate(f, clip(update));
  reset = activate(f, clip(reset));
  if (linearBeforeReset && recurrentCandidate)
    candidate = nodes.binary("Add", candidate,
                             nodes.binary("Mul", reset, recurrentCandidate));
  else if (!linearBeforeReset && state.hidden)
    candidate = nodes.binary(
        "Add", candidate,
        nodes.castTo(
            nodes.matmul(nodes.castTo(nodes.binary("Mul", reset, state.hidden),
                                      dataType),
                         direction.recurrenceHidden),
            computeType));
  candidate = activate(g, clip(candidate));
  // H = (1 - z) ⊙ h + z ⊙ H_prev.
  Value hidden =
      nodes.binary("Mul", nodes.binary("Sub", scalar(1), update), candidate);
  if (state.hidden)
    hidden =
        nodes.binary("Add", hidden, nodes.binary("Mul", update, state.hidden));
  return {hidden, Value()};
}

State RecurrentExpansion::step(const Direction &direction, Value input,
                               const State &state) {
  if (kind == "LSTM")
    return stepLSTM(direction, input, state);
  if (kind == "GRU")
    return stepGRU(direction, input, state);
  Value gates = input;
  if (state.hidden)
    gates = nodes.binary("Add", gates,
                         project(state.hidden, direction.recurrence, numGates));
  return {activate(direction.activations[0], clip(gate(gates, 0))), Value()};
}

LogicalResult RecurrentExpansion::run() {
  if (failed(readAttributes()))
    return failure();
  OpBuilder &builder = nodes.getBuilder();
  builder.setInsertionPoint(node);
  Value input = nodes.castTo(node.getOperand(0), dataType);
  if (layout == 1)
    input = nodes.transpose(input, {1, 0, 2});

  // Steps past a sequence's length keep the state and output zeros.
  Value lengths = getOperand(4);
  if (lengths && hasFullLengths(lengths))
    lengths = Value();
  // Per time step, [batch, 1]: whether each sequence is still running.
  llvm::DenseMap<int64_t, Value> runningAt;
  auto isRunning = [&](int64_t time) -> Value {
    if (!lengths)
      return {};
    Value &running = runningAt[time];
    if (!running) {
      Type lengthType = getElementTypeOrSelf(lengths.getType());
      running = nodes.reshape(
          nodes.binary("Less", nodes.createSplat(lengthType, double(time)),
                       lengths),
          {-1, 1}, {batch, 1});
    }
    return running;
  };
  auto keep = [&](Value running, Value next, Value previous) {
    if (!running)
      return next;
    return nodes.create("Where", next.getType(),
                        {running, next, previous ? previous : scalar(0)});
  };

  auto isUsed = [&](unsigned i) {
    return i < node.getNumResults() && !node.getResult(i).use_empty();
  };
  bool needsOutput = isUsed(0);
  SmallVector<Value> outputs, lastHidden, lastCell;
  for (unsigned index = 0; index < numDirections; ++index) {
    FailureOr<Direction> direction = prepare(input, index);
    if (failed(direction))
      return failure();
    bool backwards = reverse || index == 1;
    State state = direction->initial;
    SmallVector<Value> perStep(numSteps);
    for (int64_t s = 0; s < numSteps; ++s) {
      int64_t time = backwards ? numSteps - 1 - s : s;
      Value running = isRunning(time);
      State next =
          step(*direction, nodes.pick(direction->inputGates, time), state);
      // Zero past a sequence's end, which is also the state after it when
      // the state before was zero.
      Value output = keep(running, next.hidden, Value());
      if (needsOutput)
        perStep[time] =
            nodes.reshape(nodes.castTo(output, dataType),
                          {1, 1, -1, hiddenSize}, {1, 1, batch, hiddenSize});
      state.hidden =
          state.hidden ? keep(running, next.hidden, state.hidden) : output;
      if (next.cell)
        state.cell = keep(running, next.cell, state.cell);
    }
    if (needsOutput)
      outputs.push_back(nodes.concat(perStep, 0));
    auto last = [&](Value value) {
      return nodes.reshape(nodes.castTo(value, dataType), {1, -1, hiddenSize},
                           {1, batch, hiddenSize});
    };
    if (isUsed(1))
      lastHidden.push_back(last(state.hidden));
    if (isUsed(2))
      lastCell.push_back(last(state.cell));
  }

  // Layout 1 puts the batch first: Y [batch, steps, directions, hidden],
  // Y_h and Y_c [batch, directions, hidden].
  for (auto [index, result] : llvm::enumerate(node.getResults())) {
    if (result.use_empty())
      continue;
    Value replacement;
    if (index == 0) {
      replacement = nodes.concat(outputs, 1);
      if (layout == 1)
        replacement = nodes.transpose(replacement, {2, 0, 1, 3});
    } else {
      replacement = nodes.concat(index == 1 ? lastHidden : lastCell, 0);
      if (layout == 1)
        replacement = nodes.transpose(replacement, {1, 0, 2});
    }
    result.replaceAllUsesWith(replacement);
  }
  node.erase();
  return success();
}

namespace {
struct ExpandRecurrentPass
    : onnxg::impl::ONNXGraphExpandRecurrentBase<ExpandRecurrentPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<NodeOp> recurrentNodes;
    func.walk([&](NodeOp node) {
      StringRef type = node.getOpType();
      if (isDefaultDomain(node.getDomain()) &&
          (type == "RNN" || type == "GRU" || type == "LSTM"))
        recurrentNodes.push_back(node);
    });
    if (recurrentNodes.empty())
      return;
    OpBuilder builder(&getContext());
    for (NodeOp node : recurrentNodes)
      if (failed(RecurrentExpansion(node, builder).run()))
        return signalPassFailure();
    // Outputs ONNX could not type now have the expansion's types.
    Block &body = func.getBody().front();
    func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                   body.getTerminator()->getOperandTypes()));
  }
};
} // namespace
