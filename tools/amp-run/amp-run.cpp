//===- amp-run.cpp - Run training steps on the CPU --------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-run IN [--steps N] [--amp-pipeline="..."] [--seed S]: imports a
// training step, optionally converts it to mixed precision, lowers it with
// --amp-lower-to-cpu, JIT-compiles it (MLIR ExecutionEngine) and runs it N
// times, carrying parameters, optimizer state and loss-scaling state from
// each step into the next. Prints one JSON object per step
// (docs/AmpRun.md).
//
//===----------------------------------------------------------------------===//

#include "HostTensor.h"
#include "StepGraph.h"

#include "amp/Conversion/Passes.h"
#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/TrainingDataflow.h"
#include "amp/InitAll.h"
#include "amp/Runtime/CPURuntime.h"
#include "amp/Runtime/GemmRecord.h"
#include "amp/Target/ONNX/Import.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"

#include <onnx/onnx_pb.h>

#include <chrono>
#include <cmath>
#include <optional>

using namespace mlir;
using namespace amprun;
namespace cl = llvm::cl;

static cl::OptionCategory category("amp-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|model.mlir>"),
                                      cl::cat(category));
static cl::opt<unsigned> numSteps("steps", cl::init(10),
                                  cl::desc("training steps to run"),
                                  cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::init(0),
                              cl::desc("seed of the generated inputs, "
                                       "parameters and dropout masks"),
                              cl::cat(category));
static cl::opt<std::string>
    ampPipeline("amp-pipeline", cl::ValueOptional,
                cl::desc("convert to mixed precision first, with "
                         "--amp-pipeline's options (docs/Pipeline.md)"),
                cl::cat(category));
static cl::opt<std::string> device("device", cl::init("cpu"),
                                   cl::desc("cpu (cuda is not available yet)"),
                                   cl::cat(category));
static cl::opt<bool> gemmRecords(
    "gemm-records", cl::init(false),
    cl::desc("run the GEMMs through the CUDA backend's cuBLASLt-style "
             "records (amp-contractions-to-gemm-records), executed on the "
             "CPU, to check them against the BLAS path"),
    cl::cat(category));
static cl::opt<bool> gridLoops(
    "grid-loops", cl::init(false),
    cl::desc("run the CUDA backend's kernels on the CPU: the IR of "
             "--amp-lower-to-cuda up to its block and thread loops "
             "(amp-linalg-to-grid-loops), run sequentially, with every "
             "GEMM that has a record through it"),
    cl::cat(category));
static cl::opt<std::string>
    lossName("loss",
             cl::desc("name of the loss tensor, where the graph does "
                      "not record it"),
             cl::cat(category));
static cl::list<std::string>
    inputFiles("input",
               cl::desc("name=file.npy: the value of an input "
                        "(every step) instead of generated data"),
               cl::cat(category));
static cl::opt<std::string>
    saveOutputs("save-outputs",
                cl::desc("directory to write every output of the last step "
                         "to, as <name>.npy"),
                cl::cat(category));
static cl::opt<std::string>
    saveInputs("save-inputs",
               cl::desc("directory to write every input of the first step "
                        "to, as <name>.npy"),
               cl::cat(category));

static cl::opt<double> sgdLearningRate(
    "sgd-lr", cl::init(0.0),
    cl::desc("for graphs without an optimizer (ONNX Runtime training "
             "artifacts, gradient graphs): after each step, update every "
             "parameter by -lr times its gradient output"),
    cl::cat(category));
static cl::opt<std::string> optimizerFile(
    "optimizer",
    cl::desc("an ONNX Runtime optimizer graph to run after the training "
             "graph in each step (training API artifacts): its inputs read "
             "the step's values of the same names, its updated weights and "
             "state carry into the next step, and gradient accumulators "
             "restart each step"),
    cl::cat(category));
static cl::opt<std::string> paramsFile(
    "params",
    cl::desc("an .npz file (numpy.savez) of initial values by input name: "
             "parameters of artifacts that have none, or replacements"),
    cl::cat(category));
static cl::opt<double> learningRate(
    "learning-rate", cl::init(NAN),
    cl::desc("the value of a `learning_rate` input (optimizer graphs)"),
    cl::cat(category));
static cl::list<std::string>
    dimSizes("dim",
             cl::desc("name=N: the size of the symbolic input "
                      "dimension `name` (as ONNX dim_param)"),
             cl::cat(category));
static cl::list<std::string> carryPairs(
    "carry",
    cl::desc("<output>:<input>: the output feeds the input in the next "
             "step, where the analysis finds no such update"),
    cl::cat(category));
static cl::opt<std::string>
    dumpLowered("dump-lowered",
                cl::desc("write the LLVM-dialect module that is JIT-compiled "
                         "to this file"),
                cl::cat(category));

namespace {
/// A function argument: its ONNX name, type, and initial value or the range
/// of generated integer values.
struct StepInput {
  std::string name;
  RankedTensorType type;
  ElementsAttr initializer;
  /// Generated integers are drawn from [0, bound).
  int64_t bound = 0;
  /// A trained parameter; its gradient output's name, if any.
  bool isParameter = false;
  std::string gradient;
  /// An output carries into it (optimizer or accumulator state).
  bool isState = false;
  /// The update count of an ONNX Runtime optimizer, which starts at 1.
  bool isStepCount = false;
};

/// A function result and the input it feeds in the next step (-1: none).
struct StepOutput {
  std::string name;
  RankedTensorType type;
  int carriedTo = -1;
};
} // namespace

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Gives the symbolic dimensions of the model's inputs the sizes --dim
/// names and drops the inferred value_info, so that the importer's ONNX
/// shape inference propagates static shapes. Returns the new bytes.
static std::string specializeDims(llvm::StringRef bytes) {
  llvm::StringMap<int64_t> sizes;
  for (StringRef spec : dimSizes) {
    auto [name, text] = spec.split('=');
    int64_t size = 0;
    if (text.getAsInteger(10, size) || size < 1)
      fail("--dim expects name=N with N >= 1, got '" + spec + "'");
    sizes[name] = size;
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    fail(inputFile + " is not a valid ONNX model");
  std::vector<std::string> missing;
  for (onnx::ValueInfoProto &input : *model.mutable_graph()->mutable_input()) {
    if (!input.type().has_tensor_type())
      continue;
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int i = 0; i < shape->dim_size(); ++i) {
      onnx::TensorShapeProto_Dimension *dim = shape->mutable_dim(i);
      if (dim->has_dim_value())
        continue;
      auto it = sizes.find(dim->dim_param());
      if (it == sizes.end()) {
        missing.push_back(
            "'" + input.name() + "' dimension " + std::to_string(i) +
            (dim->dim_param().empty() ? std::string(" (unnamed)")
                                      : " ('" + dim->dim_param() + "')"));
        continue;
      }
      dim->set_dim_value(it->second);
    }
  }
  if (!missing.empty())
    fail("amp-run needs static shapes; give the size of input " +
         llvm::join(missing, ", ") + " with --dim name=N");
  model.mutable_graph()->clear_value_info();
  for (onnx::ValueInfoProto &output :
       *model.mutable_graph()->mutable_output()) {
    if (!output.type().has_tensor_type())
      continue;
    auto *shape = output.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (onnx::TensorShapeProto_Dimension &dim : *shape->mutable_dim()) {
      auto it = sizes.find(dim.dim_param());
      if (!dim.has_dim_value() && it != sizes.end())
        dim.set_dim_value(it->second);
    }
  }
  std::string result;
  model.SerializeToString(&result);
  return result;
}

/// Follows an integer input through reshapes to the ops that index with it;
/// returns the smallest size it indexes (0 when none is found).
static int64_t findIndexBound(Value value, unsigned depth = 0) {
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
                         type == "ScatterElements"))
      merge(dimOf(0, axis));
    else if (operand == 1 && (type.contains("SoftmaxCrossEntropyLoss") ||
                              type == "NegativeLogLikelihoodLoss"))
      merge(dimOf(0, 1));
    else if (operand == 0 &&
             llvm::is_contained({"Reshape", "Unsqueeze", "Squeeze", "Flatten",
                                 "Identity", "Cast", "Expand"},
                                type))
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

/// Reads the step's inputs and outputs (after convert-onnxg-to-linalg,
/// which types what ONNX could not) and decides which output carries into
/// which input. `bounds` are the index ranges of the integer inputs.
static void describeStep(func::FuncOp func, ArrayRef<int64_t> bounds,
                         const llvm::StringSet<> &stepCounts,
                         const llvm::StringSet<> &buffers,
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
           printToString(arg.getType()) + ": amp-run needs static shapes");
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
           printToString(value.getType()) + ": amp-run needs static shapes");
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

/// Fills an input without a value: parameters from U(-1/sqrt(fan_in),
/// 1/sqrt(fan_in)) (PyTorch's default), state with zeros, booleans with
/// true, integers from [0, bound) and other floats from N(0, 1).
static void generate(HostTensor &tensor, const StepInput &input,
                     std::mt19937_64 &random) {
  Type element = input.type.getElementType();
  if (isa<FloatType>(element) && input.isParameter) {
    ArrayRef<int64_t> shape = input.type.getShape();
    int64_t fanIn = 1;
    for (int64_t size : shape.size() > 1 ? shape.drop_front() : shape)
      fanIn *= size;
    double bound = 1.0 / std::sqrt(double(std::max<int64_t>(1, fanIn)));
    std::uniform_real_distribution<double> uniform(-bound, bound);
    for (int64_t i = 0; i < tensor.getNumElements(); ++i)
      tensor.set(i, uniform(random));
    return;
  }
  if (input.isStepCount) {
    for (int64_t i = 0; i < tensor.getNumElements(); ++i)
      tensor.set(i, 1);
    return;
  }
  if (input.isState)
    return; // zeros
  if (element.isInteger(1)) {
    for (int64_t i = 0; i < tensor.getNumElements(); ++i)
      tensor.set(i, 1);
    return;
  }
  if (isa<FloatType>(element)) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int64_t i = 0; i < tensor.getNumElements(); ++i)
      tensor.set(i, normal(random));
    return;
  }
  int64_t bound = std::max<int64_t>(1, input.bound);
  std::uniform_int_distribution<int64_t> uniform(0, bound - 1);
  for (int64_t i = 0; i < tensor.getNumElements(); ++i)
    tensor.set(i, uniform(random));
}

/// `dir/<name>.npy`, with path separators in the name replaced.
static SmallString<128> getNpyPath(StringRef dir, StringRef name) {
  std::string file = name.str();
  std::replace(file.begin(), file.end(), '/', '_');
  SmallString<128> path(dir);
  llvm::sys::path::append(path, file + ".npy");
  return path;
}

/// Writes each tensor as DIR/<name>.npy, named after the matching entry
/// of `described` (StepInput or StepOutput).
template <typename Described>
static void saveAll(StringRef dir, const std::vector<Described> &described,
                    const std::vector<HostTensor> &tensors) {
  llvm::sys::fs::create_directories(dir);
  for (auto [entry, tensor] : llvm::zip_equal(described, tensors))
    if (llvm::Error error = tensor.writeNpy(getNpyPath(dir, entry.name)))
      fail(toString(std::move(error)));
}

static std::string formatNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.9g", value);
  return text;
}

/// Reads an ONNX model (with --dim applied) or an MLIR file.
static OwningOpRef<ModuleOp> importGraph(StringRef path, MLIRContext &context,
                                         llvm::SourceMgr &sourceMgr) {
  std::string errorMessage;
  auto input = openInputFile(path, &errorMessage);
  if (!input)
    fail(errorMessage);
  OwningOpRef<ModuleOp> module;
  if (onnxg::isOnnxInput(path, input->getBuffer())) {
    onnxg::ImportOptions options;
    std::string bytes = specializeDims(input->getBuffer());
    module = onnxg::importOnnxModel(bytes, path, &context, options);
  } else {
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    fail("cannot read " + path);
  return module;
}

/// The one graph of `module`.
static func::FuncOp getGraph(ModuleOp module, StringRef path) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1 || funcs[0].isExternal())
    fail(path + " must hold exactly one graph");
  return funcs[0];
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  amp::registerAllAMPPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "amp-run: run training steps of an ONNX graph on the CPU\n\n"
      "  amp-run IN [--steps N] [--amp-pipeline=\"...\"] [--seed S]\n"
      "Prints one JSON object per step: step, loss, loss_scale, skipped, "
      "time_ms.\n");
  if (device != "cpu")
    fail("--device=" + device + ": only the CPU is available yet");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  amp::registerAllAMPDialects(registry);
  amp::registerAllAMPExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Import, and append the optimizer graph.
  auto start = std::chrono::steady_clock::now();
  std::string errorMessage;
  OwningOpRef<ModuleOp> module = importGraph(inputFile, context, sourceMgr);
  if (!optimizerFile.empty()) {
    OwningOpRef<ModuleOp> optimizer =
        importGraph(optimizerFile, context, sourceMgr);
    appendOptimizer(getGraph(*module, inputFile),
                    getGraph(*optimizer, optimizerFile));
  }

  // Analyze, and convert to mixed precision when asked.
  PassManager prepare(&context);
  std::string pipeline = ampPipeline.getNumOccurrences()
                             ? "amp-pipeline{" + ampPipeline + "}"
                             : "amp-analyze-training{loss=" + lossName + "}";
  if (failed(parsePassPipeline(pipeline, prepare, llvm::errs())))
    fail("bad --amp-pipeline options: " + ampPipeline);
  if (failed(prepare.run(*module)))
    fail("converting " + inputFile + " failed");
  func::FuncOp func = getGraph(*module, inputFile);
  exposeHiddenState(func);
  llvm::StringSet<> stepCounts = findStepCounts(func);
  llvm::StringSet<> buffers = findAccumulatorBuffers(func);
  SmallVector<int64_t> bounds;
  for (BlockArgument arg : func.getArguments())
    bounds.push_back(findIndexBound(arg));
  PassManager convert(&context);
  amp::addGraphToLinalgPasses(convert);
  if (failed(convert.run(*module)))
    fail("lowering " + inputFile + " to linalg failed");
  std::vector<StepInput> inputs;
  std::vector<StepOutput> outputs;
  std::string loss = lossName;
  // An optimizer that runs every step (a graph, or host SGD) consumes the
  // accumulated gradients, so the accumulators restart.
  describeStep(func, bounds, stepCounts, buffers,
               /*restartAccumulators=*/!optimizerFile.empty() ||
                   sgdLearningRate != 0,
               inputs, outputs, loss);
  if (loss.empty())
    for (const StepOutput &output : outputs)
      if (output.type.getRank() == 0 &&
          isa<FloatType>(output.type.getElementType())) {
        loss = output.name;
        break;
      }

  // Lower to LLVM: the arguments' attributes hold the initial values, which
  // the host keeps.
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttrs(i, ArrayRef<NamedAttribute>());
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.setResultAttrs(i, ArrayRef<NamedAttribute>());
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  StringRef funcName = func.getSymName();
  std::string entry = ("_mlir_ciface_" + funcName).str();
  PassManager lower(&context);
  if (failed(gridLoops ? amp::buildGridLoopsOnCPUPipeline(lower)
                       : amp::buildCPULoweringPipeline(
                             lower, /*convertGraph=*/false, gemmRecords)))
    fail("cannot build the CPU pipeline");
  if (failed(lower.run(*module)))
    fail("lowering " + inputFile + " to the CPU failed");
  double lowerSeconds = secondsSince(start);
  if (gemmRecords || gridLoops) {
    // Say how many GEMMs the records took: the rest went through BLAS, or
    // into grid loops.
    unsigned records = 0, blas = 0;
    module->walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee)
        return;
      records += callee->starts_with(amp::runtime::kGemmEntryPrefix);
      blas += callee->starts_with(amp::runtime::kContractPrefix);
    });
    llvm::errs() << "amp-run: GEMM records: " << records << " of "
                 << records + blas << " GEMMs (the others "
                 << (gridLoops ? "in grid loops" : "through BLAS") << ")\n";
  }
  if (!dumpLowered.empty()) {
    auto output = openOutputFile(dumpLowered, &errorMessage);
    if (!output)
      fail(errorMessage);
    module->print(output->os());
    output->keep();
  }

  // JIT.
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  start = std::chrono::steady_clock::now();
  SmallVector<StringRef> libraries;
  std::string libDir = AMP_MLIR_LIB_DIR;
  std::string libs[] = {libDir + "/libmlir_c_runner_utils.so",
                        libDir + "/libmlir_float16_utils.so",
                        libDir + "/libmlir_apfloat_wrappers.so",
                        AMP_CPU_RUNTIME_LIB};
  for (const std::string &lib : libs)
    libraries.push_back(lib);
  ExecutionEngineOptions options;
  auto transformer = makeOptimizingTransformer(/*optLevel=*/2, 0, nullptr);
  options.transformer = transformer;
  options.sharedLibPaths = libraries;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine)
    fail("JIT compilation failed: " + llvm::toString(engine.takeError()));
  // Compile now rather than in the first step, so that its time is the
  // step's own.
  if (auto function = (*engine)->lookupPacked(entry); !function)
    fail("JIT compilation failed: " + llvm::toString(function.takeError()));
  double jitSeconds = secondsSince(start);
  llvm::errs() << "amp-run: " << inputFile << ": import+lower "
               << llvm::format("%.2f", lowerSeconds) << " s, JIT "
               << llvm::format("%.2f", jitSeconds) << " s\n";

  // Host tensors: initial values, files, or generated data.
  std::mt19937_64 random(seed);
  llvm::StringMap<std::string> files;
  for (StringRef spec : inputFiles) {
    auto [name, path] = spec.split('=');
    if (path.empty())
      fail("--input expects name=file.npy, got '" + spec + "'");
    files[name] = path.str();
  }
  llvm::StringMap<std::string> params;
  if (!paramsFile.empty()) {
    auto arrays = readNpz(paramsFile);
    if (!arrays)
      fail("--params " + toString(arrays.takeError()));
    for (auto &[name, contents] : *arrays)
      params[name] = std::move(contents);
  }
  std::vector<HostTensor> inputTensors, outputTensors;
  for (const StepInput &stepInput : inputs) {
    inputTensors.emplace_back(stepInput.type);
    HostTensor &tensor = inputTensors.back();
    auto file = files.find(stepInput.name);
    auto param = params.find(stepInput.name);
    if (file != files.end()) {
      if (llvm::Error error = tensor.readNpy(file->second))
        fail("--input " + stepInput.name + ": " + toString(std::move(error)));
      files.erase(file);
    } else if (param != params.end()) {
      if (llvm::Error error =
              tensor.parseNpy(param->second, paramsFile + ":" + stepInput.name))
        fail("--params " + toString(std::move(error)));
      params.erase(param);
    } else if (stepInput.initializer) {
      if (llvm::Error error = tensor.assign(stepInput.initializer))
        fail(stepInput.name + ": " + toString(std::move(error)));
    } else if (stepInput.name == amp::kRandomKeyName) {
      // (seed, step counter); the counter is set before each step.
      tensor.set(0, double(seed));
    } else if (stepInput.name == "learning_rate") {
      if (std::isnan(learningRate))
        fail("the graph reads a learning rate: give it with --learning-rate");
      for (int64_t i = 0; i < tensor.getNumElements(); ++i)
        tensor.set(i, learningRate);
    } else {
      generate(tensor, stepInput, random);
    }
  }
  for (auto &file : files)
    fail("--input names '" + file.first() + "', which is not an input");
  for (auto &param : params)
    fail("--params " + paramsFile + " holds '" + param.first() +
         "', which is not an input");
  for (const StepOutput &output : outputs)
    outputTensors.emplace_back(output.type);
  if (!saveInputs.empty())
    saveAll(saveInputs, inputs, inputTensors);

  auto findOutput = [&](StringRef name) -> int {
    for (auto [i, output] : llvm::enumerate(outputs))
      if (output.name == name)
        return i;
    return -1;
  };
  int lossOutput = findOutput(loss);
  int finiteOutput = findOutput("amp.grads_finite");
  int scaleOutput = findOutput("amp.loss_scale.updated");
  int scaleInput = -1, randomKeyInput = -1;
  for (auto [i, stepInput] : llvm::enumerate(inputs)) {
    if (stepInput.name == "amp.loss_scale")
      scaleInput = i;
    if (stepInput.name == amp::kRandomKeyName)
      randomKeyInput = i;
  }
  // Host SGD: each parameter and the output holding its gradient.
  SmallVector<std::pair<int, int>> sgdUpdates;
  if (sgdLearningRate != 0) {
    for (auto [i, stepInput] : llvm::enumerate(inputs)) {
      if (!stepInput.isParameter || stepInput.isState)
        continue;
      // The accumulated gradient (in-place buffer, ORT's v1 accumulator
      // output) or the gradient itself.
      int gradient = -1;
      for (std::string name :
           {stepInput.gradient + ".accumulation.buffer.updated",
            stepInput.gradient + ".accumulation.out", stepInput.gradient}) {
        int candidate = findOutput(name);
        if (candidate >= 0 && outputs[candidate].type == stepInput.type) {
          gradient = candidate;
          break;
        }
      }
      if (gradient >= 0)
        sgdUpdates.push_back({int(i), gradient});
    }
    if (sgdUpdates.empty())
      fail("--sgd-lr: no parameter has a gradient output (or the graph "
           "updates its parameters itself)");
  }
  if (lossOutput < 0)
    llvm::errs() << "amp-run: warning: no loss output found; \"loss\" is "
                    "null (name it with --loss)\n";
  // Every step would repeat the first: say so once.
  bool trains =
      !sgdUpdates.empty() ||
      llvm::any_of(outputs, [&](const StepOutput &output) {
        return output.carriedTo >= 0 &&
               !StringRef(inputs[output.carriedTo].name).starts_with("amp.");
      });
  if (!trains && numSteps > 1)
    llvm::errs() << "amp-run: warning: " << inputFile
                 << ": no output updates an input, so every step repeats "
                    "the first; name the updates with --carry "
                    "<output>:<input> (or --amp-pipeline=\"updates=...\"), "
                    "or train with --sgd-lr or --optimizer\n";

  // Steps. The buffers stay in place, so their descriptors are built once.
  SmallVector<void *> descriptors;
  for (HostTensor &tensor : inputTensors)
    descriptors.push_back(tensor.getDescriptor());
  for (HostTensor &tensor : outputTensors)
    descriptors.push_back(tensor.getDescriptor());
  SmallVector<void *> arguments;
  for (void *&descriptor : descriptors)
    arguments.push_back(&descriptor);
  for (unsigned step = 1; step <= numSteps; ++step) {
    double scale = scaleInput >= 0 ? inputTensors[scaleInput].get(0) : 1.0;
    // New dropout masks at each step.
    if (randomKeyInput >= 0)
      inputTensors[randomKeyInput].set(1, step - 1);
    start = std::chrono::steady_clock::now();
    if (llvm::Error error = (*engine)->invokePacked(entry, arguments))
      fail("running step " + std::to_string(step) + ": " +
           toString(std::move(error)));
    double milliseconds = secondsSince(start) * 1000;
    // An overflow: the graph says so, or the scale backs off.
    bool skipped =
        (finiteOutput >= 0 && outputTensors[finiteOutput].get(0) == 0) ||
        (scaleOutput >= 0 && outputTensors[scaleOutput].get(0) < scale);
    double lossValue = lossOutput >= 0 ? outputTensors[lossOutput].get(0) : NAN;
    llvm::outs() << "{\"step\": " << step
                 << ", \"loss\": " << formatNumber(lossValue)
                 << ", \"loss_scale\": " << formatNumber(scale)
                 << ", \"skipped\": " << (skipped ? "true" : "false")
                 << ", \"time_ms\": " << llvm::format("%.3f", milliseconds)
                 << "}\n";
    llvm::outs().flush();
    for (auto [parameter, gradient] : sgdUpdates) {
      HostTensor &values = inputTensors[parameter];
      const HostTensor &slope = outputTensors[gradient];
      for (int64_t i = 0; i < values.getNumElements(); ++i)
        values.set(i, values.get(i) - sgdLearningRate * slope.get(i));
    }
    for (auto [output, tensor] : llvm::zip(outputs, outputTensors))
      if (output.carriedTo >= 0)
        if (llvm::Error error = inputTensors[output.carriedTo].assign(tensor))
          fail(toString(std::move(error)));
  }

  if (!saveOutputs.empty())
    saveAll(saveOutputs, outputs, outputTensors);
  return 0;
}
