//===- ChildProcess.cpp - Run libonnx code in a forked child --------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::onnxg;

/// Writes all of `bytes` to `fd`.
static bool writeAll(int fd, llvm::StringRef bytes) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += n;
  }
  return true;
}

LogicalResult
ChildProcess::start(llvm::function_ref<int(std::string &answer)> body) {
  int fds[2];
  if (pipe(fds) != 0)
    return failure();
  pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return failure();
  }
  if (pid == 0) {
    close(fds[0]);
    // A crash here is an expected outcome: die quietly, without the
    // parent's crash handlers.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
      signal(sig, SIG_DFL);
    int devNull = open("/dev/null", O_WRONLY);
    if (devNull >= 0)
      dup2(devNull, STDERR_FILENO);
    std::string answer;
    int status = body(answer);
    if (!writeAll(fds[1], answer))
      status = 1;
    close(fds[1]);
    _exit(status);
  }
  close(fds[1]);
  fd = fds[0];
  return success();
}

FailureOr<std::string> ChildProcess::finish() {
  std::string answer;
  char buffer[1 << 16];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    answer.append(buffer, n);
  }
  close(fd);
  fd = -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  pid = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return failure();
  return answer;
}

ChildProcess::~ChildProcess() {
  if (fd >= 0)
    close(fd);
  if (pid > 0) {
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}
