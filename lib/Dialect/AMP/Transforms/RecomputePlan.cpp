//===- RecomputePlan.cpp - Which activations to recompute -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The min-cut is AOTAutograd's node-split graph: each node is an edge
// in -> out whose capacity is what saving it costs; an operand's out feeds
// its reader's in, a node the backward reads feeds the sink, a banned node
// hangs from the source. Saved nodes are the cut's in -> out edges; nodes
// on the sink side are recomputed.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/RecomputePlan.h"
#include "amp/Dialect/AMP/Transforms/MinCut.h"

#include "llvm/Support/ErrorHandling.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

using namespace mlir;
using namespace mlir::amp;

StringRef mlir::amp::getSaveReason(RecomputeKind kind) {
  switch (kind) {
  case RecomputeKind::Random:
    return "random";
  case RecomputeKind::Never:
    return "never recomputed";
  case RecomputeKind::ComputeIntensive:
    return "compute-intensive";
  case RecomputeKind::Cheap:
    return "chosen by the plan";
  }
  llvm_unreachable("unknown recompute kind");
}

unsigned RecomputeProblem::addNode(RecomputeKind kind, double flops,
                                   double us) {
  dropCachedPlans();
  nodes.push_back({kind, flops, us, {}, {}, {}});
  return nodes.size() - 1;
}

void RecomputeProblem::addResult(unsigned node, unsigned result, double bytes,
                                 bool liveAnyway, bool readByBackward) {
  dropCachedPlans();
  auto &results = nodes[node].results;
  if (results.size() <= result)
    results.resize(result + 1);
  results[result] = {bytes, liveAnyway, readByBackward};
}

void RecomputeProblem::addOperand(unsigned node, unsigned operand,
                                  unsigned result) {
  assert(operand < node && "operands come first");
  dropCachedPlans();
  auto &results = nodes[operand].results;
  if (results.size() <= result)
    results.resize(result + 1);
  nodes[node].operands.push_back({operand, result});
  nodes[operand].users.push_back(node);
}

bool RecomputeProblem::isNeeded(unsigned node) const {
  return llvm::any_of(nodes[node].results, [](const Result &result) {
    return result.readByBackward;
  });
}

double RecomputeProblem::getCutBytes(unsigned node) const {
  double bytes = 0;
  for (const Result &result : nodes[node].results)
    if (!result.liveAnyway)
      bytes += result.bytes;
  return bytes;
}

bool RecomputeProblem::isAlwaysBanned(unsigned node) const {
  RecomputeKind kind = nodes[node].kind;
  return kind == RecomputeKind::Random || kind == RecomputeKind::Never ||
         getCutBytes(node) == 0;
}

RecomputeProblem::Plan
RecomputeProblem::evaluate(llvm::ArrayRef<bool> candidates) const {
  unsigned count = nodes.size();
  Plan plan;
  plan.recomputed.assign(count, false);
  plan.saved.assign(count, false);
  // The results some reader needs kept, per node.
  std::vector<llvm::SmallVector<bool, 1>> read(count);
  std::vector<bool> needed(count, false);
  for (unsigned node = 0; node != count; ++node) {
    read[node].assign(nodes[node].results.size(), false);
    for (auto [index, result] : llvm::enumerate(nodes[node].results))
      if (result.readByBackward)
        read[node][index] = needed[node] = true;
  }
  // Readers come after their operands: walk back.
  for (unsigned node = count; node-- != 0;) {
    if (!needed[node])
      continue;
    if (!candidates[node] || isAlwaysBanned(node)) {
      plan.saved[node] = true;
      for (auto [index, result] : llvm::enumerate(nodes[node].results))
        if (read[node][index])
          plan.savedBytes += result.bytes;
      continue;
    }
    plan.recomputed[node] = true;
    ++plan.numRecomputed;
    plan.extraFlops += nodes[node].flops;
    plan.extraUs += nodes[node].us;
    for (const Operand &operand : nodes[node].operands) {
      needed[operand.node] = true;
      read[operand.node][operand.result] = true;
    }
  }
  return plan;
}

RecomputeProblem::Plan RecomputeProblem::getSaveAll() const {
  return evaluate(llvm::SmallVector<bool>(nodes.size(), false));
}

llvm::SmallVector<bool> RecomputeProblem::getComputeIntensiveBans() const {
  llvm::SmallVector<bool> banned(nodes.size());
  for (auto [index, node] : llvm::enumerate(nodes))
    banned[index] = node.kind == RecomputeKind::ComputeIntensive;
  return banned;
}

void RecomputeProblem::dropCachedPlans() {
  cachedFloor.reset();
  cachedComputeIntensiveFree.reset();
}

const RecomputeProblem::Plan &RecomputeProblem::getFloor() const {
  if (!cachedFloor)
    cachedFloor = solveMinCut(llvm::SmallVector<bool>(nodes.size(), false));
  return *cachedFloor;
}

const RecomputeProblem::Plan &
RecomputeProblem::getComputeIntensiveFree() const {
  if (!cachedComputeIntensiveFree)
    cachedComputeIntensiveFree = solveMinCut(getComputeIntensiveBans());
  return *cachedComputeIntensiveFree;
}

bool RecomputeProblem::mayRecomputeComputeIntensive(double budgetBytes) const {
  return getComputeIntensiveFree().savedBytes > budgetBytes;
}

RecomputeProblem::Plan
RecomputeProblem::solveMinCut(llvm::ArrayRef<bool> banned,
                              double timeWeight) const {
  unsigned count = nodes.size();
  // Steps to the backward, capped: saving nearer it breaks ties (AOTAutograd
  // weighs bytes by 1.1^distance; here the distance only orders equal
  // bytes).
  constexpr int64_t kDistanceCap = 63;
  std::vector<int64_t> distance(count, kDistanceCap);
  for (unsigned node = count; node-- != 0;) {
    if (isNeeded(node))
      distance[node] = 1;
    for (unsigned user : nodes[node].users)
      distance[node] = std::min(distance[node], distance[user] + 1);
  }
  // Vertices: one `in` per node, then one `out` per result, so that saving
  // a result costs its own bytes (LayerNorm's statistics, not its output).
  std::vector<unsigned> firstOut(count);
  unsigned vertices = count;
  for (unsigned node = 0; node != count; ++node) {
    firstOut[node] = vertices;
    vertices += nodes[node].results.size();
  }
  MinCutGraph graph(vertices);
  for (unsigned node = 0; node != count; ++node) {
    unsigned in = node;
    if (banned[node] || isAlwaysBanned(node))
      graph.addInfiniteEdge(graph.getSource(), in);
    else if (timeWeight > 0)
      // A clone's modeled time, in the bytes' units.
      graph.addEdge(
          graph.getSource(), in,
          std::llround(std::min(
              timeWeight * nodes[node].us * (kDistanceCap + 1), 1e15)));
    for (auto [index, result] : llvm::enumerate(nodes[node].results)) {
      unsigned out = firstOut[node] + index;
      double bytes = result.liveAnyway ? 0.0 : result.bytes;
      graph.addEdge(in, out,
                    std::llround(bytes) * (kDistanceCap + 1) + distance[node]);
      if (result.readByBackward)
        graph.addInfiniteEdge(out, graph.getSink());
    }
    for (const Operand &operand : nodes[node].operands)
      graph.addInfiniteEdge(firstOut[operand.node] + operand.result, in);
  }
  std::vector<bool> sourceSide = graph.solve();
  llvm::SmallVector<bool> candidates(count);
  for (unsigned node = 0; node != count; ++node)
    candidates[node] = !sourceSide[node];
  return evaluate(candidates);
}

/// The items of most total value whose weights fit `capacity`: a 0/1
/// knapsack by dynamic programming over weights in `kBuckets` steps,
/// rounded up so that the choice always fits.
static llvm::SmallVector<bool> solveKnapsack(llvm::ArrayRef<double> weights,
                                             llvm::ArrayRef<double> values,
                                             double capacity) {
  constexpr unsigned kBuckets = 4096;
  unsigned count = weights.size();
  llvm::SmallVector<bool> chosen(count, false);
  if (capacity <= 0 || count == 0)
    return chosen;
  double unit = capacity / kBuckets;
  std::vector<double> best(kBuckets + 1, 0.0);
  std::vector<std::vector<bool>> took(count,
                                      std::vector<bool>(kBuckets + 1, false));
  for (unsigned item = 0; item != count; ++item) {
    double steps = std::ceil(weights[item] / unit);
    if (steps > kBuckets)
      continue;
    int weight = int(steps);
    for (int room = kBuckets; room >= weight; --room) {
      double value = best[room - weight] + values[item];
      if (value > best[room]) {
        best[room] = value;
        took[item][room] = true;
      }
    }
  }
  unsigned room = kBuckets;
  for (unsigned item = count; item-- != 0;) {
    if (!took[item][room])
      continue;
    chosen[item] = true;
    room -= unsigned(std::ceil(weights[item] / unit));
  }
  return chosen;
}

RecomputeProblem::Plan
RecomputeProblem::improveWithin(Plan plan, double budgetBytes) const {
  // Passes over the clones, the costliest first: one that the budget does
  // not need goes.
  for (unsigned pass = 0; pass != 4; ++pass) {
    llvm::SmallVector<unsigned> clones;
    for (unsigned node = 0, e = nodes.size(); node != e; ++node)
      if (plan.recomputed[node])
        clones.push_back(node);
    llvm::sort(clones, [&](unsigned a, unsigned b) {
      return std::make_pair(-nodes[a].us, a) < std::make_pair(-nodes[b].us, b);
    });
    bool changed = false;
    for (unsigned node : clones) {
      if (!plan.recomputed[node])
        continue;
      llvm::SmallVector<bool> candidates(plan.recomputed);
      candidates[node] = false;
      Plan smaller = evaluate(candidates);
      if (smaller.savedBytes <= budgetBytes && smaller.extraUs < plan.extraUs) {
        plan = std::move(smaller);
        changed = true;
      }
    }
    if (!changed)
      break;
  }
  return plan;
}

/// Adds `plan` to `plans` when it fits `budgetBytes`, and the plan without
/// the clones the budget does not need (cheaper, but often with a higher
/// peak: amp-recompute checks both).
static void addWithin(const RecomputeProblem &problem,
                      RecomputeProblem::Plan plan, double budgetBytes,
                      llvm::SmallVectorImpl<RecomputeProblem::Plan> &plans) {
  if (plan.savedBytes > budgetBytes)
    return;
  plans.push_back(problem.improveWithin(plan, budgetBytes));
  plans.push_back(std::move(plan));
}

llvm::SmallVector<RecomputeProblem::Plan>
RecomputeProblem::solveBudget(double budgetBytes, bool &met) const {
  llvm::SmallVector<bool> noBans(nodes.size(), false);
  const Plan &floor = getFloor();
  met = floor.savedBytes <= budgetBytes;
  if (!met)
    return {floor};
  llvm::SmallVector<Plan> plans;
  // GEMMs are recomputed only when no plan without them fits.
  llvm::SmallVector<bool> bans = getComputeIntensiveBans();
  const Plan &gemmFree = getComputeIntensiveFree();
  if (!mayRecomputeComputeIntensive(budgetBytes)) {
    searchWithin(budgetBytes, bans, gemmFree, plans);
  } else {
    searchWithin(budgetBytes, noBans, floor, plans);
    // Just over the budget, the GEMM-free plan needs a few clones more:
    // greedily, GEMMs included.
    addWithin(*this, completeWithin(gemmFree, budgetBytes, noBans), budgetBytes,
              plans);
    // AOTAutograd's knapsack: keep the compute-intensive nodes worth the
    // most modeled time within the budget, unban the others, solve the cut
    // again. Its items: the compute-intensive nodes the floor recomputes,
    // weighing the bytes keeping them costs.
    llvm::SmallVector<unsigned> items;
    llvm::SmallVector<double> weights, values;
    for (unsigned node = 0, e = nodes.size(); node != e; ++node) {
      if (!bans[node] || !floor.recomputed[node])
        continue;
      items.push_back(node);
      weights.push_back(getCutBytes(node));
      values.push_back(nodes[node].us);
    }
    // Room for the items: the budget less what the floor keeps anyway;
    // tightened by each plan's excess, as the re-solved cut may keep other
    // values than the items.
    double capacity = budgetBytes - floor.savedBytes;
    for (unsigned attempt = 0; attempt != 16 && capacity > 0; ++attempt) {
      llvm::SmallVector<bool> keep = solveKnapsack(weights, values, capacity);
      llvm::SmallVector<bool> relaxed(nodes.size(), false);
      for (auto [index, node] : llvm::enumerate(items))
        relaxed[node] = keep[index];
      Plan plan = solveMinCut(relaxed);
      if (plan.savedBytes <= budgetBytes) {
        addWithin(*this, std::move(plan), budgetBytes, plans);
        break;
      }
      capacity -= plan.savedBytes - budgetBytes;
    }
  }
  // Fastest first, in the order found among equals; equal clone sets once.
  llvm::SmallVector<unsigned> order(plans.size());
  std::iota(order.begin(), order.end(), 0u);
  llvm::sort(order, [&](unsigned a, unsigned b) {
    return std::make_pair(plans[a].extraUs, a) <
           std::make_pair(plans[b].extraUs, b);
  });
  llvm::SmallVector<Plan> distinct;
  for (unsigned index : order)
    if (llvm::none_of(distinct, [&](const Plan &other) {
          return other.recomputed == plans[index].recomputed;
        }))
      distinct.push_back(std::move(plans[index]));
  return distinct;
}

void RecomputeProblem::searchWithin(double budgetBytes,
                                    llvm::ArrayRef<bool> bans,
                                    const Plan &start,
                                    llvm::SmallVectorImpl<Plan> &plans) const {
  addWithin(*this, start, budgetBytes, plans);
  // The Lagrangian: one min-cut of bytes plus `weight` times the modeled
  // time gives a plan on the lower hull of the bytes/time front; the
  // largest weight that still fits the budget, by bisection over its
  // decades (bytes per microsecond).
  double low = 1e-6, high = 1e12;
  // Every distinct hull plan on each side of the budget.
  std::map<double, Plan> under, over;
  for (unsigned step = 0; step != 40; ++step) {
    double weight = std::sqrt(low * high);
    Plan weighed = solveMinCut(bans, weight);
    if (weighed.savedBytes <= budgetBytes) {
      low = weight;
      under.emplace(weighed.savedBytes, std::move(weighed));
    } else {
      high = weight;
      over.emplace(weighed.savedBytes, std::move(weighed));
    }
  }
  // The hull's plans nearest the budget: those under it as they are, those
  // over it completed greedily (the clone that frees the most bytes per
  // microsecond until it fits).
  constexpr unsigned kStarts = 4;
  unsigned started = 0;
  for (auto it = under.rbegin(); it != under.rend() && started != kStarts;
       ++it, ++started)
    addWithin(*this, it->second, budgetBytes, plans);
  started = 0;
  for (auto it = over.begin(); it != over.end() && started != kStarts;
       ++it, ++started)
    addWithin(*this, completeWithin(it->second, budgetBytes, bans), budgetBytes,
              plans);
}

RecomputeProblem::Plan
RecomputeProblem::completeWithin(Plan plan, double budgetBytes,
                                 llvm::ArrayRef<bool> bans) const {
  constexpr unsigned kDepth = 4;
  for (unsigned step = 0; step != 256 && plan.savedBytes > budgetBytes;
       ++step) {
    std::optional<Plan> bestStep;
    double bestRatio = 0;
    auto consider = [&](llvm::ArrayRef<bool> candidates) {
      Plan larger = evaluate(candidates);
      double freed = plan.savedBytes - larger.savedBytes;
      if (freed <= 0)
        return false;
      double ratio = freed / std::max(larger.extraUs - plan.extraUs, 1e-9);
      if (!bestStep || ratio > bestRatio) {
        bestRatio = ratio;
        bestStep = std::move(larger);
      }
      return true;
    };
    auto mayClone = [&](unsigned node) {
      return !bans[node] && !isAlwaysBanned(node);
    };
    for (unsigned node = 0, e = nodes.size(); node != e; ++node) {
      if (!plan.saved[node] || !mayClone(node))
        continue;
      // The node alone; when that frees nothing, with its producers up to
      // kDepth levels up (a Split frees nothing alone when its GEMM's
      // output must be kept instead).
      llvm::SmallVector<bool> candidates(plan.recomputed);
      candidates[node] = true;
      if (consider(candidates))
        continue;
      llvm::SmallVector<unsigned> frontier{node};
      for (unsigned level = 0; level != kDepth && !frontier.empty(); ++level) {
        llvm::SmallVector<unsigned> next;
        for (unsigned reader : frontier)
          for (const Operand &operand : nodes[reader].operands)
            if (!candidates[operand.node] && mayClone(operand.node)) {
              candidates[operand.node] = true;
              next.push_back(operand.node);
            }
        if (!next.empty())
          consider(candidates);
        frontier = std::move(next);
      }
    }
    if (!bestStep)
      break;
    plan = std::move(*bestStep);
  }
  return plan;
}

RecomputeProblem::Plan RecomputeProblem::solveSqrt() const {
  unsigned count = nodes.size();
  unsigned segment =
      std::max(1u, unsigned(std::ceil(std::sqrt(double(count)))));
  llvm::SmallVector<bool> candidates(count, true);
  for (unsigned node = segment - 1; node < count; node += segment)
    candidates[node] = false;
  return evaluate(candidates);
}

namespace {
/// Frees a GLPK problem.
struct GLPKDeleter {
  void operator()(glp_prob *problem) const { glp_delete_prob(problem); }
};
} // namespace

std::optional<RecomputeProblem::Plan>
RecomputeProblem::solveOptimal(std::optional<double> budgetBytes,
                               double timeLimitSeconds, bool &proven,
                               std::string &error) const {
  unsigned count = nodes.size();
  // GEMMs are recomputed only when no plan without them fits the budget;
  // the min-cut, exact for the least bytes, says whether one does.
  bool banComputeIntensive =
      !budgetBytes || !mayRecomputeComputeIntensive(*budgetBytes);
  glp_term_out(GLP_OFF);
  std::unique_ptr<glp_prob, GLPKDeleter> owner(glp_create_prob());
  glp_prob *lp = owner.get();
  glp_set_obj_dir(lp, GLP_MIN);
  // Columns: r[node] (recomputed), then s[node, result] (kept) for each
  // result a reader may need.
  if (count != 0)
    glp_add_cols(lp, count);
  for (unsigned node = 0; node != count; ++node) {
    int column = node + 1;
    glp_set_col_kind(lp, column, GLP_BV);
    bool banned = isAlwaysBanned(node) ||
                  (banComputeIntensive &&
                   nodes[node].kind == RecomputeKind::ComputeIntensive);
    if (banned)
      glp_set_col_bnds(lp, column, GLP_FX, 0, 0);
    if (budgetBytes)
      glp_set_obj_coef(lp, column, nodes[node].us);
  }
  std::vector<llvm::SmallVector<int, 1>> keptColumn(count);
  for (unsigned node = 0; node != count; ++node) {
    for (const Result &result : nodes[node].results) {
      int column = glp_add_cols(lp, 1);
      glp_set_col_kind(lp, column, GLP_BV);
      if (!budgetBytes && !result.liveAnyway)
        glp_set_obj_coef(lp, column, result.bytes);
      keptColumn[node].push_back(column);
    }
  }
  auto addRow = [&](llvm::ArrayRef<int> columns, llvm::ArrayRef<double> factors,
                    int bound, double low, double high) {
    int row = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, bound, low, high);
    // GLPK's arrays start at 1.
    std::vector<int> index{0};
    std::vector<double> value{0};
    index.insert(index.end(), columns.begin(), columns.end());
    value.insert(value.end(), factors.begin(), factors.end());
    glp_set_mat_row(lp, row, columns.size(), index.data(), value.data());
  };
  std::vector<int> budgetColumns;
  std::vector<double> budgetBytesPerColumn;
  for (unsigned node = 0; node != count; ++node) {
    int recomputed = node + 1;
    for (auto [index, result] : llvm::enumerate(nodes[node].results)) {
      int kept = keptColumn[node][index];
      // What the backward reads is kept or recomputed.
      if (result.readByBackward)
        addRow({kept, recomputed}, {1, 1}, GLP_LO, 1, 0);
      budgetColumns.push_back(kept);
      budgetBytesPerColumn.push_back(result.bytes);
    }
    // A clone's operands are kept or recomputed.
    for (const Operand &operand : nodes[node].operands)
      addRow({keptColumn[operand.node][operand.result], int(operand.node + 1),
              recomputed},
             {1, 1, -1}, GLP_LO, 0, 0);
  }
  if (budgetBytes && !budgetColumns.empty())
    addRow(budgetColumns, budgetBytesPerColumn, GLP_UP, 0, *budgetBytes);

  glp_iocp parameters;
  glp_init_iocp(&parameters);
  parameters.presolve = GLP_ON;
  parameters.msg_lev = GLP_MSG_OFF;
  parameters.tm_lim = int(std::min(timeLimitSeconds * 1e3, 2e9));
  int status = glp_intopt(lp, &parameters);
  int found = glp_mip_status(lp);
  if (found != GLP_OPT && found != GLP_FEAS) {
    error =
        found == GLP_NOFEAS || status == GLP_ENOPFS ? "no plan fits the budget"
        : status == GLP_ETMLIM ? "the time limit passed before a plan was found"
                               : "GLPK failed (glp_intopt returned " +
                                     std::to_string(status) + ")";
    return std::nullopt;
  }
  proven = found == GLP_OPT;
  llvm::SmallVector<bool> candidates(count);
  for (unsigned node = 0; node != count; ++node)
    candidates[node] = glp_mip_col_val(lp, node + 1) > 0.5;
  return evaluate(candidates);
}
