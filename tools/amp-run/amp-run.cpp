//===- amp-run.cpp - Run training steps on the CPU --------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-run IN [--steps N] [--amp-pipeline="..."] [--seed S]: imports a
// training step, optionally converts it to mixed precision, lowers it with
// --amp-lower-to-cpu, JIT-compiles it (StepJIT) and runs it N
// times, carrying parameters, optimizer state and loss-scaling state from
// each step into the next. Prints one JSON object per step
// (docs/AmpRun.md).
//
//===----------------------------------------------------------------------===//

#include "amp/StepDriver/HostTensor.h"
#include "amp/StepDriver/StepGraph.h"
#include "amp/StepDriver/StepInterface.h"
#include "amp/StepDriver/StepJIT.h"

#include "amp/Conversion/Passes.h"
#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/TrainingDataflow.h"
#include "amp/InitAll.h"
#include "amp/Runtime/CPURuntime.h"
#include "amp/Runtime/CUDARuntime.h"
#include "amp/Runtime/ConvRecord.h"
#include "amp/Runtime/GemmRecord.h"
#include "amp/Target/ONNX/Import.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"

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
static cl::opt<std::string>
    device("device", cl::init("cpu"),
           cl::desc("cpu, or cuda: the step lowered with --amp-lower-to-cuda "
                    "and run on the GPU through libamp_cuda_runtime"),
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
static cl::opt<bool> reverseGridLoops(
    "reverse-grid-loops", cl::init(false),
    cl::desc("with --grid-loops, run every block and thread loop last to "
             "first (amp-reverse-parallel-loops): a kernel whose threads "
             "depend on one another, a race on a GPU, then gives other "
             "results than in order"),
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
static cl::opt<unsigned>
    jitThreads("jit-threads", cl::init(0),
               cl::desc("threads that compile the step's parts (0: one per "
                        "core)"),
               cl::cat(category));
static cl::opt<std::string> jitCache(
    "jit-cache",
    cl::desc("directory of compiled parts of steps, reused when a part's "
             "LLVM IR recurs ('none': no cache; default $AMP_JIT_CACHE, "
             "else amp-opt/jit under $XDG_CACHE_HOME or ~/.cache)"),
    cl::cat(category));

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Whether generate() draws the input from N(0, 1): data, not parameters
/// or state.
static bool isDrawnFromNormal(const StepInput &input) {
  return isa<FloatType>(input.type.getElementType()) && !input.isParameter &&
         !input.isStepCount && !input.isState && !input.isSeed;
}

/// Fills an input without a value: parameters from U(-1/sqrt(fan_in),
/// 1/sqrt(fan_in)) (PyTorch's default), state with zeros, step counts,
/// backward seeds and booleans with ones, integers from [0, bound) and
/// other floats from N(0, 1).
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
  if (input.isStepCount || input.isSeed) {
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
  if (isDrawnFromNormal(input)) {
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

namespace {
/// libamp_cuda_runtime, as amp-run calls it around the JIT-compiled step,
/// which calls it too (the same library, loaded once).
struct CUDARuntime {
  int (*begin)(const char *, const void *const *, int64_t, const void *const *,
               int64_t);
  int (*end)();
  const char *(*lastError)();
  const char *(*graphReport)(const char *);
  void *(*allocate)(uint64_t, void *, bool);
  std::string step;

  /// Loads the runtime and checks that it reaches a GPU; exits with its
  /// message when not.
  static CUDARuntime load(StringRef step) {
    std::string path = AMP_CUDA_RUNTIME_LIB, error;
    if (path.empty())
      fail("--device=cuda: amp-run was built without the CUDA toolkit");
    auto library =
        llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &error);
    if (!library.isValid())
      fail("--device=cuda: " + error);
    auto lookup = [&](const char *name) {
      void *address = library.getAddressOfSymbol(name);
      if (!address)
        fail("--device=cuda: " + path + " has no " + name);
      return address;
    };
    CUDARuntime runtime{
        reinterpret_cast<int (*)(const char *, const void *const *, int64_t,
                                 const void *const *, int64_t)>(
            lookup(amp::runtime::kCUDAStepBegin)),
        reinterpret_cast<int (*)()>(lookup(amp::runtime::kCUDAStepEnd)),
        reinterpret_cast<const char *(*)()>(
            lookup(amp::runtime::kCUDALastError)),
        reinterpret_cast<const char *(*)(const char *)>(
            lookup(amp::runtime::kCUDAGraphReport)),
        reinterpret_cast<void *(*)(uint64_t, void *, bool)>(
            lookup("mgpuMemAlloc")),
        step.str()};
    runtime.begin(runtime.step.c_str(), nullptr, 0, nullptr, 0);
    if (runtime.end())
      fail("--device=cuda: " + StringRef(runtime.lastError()));
    return runtime;
  }

  /// A buffer of `bytes` that the host and the GPU both reach.
  void *allocateShared(size_t bytes) {
    begin(step.c_str(), nullptr, 0, nullptr, 0);
    void *buffer = allocate(bytes, nullptr, true);
    if (end())
      fail("--device=cuda: " + StringRef(lastError()));
    return buffer;
  }
};
} // namespace

/// The functions of `module` that amp-outline-loop-nests made of loop
/// nests (the CPU pipeline's last loop pass).
static unsigned countOutlinedLoopNests(ModuleOp module) {
  unsigned outlined = 0;
  module.walk([&](LLVM::LLVMFuncOp function) {
    std::optional<ArrayAttr> passthrough = function.getPassthrough();
    outlined +=
        passthrough && !function.isExternal() &&
        llvm::is_contained(passthrough->getValue(),
                           StringAttr::get(module.getContext(), "noinline"));
  });
  return outlined;
}

/// Turns off the SelectionDAG's merging of consecutive stores, unless the
/// command line sets it: its search for candidates is quadratic in the
/// stores of a block, and took a third of a 3-D ResNet step's JIT (20 s ->
/// 12 s without it; the step ran as fast).
static void disableStoreMerging() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto found = options.find("combiner-store-merging");
  if (found == options.end() || found->second->getNumOccurrences())
    return;
  static_cast<llvm::cl::opt<bool> *>(found->second)->setValue(false);
}

/// The first option given on the command line that is not amp-run's own
/// (an LLVM or MLIR option), "" when none.
static std::string firstForeignOption() {
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (option->getNumOccurrences() &&
        !llvm::is_contained(option->Categories, &category))
      return name.str();
  return "";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  amp::registerAllAMPPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "amp-run: run training steps of an ONNX graph on the CPU or a GPU\n\n"
      "  amp-run IN [--steps N] [--device cpu|cuda] [--amp-pipeline=\"...\"] "
      "[--seed S]\n"
      "Prints one JSON object per step: step, loss, loss_scale, skipped, "
      "time_ms.\n");
  if (device != "cpu" && device != "cuda")
    fail("--device=" + device + ": expected cpu or cuda");
  if (reverseGridLoops && !gridLoops)
    fail("--reverse-grid-loops needs --grid-loops");
  std::optional<CUDARuntime> cuda;
  if (device == "cuda") {
    if (gridLoops || gemmRecords)
      fail("--grid-loops and --gemm-records run on the CPU, not with "
           "--device=cuda");
    cuda = CUDARuntime::load(inputFile);
  }

  DialectRegistry registry;
  amp::registerAllToolDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Import, and append the optimizer graph.
  auto start = std::chrono::steady_clock::now();
  std::string errorMessage;
  OwningOpRef<ModuleOp> module =
      importStep(inputFile, dimSizes, context, sourceMgr);
  if (!optimizerFile.empty()) {
    OwningOpRef<ModuleOp> optimizer =
        importStep(optimizerFile, dimSizes, context, sourceMgr);
    appendOptimizer(getGraph(*module, inputFile),
                    getGraph(*optimizer, optimizerFile));
  }

  // Analyze, convert to mixed precision when asked, and describe. An
  // optimizer that runs every step (a graph, or host SGD) consumes the
  // accumulated gradients, so the accumulators restart.
  std::vector<StepInput> inputs;
  std::vector<StepOutput> outputs;
  std::string loss;
  func::FuncOp func = prepareStep(
      *module, inputFile,
      ampPipeline.getNumOccurrences()
          ? std::optional<StringRef>(ampPipeline.getValue())
          : std::nullopt,
      lossName, carryPairs,
      /*restartAccumulators=*/!optimizerFile.empty() || sgdLearningRate != 0,
      /*onDevice=*/device == "cuda", inputs, outputs, loss);
  // Else the first 0-d float output that is not loss scaling's state.
  if (loss.empty())
    for (const StepOutput &output : outputs)
      if (output.type.getRank() == 0 &&
          isa<FloatType>(output.type.getElementType()) &&
          !StringRef(output.name).starts_with("amp.")) {
        loss = output.name;
        break;
      }

  // Lower to LLVM.
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  StringRef funcName = func.getSymName();
  std::string entry = ("_mlir_ciface_" + funcName).str();
  PassManager lower(&context);
  if (cuda) {
    if (failed(amp::buildCUDALoweringPipeline(lower, amp::CUDALoweringOptions(),
                                              /*convertGraph=*/false)))
      fail("cannot build the CUDA pipeline");
  } else if (failed(
                 gridLoops
                     ? amp::buildGridLoopsOnCPUPipeline(lower, reverseGridLoops)
                     : amp::buildCPULoweringPipeline(
                           lower, /*convertGraph=*/false, gemmRecords))) {
    fail("cannot build the CPU pipeline");
  }
  if (failed(lower.run(*module)))
    fail("lowering " + inputFile + " to the " + (cuda ? "GPU" : "CPU") +
         " failed");
  double lowerSeconds = secondsSince(start);
  if (gemmRecords || gridLoops) {
    // Say how many GEMMs the records took: the rest went through BLAS, or
    // into grid loops.
    unsigned records = 0, fp8Records = 0, blas = 0, convolutions = 0;
    module->walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee)
        return;
      records += callee->starts_with(amp::runtime::kGemmEntryPrefix);
      fp8Records += callee->starts_with(amp::runtime::kFP8GemmEntryPrefix);
      blas += callee->starts_with(amp::runtime::kContractPrefix);
      convolutions += callee->starts_with(amp::runtime::kConvEntryPrefix);
    });
    llvm::errs() << "amp-run: GEMM records: " << records << " of "
                 << records + blas << " GEMMs (the others "
                 << (gridLoops ? "in grid loops" : "through BLAS") << ")\n";
    if (fp8Records)
      llvm::errs() << "amp-run: FP8 GEMM records: " << fp8Records << "\n";
    if (gridLoops)
      llvm::errs() << "amp-run: convolution records: " << convolutions << "\n";
    if (reverseGridLoops)
      llvm::errs() << "amp-run: grid loops run last to first\n";
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
  std::string libDir = AMP_MLIR_LIB_DIR;
  StepJITOptions jitOptions;
  jitOptions.sharedLibraries = {libDir + "/libmlir_c_runner_utils.so",
                                libDir + "/libmlir_float16_utils.so",
                                libDir + "/libmlir_apfloat_wrappers.so",
                                AMP_CPU_RUNTIME_LIB};
  if (cuda)
    jitOptions.sharedLibraries.push_back(AMP_CUDA_RUNTIME_LIB);
  disableStoreMerging();
  jitOptions.threads = jitThreads;
  jitOptions.cacheDirectory = StepJIT::getCacheDirectory(
      jitCache.getNumOccurrences() ? std::optional<StringRef>(jitCache)
                                   : std::nullopt);
  // LLVM's options may change the code for the same IR, and its debugging
  // output wants one thread: neither the cache nor threads then.
  std::string foreignOption = firstForeignOption();
  if (!foreignOption.empty()) {
    jitOptions.threads = 1;
    jitOptions.cacheDirectory.clear();
  }
  unsigned outlined = countOutlinedLoopNests(*module);
  auto jit = StepJIT::create(*module, entry, jitOptions);
  if (!jit)
    fail("JIT compilation failed: " + llvm::toString(jit.takeError()));
  double jitSeconds = secondsSince(start);
  const StepJITSummary &summary = (*jit)->getSummary();
  if (!summary.cacheProblem.empty())
    llvm::errs() << "amp-run: warning: JIT cache: " << summary.cacheProblem
                 << "; compiled without it\n";
  llvm::errs() << "amp-run: " << inputFile << ": import+lower "
               << llvm::format("%.2f", lowerSeconds) << " s, JIT "
               << llvm::format("%.2f", jitSeconds) << " s (" << outlined
               << " loop nests compiled as functions; " << summary.parts
               << " parts, " << summary.cachedParts << " from the cache";
  if (summary.parts > summary.cachedParts)
    llvm::errs() << ", " << summary.threads
                 << (summary.threads == 1 ? " thread" : " threads");
  if (jitOptions.cacheDirectory.empty())
    llvm::errs() << "; no cache"
                 << (foreignOption.empty()
                         ? std::string()
                         : " or threads: --" + foreignOption + " given");
  llvm::errs() << ")\n";

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
  SmallVector<StringRef> normalInputs, seedInputs;
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
      if (isDrawnFromNormal(stepInput))
        normalInputs.push_back(stepInput.name);
      if (stepInput.isSeed)
        seedInputs.push_back(stepInput.name);
    }
  }
  // The gradients PyTorch would hand ORTModule's YieldOp: say what stands
  // in for them.
  if (!seedInputs.empty())
    llvm::errs() << "amp-run: the backward's seed inputs ("
                 << llvm::join(seedInputs, ", ")
                 << ") are ones: the gradient of the sum of what they "
                    "differentiate; give others with --input\n";
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
      // output, named after ORT's `<param>_grad` where amp-opt's conversion
      // made the accumulator read the unscaled gradient) or the gradient.
      int gradient = -1;
      std::string ortGradient = stepInput.name + "_grad";
      for (std::string name :
           {stepInput.gradient + ".accumulation.buffer.updated",
            stepInput.gradient + ".accumulation.out",
            ortGradient + ".accumulation.buffer.updated",
            ortGradient + ".accumulation.out", stepInput.gradient}) {
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
  // On the GPU, each tensor has a copy there: inputs go in before each
  // step, outputs come back after it.
  SmallVector<void *> descriptors, inputCopies, outputCopies;
  for (HostTensor &tensor : inputTensors) {
    inputCopies.push_back(cuda ? cuda->allocateShared(tensor.size()) : nullptr);
    descriptors.push_back(tensor.getDescriptor(inputCopies.back()));
  }
  for (HostTensor &tensor : outputTensors) {
    outputCopies.push_back(cuda ? cuda->allocateShared(tensor.size())
                                : nullptr);
    descriptors.push_back(tensor.getDescriptor(outputCopies.back()));
  }
  SmallVector<void *> arguments;
  for (void *&descriptor : descriptors)
    arguments.push_back(&descriptor);
  bool warnedAtMinimumScale = false, warnedNonFiniteLoss = false;
  constexpr size_t kMaxListedInputs = 3;
  for (unsigned step = 1; step <= numSteps; ++step) {
    double scale = scaleInput >= 0 ? inputTensors[scaleInput].get(0) : 1.0;
    // New dropout masks at each step.
    if (randomKeyInput >= 0)
      inputTensors[randomKeyInput].set(1, step - 1);
    start = std::chrono::steady_clock::now();
    if (cuda)
      for (auto [tensor, copy] : llvm::zip(inputTensors, inputCopies))
        std::memcpy(copy, tensor.data(), tensor.size());
    // On the GPU, the step runs again when its CUDA graph's capture failed.
    for (int status = amp::runtime::kCUDAStepAgain;
         status == amp::runtime::kCUDAStepAgain;) {
      bool run = !cuda ||
                 cuda->begin(inputFile.c_str(), inputCopies.data(),
                             inputCopies.size(), outputCopies.data(),
                             outputCopies.size()) == amp::runtime::kCUDAStepRun;
      if (run)
        (*jit)->invoke(arguments);
      status = cuda ? cuda->end() : 0;
      if (status == amp::runtime::kCUDAStepFailed)
        fail("running step " + std::to_string(step) + ": " + cuda->lastError());
    }
    if (cuda)
      for (auto [tensor, copy] : llvm::zip(outputTensors, outputCopies))
        std::memcpy(tensor.data(), copy, tensor.size());
    double milliseconds = secondsSince(start) * 1000;
    // An overflow: the graph says so, or the scale backs off.
    bool skipped =
        (finiteOutput >= 0 && outputTensors[finiteOutput].get(0) == 0) ||
        (scaleOutput >= 0 && outputTensors[scaleOutput].get(0) < scale);
    // Skipped with the scale where it was: at its minimum, so every later
    // step overflows too, unless the gradients shrink.
    if (skipped && scaleOutput >= 0 && !warnedAtMinimumScale &&
        outputTensors[scaleOutput].get(0) >= scale) {
      warnedAtMinimumScale = true;
      llvm::errs() << "amp-run: warning: step " << step
                   << " overflowed at the minimum loss scale ("
                   << formatNumber(scale)
                   << "): the gradients exceed the low precision's range at "
                      "every scale allowed, so the steps are skipped until "
                      "they shrink; lower min-scale, keep the overflowing "
                      "ops in FP32, or use precision=bf16\n";
    }
    double lossValue = lossOutput >= 0 ? outputTensors[lossOutput].get(0) : NAN;
    // A loss that is not finite where no overflow was handled: training
    // has stopped. Generated data a loss cannot take is the usual cause.
    if (lossOutput >= 0 && !std::isfinite(lossValue) && !skipped &&
        !warnedNonFiniteLoss) {
      warnedNonFiniteLoss = true;
      llvm::errs() << "amp-run: warning: step " << step << ": the loss is "
                   << (std::isnan(lossValue) ? "NaN" : "infinite");
      if (!normalInputs.empty()) {
        llvm::errs() << "; amp-run drew "
                     << llvm::join(
                            ArrayRef(normalInputs).take_front(kMaxListedInputs),
                            ", ");
        if (normalInputs.size() > kMaxListedInputs)
          llvm::errs() << " and " << normalInputs.size() - kMaxListedInputs
                       << " more";
        llvm::errs() << " from N(0, 1), which the loss may not accept "
                        "(probabilities, counts, positive targets): give "
                        "real values with --input";
      }
      llvm::errs() << "\n";
    }
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

  if (cuda && std::getenv("AMP_CUDA_GRAPH"))
    llvm::errs() << "amp-run: CUDA graph: "
                 << cuda->graphReport(inputFile.c_str()) << "\n";
  if (!saveOutputs.empty())
    saveAll(saveOutputs, outputs, outputTensors);
  return 0;
}
