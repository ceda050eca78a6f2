//===- StepGraph.h - Edits the step driver makes to a step ------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// How amp-run and amp-compile read a training step, and what they add to
// it before they lower it: an ONNX Runtime optimizer graph appended to the
// step (--optimizer), outputs for state the step keeps hidden (in-place
// accumulators, the overflow check), and the inputs that count optimizer
// updates.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_STEPDRIVER_STEPGRAPH_H
#define AMP_STEPDRIVER_STEPGRAPH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SourceMgr.h"

namespace amprun {

/// The tool that prints the step driver's errors ("amp-run" unless set).
extern const char *toolName;

/// Prints "<toolName>: error: <message>" and exits with status 1.
[[noreturn]] void fail(const llvm::Twine &message);

/// Reads an ONNX model, its inputs' symbolic dimensions given sizes by
/// `dims` ("name=N"; every one must have a size), or an MLIR file.
mlir::OwningOpRef<mlir::ModuleOp> importStep(llvm::StringRef path,
                                             llvm::ArrayRef<std::string> dims,
                                             mlir::MLIRContext &context,
                                             llvm::SourceMgr &sourceMgr);

/// The one graph of `module`, read from `path`.
mlir::func::FuncOp getGraph(mlir::ModuleOp module, llvm::StringRef path);

/// Returns `value` from `func` as an output named `name`, unless it is
/// returned already.
void addOutput(mlir::func::FuncOp func, mlir::Value value,
               llvm::StringRef name);

/// Appends `optimizer` to the training step `step`, as ONNX Runtime's
/// training API runs one after the other (docs/AmpRun.md).
void appendOptimizer(mlir::func::FuncOp step, mlir::func::FuncOp optimizer);

/// Makes the overflow check of dynamic loss scaling an output,
/// `amp.grads_finite`, and ONNX Runtime's in-place gradient accumulators
/// output `<buffer>.updated`, so that the buffers carry from step to step as
/// they would in place.
void exposeHiddenState(mlir::func::FuncOp func);

/// The names of the inputs that count an ONNX Runtime optimizer's updates
/// (input 1 of AdamOptimizer and AdamWOptimizer): bias correction divides by
/// 1 - alpha^step, so counting starts at 1.
llvm::StringSet<> findStepCounts(mlir::func::FuncOp func);

/// The names of the buffers ONNX Runtime's gradient accumulators
/// (InPlaceAccumulator, V2) add into: like the training API's gradient
/// buffers, they start at zero.
llvm::StringSet<> findAccumulatorBuffers(mlir::func::FuncOp func);

} // namespace amprun

#endif // AMP_STEPDRIVER_STEPGRAPH_H
