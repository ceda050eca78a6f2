//===- StepInterface.cpp - A step's inputs and outputs --------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/StepDriver/StepInterface.h"

#include "amp/StepDriver/StepGraph.h"

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Dialect/AMP/Transforms/TrainingDataflow.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/StepDriver/HostTensor.h"

#include "amp/Pipelines/Pipelines.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace amprun;

int64_t amprun::findIndexBound(Value value, unsigned depth) {
  if (depth > 8)
    return 0;
  int64_t bound = 0;
  auto merge = [&](int64_t size) {
    if (size > 0 && !ShapedType::isDynamic(size))
      bound = bound ? std::min(bound, size) : size;
  };
  for (OpOperand &use : value.getUses()) {
    auto node = dyn_cast<onnxg::NodeOp>(use.getOwner());
    if (!node)
      continue;
    StringRef type = node.getOpType();
    unsigned operand = use.getOperandNumber();
    auto dimOf = [&](unsigned i, int64_t axis) -> int64_t {
      auto shaped = dyn_cast<RankedTensorType>(node.getOperand(i).getType());
      if (!shaped)
        return 0;
      if (axis < 0)
        axis += shaped.getRank();
      return axis >= 0 && axis < shaped.getRank() ? shaped.getDimSize(axis) : 0;
    };
    int64_t axis = 0;
    if (auto attr = dyn_cast_or_null<IntegerAttr>(
            node.getOnnxAttrsOrEmpty().get("axis")))
      axis = attr.getInt();
    if (operand == 1 && (type == "Gather" || type == "GatherElements" ||
                         type == "ScatterElements" || type == "Scatter"))
      merge(dimOf(0, axis));
    else if (operand == 1 && (type.contains("SoftmaxCrossEntropyLoss") ||
                              type == "NegativeLogLikelihoodLoss"))
      merge(dimOf(0, 1));
    else if ((operand == 0 &&
              llvm::is_contained({"Reshape", "Unsqueeze", "Squeeze", "Flatten",
                                  "Identity", "Cast", "Expand"},
                                 type)) ||
             // The index where it is valid, else a constant (our exporter's
             // cross-entropy masks ignore_index so).
             ((operand == 1 || operand == 2) && type == "Where"))
      merge(findIndexBound(node.getResult(0), depth + 1));
  }
  return bound;
}

static std::string getName(Value value, unsigned position, bool isInput) {
  std::string name = onnxg::getValueName(value).str();
  if (name.empty())
    name = (isInput ? "input" : "output") + std::to_string(position);
  return name;
}

void amprun::describeStep(func::FuncOp func, ArrayRef<int64_t> bounds,
                          const llvm::StringSet<> &stepCounts,
                          const llvm::StringSet<> &buffers,
                          ArrayRef<std::string> carryPairs,
                          bool restartAccumulators,
                          std::vector<StepInput> &inputs,
                          std::vector<StepOutput> &outputs, std::string &loss) {
  Block &body = func.getBody().front();
  llvm::StringMap<int> inputByName;
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    StepInput input;
    input.name = getName(arg, arg.getArgNumber(), true);
    if (!type || !type.hasStaticShape())
      fail("input '" + input.name + "' has type " +
           printToString(arg.getType()) + ": " + Twine(toolName) +
           " needs static shapes");
    input.type = type;
    input.initializer = func.getArgAttrOfType<ElementsAttr>(
        arg.getArgNumber(), onnxg::ONNXGraphDialect::kInitializerAttrName);
    if (isa<IntegerType>(type.getElementType()) && !input.initializer)
      input.bound = bounds[arg.getArgNumber()];
    input.isStepCount = stepCounts.contains(input.name);
    input.isState = buffers.contains(input.name);
    inputByName[input.name] = inputs.size();
    inputs.push_back(input);
  }
  llvm::StringMap<std::string> previousOf;
  auto training = func->getAttrOfType<DictionaryAttr>(amp::kTrainingAttrName);
  if (training) {
    if (auto name = training.getAs<StringAttr>("loss"))
      loss = name.str();
    for (StringRef key : {"updates", "buffers"})
      if (auto updates = training.getAs<ArrayAttr>(key))
        for (auto pair : updates.getAsRange<ArrayAttr>())
          if (pair.size() == 2)
            previousOf[cast<StringAttr>(pair[0]).getValue()] =
                cast<StringAttr>(pair[1]).str();
  }
  // --carry <output>:<input>.
  llvm::StringSet<> outputNames;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (auto name = func.getResultAttrOfType<StringAttr>(
            i, onnxg::ONNXGraphDialect::kNameAttrName))
      outputNames.insert(name.getValue());
  for (StringRef spec : carryPairs) {
    auto splits =
        amp::getNamePairSplits(spec, [&](StringRef output, StringRef input) {
          return outputNames.contains(output) && inputByName.count(input);
        });
    if (splits.size() != 1)
      fail("--carry " + spec.str() + ": " +
           (splits.empty() ? "expected <output>:<input> naming an output and "
                             "an input"
                           : "several splits name an output and an input; "
                             "rename them"));
    previousOf[splits.front().first] = splits.front().second.str();
  }
  if (training) {
    if (auto seeds = training.getAs<ArrayAttr>("seeds"))
      for (StringRef name : seeds.getAsValueRange<StringAttr>())
        if (auto it = inputByName.find(name); it != inputByName.end())
          inputs[it->second].isSeed = true;
    auto parameters = training.getAs<ArrayAttr>("parameters");
    auto gradients = training.getAs<ArrayAttr>("gradients");
    for (auto [i, name] :
         llvm::enumerate(parameters.getAsValueRange<StringAttr>())) {
      auto it = inputByName.find(name);
      if (it == inputByName.end())
        continue;
      inputs[it->second].isParameter = true;
      if (gradients && i < gradients.size())
        inputs[it->second].gradient =
            cast<StringAttr>(gradients[i]).getValue().str();
    }
  }
  auto terminator = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, value] : llvm::enumerate(terminator.getOperands())) {
    StepOutput output;
    auto nameAttr = func.getResultAttrOfType<StringAttr>(
        i, onnxg::ONNXGraphDialect::kNameAttrName);
    output.name = nameAttr ? nameAttr.str() : getName(value, i, false);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape())
      fail("output '" + output.name + "' has type " +
           printToString(value.getType()) + ": " + Twine(toolName) +
           " needs static shapes");
    output.type = type;
    // `X.updated` feeds `X`, as do the analysis's [updated, previous] pairs.
    std::string previous = previousOf.lookup(output.name);
    StringRef name = output.name;
    if (StringRef stem = name;
        previous.empty() && stem.consume_back(".updated"))
      previous = stem.str();
    // ONNX Runtime's gradient accumulators: X.accumulation.out -> .buffer,
    // unless an optimizer consumes them each step (the buffers stay zero).
    if (StringRef stem = name;
        previous.empty() && stem.consume_back(".accumulation.out"))
      previous =
          restartAccumulators ? "" : (stem + ".accumulation.buffer").str();
    auto it = inputByName.find(previous);
    if (it != inputByName.end() && inputs[it->second].type != type &&
        llvm::is_contained(carryPairs, output.name + ":" + previous))
      fail("--carry " + output.name + ":" + previous +
           ": the output has type " + printToString(type) + ", the input " +
           printToString(inputs[it->second].type));
    if (it != inputByName.end() && inputs[it->second].type == type) {
      output.carriedTo = it->second;
      inputs[it->second].isState = true;
    }
    outputs.push_back(output);
  }
}

/// Returns the values that the lowering typed statically behind a
/// tensor.cast to a graph output type ONNX could not infer (shapes computed
/// by folded shape arithmetic, as nn.Unfold's backward computes them), and
/// gives the function their static types.
static void refineResultTypes(func::FuncOp func) {
  auto terminator =
      cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Type> results;
  for (OpOperand &operand : terminator->getOpOperands()) {
    Value value = operand.get();
    while (auto castOp = value.getDefiningOp<tensor::CastOp>())
      value = castOp.getSource();
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (type && type.hasStaticShape())
      operand.set(value);
    results.push_back(operand.get().getType());
  }
  func.setType(
      FunctionType::get(func.getContext(), func.getArgumentTypes(), results));
}

/// For a step that runs on the GPU: says how many GEMMs and convolutions
/// stay FP32 only because their ONNX schemas at the step's opset lack the
/// low type (a BF16 Conv before opset 22), which onnx-types=false lifts: a
/// step that is lowered is never written as ONNX.
static void noteSchemaBoundAlwaysOps(ModuleOp module) {
  unsigned count = 0;
  Operation *first = nullptr;
  module.walk([&](amp::PrecisionOpInterface op) {
    auto reason = op->getAttrOfType<StringAttr>(amp::kReasonAttrName);
    if (!reason || reason.getValue() != "unsupported-type" ||
        op.getPrecisionClass() != amp::PrecisionClass::Always)
      return;
    if (!count++)
      first = op;
  });
  if (!count)
    return;
  llvm::errs() << toolName << ": note: " << count
               << " GEMM or convolution ops stay f32 only because their ONNX "
                  "schemas at the step's opset do not allow the low type "
                  "(the first: "
               << amp::PrecisionPolicy::describe(first)
               << "); --amp-pipeline=\"... onnx-types=false\" lets them "
                  "take it\n";
}

func::FuncOp
amprun::prepareStep(ModuleOp module, StringRef path,
                    std::optional<StringRef> ampPipeline, StringRef lossName,
                    ArrayRef<std::string> carryPairs, bool restartAccumulators,
                    bool onDevice, std::vector<StepInput> &inputs,
                    std::vector<StepOutput> &outputs, std::string &loss) {
  PassManager prepare(module.getContext());
  std::string pipeline =
      ampPipeline ? ("amp-pipeline{" + *ampPipeline + "}").str()
                  : ("amp-analyze-training{loss=" + lossName + "}").str();
  if (failed(parsePassPipeline(pipeline, prepare, llvm::errs())))
    fail("bad --amp-pipeline options: " + ampPipeline.value_or(""));
  if (failed(prepare.run(module)))
    fail("converting " + path + " failed");
  if (onDevice)
    noteSchemaBoundAlwaysOps(module);
  func::FuncOp func = getGraph(module, path);
  exposeHiddenState(func);
  llvm::StringSet<> stepCounts = findStepCounts(func);
  llvm::StringSet<> buffers = findAccumulatorBuffers(func);
  SmallVector<int64_t> bounds;
  for (BlockArgument arg : func.getArguments())
    bounds.push_back(findIndexBound(arg));
  PassManager convert(module.getContext());
  amp::addGraphToLinalgPasses(convert, /*hostBranches=*/!onDevice);
  if (failed(convert.run(module)))
    fail("lowering " + path + " to linalg failed");
  refineResultTypes(func);
  loss = lossName.str();
  describeStep(func, bounds, stepCounts, buffers, carryPairs,
               restartAccumulators, inputs, outputs, loss);
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttrs(i, ArrayRef<NamedAttribute>());
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.setResultAttrs(i, ArrayRef<NamedAttribute>());
  return func;
}
