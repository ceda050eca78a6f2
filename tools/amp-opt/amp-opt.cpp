//===- amp-opt.cpp - The amp-opt driver -------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with every upstream dialect and pass plus amp-opt's, that also
// reads and writes ONNX: an `.onnx` input (or one whose bytes are not MLIR) is
// imported, and an `-o *.onnx` output is exported.
//
//===----------------------------------------------------------------------===//

#include "amp/InitAll.h"
#include "amp/Target/MLIRText.h"
#include "amp/Target/ONNX/Export.h"
#include "amp/Target/ONNX/Import.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

static llvm::cl::opt<bool> skipOnnxCheck(
    "skip-onnx-check",
    llvm::cl::desc("Write an ONNX output without running onnx.checker's full "
                   "check on it first (docs/Reliability.md)"),
    llvm::cl::init(false));

static llvm::cl::opt<bool> onnxExternalData(
    "onnx-external-data",
    llvm::cl::desc("Write the ONNX output's tensors of 1 KiB or more to "
                   "<output>.data (ONNX external data); done anyway for "
                   "models over 2 GiB"),
    llvm::cl::init(false));

/// Runs the configured pipeline on an ONNX input or towards an ONNX output.
/// MlirOptMain handles MLIR-to-MLIR runs; this path adds import and export.
namespace mlir::amp::test {
void registerTestPasses();
} // namespace mlir::amp::test

static LogicalResult runWithOnnx(std::unique_ptr<llvm::MemoryBuffer> input,
                                 bool importOnnx, llvm::StringRef outputFile,
                                 DialectRegistry &registry,
                                 const MlirOptMainConfig &config) {
  MLIRContext context(registry);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  llvm::SourceMgr sourceMgr;
  llvm::StringRef inputName = input->getBufferIdentifier();
  llvm::StringRef bytes = input->getBuffer();
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();

  OwningOpRef<ModuleOp> module;
  if (importOnnx) {
    TimingScope importTiming = timingScope.nest("import ONNX");
    onnxg::ImportOptions options;
    options.timing = &importTiming;
    // The importer creates attributes from one thread: uniquing them is
    // cheaper without the locks. (--mlir-disable-threading keeps it off.)
    bool threading = context.isMultithreadingEnabled();
    context.disableMultithreading();
    module = onnxg::importOnnxModel(bytes, inputName, &context, options);
    context.enableMultithreading(threading);
  } else {
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    ParserConfig parserConfig(&context);
    module = parseSourceFile<ModuleOp>(sourceMgr, parserConfig);
  }
  if (!module)
    return failure();

  PassManager pm(&context, ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  pm.enableVerifier(config.shouldVerifyPasses());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timingScope);
  if (failed(config.setupPassPipeline(pm)) || failed(pm.run(*module)))
    return failure();

  if (outputFile.ends_with(".onnx")) {
    TimingScope exportTiming = timingScope.nest("export ONNX");
    onnxg::ExportOptions options;
    options.check = !skipOnnxCheck;
    options.externalData = onnxExternalData;
    if (importOnnx) {
      options.input = bytes;
      options.inputDir = llvm::sys::path::parent_path(inputName);
    }
    return onnxg::exportOnnxFile(*module, outputFile, exportTiming, options);
  }

  // MLIR output. ONNX names live in locations, so print them unless
  // --mlir-print-debuginfo says otherwise.
  std::string errorMessage;
  auto output = openOutputFile(outputFile, &errorMessage);
  if (!output)
    return emitError(UnknownLoc::get(&context)) << errorMessage;
  if (config.shouldEmitBytecode()) {
    BytecodeWriterConfig writerConfig;
    if (failed(writeBytecodeToFile(*module, output->os(), writerConfig)))
      return failure();
  } else {
    OpPrintingFlags flags;
    auto &options = llvm::cl::getRegisteredOptions();
    auto debugInfo = options.find("mlir-print-debuginfo");
    if (debugInfo == options.end() || !debugInfo->second->getNumOccurrences())
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    module->print(output->os(), flags);
    output->os() << "\n";
  }
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  amp::registerAllAMPPasses();
  amp::test::registerTestPasses();
  DialectRegistry registry;
  amp::registerAllToolDialects(registry);

  auto [inputFile, outputFile] = registerAndParseCLIOptions(
      argc, argv,
      "amp-opt: mixed-precision compiler for ONNX training graphs\n\n"
      "  amp-opt IN [-o OUT] [pass flags] [mlir-opt flags]\n"
      "  IN is .onnx (by extension or content) or .mlir; an OUT ending in "
      ".onnx is written as ONNX, anything else as MLIR",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  std::string errorMessage;
  auto input = openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << "amp-opt: error: " << errorMessage << "\n";
    return 1;
  }
  bool importOnnx = onnxg::isOnnxInput(inputFile, input->getBuffer());
  if (!importOnnx && failed(amp::checkParsableText(*input)))
    return 1;
  if (!importOnnx && !llvm::StringRef(outputFile).ends_with(".onnx")) {
    auto output = openOutputFile(outputFile, &errorMessage);
    if (!output) {
      llvm::errs() << "amp-opt: error: " << errorMessage << "\n";
      return 1;
    }
    if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
      return 1;
    output->keep();
    return 0;
  }
  return failed(runWithOnnx(std::move(input), importOnnx, outputFile, registry,
                            config))
             ? 1
             : 0;
}
