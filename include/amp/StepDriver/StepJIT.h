//===- StepJIT.h - Compile a lowered step in parts, in parallel -*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-run's JIT. A lowered training step is one entry function calling
// thousands of outlined loop nests; StepJIT translates it to LLVM IR, splits
// the loop nests into parts of about the same size, optimizes (LLVM -O2) and
// compiles each part to an object on a pool of threads, keeps the objects
// in an on-disk cache keyed by the part's bitcode, and links them with ORC's
// LLJIT against the runtime libraries (docs/AmpRun.md, "Lower and JIT").
//
//===----------------------------------------------------------------------===//

#ifndef AMP_STEPDRIVER_STEPJIT_H
#define AMP_STEPDRIVER_STEPJIT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class Function;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace amprun {

/// Whether LLVM's -O2 code generation may compute other bits than -O0 for
/// `function`: it has an instruction that -O2 may fuse into an FMA (a
/// `contract` flag, `llvm.fmuladd`). Without one, the same IR gives the
/// same results at both, and straight-line host code, whose -O2 code
/// generation takes seconds and saves nothing at run time, compiles at -O0.
bool mayFuseMultiplyAdd(const llvm::Function &function);

struct StepJITOptions {
  /// Threads that optimize and compile the parts; 0: one per core.
  unsigned threads = 0;
  /// Directory of compiled parts; empty: no cache.
  std::string cacheDirectory;
  /// Libraries whose symbols the step calls (runtimes, BLAS).
  llvm::SmallVector<std::string> sharedLibraries;
};

/// What a compilation did, for the tools' timing line.
struct StepJITSummary {
  unsigned parts = 0;
  unsigned cachedParts = 0;
  unsigned threads = 0;
  /// Why the cache was not used or not written ("" when it was).
  std::string cacheProblem;
};

/// A lowered step (LLVM dialect), compiled and linked in this process.
class StepJIT {
public:
  /// Compiles `module` and resolves `entry`, a function with
  /// `llvm.emit_c_interface` that returns nothing.
  static llvm::Expected<std::unique_ptr<StepJIT>>
  create(mlir::ModuleOp module, llvm::StringRef entry,
         const StepJITOptions &options);
  ~StepJIT();

  /// Calls the entry's C interface; arguments[i] points to its i-th
  /// argument (a memref descriptor's address).
  void invoke(llvm::MutableArrayRef<void *> arguments) const;

  const StepJITSummary &getSummary() const { return summary; }

  /// The cache directory: `given` (a tool's option), else $AMP_JIT_CACHE,
  /// else amp-opt/jit under the user's cache directory ($XDG_CACHE_HOME or
  /// ~/.cache); "" (no cache) where the setting is "none" or there is no
  /// user cache directory.
  static std::string getCacheDirectory(std::optional<llvm::StringRef> given);

private:
  StepJIT() = default;

  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*packed)(void **) = nullptr;
  StepJITSummary summary;
};

} // namespace amprun

#endif // AMP_STEPDRIVER_STEPJIT_H
