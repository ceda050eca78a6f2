//===- Recompute.cpp - Recompute forward values in the backward -----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-recompute: builds a RecomputeProblem over a training step's forward,
// solves it in the chosen mode, clones the recomputed ops before their first
// backward readers, and checks the result with the memory planner
// (docs/Recompute.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/CostModel.h"
#include "amp/Dialect/AMP/Transforms/MemoryPlan.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Dialect/AMP/Transforms/RecomputePlan.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPRECOMPUTE
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

RecomputeKind mlir::amp::getRecomputeKind(Operation *op) {
  if (isa<AMPDialect>(op->getDialect())) {
    if (isa<ScaledMatMulOp>(op))
      return RecomputeKind::ComputeIntensive;
    // Loss scaling and the FP8 amax, scale and history ops are state.
    return isa<CastOp, QuantizeOp, DequantizeOp>(op) ? RecomputeKind::Cheap
                                                     : RecomputeKind::Never;
  }
  if (auto precisionOp = dyn_cast<PrecisionOpInterface>(op))
    return precisionOp.getRecomputeKind();
  return op->getNumRegions() == 0 && isPure(op) ? RecomputeKind::Cheap
                                                : RecomputeKind::Never;
}

namespace {
/// A memory budget: bytes, or a share of the saved activations.
struct Budget {
  double value;
  bool percent;
  double getBytes(double savedBytes) const {
    return percent ? savedBytes * value / 100 : value;
  }
};

/// Parses `<n>`, `<n>KiB`, `<n>MiB`, `<n>GiB` or `<n>%`.
std::optional<Budget> parseBudget(StringRef text) {
  static constexpr std::pair<StringLiteral, double> kUnits[] = {
      {"KiB", 1024.0},
      {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"%", 1.0}};
  text = text.trim();
  double factor = 1;
  bool percent = false;
  for (auto [suffix, unit] : kUnits)
    if (text.consume_back(suffix)) {
      factor = unit;
      percent = suffix == "%";
      break;
    }
  double value;
  if (text.trim().getAsDouble(value) || value < 0 || !std::isfinite(value))
    return std::nullopt;
  return Budget{value * factor, percent};
}

/// A function's forward ops, in block order, and each op's node.
struct ForwardOps {
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> nodes;
};

/// What one function's forward looks like to the planner, and the whole
/// step's FLOPs and modeled time before recomputation.
struct ForwardGraph : ForwardOps {
  RecomputeProblem problem;
  double totalFlops = 0, totalUs = 0;
};

struct RecomputePass : amp::impl::AMPRecomputeBase<RecomputePass> {
  using AMPRecomputeBase::AMPRecomputeBase;
  void runOnOperation() override;

private:
  /// The forward of `func` as a RecomputeProblem.
  ForwardGraph buildForward(func::FuncOp func, CostModel &model);
  /// Chooses the plan for `func`; none after an error.
  std::optional<RecomputeProblem::Plan>
  choosePlan(func::FuncOp func, const ForwardGraph &forward,
             std::optional<double> budgetBytes, const MemoryPlan &before,
             DimSizes &sizes, NamedAttrList &record);
  /// The plan of mode=budget (docs/Recompute.md, "Peak check").
  RecomputeProblem::Plan
  chooseBudgetPlan(func::FuncOp func, const ForwardGraph &forward,
                   double budgetBytes, const MemoryPlan &before,
                   DimSizes &sizes, NamedAttrList &record);
  /// The memory planner's peak for `func` after `plan`, on a copy.
  double measurePeak(func::FuncOp func, const ForwardGraph &forward,
                     const RecomputeProblem::Plan &plan, DimSizes &sizes);
  /// Clones the ops `plan` recomputes before their first backward readers
  /// in `body`, with a remark each when `remarks`.
  void rewrite(Block &body, const ForwardOps &forward,
               const RecomputeProblem::Plan &plan, bool remarks);
};
} // namespace

/// `value` rounded to a whole number, for messages.
static std::string formatCount(double value) {
  return std::to_string(int64_t(std::llround(value)));
}

/// Whether `reader` keeps a value live past the backward whatever the plan:
/// the function's return or the optimizer.
static bool keepsLive(Operation *reader) {
  return reader->hasTrait<OpTrait::IsTerminator>() ||
         getRegionName(reader) == "optimizer";
}

/// Whether `op` is a constant, whose value runtimes keep with the model:
/// keeping it costs nothing.
static bool isConstant(Operation *op) {
  return onnxg::isConstantNode(op) || op->hasTrait<OpTrait::ConstantLike>();
}

/// FLOPs of one run of `op`.
static double estimateOpFlops(Operation *op, DimSizes &sizes) {
  if (auto precisionOp = dyn_cast<PrecisionOpInterface>(op))
    return precisionOp.estimateFlops(sizes);
  if (auto matmul = dyn_cast<ScaledMatMulOp>(op)) {
    auto type = cast<RankedTensorType>(matmul.getA().getType());
    unsigned kDim = type.getRank() - (matmul.getTransposeA() ? 2 : 1);
    return 2 * sizes.getNumElements(matmul.getResult()) *
           sizes.getSize(matmul.getA(), kDim);
  }
  return amp::detail::estimateElementwiseFlops(op, sizes);
}

/// Modeled microseconds of one run of `op`.
static double estimateOpUs(Operation *op, double flops, CostModel &model) {
  if (auto castOp = dyn_cast<CastOp>(op))
    return model.getCastTimeUs(
        castOp.getInput(), cast<FloatType>(castOp.getType().getElementType()));
  if (auto precisionOp = dyn_cast<PrecisionOpInterface>(op)) {
    FloatType type = Float32Type::get(op->getContext());
    for (Value result : op->getResults())
      if (isFloatTensor(result.getType())) {
        type = cast<FloatType>(getElementTypeOrSelf(result.getType()));
        break;
      }
    return model.getOpTimeUs(precisionOp, type);
  }
  return model.getOtherOpTimeUs(op, flops, isa<ScaledMatMulOp>(op));
}

ForwardGraph RecomputePass::buildForward(func::FuncOp func, CostModel &model) {
  ForwardGraph forward;
  Block &body = func.getBody().front();
  DimSizes &sizes = model.getSizes();
  for (Operation &op : body.without_terminator()) {
    double flops = estimateOpFlops(&op, sizes);
    double us = estimateOpUs(&op, flops, model);
    forward.totalFlops += flops;
    forward.totalUs += us;
    if (getRegionName(&op) != "forward")
      continue;
    unsigned node = forward.problem.addNode(getRecomputeKind(&op), flops, us);
    forward.nodes[&op] = node;
    forward.ops.push_back(&op);
    for (Value operand : op.getOperands())
      if (Operation *producer = operand.getDefiningOp())
        if (auto it = forward.nodes.find(producer); it != forward.nodes.end())
          forward.problem.addOperand(node, it->second,
                                     cast<OpResult>(operand).getResultNumber());
    for (OpResult result : op.getResults()) {
      if (result.use_empty())
        continue;
      bool liveAnyway = isConstant(&op), readByBackward = false;
      for (Operation *user : result.getUsers()) {
        Operation *reader = body.findAncestorOpInBlock(*user);
        liveAnyway |= keepsLive(reader);
        readByBackward |= getRegionName(reader) == "backward";
      }
      forward.problem.addResult(node, result.getResultNumber(),
                                sizes.getBytes(result), liveAnyway,
                                readByBackward);
    }
  }
  return forward;
}

double RecomputePass::measurePeak(func::FuncOp func,
                                  const ForwardGraph &forward,
                                  const RecomputeProblem::Plan &plan,
                                  DimSizes &sizes) {
  IRMapping mapping;
  OwningOpRef<func::FuncOp> copy = func.clone(mapping);
  ForwardOps copied;
  for (auto [node, op] : llvm::enumerate(forward.ops)) {
    Operation *clone = mapping.lookup(op);
    copied.ops.push_back(clone);
    copied.nodes[clone] = node;
  }
  Block &body = copy->getBody().front();
  rewrite(body, copied, plan, /*remarks=*/false);
  return MemoryPlan(body, sizes).getPeakBytes();
}

RecomputeProblem::Plan
RecomputePass::chooseBudgetPlan(func::FuncOp func, const ForwardGraph &forward,
                                double budgetBytes, const MemoryPlan &before,
                                DimSizes &sizes, NamedAttrList &record) {
  Builder builder(&getContext());
  const RecomputeProblem &problem = forward.problem;
  double savedBefore = before.getSavedBytes();
  bool met = false;
  SmallVector<RecomputeProblem::Plan> asked =
      problem.solveBudget(budgetBytes, met);
  if (!met) {
    emitWarning(func.getLoc())
        << "amp-recompute: cannot reduce the saved activations "
           "below the budget of "
        << formatCount(budgetBytes) << " bytes; reached "
        << formatCount(asked.front().savedBytes) << ", from "
        << formatCount(savedBefore)
        << " (random, stateful and live values stay)";
    record.set("budget_met", builder.getBoolAttr(false));
    return asked.front();
  }
  // The fastest plan, which the peak check may pass over.
  record.set("fastest_extra_us",
             builder.getF64FloatAttr(asked.front().extraUs));
  if (!peakCheck)
    return asked.front();
  // The ladder: 90%, 80%, ..., 10% of the saved activations, then the
  // budget. Each rung takes its fastest plan whose peak is no higher than
  // the rung above's, among the plans found for it and for the smaller
  // rungs (which fit it too), so that a smaller budget never raises the
  // planner's peak (pytorch#197838). The rungs above the budget choose the
  // same whatever the budget.
  struct Candidate {
    RecomputeProblem::Plan plan;
    bool onGrid, recomputesComputeIntensive;
    size_t order;
  };
  std::vector<Candidate> candidates;
  auto addCandidate = [&](RecomputeProblem::Plan plan, bool onGrid) {
    bool computeIntensive = false;
    for (unsigned node = 0; node != problem.getNumNodes(); ++node)
      computeIntensive |=
          plan.recomputed[node] &&
          problem.getKind(node) == RecomputeKind::ComputeIntensive;
    candidates.push_back(
        {std::move(plan), onGrid, computeIntensive, candidates.size()});
  };
  SmallVector<double> rungs;
  for (int percent = 90; percent > 0; percent -= 10) {
    double rung = savedBefore * percent / 100;
    bool fits = false;
    SmallVector<RecomputeProblem::Plan> plans = problem.solveBudget(rung, fits);
    if (!fits)
      break;
    for (RecomputeProblem::Plan &plan : plans)
      addCandidate(std::move(plan), /*onGrid=*/true);
    if (rung > budgetBytes)
      rungs.push_back(rung);
  }
  for (RecomputeProblem::Plan &plan : asked)
    addCandidate(std::move(plan), /*onGrid=*/false);
  rungs.push_back(budgetBytes);
  // Fastest first; equals in the order found.
  llvm::sort(candidates, [](const Candidate &a, const Candidate &b) {
    return std::make_pair(a.plan.extraUs, a.order) <
           std::make_pair(b.plan.extraUs, b.order);
  });

  std::map<SmallVector<bool>, double> peaks;
  auto getPeak = [&](const RecomputeProblem::Plan &plan) {
    auto [it, inserted] = peaks.try_emplace(plan.recomputed, 0.0);
    if (inserted)
      it->second = measurePeak(func, forward, plan, sizes);
    return it->second;
  };
  // Of the plans that fit a rung with no bound met, the lowest peak among
  // the fastest few.
  constexpr unsigned kFallbackPlans = 16;
  double peakBound = before.getPeakBytes();
  const RecomputeProblem::Plan *chosen = nullptr;
  unsigned skipped = 0;
  for (double rung : rungs) {
    bool last = rung == budgetBytes;
    const RecomputeProblem::Plan *pick = nullptr, *lowest = nullptr;
    unsigned fitting = 0;
    skipped = 0;
    for (const Candidate &candidate : candidates) {
      if (candidate.plan.savedBytes > rung || (!last && !candidate.onGrid) ||
          // GEMMs are recomputed only on rungs no plan without them fits.
          (candidate.recomputesComputeIntensive &&
           !problem.mayRecomputeComputeIntensive(rung)))
        continue;
      double peak = getPeak(candidate.plan);
      if (peak <= peakBound) {
        pick = &candidate.plan;
        break;
      }
      ++skipped;
      if (!lowest || peak < getPeak(*lowest))
        lowest = &candidate.plan;
      if (++fitting == kFallbackPlans)
        break;
    }
    if (!pick)
      pick = lowest;
    if (!pick)
      continue;
    chosen = pick;
    peakBound = std::min(peakBound, getPeak(*chosen));
  }
  record.set("peak_checked_plans", builder.getI64IntegerAttr(peaks.size()));
  record.set("peak_skipped_plans", builder.getI64IntegerAttr(skipped));
  return *chosen;
}

std::optional<RecomputeProblem::Plan>
RecomputePass::choosePlan(func::FuncOp func, const ForwardGraph &forward,
                          std::optional<double> budgetBytes,
                          const MemoryPlan &before, DimSizes &sizes,
                          NamedAttrList &record) {
  Builder builder(&getContext());
  const RecomputeProblem &problem = forward.problem;
  if (mode == "mincut")
    return problem.getComputeIntensiveFree();
  if (mode == "sqrt")
    return problem.solveSqrt();
  if (mode == "budget")
    return chooseBudgetPlan(func, forward, *budgetBytes, before, sizes, record);
  // mode == "optimal"
  if (int64_t(problem.getNumNodes()) > optimalMaxOps.getValue()) {
    emitError(func.getLoc())
        << "amp-recompute: mode=optimal takes at most "
        << optimalMaxOps.getValue() << " forward ops (optimal-max-ops); '"
        << func.getSymName() << "' has " << problem.getNumNodes();
    return std::nullopt;
  }
  bool proven = false;
  std::string error;
  std::optional<RecomputeProblem::Plan> plan = problem.solveOptimal(
      budgetBytes, optimalTimeLimit.getValue(), proven, error);
  if (!plan) {
    emitError(func.getLoc()) << "amp-recompute: mode=optimal: " << error;
    return std::nullopt;
  }
  record.set("optimal_proven", builder.getBoolAttr(proven));
  if (!proven)
    emitWarning(func.getLoc())
        << "amp-recompute: mode=optimal: the MILP stopped after "
        << formatCount(optimalTimeLimit.getValue())
        << " s (optimal-time-limit) with a plan not proven "
           "optimal";
  return plan;
}

/// `name` with the suffix clones take ("" stays "": the exporter names it).
static std::string getCloneName(StringRef name) {
  return name.empty() ? "" : (name + ".recompute").str();
}

void RecomputePass::rewrite(Block &body, const ForwardOps &forward,
                            const RecomputeProblem::Plan &plan, bool remarks) {
  MLIRContext *ctx = &getContext();
  llvm::DenseMap<Operation *, Operation *> clones;
  auto isRecomputed = [&](Operation *op) {
    auto it = op ? forward.nodes.find(op) : forward.nodes.end();
    return it != forward.nodes.end() && plan.recomputed[it->second];
  };
  // The clone of `op` before `before`, after those of its operands.
  std::function<Operation *(Operation *, Operation *)> materialize =
      [&](Operation *op, Operation *before) -> Operation * {
    if (Operation *clone = clones.lookup(op))
      return clone;
    IRMapping mapping;
    for (Value operand : op->getOperands())
      if (isRecomputed(operand.getDefiningOp()))
        mapping.map(operand,
                    materialize(operand.getDefiningOp(), before)
                        ->getResult(cast<OpResult>(operand).getResultNumber()));
    OpBuilder builder(before);
    Operation *clone = builder.clone(*op, mapping);
    clone->setAttr(kRegionAttrName, builder.getStringAttr("backward"));
    clone->setAttr(kRecomputedAttrName, UnitAttr::get(ctx));
    StringRef nodeName;
    SmallVector<StringRef> outputNames;
    if (onnxg::getOnnxNames(op->getLoc(), nodeName, outputNames)) {
      SmallVector<std::string> names;
      for (StringRef name : outputNames)
        names.push_back(getCloneName(name));
      Location fileLoc =
          cast<NameLoc>(cast<FusedLoc>(op->getLoc()).getLocations().front())
              .getChildLoc();
      clone->setLoc(
          onnxg::makeNodeLoc(ctx, getCloneName(nodeName), names, fileLoc));
    }
    clones[op] = clone;
    if (remarks) {
      StringRef readerName = PrecisionPolicy::getNodeName(before);
      op->emitRemark() << "recomputed before '"
                       << (readerName.empty()
                               ? PrecisionPolicy::getOpTypeKey(before)
                               : readerName.str())
                       << "'";
    }
    return clone;
  };
  SmallVector<Operation *> backward;
  for (Operation &op : body.without_terminator())
    if (getRegionName(&op) == "backward")
      backward.push_back(&op);
  for (Operation *reader : backward) {
    reader->walk([&](Operation *nested) {
      for (OpOperand &use : nested->getOpOperands()) {
        Operation *producer = use.get().getDefiningOp();
        if (!producer || producer->getBlock() != &body ||
            !isRecomputed(producer))
          continue;
        Operation *clone = materialize(producer, reader);
        use.set(clone->getResult(cast<OpResult>(use.get()).getResultNumber()));
      }
    });
  }
  // A forward op only the backward read is now dead.
  for (Operation *op : llvm::reverse(forward.ops))
    if (isRecomputed(op) && op->use_empty())
      op->erase();
}

/// The reason `node` is saved, for remarks.
static StringRef getSaveReason(const RecomputeProblem &problem, unsigned node) {
  if (problem.getKind(node) == RecomputeKind::Cheap &&
      problem.isAlwaysBanned(node))
    return "live anyway";
  return getSaveReason(problem.getKind(node));
}

void RecomputePass::runOnOperation() {
  ModuleOp module = getOperation();
  static constexpr StringLiteral kModes[] = {"none", "sqrt", "mincut", "budget",
                                             "optimal"};
  if (!llvm::is_contained(kModes, StringRef(mode))) {
    emitError(module.getLoc()) << "amp-recompute: unknown mode '" << mode
                               << "' (none, sqrt, mincut, budget or optimal)";
    return signalPassFailure();
  }
  std::optional<Budget> budget;
  if (!memoryBudget.empty()) {
    budget = parseBudget(memoryBudget);
    if (!budget) {
      emitError(module.getLoc())
          << "amp-recompute: memory-budget='" << memoryBudget
          << "' is not a number of bytes, <n>KiB, <n>MiB, "
             "<n>GiB or <n>%";
      return signalPassFailure();
    }
    if (mode != "budget" && mode != "optimal") {
      emitError(module.getLoc())
          << "amp-recompute: memory-budget needs mode=budget "
             "or mode=optimal, not mode="
          << mode;
      return signalPassFailure();
    }
  } else if (mode == "budget") {
    emitError(module.getLoc())
        << "amp-recompute: mode=budget needs a memory-budget";
    return signalPassFailure();
  }
  if (mode == "none")
    return;
  std::optional<CostModel> model = CostModel::create(
      device, casts, defaultDimSize, dimSizes, module, "amp-recompute");
  if (!model)
    return signalPassFailure();
  DimSizes &sizes = model->getSizes();
  Builder builder(&getContext());

  bool anyTraining = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    Block &body = func.getBody().front();
    MemoryPlan before(body, sizes);
    if (!before.hasRegions() || llvm::none_of(body, [](Operation &op) {
          return getRegionName(&op) == "backward";
        }))
      continue;
    anyTraining = true;
    ForwardGraph forward = buildForward(func, *model);
    const RecomputeProblem &problem = forward.problem;
    std::optional<double> budgetBytes;
    if (budget)
      budgetBytes = budget->getBytes(before.getSavedBytes());
    NamedAttrList record;
    std::optional<RecomputeProblem::Plan> plan =
        choosePlan(func, forward, budgetBytes, before, sizes, record);
    if (!plan)
      return signalPassFailure();

    if (emitRemarks)
      for (unsigned node = 0; node != problem.getNumNodes(); ++node)
        if (plan->saved[node])
          forward.ops[node]->emitRemark()
              << "saved for the backward (" << getSaveReason(problem, node)
              << ")";
    std::map<std::string, int64_t> byType;
    for (unsigned node = 0; node != problem.getNumNodes(); ++node)
      if (plan->recomputed[node])
        ++byType[PrecisionPolicy::getOpTypeKey(forward.ops[node])];
    rewrite(body, forward, *plan, emitRemarks);

    MemoryPlan after(body, sizes);
    sizes.resetGuesses();
    if (budgetBytes && after.getSavedBytes() > *budgetBytes &&
        !record.get("budget_met"))
      emitWarning(func.getLoc())
          << "amp-recompute: the memory planner counts "
          << formatCount(after.getSavedBytes())
          << " bytes of saved activations, over the budget of "
          << formatCount(*budgetBytes);
    SmallVector<NamedAttribute> types;
    for (auto [type, count] : byType)
      types.push_back(
          builder.getNamedAttr(type, builder.getI64IntegerAttr(count)));
    record.set("mode", builder.getStringAttr(mode));
    if (budgetBytes)
      record.set("budget_bytes", builder.getF64FloatAttr(*budgetBytes));
    record.set("saved_bytes_before",
               builder.getF64FloatAttr(before.getSavedBytes()));
    record.set("saved_bytes_after",
               builder.getF64FloatAttr(after.getSavedBytes()));
    record.set("peak_bytes_before",
               builder.getF64FloatAttr(before.getPeakBytes()));
    record.set("peak_bytes_after",
               builder.getF64FloatAttr(after.getPeakBytes()));
    record.set("recomputed", builder.getI64IntegerAttr(plan->numRecomputed));
    record.set("recomputed_by_type", builder.getDictionaryAttr(types));
    record.set("extra_flops", builder.getF64FloatAttr(plan->extraFlops));
    record.set("flops_before", builder.getF64FloatAttr(forward.totalFlops));
    record.set("extra_us", builder.getF64FloatAttr(plan->extraUs));
    record.set("us_before", builder.getF64FloatAttr(forward.totalUs));
    func->setAttr(kRecomputeAttrName, record.getDictionary(&getContext()));
    if (emitRemarks)
      emitRemark(func.getLoc())
          << "amp-recompute: mode=" << mode << ": saved activations "
          << formatCount(before.getSavedBytes()) << " -> "
          << formatCount(after.getSavedBytes()) << " bytes, peak "
          << formatCount(before.getPeakBytes()) << " -> "
          << formatCount(after.getPeakBytes()) << " bytes, "
          << plan->numRecomputed << " ops recomputed, +"
          << llvm::formatv("{0:F2}",
                           forward.totalFlops > 0
                               ? 100 * plan->extraFlops / forward.totalFlops
                               : 0.0)
                 .str()
          << "% FLOPs";
  }
  if (!anyTraining)
    emitWarning(module.getLoc())
        << "amp-recompute: no function has forward and backward regions "
           "(amp-analyze-training marks them): nothing recomputed";
}
