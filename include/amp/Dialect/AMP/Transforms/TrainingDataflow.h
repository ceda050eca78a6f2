//===- TrainingDataflow.h - A training step from its dataflow ---*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// What amp-analyze-training reads from a graph's dataflow rather than from
// markers (docs/TrainingGraphs.md): which outputs update which inputs by
// name, the forms of the backward seed, constant splats, and seed linearity
// from the op table's linear columns.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_TRAININGDATAFLOW_H
#define AMP_DIALECT_AMP_TRANSFORMS_TRAININGDATAFLOW_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::amp {

/// How a value depends on the backward seed.
enum class SeedDependence { Independent, Linear, Nonlinear };

/// Seed linearity over one function body: a value is `Linear` when it
/// depends on the seeds only through operands its op is linear in (the op
/// table's linear columns, docs/TrainingGraphs.md), `Nonlinear` when it
/// depends on them otherwise.
class SeedLinearity {
public:
  /// Propagates from `seeds` through `body` in order.
  SeedLinearity(Block &body, llvm::ArrayRef<Value> seeds);

  SeedDependence lookup(Value value) const { return dependence.lookup(value); }
  bool isLinear(Value value) const {
    return lookup(value) == SeedDependence::Linear;
  }
  bool dependsOnSeed(Value value) const {
    return lookup(value) != SeedDependence::Independent;
  }

  /// The linear values that an op not linear in them, or the function's
  /// return, reads, in body order: where the scale must come out.
  llvm::SmallVector<Value> getFrontier() const;

  /// The ops whose results depend on the seeds but not linearly.
  llvm::SmallVector<Operation *> getNonlinearOps() const;

private:
  Block &body;
  llvm::DenseMap<Value, SeedDependence> dependence;
};

/// The value of every element of a constant float tensor whose elements are
/// all equal (a Constant, ConstantOfShape or initializer, also through
/// Expand, Reshape, Squeeze, Unsqueeze, Identity and float Cast), else none.
std::optional<double> getSplatConstant(Value value);

/// True when `value` is a tensor with one element (a scalar factor: a
/// learning rate, a beta, a loss).
bool hasOneElement(Value value);

/// True when `value` is a constant tensor of zeros.
inline bool isConstantZero(Value value) {
  std::optional<double> splat = getSplatConstant(value);
  return splat && *splat == 0.0;
}

/// Whether an output named `output` updates an input named `input` by one of
/// the naming conventions of docs/TrainingGraphs.md (`new_X`, `X_new`,
/// `next_X`, `updated_X`, `X.updated`, `X_out`, `X.out`, `X'`, ...).
bool isUpdateName(llvm::StringRef output, llvm::StringRef input);

/// The inputs that `output` may update by its arithmetic, when the names
/// say nothing, nearest first, each with its distance: function arguments
/// of `output`'s type that are a term of an addition or selection on the way
/// to it (Add, Sub, Sum, Max, Min, Where's branches), scaled at most by
/// one-element factors, Neg, Identity, Cast and Reshape to its own shape,
/// within four ops (`p - lr * d`, `m * b1 + (1 - b1) * g`, `step + 1`; not
/// `dy * x`).
llvm::SmallVector<std::pair<BlockArgument, unsigned>>
getAffineUpdateSources(Value output);

/// The ways to split `spec` at a ':' into two names that `isPair` accepts:
/// tensor names may hold ':' themselves (`onnx::Mul_3`), so every ':' is
/// tried. One split is the answer; none or several are errors to report.
llvm::SmallVector<std::pair<llvm::StringRef, llvm::StringRef>>
getNamePairSplits(
    llvm::StringRef spec,
    llvm::function_ref<bool(llvm::StringRef, llvm::StringRef)> isPair);

/// `name` without a role prefix (`param.`, `state.`, ...), or `name`.
llvm::StringRef stripRolePrefix(llvm::StringRef name);

/// The backward seeds of `loss` in `body`, found by dataflow: the forms of
/// `ones_like(loss)` first, then constant splats with the mean's `1/N`
/// folded in. `forward` holds the ops the loss depends on,
/// `updatedInputs` the inputs the step updates (what else the forward reads
/// is data). Each seed must start a backward: an op linear in it reads
/// an activation or data. Returns none and sets `why` when no form is found.
llvm::SmallVector<Value> findSeeds(Block &body, Value loss,
                                   const llvm::DenseSet<Operation *> &forward,
                                   llvm::ArrayRef<Value> updatedInputs,
                                   std::string &why);

/// Appends an input of the step `func` named `name` with initial value
/// `value` (exported as an initializer): state the step carries, such as
/// the loss scale or an FP8 amax history.
Value addStateInput(func::FuncOp func, llvm::StringRef name,
                    DenseElementsAttr value);

/// Appends `value` to the results of `func` under the output name `name`
/// (`<input>.updated` for state that feeds the next step).
void addStateOutput(func::FuncOp func, llvm::StringRef name, Value value);

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_TRAININGDATAFLOW_H
