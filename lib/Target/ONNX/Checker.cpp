//===- Checker.cpp - onnx.checker's full check on exported models ---------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// "Valid output or no output": every ONNX file amp-opt writes goes through
// libonnx's checker first. The check runs in a child process (libonnx
// crashes on some malformed models) and judges the input too when the
// output fails, to tell a model amp-opt broke from one that came broken.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"
#include "ChildProcess.h"
#include "NewerSchemas.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include <unistd.h>

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

using namespace mlir;
using namespace mlir::onnxg;

namespace {
/// What the full check says of one model: the first byte of its answer,
/// the message follows.
enum Verdict : char {
  kPasses = 'p',
  kFails = 'f',
  /// The model's IR version or an opset is newer than libonnx knows.
  kBeyondChecker = 'b',
};
} // namespace

/// `message` on one line: libonnx's span several.
static std::string joinLines(llvm::StringRef message) {
  llvm::SmallVector<llvm::StringRef> lines;
  message.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  return llvm::join(lines, " ");
}

/// The verdict on `model` (which shape inference annotates), then its
/// message.
static std::string checkModel(onnx::ModelProto &model) {
  if (model.ir_version() > onnx::IR_VERSION)
    return std::string(1, kBeyondChecker) + "IR version " +
           std::to_string(model.ir_version()) + " (libonnx knows up to " +
           std::to_string(onnx::IR_VERSION) + ")";
  const auto &known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    auto range = known.Map().find(domain);
    if (range != known.Map().end() && opset.version() > range->second.second)
      return std::string(1, kBeyondChecker) + "opset " +
             std::to_string(opset.version()) + " of domain '" + domain +
             "' (libonnx knows up to " + std::to_string(range->second.second) +
             ")";
  }
  try {
    onnx::checker::check_model(model);
    mlir::onnxg::fixShapeInference();
    onnx::ShapeInferenceOptions options{/*check_type=*/true,
                                        /*error_mode=*/1,
                                        /*enable_data_propagation=*/false};
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &error) {
    return std::string(1, kFails) + joinLines(error.what());
  }
  return std::string(1, kPasses);
}

/// Makes `dir` the child's working folder, where the checker looks for
/// external data ("" is the current one).
static void enterFolder(llvm::StringRef dir) {
  if (!dir.empty())
    (void)chdir(dir.str().c_str());
}

LogicalResult OutputCheck::start(onnx::ModelProto &output,
                                 llvm::StringRef outputDir,
                                 llvm::StringRef input,
                                 llvm::StringRef inputDir) {
  // The child works on its copy-on-write image of `output`, and answers the
  // output's verdict, then the input's after a NUL when the output fails.
  llvm::SmallString<256> here;
  (void)llvm::sys::fs::current_path(here);
  return child.start([&](std::string &answer) {
    enterFolder(outputDir);
    answer = checkModel(output);
    if (answer.front() != kFails || input.empty())
      return 0;
    enterFolder(here);
    enterFolder(inputDir);
    onnx::ModelProto model;
    answer += '\0';
    if (model.ParseFromArray(input.data(), static_cast<int>(input.size())))
      answer += checkModel(model);
    else
      answer += std::string(1, kFails) + "the protobuf cannot be parsed";
    return 0;
  });
}

LogicalResult OutputCheck::finish(Location loc) {
  FailureOr<std::string> answer = child.finish();
  if (failed(answer) || answer->empty()) {
    emitWarning(loc) << "onnx.checker crashed or could not run on the ONNX "
                        "output; it is written unchecked";
    return success();
  }
  auto [outputVerdict, inputVerdict] = llvm::StringRef(*answer).split('\0');
  llvm::StringRef why = outputVerdict.drop_front();
  switch (outputVerdict.front()) {
  case kPasses:
    return success();
  case kBeyondChecker:
    emitRemark(loc) << "the ONNX output is not checked: it has " << why;
    return success();
  default:
    break;
  }
  if (!inputVerdict.empty() && inputVerdict.front() == kPasses)
    return emitError(loc)
           << "the ONNX output would not pass onnx.checker, although the "
              "input does: "
           << why
           << "; nothing was written (a bug in amp-opt: please report it "
              "with the input and the options)";
  InFlightDiagnostic warning =
      emitWarning(loc) << "the ONNX output does not pass onnx.checker: " << why;
  if (!inputVerdict.empty())
    warning << " (neither does the input: " << inputVerdict.drop_front() << ")";
  return success();
}
