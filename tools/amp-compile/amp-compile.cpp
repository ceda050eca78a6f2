//===- amp-compile.cpp - A training step as a CUDA library ------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-compile IN [--amp-pipeline="..."] -o step.so: reads a training step as
// amp-run does, converts it to mixed precision, lowers it with
// --amp-lower-to-cuda, adds the exported entry points, compiles the host
// code to an object and links it with the CUDA runtime into a shared library
// that needs only the CUDA driver and cuBLASLt; writes its header (step.h)
// beside it (docs/AmpCompile.md).
//
//===----------------------------------------------------------------------===//

#include "amp/StepDriver/HostTensor.h"
#include "amp/StepDriver/StepGraph.h"
#include "amp/StepDriver/StepInterface.h"
#include "amp/StepDriver/StepJIT.h"

#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/InitAll.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Runtime/CUDARuntime.h"
#include "amp/Runtime/ConvRecord.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace amprun;
namespace cl = llvm::cl;

static cl::OptionCategory category("amp-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|model.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    outputFile("o", cl::Required,
               cl::desc("the step library to write (step.so); its header "
                        "goes beside it (step.h)"),
               cl::cat(category));
static cl::opt<std::string>
    ampPipeline("amp-pipeline", cl::ValueOptional,
                cl::desc("convert to mixed precision first, with "
                         "--amp-pipeline's options (docs/Pipeline.md)"),
                cl::cat(category));
static cl::opt<std::string> lowerOptions(
    "lower-options",
    cl::desc("options of --amp-lower-to-cuda (chips, toolkit, format, "
             "block-size, fuse-grids, fuse-independent-grids, row-lanes, "
             "gemm-transposes), "
             "e.g. \"chips=sm_90\""),
    cl::cat(category));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("name of the exported step function (default: the "
                       "output's file name as a C identifier)"),
              cl::cat(category));
static cl::opt<std::string> lossName("loss",
                                     cl::desc("name of the loss tensor, where "
                                              "the graph does not record it"),
                                     cl::cat(category));
static cl::list<std::string>
    dimSizes("dim",
             cl::desc("name=N: the size of the symbolic input "
                      "dimension `name` (as ONNX dim_param)"),
             cl::cat(category));
static cl::list<std::string> carryPairs(
    "carry",
    cl::desc("<output>:<input>: the output feeds the input in the next "
             "step, where the analysis finds no such update (listed in the "
             "header)"),
    cl::cat(category));
static cl::opt<std::string>
    linker("cxx", cl::init(AMP_HOST_CXX),
           cl::desc("the C++ compiler that links the library"),
           cl::cat(category));
static cl::opt<std::string>
    dumpLowered("dump-lowered",
                cl::desc("write the LLVM-dialect module, entry points "
                         "included, to this file"),
                cl::cat(category));

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// `name` as a C identifier: other characters become '_'.
static std::string toIdentifier(StringRef name) {
  std::string result;
  for (char c : name)
    result += llvm::isAlnum(c) ? c : '_';
  if (result.empty() || llvm::isDigit(result.front()))
    result.insert(0, "step_");
  return result;
}

/// The C type of an element type, and its name in the signature.
static std::pair<StringRef, StringRef> getElementNames(Type type) {
  if (type.isF32())
    return {"float", "float32"};
  if (type.isF64())
    return {"double", "float64"};
  if (type.isF16())
    return {"uint16_t /* IEEE half */", "float16"};
  if (type.isBF16())
    return {"uint16_t /* bfloat16 */", "bfloat16"};
  if (type.isInteger(1))
    return {"bool", "bool"};
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return {"", ""};
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 8:
    return isUnsigned ? std::pair<StringRef, StringRef>{"uint8_t", "uint8"}
                      : std::pair<StringRef, StringRef>{"int8_t", "int8"};
  case 16:
    return isUnsigned ? std::pair<StringRef, StringRef>{"uint16_t", "uint16"}
                      : std::pair<StringRef, StringRef>{"int16_t", "int16"};
  case 32:
    return isUnsigned ? std::pair<StringRef, StringRef>{"uint32_t", "uint32"}
                      : std::pair<StringRef, StringRef>{"int32_t", "int32"};
  case 64:
    return isUnsigned ? std::pair<StringRef, StringRef>{"uint64_t", "uint64"}
                      : std::pair<StringRef, StringRef>{"int64_t", "int64"};
  default:
    return {"", ""};
  }
}

/// One tensor of the step's signature.
struct SignatureEntry {
  std::string name;
  RankedTensorType type;
  std::string carriesTo;
  ElementsAttr initializer;
};

/// The value of every element of an initializer whose elements are all
/// equal, as a JSON number (zeroed moments, the loss scale and counters the
/// pipeline adds), or "" when they differ.
static std::string getSplatJSON(ElementsAttr initializer) {
  TypedAttr element =
      initializer ? onnxg::getUniformElement(initializer) : TypedAttr();
  double value;
  if (auto number = dyn_cast_if_present<FloatAttr>(element))
    value = number.getValueAsDouble();
  else if (auto integer = dyn_cast_if_present<IntegerAttr>(element))
    value = integer.getType().isInteger(1)
                ? double(integer.getValue().getZExtValue())
                : double(integer.getValue().getSExtValue());
  else
    return "";
  if (!std::isfinite(value))
    return "";
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.9g", value);
  return text;
}

/// The signature as JSON: {"step": .., "inputs": [{"name", "dtype",
/// "shape", "initializer", "value" (splat initializers)}], "outputs": [{"name",
/// "dtype", "shape", "carries_to"}], "loss": ..}.
static std::string getSignatureJSON(StringRef entry,
                                    ArrayRef<SignatureEntry> inputs,
                                    ArrayRef<SignatureEntry> outputs,
                                    StringRef loss) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto quote = [&](StringRef value) {
    os << '"';
    os.write_escaped(value);
    os << '"';
  };
  auto list = [&](ArrayRef<SignatureEntry> entries, bool isInput) {
    os << '[';
    llvm::interleaveComma(entries, os, [&](const SignatureEntry &e) {
      os << "{\"name\": ";
      quote(e.name);
      os << ", \"dtype\": ";
      quote(getElementNames(e.type.getElementType()).second);
      os << ", \"shape\": [";
      llvm::interleaveComma(e.type.getShape(), os);
      os << "]";
      if (isInput) {
        os << ", \"initializer\": " << (e.initializer ? "true" : "false");
        std::string value = getSplatJSON(e.initializer);
        if (!value.empty())
          os << ", \"value\": " << value;
      } else if (!e.carriesTo.empty()) {
        os << ", \"carries_to\": ";
        quote(e.carriesTo);
      }
      os << '}';
    });
    os << ']';
  };
  os << "{\"step\": ";
  quote(entry);
  os << ", \"loss\": ";
  quote(loss);
  os << ", \"inputs\": ";
  list(inputs, true);
  os << ", \"outputs\": ";
  list(outputs, false);
  os << '}';
  return text;
}

/// The LLVM-dialect argument types of a memref of `type`, as
/// finalize-memref-to-llvm expands it: allocated and aligned pointers,
/// offset, sizes, strides.
static unsigned getNumExpandedArguments(RankedTensorType type) {
  return 3 + 2 * type.getRank();
}

/// Adds the exported entry points around the lowered step `impl`:
///   int <entry>(void *const *inputs, void *const *outputs);
///   const char *<entry>_error(void);
///   const char *<entry>_signature(void);
static void addEntryPoints(ModuleOp module, LLVM::LLVMFuncOp impl,
                           StringRef entry, ArrayRef<SignatureEntry> tensors,
                           unsigned numInputs, StringRef signature) {
  MLIRContext *context = module.getContext();
  Location loc = impl.getLoc();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i32 = builder.getI32Type();
  auto i64 = builder.getI64Type();
  auto declare = [&](StringRef name, Type result, ArrayRef<Type> arguments) {
    if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return existing;
    return LLVM::LLVMFuncOp::create(
        builder, loc, name, LLVM::LLVMFunctionType::get(result, arguments));
  };
  LLVM::LLVMFuncOp begin =
      declare(amp::runtime::kCUDAStepBegin, i32, {ptr, ptr, i64, ptr, i64});
  LLVM::LLVMFuncOp end = declare(amp::runtime::kCUDAStepEnd, i32, {});
  LLVM::LLVMFuncOp lastError = declare(amp::runtime::kCUDALastError, ptr, {});

  // int <entry>(void *const *inputs, void *const *outputs):
  //   do {
  //     if (begin(name, inputs, n, outputs, m) == kCUDAStepRun) impl(...);
  //     status = end();
  //   } while (status == kCUDAStepAgain);  // a failed graph capture
  //   return status;
  auto step = LLVM::LLVMFuncOp::create(
      builder, loc, entry, LLVM::LLVMFunctionType::get(i32, {ptr, ptr}));
  Block *body = step.addEntryBlock(builder);
  Block *again = new Block, *run = new Block, *finish = new Block,
        *exit = new Block;
  for (Block *block : {again, run, finish, exit})
    step.getBody().push_back(block);
  builder.setInsertionPointToStart(body);
  Value name =
      LLVM::createGlobalString(loc, builder, (entry + "_name").str(),
                               StringRef(entry.str().c_str(), entry.size() + 1),
                               LLVM::Linkage::Internal);
  SmallVector<Value> arguments;
  auto constant = [&](int64_t value) -> Value {
    return LLVM::ConstantOp::create(builder, loc, i64, value);
  };
  for (auto [i, tensor] : llvm::enumerate(tensors)) {
    bool isInput = i < numInputs;
    Value array = body->getArgument(isInput ? 0 : 1);
    int64_t index = isInput ? i : i - numInputs;
    Value slot = LLVM::GEPOp::create(builder, loc, ptr, ptr, array,
                                     ArrayRef<LLVM::GEPArg>{int32_t(index)});
    Value data = LLVM::LoadOp::create(builder, loc, ptr, slot);
    arguments.append({data, data, constant(0)});
    for (int64_t size : tensor.type.getShape())
      arguments.push_back(constant(size));
    int64_t stride = 1;
    SmallVector<Value> strides;
    for (int64_t size : llvm::reverse(tensor.type.getShape())) {
      strides.push_back(constant(stride));
      stride *= size;
    }
    arguments.append(strides.rbegin(), strides.rend());
  }
  Value numIn = constant(numInputs);
  Value numOut = constant(int64_t(tensors.size()) - numInputs);
  LLVM::BrOp::create(builder, loc, again);

  builder.setInsertionPointToStart(again);
  Value status =
      LLVM::CallOp::create(builder, loc, begin,
                           ValueRange{name, body->getArgument(0), numIn,
                                      body->getArgument(1), numOut})
          .getResult();
  auto i32Constant = [&](int32_t value) -> Value {
    return LLVM::ConstantOp::create(builder, loc, i32, value);
  };
  Value ready =
      LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq, status,
                           i32Constant(amp::runtime::kCUDAStepRun));
  LLVM::CondBrOp::create(builder, loc, ready, run, finish);

  builder.setInsertionPointToStart(run);
  LLVM::CallOp::create(builder, loc, impl, arguments);
  LLVM::BrOp::create(builder, loc, finish);

  builder.setInsertionPointToStart(finish);
  Value ended =
      LLVM::CallOp::create(builder, loc, end, ValueRange()).getResult();
  Value retry =
      LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq, ended,
                           i32Constant(amp::runtime::kCUDAStepAgain));
  LLVM::CondBrOp::create(builder, loc, retry, again, exit);

  builder.setInsertionPointToStart(exit);
  LLVM::ReturnOp::create(builder, loc, ended);

  // const char *<entry>_error(void)
  builder.setInsertionPointToEnd(module.getBody());
  auto error = LLVM::LLVMFuncOp::create(builder, loc, (entry + "_error").str(),
                                        LLVM::LLVMFunctionType::get(ptr, {}));
  builder.setInsertionPointToStart(error.addEntryBlock(builder));
  Value message =
      LLVM::CallOp::create(builder, loc, lastError, ValueRange()).getResult();
  LLVM::ReturnOp::create(builder, loc, message);

  // const char *<entry>_signature(void)
  builder.setInsertionPointToEnd(module.getBody());
  auto describe =
      LLVM::LLVMFuncOp::create(builder, loc, (entry + "_signature").str(),
                               LLVM::LLVMFunctionType::get(ptr, {}));
  builder.setInsertionPointToStart(describe.addEntryBlock(builder));
  std::string text = signature.str();
  Value json = LLVM::createGlobalString(
      loc, builder, (entry + "_signature_json").str(),
      StringRef(text.c_str(), text.size() + 1), LLVM::Linkage::Internal);
  LLVM::ReturnOp::create(builder, loc, json);
}

/// The header that declares the entry points and documents the tensors.
static std::string getHeader(StringRef entry, ArrayRef<SignatureEntry> inputs,
                             ArrayRef<SignatureEntry> outputs, StringRef loss) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string guard = StringRef(toIdentifier(entry)).upper() + "_H";
  os << "/* " << entry << ": a training step compiled by amp-compile from "
     << llvm::sys::path::filename(inputFile) << ".\n"
     << " * Needs the CUDA driver and cuBLASLt at run time "
        "(docs/AmpCompile.md). */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdbool.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  auto list = [&](StringRef what, ArrayRef<SignatureEntry> entries) {
    os << "/* " << what << ": index, name, element type, shape (dense, "
       << "row-major). */\n";
    for (auto [i, e] : llvm::enumerate(entries)) {
      os << "/*  " << llvm::right_justify(std::to_string(i), 3) << "  "
         << e.name << ": " << getElementNames(e.type.getElementType()).first
         << " [";
      llvm::interleaveComma(e.type.getShape(), os);
      os << "]";
      if (std::string value = getSplatJSON(e.initializer); !value.empty())
        os << ", starts at " << value;
      else if (e.initializer)
        os << ", initial value in the model";
      if (!e.carriesTo.empty())
        os << ", feeds input '" << e.carriesTo << "' at the next step";
      if (!loss.empty() && e.name == loss)
        os << ", the loss";
      os << " */\n";
    }
    os << "#define " << StringRef(toIdentifier(entry)).upper() << "_NUM_"
       << StringRef(what).upper() << " " << entries.size() << "\n\n";
  };
  list("inputs", inputs);
  list("outputs", outputs);
  os << "/* Runs one step on the current CUDA context's device (else device\n"
     << " * $AMP_CUDA_DEVICE, default 0), on the legacy default stream, and\n"
     << " * waits for it. inputs[i] and outputs[i] point to buffers that the\n"
     << " * device reaches (cudaMalloc, cudaMallocManaged, a CUDA tensor's\n"
     << " * data_ptr()). Returns 0, or 1 with a message in " << entry
     << "_error(). */\n"
     << "int " << entry << "(void *const *inputs, void *const *outputs);\n\n"
     << "/* The first error of the last step (\"\" when none). */\n"
     << "const char *" << entry << "_error(void);\n\n"
     << "/* The tensors above as JSON: {\"step\", \"loss\", \"inputs\": "
        "[{\"name\",\n"
     << " * \"dtype\", \"shape\", \"initializer\", \"value\"}], "
        "\"outputs\": [{\"name\",\n"
     << " * \"dtype\", \"shape\", \"carries_to\"}]}; \"value\": every "
        "element's start. */\n"
     << "const char *" << entry << "_signature(void);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return text;
}

/// Compiles `module` (LLVM dialect) to an object file at `path`.
static void writeObject(ModuleOp module, StringRef path) {
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "amp-step");
  if (!llvmModule)
    fail("translating the host code to LLVM IR failed");
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    fail("no LLVM target for " + triple.str() + ": " + error);
  llvm::TargetOptions options;
  // The host code queues kernels and library calls: code generation at -O0
  // (1.2 s instead of 10.9 s for the large FP8 transformer's) where it
  // computes the same bits.
  llvm::CodeGenOptLevel level =
      llvm::any_of(*llvmModule, amprun::mayFuseMultiplyAdd)
          ? llvm::CodeGenOptLevel::Default
          : llvm::CodeGenOptLevel::None;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", options, llvm::Reloc::PIC_, std::nullopt, level));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  auto optimize = makeOptimizingTransformer(/*optLevel=*/2, 0, machine.get());
  if (llvm::Error failure = optimize(llvmModule.get()))
    fail("optimizing the host code: " + toString(std::move(failure)));
  std::error_code code;
  llvm::ToolOutputFile object(path, code, llvm::sys::fs::OF_None);
  if (code)
    fail("cannot write " + path + ": " + code.message());
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, object.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    fail("LLVM cannot emit an object file for " + triple.str());
  passes.run(*llvmModule);
  object.os().flush();
  object.keep();
}

/// Links `object` with the CUDA runtime into the shared library `path`.
static void link(StringRef object, StringRef path) {
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName(linker);
  if (!cxx) {
    llvm::sys::fs::remove(object);
    fail("no C++ compiler '" + linker + "' to link with (set --cxx)");
  }
  std::string cudaLib = AMP_CUDA_LIB_DIR;
  SmallVector<std::string> command = {*cxx,
                                      "-shared",
                                      "-o",
                                      path.str(),
                                      object.str(),
                                      AMP_CUDA_RUNTIME_STATIC_LIB,
                                      "-L" + cudaLib,
                                      "-lcublasLt",
                                      "-ldl",
                                      "-Wl,-rpath," + cudaLib,
                                      "-Wl,--no-undefined",
                                      "-Wl,--exclude-libs,ALL"};
  SmallVector<StringRef> args(command.begin(), command.end());
  SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("amp-compile-link", "log", log);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(args[0], args, std::nullopt, redirects,
                                         0, 0, &error);
  auto output = llvm::MemoryBuffer::getFile(log);
  llvm::sys::fs::remove(log);
  if (status != 0) {
    llvm::sys::fs::remove(object);
    llvm::sys::fs::remove(path);
    fail("linking " + path + " failed" + (error.empty() ? "" : ": " + error) +
         "\n" + (output ? (*output)->getBuffer() : "") +
         "command: " + llvm::join(command, " "));
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  toolName = "amp-compile";
  registerAllPasses();
  amp::registerAllAMPPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "amp-compile: a training step as a CUDA library\n\n"
      "  amp-compile IN [--amp-pipeline=\"...\"] -o step.so\n"
      "Writes step.so (one exported function per step, the kernels "
      "embedded) and step.h.\n");
  StringRef outputPath = outputFile;
  if (!outputPath.ends_with(".so"))
    fail("-o " + outputFile + ": the output is a shared library, name.so");
  // Before minutes of compilation: the folder must take the files.
  SmallString<128> folder(outputPath);
  llvm::sys::path::remove_filename(folder);
  if (folder.empty())
    folder = ".";
  if (!llvm::sys::fs::is_directory(folder) ||
      llvm::sys::fs::access(folder, llvm::sys::fs::AccessMode::Write))
    fail("-o " + outputFile + ": the folder '" + folder +
         "' does not exist or is not writable");
  std::string entry = entryName.empty()
                          ? toIdentifier(llvm::sys::path::stem(outputPath))
                          : entryName.getValue();
  if (entry != toIdentifier(entry))
    fail("--entry " + entry + " is not a C identifier");
  amp::CUDALoweringOptions loweringOptions;
  if (failed(loweringOptions.parseFromString(lowerOptions)))
    fail("bad --lower-options '" + lowerOptions + "'");

  DialectRegistry registry;
  amp::registerAllToolDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Read and convert the step as amp-run does.
  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module =
      importStep(inputFile, dimSizes, context, sourceMgr);
  std::vector<StepInput> inputs;
  std::vector<StepOutput> outputs;
  std::string loss;
  func::FuncOp func =
      prepareStep(*module, inputFile,
                  ampPipeline.getNumOccurrences()
                      ? std::optional<StringRef>(ampPipeline.getValue())
                      : std::nullopt,
                  lossName, carryPairs, /*restartAccumulators=*/false,
                  /*onDevice=*/true, inputs, outputs, loss);
  SmallVector<SignatureEntry> inputEntries, outputEntries;
  for (const StepInput &input : inputs)
    inputEntries.push_back({input.name, input.type, "", input.initializer});
  for (const StepOutput &output : outputs)
    outputEntries.push_back(
        {output.name,
         output.type,
         output.carriedTo >= 0 ? inputs[output.carriedTo].name : "",
         {}});
  SmallVector<SignatureEntry> tensors(inputEntries);
  tensors.append(outputEntries);
  for (const SignatureEntry &tensor : tensors)
    if (getElementNames(tensor.type.getElementType()).first.empty())
      fail("'" + tensor.name + "' has type " + printToString(tensor.type) +
           ", which a step library cannot pass");

  // Lower, with the graph renamed so that it cannot clash with the caller's
  // symbols (a graph named `main`).
  std::string implName = entry + "_impl";
  func.setSymName(implName);
  PassManager lower(&context);
  if (failed(amp::buildCUDALoweringPipeline(lower, loweringOptions,
                                            /*convertGraph=*/false)))
    fail("cannot build the CUDA pipeline");
  if (failed(lower.run(*module)))
    fail("lowering " + inputFile + " to CUDA failed");
  auto impl = module->lookupSymbol<LLVM::LLVMFuncOp>(implName);
  unsigned expected = 0;
  for (const SignatureEntry &tensor : tensors)
    expected += getNumExpandedArguments(tensor.type);
  if (!impl || impl.getNumArguments() != expected)
    fail("the lowered step does not take its " +
         std::to_string(tensors.size()) + " tensors as " +
         std::to_string(expected) + " expanded memref arguments");
  impl.setLinkage(LLVM::Linkage::Internal);
  unsigned kernels = 0, gemms = 0, fp8Gemms = 0, convolutions = 0;
  module->walk([&](Operation *op) {
    if (isa<gpu::BinaryOp>(op))
      ++kernels;
    if (auto call = dyn_cast<LLVM::CallOp>(op); call && call.getCallee()) {
      gemms += call.getCallee()->starts_with(amp::runtime::kGemmEntryPrefix);
      fp8Gemms +=
          call.getCallee()->starts_with(amp::runtime::kFP8GemmEntryPrefix);
      convolutions +=
          call.getCallee()->starts_with(amp::runtime::kConvEntryPrefix);
    }
  });
  std::string signature =
      getSignatureJSON(entry, inputEntries, outputEntries, loss);
  addEntryPoints(*module, impl, entry, tensors, inputEntries.size(), signature);
  if (failed(verify(*module)))
    fail("the step's entry points do not verify");
  if (!dumpLowered.empty()) {
    std::string errorMessage;
    auto output = openOutputFile(dumpLowered, &errorMessage);
    if (!output)
      fail(errorMessage);
    module->print(output->os());
    output->keep();
  }
  double lowerSeconds = secondsSince(start);

  // Compile the host code, link, and write the header: each output appears
  // whole or not at all.
  start = std::chrono::steady_clock::now();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  SmallString<128> object, library;
  if (llvm::sys::fs::createTemporaryFile("amp-step", "o", object))
    fail("cannot create a temporary object file");
  writeObject(*module, object);
  library = outputPath;
  library += ".tmp";
  link(object, library);
  llvm::sys::fs::remove(object);
  SmallString<128> headerPath(outputPath);
  llvm::sys::path::replace_extension(headerPath, "h");
  {
    std::string errorMessage;
    auto header = openOutputFile(headerPath, &errorMessage);
    if (!header) {
      llvm::sys::fs::remove(library);
      fail(errorMessage);
    }
    header->os() << getHeader(entry, inputEntries, outputEntries, loss);
    header->keep();
  }
  if (std::error_code code = llvm::sys::fs::rename(library, outputPath))
    fail("cannot write " + outputFile + ": " + code.message());
  llvm::errs() << "amp-compile: " << outputFile << ": " << kernels
               << " kernels, " << gemms << " cuBLASLt GEMMs (" << fp8Gemms
               << " FP8), " << convolutions << " cuDNN convolutions, "
               << inputs.size() << " inputs, " << outputs.size()
               << " outputs; lower " << llvm::format("%.2f", lowerSeconds)
               << " s, compile+link "
               << llvm::format("%.2f", secondsSince(start)) << " s\n";
  return 0;
}
