//===- StepJIT.cpp - Compile a lowered step in parts, in parallel ---------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/StepDriver/StepJIT.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/Debugging/DebuggerSupport.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/CachePruning.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace llvm;
using namespace llvm::orc;

namespace amprun {

/// LLVM instructions per part of the loop nests: small enough that a step
/// of a thousand loop nests keeps many threads busy, large enough that a
/// part's fixed costs (its own module, target machine and object) stay
/// small. Fixed, so that a part's cache key does not depend on the machine.
static constexpr uint64_t kInstructionsPerPart = 8192;
static constexpr unsigned kMaxParts = 256;
/// Changes whenever what a cached object holds for a key does.
static constexpr StringLiteral kCacheFormat = "amp-step-jit-1";
/// Cache files start with LLVM's prefix: pruneCache removes only those.
static constexpr StringLiteral kCachePrefix = "llvmcache-";
static constexpr size_t kChecksumBytes = 32;

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// Adds `packedName(void **arguments)`, which calls `entry` with
/// `*arguments[i]` as its i-th argument (MLIR's ExecutionEngine's packed
/// calling convention).
static Error addPackedWrapper(Module &module, StringRef entry,
                              StringRef packedName) {
  Function *function = module.getFunction(entry);
  if (!function || function->isDeclaration())
    return makeError("the step has no function '" + entry + "'");
  if (!function->getReturnType()->isVoidTy())
    return makeError("'" + entry + "' returns a value");
  LLVMContext &context = module.getContext();
  auto *pointer = PointerType::getUnqual(context);
  auto *wrapper = Function::Create(
      FunctionType::get(Type::getVoidTy(context), {pointer}, false),
      GlobalValue::ExternalLinkage, packedName, module);
  IRBuilder<> builder(BasicBlock::Create(context, "entry", wrapper));
  SmallVector<Value *> arguments;
  for (auto [index, argument] : llvm::enumerate(function->args())) {
    Value *slot =
        builder.CreateConstGEP1_64(pointer, wrapper->getArg(0), index);
    Value *address = builder.CreateLoad(pointer, slot);
    arguments.push_back(builder.CreateLoad(argument.getType(), address));
  }
  builder.CreateCall(function, arguments);
  builder.CreateRetVoid();
  return Error::success();
}

bool mayFuseMultiplyAdd(const Function &function) {
  for (const Instruction &instruction : instructions(function)) {
    if (isa<FPMathOperator>(instruction) &&
        instruction.getFastMathFlags().allowContract())
      return true;
    if (auto *intrinsic = dyn_cast<IntrinsicInst>(&instruction))
      if (intrinsic->getIntrinsicID() == Intrinsic::fmuladd)
        return true;
  }
  return false;
}

namespace {
/// One part of the step: its bitcode and how to compile it.
struct Part {
  SmallVector<char, 0> bitcode;
  CodeGenOptLevel level = CodeGenOptLevel::Default;
  std::string key;
  std::unique_ptr<MemoryBuffer> object;
  std::string error;
};
} // namespace

/// Splits `module` into parts: part 0 the global variables, the entry's
/// wrappers and every function they call (a step's entry is straight-line
/// code calling the loop nests: its code generation at -O2 takes seconds
/// and its run time nothing, so it is compiled at -O0 unless that could
/// change a result); then the other functions, largest first, each
/// into the part with the fewest instructions so far.
static Expected<SmallVector<Part>> splitIntoParts(Module &module,
                                                  ArrayRef<StringRef> roots) {
  if (!module.alias_empty() || !module.ifunc_empty() ||
      !module.getComdatSymbolTable().empty())
    return makeError("the step's LLVM module has aliases or comdats");
  // The global variables go to part 0. LLVM's special globals
  // (constructors, llvm.used) hold for one object; a step has none.
  DenseMap<const GlobalValue *, unsigned> partOf;
  for (GlobalVariable &variable : module.globals()) {
    if (variable.getName().starts_with("llvm."))
      return makeError("the step has LLVM's special global '" +
                       variable.getName() + "'");
    partOf[&variable] = 0;
  }
  // Every definition becomes visible to the other parts, through the GOT
  // and PLT (position-independent code): parts are linked apart.
  for (GlobalValue &value : module.global_values()) {
    if (isa<Function>(value) && cast<Function>(value).isIntrinsic())
      continue;
    if (!value.hasName())
      value.setName("amp.jit.unnamed");
    if (value.hasLocalLinkage()) {
      value.setLinkage(GlobalValue::ExternalLinkage);
      value.setVisibility(GlobalValue::DefaultVisibility);
    }
    value.setDSOLocal(false);
  }

  bool entryMayContract = false;
  for (StringRef root : roots) {
    Function *function = module.getFunction(root);
    partOf[function] = 0;
    entryMayContract |= mayFuseMultiplyAdd(*function);
    for (const Instruction &instruction : instructions(*function))
      if (auto *call = dyn_cast<CallBase>(&instruction))
        if (Function *callee = call->getCalledFunction())
          if (!callee->isDeclaration() && partOf.try_emplace(callee, 0).second)
            entryMayContract |= mayFuseMultiplyAdd(*callee);
  }
  SmallVector<std::pair<uint64_t, Function *>> functions;
  DenseMap<Function *, unsigned> order;
  uint64_t total = 0;
  for (Function &function : module)
    if (!function.isDeclaration() && !partOf.count(&function)) {
      order[&function] = order.size();
      functions.push_back({function.getInstructionCount(), &function});
      total += functions.back().first;
    }
  unsigned numParts = std::clamp<uint64_t>(
      divideCeil(total, kInstructionsPerPart), 1, kMaxParts - 1);
  // Largest first; equal sizes in module order (a stable sort).
  llvm::sort(functions, [&](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first
                              : order.lookup(a.second) < order.lookup(b.second);
  });
  SmallVector<uint64_t> load(numParts, 0);
  for (auto [size, function] : functions) {
    unsigned least = std::min_element(load.begin(), load.end()) - load.begin();
    load[least] += size;
    partOf[function] = least + 1;
  }

  SmallVector<Part> parts(functions.empty() ? 1 : numParts + 1);
  for (unsigned index = 0; index < parts.size(); ++index) {
    Part &part = parts[index];
    ValueToValueMapTy map;
    std::unique_ptr<Module> clone =
        CloneModule(module, map, [&](const GlobalValue *value) {
          auto found = partOf.find(value);
          return found != partOf.end() && found->second == index;
        });
    raw_svector_ostream os(part.bitcode);
    WriteBitcodeToFile(*clone, os);
    if (index == 0 && !entryMayContract)
      part.level = CodeGenOptLevel::None;
  }
  return parts;
}

/// Optimizes (LLVM -O2, as MLIR's ExecutionEngine does) and compiles one
/// part, in a context of its own.
static Expected<std::unique_ptr<MemoryBuffer>>
compilePart(const Part &part, JITTargetMachineBuilder builder) {
  LLVMContext context;
  Expected<std::unique_ptr<Module>> module = parseBitcodeFile(
      MemoryBufferRef(StringRef(part.bitcode.data(), part.bitcode.size()),
                      "amp-step-part"),
      context);
  if (!module)
    return module.takeError();
  builder.setCodeGenOptLevel(part.level);
  Expected<std::unique_ptr<TargetMachine>> machine =
      builder.createTargetMachine();
  if (!machine)
    return machine.takeError();
  auto optimize = mlir::makeOptimizingTransformer(/*optLevel=*/2,
                                                  /*sizeLevel=*/0, nullptr);
  if (Error error = optimize(module->get()))
    return std::move(error);
  SmallVector<char, 0> object;
  raw_svector_ostream os(object);
  legacy::PassManager passes;
  if ((*machine)->addPassesToEmitFile(passes, os, nullptr,
                                      CodeGenFileType::ObjectFile))
    return makeError("LLVM cannot emit an object file for " +
                     builder.getTargetTriple().str());
  passes.run(**module);
  return std::make_unique<SmallVectorMemoryBuffer>(std::move(object),
                                                   "amp-step-part", false);
}

/// The part's cache key: its bitcode and everything else that decides its
/// object.
static std::string cacheKey(const Part &part,
                            const JITTargetMachineBuilder &builder) {
  BLAKE3 hasher;
  auto add = [&](StringRef text) {
    hasher.update(text);
    hasher.update(StringRef("\0", 1));
  };
  add(kCacheFormat);
  add(LLVM_VERSION_STRING);
  add(builder.getTargetTriple().str());
  add(builder.getCPU());
  add(builder.getFeatures().getString());
  add(std::to_string(static_cast<int>(part.level)));
  hasher.update(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(part.bitcode.data()),
                        part.bitcode.size()));
  return toHex(hasher.final(), /*LowerCase=*/true);
}

static std::array<uint8_t, kChecksumBytes> checksum(StringRef bytes) {
  return BLAKE3::hash<kChecksumBytes>(ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
}

/// The cached object of `key`, or null where there is none or it is
/// damaged (a file starts with the checksum of the object after it).
static std::unique_ptr<MemoryBuffer> readCached(StringRef directory,
                                                StringRef key) {
  SmallString<256> path(directory);
  sys::path::append(path, kCachePrefix + key);
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(path);
  if (!file || (*file)->getBufferSize() <= kChecksumBytes)
    return nullptr;
  StringRef contents = (*file)->getBuffer();
  StringRef object = contents.drop_front(kChecksumBytes);
  std::array<uint8_t, kChecksumBytes> expected = checksum(object);
  if (contents.take_front(kChecksumBytes) !=
      StringRef(reinterpret_cast<const char *>(expected.data()),
                expected.size()))
    return nullptr;
  return MemoryBuffer::getMemBufferCopy(object, "amp-step-part");
}

/// Writes `object` under `key` through a temporary file, so that another
/// process never reads half of it.
static Error writeCached(StringRef directory, StringRef key,
                         const MemoryBuffer &object) {
  SmallString<256> model(directory), path(directory);
  sys::path::append(model, "amp-tmp-%%%%%%%%");
  sys::path::append(path, kCachePrefix + key);
  Expected<sys::fs::TempFile> file = sys::fs::TempFile::create(model);
  if (!file)
    return file.takeError();
  std::array<uint8_t, kChecksumBytes> sum = checksum(object.getBuffer());
  {
    raw_fd_ostream os(file->FD, /*shouldClose=*/false);
    os.write(reinterpret_cast<const char *>(sum.data()), sum.size());
    os << object.getBuffer();
    os.flush();
    if (os.has_error()) {
      std::error_code code = os.error();
      os.clear_error();
      consumeError(file->discard());
      return errorCodeToError(code);
    }
  }
  return file->keep(path);
}

std::string StepJIT::getCacheDirectory(std::optional<StringRef> given) {
  std::optional<std::string> setting =
      given ? std::optional<std::string>(given->str())
            : sys::Process::GetEnv("AMP_JIT_CACHE");
  if (setting)
    return *setting == "none" ? "" : *setting;
  SmallString<256> path;
  if (!sys::path::cache_directory(path))
    return "";
  sys::path::append(path, "amp-opt", "jit");
  return std::string(path);
}

StepJIT::~StepJIT() = default;

void StepJIT::invoke(MutableArrayRef<void *> arguments) const {
  packed(arguments.data());
}

Expected<std::unique_ptr<StepJIT>>
StepJIT::create(mlir::ModuleOp module, StringRef entry,
                const StepJITOptions &options) {
  std::unique_ptr<StepJIT> result(new StepJIT());
  StepJITSummary &summary = result->summary;
  Expected<JITTargetMachineBuilder> builder =
      JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setRelocationModel(Reloc::PIC_);
  Expected<DataLayout> layout = builder->getDefaultDataLayoutForTarget();
  if (!layout)
    return layout.takeError();

  // Translate and split; the whole module goes before the parts compile.
  std::string packedName = ("_amp_packed_" + entry).str();
  SmallVector<Part> parts;
  {
    LLVMContext context;
    std::unique_ptr<Module> llvmModule =
        mlir::translateModuleToLLVMIR(module, context, "amp-step");
    if (!llvmModule)
      return makeError("could not translate the step to LLVM IR");
    llvmModule->setTargetTriple(builder->getTargetTriple());
    llvmModule->setDataLayout(*layout);
    if (Error error = addPackedWrapper(*llvmModule, entry, packedName))
      return std::move(error);
    Expected<SmallVector<Part>> split =
        splitIntoParts(*llvmModule, {packedName, entry});
    if (!split)
      return split.takeError();
    parts = std::move(*split);
  }
  summary.parts = parts.size();

  // The cache: objects of parts compiled before.
  std::string cache = options.cacheDirectory;
  if (!cache.empty())
    if (std::error_code code = sys::fs::create_directories(cache)) {
      summary.cacheProblem = "cannot create " + cache + ": " + code.message();
      cache.clear();
    }
  SmallVector<unsigned> toCompile;
  for (auto [index, part] : llvm::enumerate(parts)) {
    if (!cache.empty()) {
      part.key = cacheKey(part, *builder);
      part.object = readCached(cache, part.key);
    }
    if (part.object)
      ++summary.cachedParts;
    else
      toCompile.push_back(index);
  }

  // Compile the rest, the entry's part first: its -O2 optimization is the
  // longest single job.
  ThreadPoolStrategy strategy = hardware_concurrency(options.threads);
  summary.threads = std::max<unsigned>(
      1, std::min<unsigned>(strategy.compute_thread_count(), toCompile.size()));
  {
    DefaultThreadPool pool(hardware_concurrency(summary.threads));
    for (unsigned index : toCompile)
      pool.async([&, index] {
        Part &part = parts[index];
        Expected<std::unique_ptr<MemoryBuffer>> object =
            compilePart(part, *builder);
        if (object)
          part.object = std::move(*object);
        else
          part.error = toString(object.takeError());
      });
    pool.wait();
  }
  for (unsigned index : toCompile) {
    Part &part = parts[index];
    if (!part.error.empty())
      return makeError("compiling part " + Twine(index) + " of " +
                       Twine(parts.size()) + ": " + part.error);
    if (cache.empty() || !summary.cacheProblem.empty())
      continue;
    if (Error error = writeCached(cache, part.key, *part.object))
      summary.cacheProblem =
          "cannot write to " + cache + ": " + toString(std::move(error));
  }
  if (!cache.empty() && !toCompile.empty()) {
    CachePruningPolicy policy;
    policy.Interval = std::chrono::hours(1);
    policy.MaxSizeBytes = uint64_t(2) << 30;
    policy.MaxSizePercentageOfAvailableSpace = 50;
    pruneCache(cache, policy);
  }

  // Link the parts and the libraries in this process.
  Expected<std::unique_ptr<LLJIT>> jit =
      LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
  if (!jit)
    return jit.takeError();
  // GDB sees the step's functions, as with MLIR's ExecutionEngine; a
  // process without GDB's JIT interface just runs without it.
  if (Error error = enableDebuggerSupport(**jit))
    consumeError(std::move(error));
  JITDylib &mainLibrary = (*jit)->getMainJITDylib();
  char prefix = layout->getGlobalPrefix();
  for (const std::string &library : options.sharedLibraries) {
    auto generator =
        DynamicLibrarySearchGenerator::Load(library.c_str(), prefix);
    if (!generator)
      return makeError("cannot load " + library + ": " +
                       toString(generator.takeError()));
    mainLibrary.addGenerator(std::move(*generator));
  }
  auto process = DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  mainLibrary.addGenerator(std::move(*process));
  for (Part &part : parts)
    if (Error error = (*jit)->addObjectFile(std::move(part.object)))
      return std::move(error);
  Expected<ExecutorAddr> address = (*jit)->lookup(packedName);
  if (!address)
    return address.takeError();
  result->packed = address->toPtr<void (*)(void **)>();
  result->jit = std::move(*jit);
  return std::move(result);
}

} // namespace amprun
