//===- ChildProcess.h - Run libonnx code in a forked child ------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// libonnx 1.12 crashes on some malformed models (amp-import-fuzzer finds
// them). Its shape inference and checker run in a forked child, which sends
// its answer back through a pipe: a crash there is a failed answer, not a
// crashed amp-opt.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_CHILDPROCESS_H
#define AMP_LIB_TARGET_ONNX_CHILDPROCESS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <sys/types.h>

namespace mlir::onnxg {

/// One forked child and the pipe it answers through.
class ChildProcess {
public:
  /// Forks a child that runs `body` (quietly: its stderr goes to /dev/null,
  /// a crash kills it without the parent's crash handlers) and exits with
  /// what `body` returns, after sending the answer `body` wrote.
  LogicalResult start(llvm::function_ref<int(std::string &answer)> body);
  /// Waits for the child: its answer, or failure when it crashed or exited
  /// with a non-zero status.
  FailureOr<std::string> finish();
  /// Kills a child that was not waited for.
  ~ChildProcess();

private:
  pid_t pid = -1;
  int fd = -1;
};

} // namespace mlir::onnxg

#endif // AMP_LIB_TARGET_ONNX_CHILDPROCESS_H
