//===- ExpandRecurrent.cpp - RNN, GRU and LSTM as unrolled nodes ----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The onnxg-expand-recurrent pass: each default-domain RNN, GRU and LSTM node
// becomes the ONNX nodes of its equations, unrolled over its time steps: one
// MatMul projects the inputs of every step, then each step multiplies the
// hidden state by the recurrence weights and computes the gates. ONNX
// Runtime's LSTMTraining and GRUTraining expand the same way; LSTMGrad and
// GRUGrad go back through the steps.
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
  /// The step's activated gates, [batch, gates * hidden] (LSTM's i, o, f,
  /// c; GRU's z, r, h): what LSTMTraining and GRUTraining also return.
  Value gates;
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

/// Expands one RNN, GRU or LSTM node, or one of ONNX Runtime's training
/// forms and gradients of LSTM and GRU.
class RecurrentExpansion {
public:
  RecurrentExpansion(NodeOp node, OpBuilder &builder)
      : node(node), nodes(node, builder, node.getOpType()) {}

  /// Replaces the node's results; fails after an error.
  LogicalResult run();

  /// The op type a node expands as: RNN, GRU or LSTM for the ONNX ops and
  /// for ONNX Runtime's GRUTraining, LSTMTraining, GRUGrad and LSTMGrad;
  /// "" for other nodes.
  static StringRef getKind(NodeOp node);

private:
  InFlightDiagnostic emitError() { return node.emitNodeError(); }
  /// Reads the attributes and checks the operands' types.
  LogicalResult readAttributes();
  /// The activations of direction `index`, from `activations`,
  /// `activation_alpha` and `activation_beta` or the op's defaults.
  FailureOr<SmallVector<Activation, 3>> readActivations(unsigned index);
  Value getOperand(unsigned i) { return node.getOptionalOperand(i); }
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
  /// The rows of `gates` in a [gates * hidden, hidden] recurrence weight,
  /// as [gates.size() * hidden, hidden].
  Value gateRows(Value weight, ArrayRef<int64_t> gates);
  /// Gate `index` of [batch, gates, hidden] values.
  Value gate(Value gates, int64_t index) { return nodes.pick(gates, index, 1); }
  /// Prepares direction `index` (weights, biases, initial state).
  FailureOr<Direction> prepare(Value input, unsigned index);
  /// The activated gates of a step, [batch, gates * hidden].
  Value joinGates(ArrayRef<Value> gates) { return nodes.concat(gates, 1); }
  /// Replaces LSTMGrad's or GRUGrad's results.
  LogicalResult runGradient();
  /// Checks what ONNX Runtime's gradient kernels compute: one forward
  /// direction, the default activations, no clip or input_forget, full
  /// sequences.
  LogicalResult checkGradientAttributes();
  /// Result `i` as the node declares its element type (the data type when
  /// it does not).
  Value asResult(unsigned i, Value value);

  NodeOp node;
  NodeEmitter nodes;
  StringRef kind;
  /// ONNX Runtime's training forms: LSTMTraining and GRUTraining also
  /// return every step's state and gates; LSTMGrad and GRUGrad are their
  /// gradients.
  bool training = false;
  bool gradient = false;
  /// The position of sequence_lens among the operands.
  unsigned lengthsOperand = 4;
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

StringRef RecurrentExpansion::getKind(NodeOp node) {
  StringRef type = node.getOpType();
  if (isDefaultDomain(node.getDomain()))
    return llvm::is_contained({"RNN", "GRU", "LSTM"}, type) ? type : "";
  if (node.getDomain() != "com.microsoft")
    return "";
  return llvm::StringSwitch<StringRef>(type)
      .Cases({"LSTMTraining", "LSTMGrad"}, "LSTM")
      .Cases({"GRUTraining", "GRUGrad"}, "GRU")
      .Default("");
}

LogicalResult RecurrentExpansion::readAttributes() {
  kind = getKind(node);
  training = !isDefaultDomain(node.getDomain());
  gradient = training && node.getOpType().ends_with("Grad");
  // LSTMGrad has no B before sequence_lengths.
  lengthsOperand = gradient && kind == "LSTM" ? 3 : 4;
  numGates = kind == "LSTM" ? 4 : kind == "GRU" ? 3 : 1;
  // The contrib ops are at the model's default-domain opset.
  int64_t opset = training ? nodes.getOpset() : node.getOpset();
  if (opset < 7)
    return emitError() << "expands from opset 7 on (this node is opset "
                       << opset << ")";
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
  if (Value lengths = getOperand(lengthsOperand))
    if (!hasFullLengths(lengths) && opset < 9)
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
  ElementsAttr value = getConstantValue(lengths);
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
  Value above = nodes.binary("Greater", value, scalar(activation.alpha));
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

Value RecurrentExpansion::gateRows(Value weight, ArrayRef<int64_t> gates) {
  Value split = nodes.reshape(weight, {numGates, hiddenSize, hiddenSize},
                              {numGates, hiddenSize, hiddenSize});
  if (gates.size() == 1)
    return nodes.pick(split, gates.front());
  OpBuilder &builder = nodes.getBuilder();
  Value indices = nodes.createI64s(gates);
  int64_t rows = int64_t(gates.size()) * hiddenSize;
  Value picked =
      nodes.create("Gather",
                   getType({int64_t(gates.size()), hiddenSize, hiddenSize},
                           getElementTypeOrSelf(weight.getType())),
                   {split, indices},
                   builder.getNamedAttr("axis", builder.getI64IntegerAttr(0)));
  return nodes.reshape(picked, {rows, hiddenSize}, {rows, hiddenSize});
}

FailureOr<Direction> RecurrentExpansion::prepare(Value input, unsigned index) {
  Direction direction;
  FailureOr<SmallVector<Activation, 3>> activations = readActivations(index);
  if (failed(activations))
    return failure();
  direction.activations = std::move(*activations);

  // All steps' inputs at once: X·Wᵀ (+ Wb + Rb), [steps, batch, gates,
  // hidden].
  // Each operand is cast after its direction is picked: once per direction.
  Value weight = nodes.transpose(
      nodes.castTo(nodes.pick(node.getOperand(1), index), dataType), {1, 0});
  Value gates =
      nodes.reshape(nodes.castTo(nodes.matmul(input, weight), computeType),
                    {numSteps, -1, numGates, hiddenSize},
                    {numSteps, batch, numGates, hiddenSize});
  if (Value bias = getOperand(3)) {
    Value both =
        nodes.reshape(nodes.castTo(nodes.pick(bias, index), computeType),
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
      nodes.castTo(nodes.pick(node.getOperand(2), index), dataType);
  if (kind == "GRU" && !linearBeforeReset) {
    // z and r multiply the hidden state, h the hidden state times r.
    direction.recurrence =
        nodes.transpose(gateRows(recurrence, {0, 1}), {1, 0});
    direction.recurrenceHidden =
        nodes.transpose(gateRows(recurrence, {2}), {1, 0});
  } else {
    direction.recurrence = nodes.transpose(recurrence, {1, 0});
  }

  if (Value peepholes = getOperand(7)) {
    Value split =
        nodes.reshape(nodes.castTo(nodes.pick(peepholes, index), computeType),
                      {3, hiddenSize}, {3, hiddenSize});
    for (int64_t gateIndex = 0; gateIndex < 3; ++gateIndex)
      direction.peepholes[gateIndex] = nodes.pick(split, gateIndex);
  }
  // Initial states are [directions, batch, hidden], [batch, directions,
  // hidden] in layout 1.
  if (Value hidden = getOperand(5))
    direction.initial.hidden =
        nodes.castTo(nodes.pick(hidden, index, layout), computeType);
  if (Value cell = getOperand(6); cell && kind == "LSTM")
    direction.initial.cell =
        nodes.castTo(nodes.pick(cell, index, layout), computeType);
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
  Value gateValues;
  if (training)
    gateValues = joinGates({inputGate, outputGate, forgetGate, candidate});
  return {nodes.binary("Mul", outputGate, activate(h, cell)), cell, gateValues};
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
  return {hidden, Value(),
          training ? joinGates({update, reset, candidate}) : Value()};
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
  return {activate(direction.activations[0], clip(gate(gates, 0))), Value(),
          Value()};
}

LogicalResult RecurrentExpansion::run() {
  if (failed(readAttributes()))
    return failure();
  OpBuilder &builder = nodes.getBuilder();
  builder.setInsertionPoint(node);
  if (gradient) {
    if (failed(runGradient()))
      return failure();
    node.erase();
    return success();
  }
  Value input = nodes.castTo(node.getOperand(0), dataType);
  if (layout == 1)
    input = nodes.transpose(input, {1, 0, 2});

  // Steps past a sequence's length keep the state and output zeros.
  Value lengths = getOperand(lengthsOperand);
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

  // The results, by position: per-step values stacked on the time axis
  // (Y; LSTMTraining's cell states and gates, GRUTraining's gates), or
  // the last state of each direction (Y_h, Y_c).
  enum class Part { Hidden, Cell, Gates };
  struct ResultPlan {
    unsigned index;
    Part part;
    bool perStep;
  };
  SmallVector<ResultPlan> plans = {{0, Part::Hidden, true},
                                   {1, Part::Hidden, false}};
  if (kind == "LSTM")
    plans.push_back({2, Part::Cell, false});
  if (training && kind == "LSTM")
    llvm::append_range(plans, ArrayRef<ResultPlan>{{3, Part::Cell, true},
                                                   {4, Part::Gates, true}});
  if (training && kind == "GRU")
    plans.push_back({2, Part::Gates, true});
  llvm::erase_if(plans, [&](const ResultPlan &plan) {
    return plan.index >= node.getNumResults() ||
           node.getResult(plan.index).use_empty();
  });
  auto partOf = [](const State &state, Part part) {
    return part == Part::Hidden ? state.hidden
           : part == Part::Cell ? state.cell
                                : state.gates;
  };
  // [1, 1, batch, width] for a step, [1, batch, width] for a direction.
  auto stack = [&](Value value, bool perStep) {
    int64_t width = cast<RankedTensorType>(value.getType()).getDimSize(1);
    value = nodes.castTo(value, dataType);
    if (perStep)
      return nodes.reshape(value, {1, 1, -1, width}, {1, 1, batch, width});
    return nodes.reshape(value, {1, -1, width}, {1, batch, width});
  };

  // Per result, the parts of each direction.
  SmallVector<SmallVector<Value, 2>> directionParts(plans.size());
  for (unsigned index = 0; index < numDirections; ++index) {
    FailureOr<Direction> direction = prepare(input, index);
    if (failed(direction))
      return failure();
    bool backwards = reverse || index == 1;
    State state = direction->initial;
    SmallVector<SmallVector<Value>> steps(plans.size(),
                                          SmallVector<Value>(numSteps));
    for (int64_t s = 0; s < numSteps; ++s) {
      int64_t time = backwards ? numSteps - 1 - s : s;
      Value running = isRunning(time);
      State next =
          step(*direction, nodes.pick(direction->inputGates, time), state);
      // Outputs are zero past a sequence's end, which is also the state
      // after it when the state before was zero.
      State output = {keep(running, next.hidden, Value()),
                      next.cell ? keep(running, next.cell, Value()) : Value(),
                      next.gates ? keep(running, next.gates, Value())
                                 : Value()};
      for (auto [plan, values] : llvm::zip(plans, steps))
        if (plan.perStep)
          values[time] = stack(partOf(output, plan.part), true);
      state.hidden = state.hidden ? keep(running, next.hidden, state.hidden)
                                  : output.hidden;
      if (next.cell)
        state.cell =
            state.cell ? keep(running, next.cell, state.cell) : output.cell;
    }
    for (auto [plan, values, parts] : llvm::zip(plans, steps, directionParts))
      parts.push_back(plan.perStep ? nodes.concat(values, 0)
                                   : stack(partOf(state, plan.part), false));
  }

  // Layout 1 puts the batch first: Y [batch, steps, directions, hidden],
  // Y_h and Y_c [batch, directions, hidden].
  for (auto [plan, parts] : llvm::zip(plans, directionParts)) {
    Value replacement = nodes.concat(parts, plan.perStep ? 1 : 0);
    if (layout == 1)
      replacement = plan.perStep ? nodes.transpose(replacement, {2, 0, 1, 3})
                                 : nodes.transpose(replacement, {1, 0, 2});
    node.getResult(plan.index).replaceAllUsesWith(replacement);
  }
  node.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// RecurrentGradients: ONNX Runtime's LSTMGrad and GRUGrad
//===----------------------------------------------------------------------===//

LogicalResult RecurrentExpansion::checkGradientAttributes() {
  DictionaryAttr attrs = node.getOnnxAttrsOrEmpty();
  if (numDirections != 1 || reverse)
    return emitError() << "expands for the forward direction only, as ONNX "
                          "Runtime computes it";
  if (clipValue || inputForget)
    return emitError() << "clip and input_forget do not expand: ONNX "
                          "Runtime's gradient has neither";
  if (auto list = attrs.getAs<ArrayAttr>("activations")) {
    ArrayRef<StringLiteral> defaults = getDefaultActivations(kind);
    if (list.size() != defaults.size() ||
        llvm::any_of(llvm::zip(list, defaults), [](auto pair) {
          auto name = dyn_cast<StringAttr>(std::get<0>(pair));
          return !name || name.getValue().lower() != std::get<1>(pair);
        }))
      return emitError() << "expands for the default activations only, as "
                            "ONNX Runtime computes it";
  }
  if (Value lengths = getOperand(lengthsOperand);
      lengths && !hasFullLengths(lengths))
    return emitError() << "sequence lengths shorter than the sequence do "
                          "not expand yet";
  if (cast<RankedTensorType>(node.getOperand(0).getType()).isDynamicDim(2))
    return emitError() << "the input size (dimension 2 of X) must be static";
  return success();
}

Value RecurrentExpansion::asResult(unsigned i, Value value) {
  auto type = dyn_cast<RankedTensorType>(node.getResult(i).getType());
  return nodes.castTo(value, type ? type.getElementType() : dataType);
}

LogicalResult RecurrentExpansion::runGradient() {
  if (failed(checkGradientAttributes()))
    return failure();
  bool lstm = kind == "LSTM";
  // LSTMGrad: X W R sequence_lengths h0 c0 HAll CAll iofc dHAll dHfinal
  // dCfinal; GRUGrad: X W R B sequence_lengths h0 HAll zrh dHAll dHfinal.
  unsigned hiddenIn = lstm ? 4 : 5, allHiddenIn = 6, gatesIn = lstm ? 8 : 7,
           gradAllIn = lstm ? 9 : 8, gradFinalIn = lstm ? 10 : 9;
  SmallVector<unsigned> needed = {allHiddenIn, gatesIn};
  if (lstm)
    needed.push_back(7);
  for (unsigned i : needed)
    if (!getOperand(i))
      return emitError() << "input " << i
                         << " (states and gates that the forward's " << kind
                         << "Training returns) is missing";

  Type f = computeType;
  int64_t width = numGates * hiddenSize;
  // [steps, 1, batch, k] as [steps, batch, k] in the compute type.
  // The forward's outputs may reach here untyped (ONNX cannot infer
  // contrib ops): they have the forward's data type and these shapes.
  auto typed = [&](Value value, ArrayRef<int64_t> shape) {
    if (isa<RankedTensorType>(value.getType()))
      return value;
    return nodes.create("Identity", getType(shape, dataType), value);
  };
  // [steps, 1, batch, k] as [steps, batch, k] in the compute type.
  auto perStep = [&](Value value, int64_t k) {
    value = typed(value, {numSteps, 1, batch, k});
    return nodes.reshape(nodes.castTo(value, f), {numSteps, -1, k},
                         {numSteps, batch, k});
  };
  auto initial = [&](unsigned i) {
    Value value = getOperand(i);
    if (!value)
      return Value();
    value = typed(value, {1, batch, hiddenSize});
    return nodes.pick(nodes.castTo(value, f), 0);
  };
  Value input = nodes.castTo(node.getOperand(0), dataType);
  Value weight = nodes.pick(nodes.castTo(node.getOperand(1), dataType), 0);
  Value recurrence = nodes.pick(nodes.castTo(node.getOperand(2), dataType), 0);
  Value allHidden = perStep(node.getOperand(allHiddenIn), hiddenSize);
  Value allGates = nodes.reshape(
      nodes.castTo(typed(node.getOperand(gatesIn), {numSteps, 1, batch, width}),
                   f),
      {numSteps, -1, numGates, hiddenSize},
      {numSteps, batch, numGates, hiddenSize});
  Value allCells = lstm ? perStep(node.getOperand(7), hiddenSize) : Value();
  Value gradAll = getOperand(gradAllIn)
                      ? perStep(node.getOperand(gradAllIn), hiddenSize)
                      : Value();
  Value hidden0 = initial(hiddenIn);
  Value cell0 = lstm ? initial(5) : Value();
  Value gradHidden = initial(gradFinalIn);
  Value gradCell = lstm ? initial(11) : Value();

  Value zeros;
  auto zeroState = [&]() {
    if (!zeros)
      zeros = nodes.binary("Mul", nodes.pick(allHidden, 0), scalar(0));
    return zeros;
  };
  auto add = [&](Value sum, Value term) {
    return sum ? nodes.binary("Add", sum, term) : term;
  };
  auto mul = [&](Value lhs, Value rhs) {
    return nodes.binary("Mul", lhs, rhs);
  };
  auto oneMinus = [&](Value value) {
    return nodes.binary("Sub", scalar(1), value);
  };
  // The derivative of a sigmoid from its value: s (1 - s).
  auto sigmoidSlope = [&](Value s) { return mul(s, oneMinus(s)); };
  // A [batch, k] gradient times [k, n] weight rows, in the compute type.
  auto times = [&](Value grad, Value rows) {
    return nodes.castTo(nodes.matmul(nodes.castTo(grad, dataType), rows), f);
  };

  // GRU: Rh, and R's rows of z and r (without linear_before_reset), or Rhᵀ
  // and Rbh (with it), built once for every step.
  Value hiddenRows, updateResetRows, hiddenRowsT, hiddenBias;
  if (!lstm) {
    hiddenRows = gateRows(recurrence, {2});
    if (!linearBeforeReset) {
      updateResetRows = gateRows(recurrence, {0, 1});
    } else {
      hiddenRowsT = nodes.transpose(hiddenRows, {1, 0});
      if (Value bias = getOperand(3))
        hiddenBias = nodes.pick(
            nodes.pick(nodes.reshape(nodes.pick(nodes.castTo(bias, f), 0),
                                     {2, numGates, hiddenSize},
                                     {2, numGates, hiddenSize}),
                       1),
            2);
    }
  }

  // Per step: the gradient at the gates' inputs ([batch, gates * hidden]:
  // dX, dW and dB's W half), and the rows of dR with the hidden states they
  // multiply (GRU without linear_before_reset: h's rows apart, with r ⊙ H).
  SmallVector<Value> inputDeltas(numSteps);
  SmallVector<Value> recurrenceDeltas, recurrenceInputs;
  SmallVector<Value> candidateDeltas, candidateInputs;
  Value recurrenceBiasSum;
  Value peepholeSums[3];
  for (int64_t t = numSteps - 1; t >= 0; --t) {
    if (gradAll)
      gradHidden = add(gradHidden, nodes.pick(gradAll, t));
    if (!gradHidden)
      gradHidden = zeroState();
    Value previous = t > 0 ? nodes.pick(allHidden, t - 1) : hidden0;
    Value gates = nodes.pick(allGates, t);
    SmallVector<Value, 4> gate;
    for (int64_t g = 0; g < numGates; ++g)
      gate.push_back(this->gate(gates, g));
    if (lstm) {
      // Gates i, o, f, c; the cell's gradient gathers the hidden state's.
      Value cell = nodes.pick(allCells, t);
      Value previousCell = t > 0 ? nodes.pick(allCells, t - 1) : cell0;
      Value tanhCell = nodes.unary("Tanh", cell);
      gradCell = add(gradCell, mul(mul(gradHidden, gate[1]),
                                   oneMinus(mul(tanhCell, tanhCell))));
      Value dInput = mul(mul(gradCell, gate[3]), sigmoidSlope(gate[0]));
      Value dOutput = mul(mul(gradHidden, tanhCell), sigmoidSlope(gate[1]));
      Value dForget =
          previousCell ? mul(mul(gradCell, previousCell), sigmoidSlope(gate[2]))
                       : zeroState();
      Value dCandidate =
          mul(mul(gradCell, gate[0]), oneMinus(mul(gate[3], gate[3])));
      Value delta = nodes.concat({dInput, dOutput, dForget, dCandidate}, 1);
      inputDeltas[t] = delta;
      if (previous) {
        recurrenceDeltas.push_back(delta);
        recurrenceInputs.push_back(previous);
      }
      // Peepholes: i and f see the previous cell, o the new one.
      if (previousCell) {
        peepholeSums[0] = add(peepholeSums[0], mul(dInput, previousCell));
        peepholeSums[2] = add(peepholeSums[2], mul(dForget, previousCell));
      }
      peepholeSums[1] = add(peepholeSums[1], mul(dOutput, cell));
      gradCell = mul(gradCell, gate[2]);
      gradHidden = times(delta, recurrence);
      continue;
    }
    // GRU gates z, r, h; H = (1 - z) ⊙ h + z ⊙ H_prev.
    Value update = gate[0], reset = gate[1], candidate = gate[2];
    Value before = previous ? previous : zeroState();
    Value dUpdate = mul(mul(nodes.binary("Sub", before, candidate), gradHidden),
                        sigmoidSlope(update));
    Value dCandidate = mul(mul(gradHidden, oneMinus(update)),
                           oneMinus(mul(candidate, candidate)));
    Value dReset, carried;
    if (linearBeforeReset) {
      // h = g(x·Whᵀ + Wbh + r ⊙ (H·Rhᵀ + Rbh)).
      Value linear = previous ? times(previous, hiddenRowsT) : Value();
      if (hiddenBias)
        linear = add(linear, hiddenBias);
      dReset = mul(mul(dCandidate, linear ? linear : zeroState()),
                   sigmoidSlope(reset));
      Value delta = nodes.concat({dUpdate, dReset, mul(dCandidate, reset)}, 1);
      recurrenceBiasSum = add(recurrenceBiasSum, delta);
      if (previous) {
        recurrenceDeltas.push_back(delta);
        recurrenceInputs.push_back(previous);
      }
      carried = times(delta, recurrence);
    } else {
      // h = g(x·Whᵀ + (r ⊙ H)·Rhᵀ + Rbh + Wbh).
      Value throughRows = times(dCandidate, hiddenRows);
      dReset = mul(mul(throughRows, before), sigmoidSlope(reset));
      Value delta = nodes.concat({dUpdate, dReset}, 1);
      if (previous) {
        recurrenceDeltas.push_back(delta);
        recurrenceInputs.push_back(previous);
        candidateDeltas.push_back(dCandidate);
        candidateInputs.push_back(mul(previous, reset));
      }
      carried = add(times(delta, updateResetRows), mul(throughRows, reset));
    }
    inputDeltas[t] = nodes.concat({dUpdate, dReset, dCandidate}, 1);
    gradHidden = add(mul(gradHidden, update), carried);
  }

  // The weights' gradients sum over steps and batch: one GEMM each over the
  // stacked steps.
  // [n * batch, k] from n [batch, k] values, in the data type.
  auto stackSteps = [&](ArrayRef<Value> values) {
    SmallVector<Value> rows;
    for (Value value : values)
      rows.push_back(nodes.castTo(value, dataType));
    return nodes.concat(rows, 0);
  };
  // Σ deltasᵀ · inputs: [k, n].
  auto weightGradient = [&](Value deltas, Value inputs) {
    return nodes.castTo(nodes.matmul(nodes.transpose(deltas, {1, 0}), inputs),
                        f);
  };
  SmallVector<Value> results(node.getNumResults());
  Value stackedDeltas = stackSteps(inputDeltas);
  results[0] = nodes.matmul(nodes.reshape(stackedDeltas, {numSteps, -1, width},
                                          {numSteps, batch, width}),
                            weight);
  int64_t inputSize = cast<RankedTensorType>(input.getType()).getDimSize(2);
  int64_t rows =
      ShapedType::isDynamic(batch) ? ShapedType::kDynamic : numSteps * batch;
  Value inputRows = nodes.reshape(input, {-1, inputSize}, {rows, inputSize});
  results[1] = nodes.reshape(weightGradient(stackedDeltas, inputRows),
                             {1, width, inputSize}, {1, width, inputSize});
  Value recurrenceGrad;
  if (!recurrenceDeltas.empty()) {
    recurrenceGrad = weightGradient(stackSteps(recurrenceDeltas),
                                    stackSteps(recurrenceInputs));
    if (!candidateDeltas.empty())
      recurrenceGrad = nodes.concat(
          {recurrenceGrad, weightGradient(stackSteps(candidateDeltas),
                                          stackSteps(candidateInputs))},
          0);
  } else {
    // One step without an initial state: R multiplied nothing.
    recurrenceGrad = nodes.createSplat(f, 0, getType({width, hiddenSize}, f));
  }
  results[2] = nodes.reshape(recurrenceGrad, {1, width, hiddenSize},
                             {1, width, hiddenSize});
  auto sumRows = [&](Value value) {
    int64_t k = cast<RankedTensorType>(value.getType()).getDimSize(1);
    return nodes.reduceSum(nodes.castTo(value, f), {0}, /*keepDims=*/false,
                           getType({k}, f));
  };
  if (results.size() > 3) {
    // Wb and Rb add up in every gate but GRU's h with linear_before_reset.
    Value inputBias = sumRows(stackedDeltas);
    Value recurrenceBias =
        recurrenceBiasSum ? sumRows(recurrenceBiasSum) : inputBias;
    results[3] = nodes.reshape(nodes.concat({inputBias, recurrenceBias}, 0),
                               {1, 2 * width}, {1, 2 * width});
  }
  auto asState = [&](Value value) {
    return nodes.reshape(value, {1, -1, hiddenSize}, {1, batch, hiddenSize});
  };
  if (results.size() > 4)
    results[4] = asState(gradHidden);
  if (lstm && results.size() > 5)
    results[5] = asState(gradCell ? gradCell : zeroState());
  if (lstm && results.size() > 6) {
    SmallVector<Value> parts;
    for (Value sum : peepholeSums)
      parts.push_back(sum ? sumRows(sum)
                          : nodes.createSplat(f, 0, getType({hiddenSize}, f)));
    results[6] = nodes.reshape(nodes.concat(parts, 0), {1, 3 * hiddenSize},
                               {1, 3 * hiddenSize});
  }
  for (auto [i, result] : llvm::enumerate(node.getResults()))
    if (!result.use_empty() && results[i])
      result.replaceAllUsesWith(asResult(i, results[i]));
  return success();
}

namespace {
struct ExpandRecurrentPass
    : onnxg::impl::ONNXGraphExpandRecurrentBase<ExpandRecurrentPass> {
  void runOnOperation() override {
    if (failed(expandNodes(
            getOperation(),
            [](NodeOp node) {
              return !RecurrentExpansion::getKind(node).empty();
            },
            [](NodeOp node, OpBuilder &builder) {
              return RecurrentExpansion(node, builder).run();
            })))
      signalPassFailure();
  }
};
} // namespace
