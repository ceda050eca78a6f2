//===- StepInterface.h - A step's inputs and outputs ------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// What a training step reads and writes, as the step driver feeds it: each
// input's name, type, initial value and role (parameter, carried state,
// update count), and each output's name, type and the input it carries
// into at the next step.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_STEPDRIVER_STEPINTERFACE_H
#define AMP_STEPDRIVER_STEPINTERFACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

#include <string>
#include <vector>

namespace amprun {
using mlir::ElementsAttr;
using mlir::RankedTensorType;

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
  /// A backward seed (ORTModule's output gradients): ones by default.
  bool isSeed = false;
};

/// A function result and the input it feeds in the next step (-1: none).
struct StepOutput {
  std::string name;
  RankedTensorType type;
  int carriedTo = -1;
};

/// Follows an integer input through reshapes to the ops that index with it;
/// returns the smallest size it indexes (0 when none is found).
int64_t findIndexBound(mlir::Value value, unsigned depth = 0);

/// Reads the step's inputs and outputs (after convert-onnxg-to-linalg,
/// which types what ONNX could not) and decides which output carries into
/// which input. `bounds` are the index ranges of the integer inputs.
void describeStep(mlir::func::FuncOp func, llvm::ArrayRef<int64_t> bounds,
                  const llvm::StringSet<> &stepCounts,
                  const llvm::StringSet<> &buffers,
                  llvm::ArrayRef<std::string> carryPairs,
                  bool restartAccumulators, std::vector<StepInput> &inputs,
                  std::vector<StepOutput> &outputs, std::string &loss);

/// What amp-run and amp-compile do to the graph of `module`, read from
/// `path`, before they lower it: `amp-pipeline{<ampPipeline>}` (or, without
/// one, amp-analyze-training with `lossName`), its hidden state exposed,
/// conversion to linalg, describeStep, and the graph's argument and result
/// attributes dropped (the initial values stay in `inputs`). `onDevice`
/// (CUDA) makes an If or Loop of a run-time condition an error. Returns the
/// graph; exits with a message on failure.
mlir::func::FuncOp prepareStep(mlir::ModuleOp module, llvm::StringRef path,
                               std::optional<llvm::StringRef> ampPipeline,
                               llvm::StringRef lossName,
                               llvm::ArrayRef<std::string> carryPairs,
                               bool restartAccumulators, bool onDevice,
                               std::vector<StepInput> &inputs,
                               std::vector<StepOutput> &outputs,
                               std::string &loss);

} // namespace amprun

#endif // AMP_STEPDRIVER_STEPINTERFACE_H
