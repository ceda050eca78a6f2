//===- RecomputePlan.h - Which activations to recompute ---------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The choice amp-recompute makes (docs/Recompute.md), as a problem over the
// forward's ops: each op the backward needs is either saved (its results
// stay live across the forward/backward boundary) or recomputed (cloned
// into the backward, which then needs its operands). Solvers: AOTAutograd's
// min-cut, its knapsack under a budget, Chen's sqrt(n) segments, and an
// exact MILP (GLPK) to measure them against.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_RECOMPUTEPLAN_H
#define AMP_DIALECT_AMP_TRANSFORMS_RECOMPUTEPLAN_H

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::amp {

/// Whether amp-recompute may clone `op`: its PrecisionOpInterface answer;
/// for amp ops, the scaled GEMM compute-intensive, casts, quantize and
/// dequantize cheap, loss-scaling and FP8 state ops never; other ops cheap
/// when pure and without regions.
RecomputeKind getRecomputeKind(Operation *op);

/// Why a value of an op of `kind` is kept, for remarks and the report
/// ("compute-intensive", "random", "never recomputed", "chosen by the
/// plan").
llvm::StringRef getSaveReason(RecomputeKind kind);

class RecomputeProblem {
public:
  /// Adds a forward op, in an order where operands come first. `kind`:
  /// whether it may be cloned; `flops` and `us`: what a clone costs.
  unsigned addNode(RecomputeKind kind, double flops, double us);
  /// Result `result` of `node` takes `bytes`; `liveAnyway`: it stays live
  /// past the backward whatever the plan (a function result, read by the
  /// optimizer), so keeping it costs nothing; `readByBackward`: a backward
  /// op reads it. Results nothing reads need not be added.
  void addResult(unsigned node, unsigned result, double bytes, bool liveAnyway,
                 bool readByBackward);
  /// `node` reads result `result` of the earlier node `operand`.
  void addOperand(unsigned node, unsigned operand, unsigned result);

  unsigned getNumNodes() const { return nodes.size(); }
  RecomputeKind getKind(unsigned node) const { return nodes[node].kind; }
  /// Whether no plan may clone `node`: random, never, or free to keep (all
  /// its read results live anyway).
  bool isAlwaysBanned(unsigned node) const;
  double getFlops(unsigned node) const { return nodes[node].flops; }

  struct Plan {
    llvm::SmallVector<bool> recomputed, saved;
    /// The bytes of the saved nodes' results that the backward or a clone
    /// reads, as the memory planner counts saved activations.
    double savedBytes = 0;
    double extraFlops = 0, extraUs = 0;
    unsigned numRecomputed = 0;
  };

  /// Recomputes the nodes of `candidates` that the backward needs, directly
  /// or through another recomputed node, and are not always banned; saves
  /// every other needed node.
  Plan evaluate(llvm::ArrayRef<bool> candidates) const;
  /// Nothing recomputed.
  Plan getSaveAll() const;
  /// AOTAutograd's min-cut: the least saved bytes among plans that clone no
  /// node of `banned` (nor an always-banned one). Ties go to saving values
  /// nearer the backward. With `timeWeight`, the least saved bytes plus
  /// `timeWeight` times the clones' modeled microseconds.
  Plan solveMinCut(llvm::ArrayRef<bool> banned, double timeWeight = 0) const;
  /// The bans of `mincut`: compute-intensive nodes.
  llvm::SmallVector<bool> getComputeIntensiveBans() const;
  /// The min-cut with only the fixed bans: the fewest saved bytes any plan
  /// reaches. Solved once.
  const Plan &getFloor() const;
  /// The min-cut with the compute-intensive nodes banned too (`mincut`'s
  /// plan). Solved once.
  const Plan &getComputeIntensiveFree() const;
  /// Whether a plan within `budgetBytes` may recompute compute-intensive
  /// nodes: only when no plan without them fits.
  bool mayRecomputeComputeIntensive(double budgetBytes) const;
  /// Plans of little modeled time within `budgetBytes`, fastest first and
  /// distinct, for amp-recompute to check with the memory planner; none
  /// recomputes a compute-intensive node when such a plan fits. They come
  /// from the min-cut, Lagrangian min-cuts of bytes plus weighted time, the
  /// hull's plans near the budget completed greedily, each also with the
  /// clones the budget does not need dropped; without the bans, also from
  /// AOTAutograd's knapsack, which keeps the compute-intensive nodes worth
  /// the most modeled time within the budget and solves the cut again. When
  /// even the floor (the min-cut with the fixed bans only) does not fit,
  /// `met` is false and the only plan is the floor.
  llvm::SmallVector<Plan> solveBudget(double budgetBytes, bool &met) const;
  /// The search of solveBudget among plans that clone no node of `bans`,
  /// from `start`, the min-cut under `bans`, which fits the budget: adds
  /// the plans it finds within the budget to `plans`.
  void searchWithin(double budgetBytes, llvm::ArrayRef<bool> bans,
                    const Plan &start,
                    llvm::SmallVectorImpl<Plan> &plans) const;
  /// `plan` with clones not in `bans` added, the most bytes freed per
  /// microsecond first, until it fits `budgetBytes` (or none frees bytes).
  Plan completeWithin(Plan plan, double budgetBytes,
                      llvm::ArrayRef<bool> bans) const;
  /// `plan` without the clones, costliest first, whose removal keeps it
  /// within `budgetBytes`.
  Plan improveWithin(Plan plan, double budgetBytes) const;
  /// Chen's sqrt(n): every ceil(sqrt(n))-th node kept, the rest recomputed
  /// (compute-intensive ones too).
  Plan solveSqrt() const;

  /// The exact optimum by MILP (GLPK): with `budgetBytes`, the least extra
  /// modeled time whose saved bytes fit it, compute-intensive nodes banned
  /// when a plan without them fits (as in solveBudget); without, the least
  /// saved bytes with compute-intensive nodes banned (what the min-cut
  /// solves). `proven` is false when the time limit stopped the search with
  /// a feasible plan. None with `error` set when there is no plan.
  std::optional<Plan> solveOptimal(std::optional<double> budgetBytes,
                                   double timeLimitSeconds, bool &proven,
                                   std::string &error) const;

private:
  struct Result {
    double bytes = 0;
    bool liveAnyway = false, readByBackward = false;
  };
  struct Operand {
    unsigned node, result;
  };
  struct Node {
    RecomputeKind kind;
    double flops, us;
    llvm::SmallVector<Result, 1> results;
    llvm::SmallVector<Operand, 2> operands;
    llvm::SmallVector<unsigned, 2> users;
  };
  bool isNeeded(unsigned node) const;
  /// What saving `node` costs the cut: its read results not live anyway.
  double getCutBytes(unsigned node) const;

  std::vector<Node> nodes;
  /// Drops the cached plans: the problem changed.
  void dropCachedPlans();

  /// getFloor's and getComputeIntensiveFree's plans, once solved; adding to
  /// the problem drops them.
  mutable std::optional<Plan> cachedFloor, cachedComputeIntensiveFree;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_RECOMPUTEPLAN_H
