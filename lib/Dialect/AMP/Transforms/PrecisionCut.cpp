//===- PrecisionCut.cpp - Two-label precision assignment by min-cut -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The cut graph: the source side is low precision, the sink side FP32. An
// op's edge from the source carries its FP32 time and its edge to the sink
// its low time (less the smaller of the two). A cast shared by several
// consumers is one auxiliary node tied to them by infinite edges and to its
// producer (or a terminal) by the cast's time, so that it is paid once.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/PrecisionCut.h"
#include "amp/Dialect/AMP/Transforms/MinCut.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdint>

using namespace mlir::amp;

unsigned PrecisionCut::addOp(double fp32Us, double lowUs, Pin pin) {
  ops.push_back({fp32Us, lowUs, pin});
  return ops.size() - 1;
}

/// `consumers` without repeats, in their order.
static llvm::SmallVector<unsigned, 2>
uniqueConsumers(llvm::ArrayRef<unsigned> consumers) {
  llvm::SmallVector<unsigned, 2> unique;
  for (unsigned consumer : consumers)
    if (!llvm::is_contained(unique, consumer))
      unique.push_back(consumer);
  return unique;
}

void PrecisionCut::addResult(unsigned producer,
                             llvm::ArrayRef<unsigned> consumers,
                             bool otherReaders, double upUs, double downUs) {
  terms.push_back({static_cast<int>(producer), uniqueConsumers(consumers),
                   otherReaders, upUs, downUs, /*foldable=*/false});
}

void PrecisionCut::addInput(llvm::ArrayRef<unsigned> consumers,
                            bool otherReaders, double downUs, bool foldable) {
  if (!consumers.empty())
    terms.push_back(
        {-1, uniqueConsumers(consumers), otherReaders, 0, downUs, foldable});
}

double PrecisionCut::evaluateTerm(const Term &term, llvm::ArrayRef<bool> low) {
  bool anyLow =
      llvm::any_of(term.consumers, [&](unsigned c) { return low[c]; });
  bool anyFP32 =
      llvm::any_of(term.consumers, [&](unsigned c) { return !low[c]; });
  if (term.producer < 0) {
    if (!anyLow)
      return 0;
    bool folded = term.foldable && !term.otherReaders && !anyFP32;
    return folded ? 0 : term.downUs;
  }
  if (low[term.producer])
    return term.otherReaders || anyFP32 ? term.upUs : 0;
  return anyLow ? term.downUs : 0;
}

double PrecisionCut::evaluate(llvm::ArrayRef<bool> low) const {
  double total = 0;
  for (auto [index, op] : llvm::enumerate(ops))
    total += low[index] ? op.lowUs : op.fp32Us;
  for (const Term &term : terms)
    total += evaluateTerm(term, low);
  return total;
}

llvm::SmallVector<bool> PrecisionCut::getBaseline() const {
  llvm::SmallVector<bool> low(ops.size());
  for (auto [index, op] : llvm::enumerate(ops))
    low[index] = op.pin == Pin::Low;
  return low;
}

/// A capacity in whole nanoseconds, the model's resolution: smaller
/// differences are ties.
static int64_t toNs(double us) { return std::llround(std::max(us, 0.0) * 1e3); }

llvm::SmallVector<bool> PrecisionCut::solve() const {
  MinCutGraph graph(ops.size());
  unsigned source = graph.getSource(), sink = graph.getSink();
  // Terminal edges: what an op pays at each label, beyond the smaller.
  std::vector<double> fp32Us(ops.size()), lowUs(ops.size());
  for (auto [index, op] : llvm::enumerate(ops)) {
    fp32Us[index] = op.fp32Us;
    lowUs[index] = op.lowUs;
  }
  for (const Term &term : terms) {
    if (term.producer < 0) {
      bool foldable = term.foldable && !term.otherReaders;
      // Folded when all consumers agree: one consumer never pays.
      if (foldable && term.consumers.size() == 1)
        continue;
      // downUs when any consumer is low...
      if (term.consumers.size() == 1) {
        lowUs[term.consumers[0]] += term.downUs;
      } else {
        unsigned anyLow = graph.addVertex();
        for (unsigned consumer : term.consumers)
          graph.addInfiniteEdge(consumer, anyLow);
        graph.addEdge(anyLow, sink, toNs(term.downUs));
      }
      // ...plus downUs when any is FP32, less downUs (a constant): paid
      // when they disagree.
      if (foldable) {
        unsigned anyFP32 = graph.addVertex();
        graph.addEdge(source, anyFP32, toNs(term.downUs));
        for (unsigned consumer : term.consumers)
          graph.addInfiniteEdge(anyFP32, consumer);
      }
      continue;
    }
    unsigned producer = term.producer;
    // A cast back when the producer is low and a reader is FP32.
    if (term.otherReaders) {
      lowUs[producer] += term.upUs;
    } else if (term.consumers.size() == 1) {
      graph.addEdge(producer, term.consumers[0], toNs(term.upUs));
    } else if (!term.consumers.empty()) {
      unsigned castUp = graph.addVertex();
      graph.addEdge(producer, castUp, toNs(term.upUs));
      for (unsigned consumer : term.consumers)
        graph.addInfiniteEdge(castUp, consumer);
    }
    // A cast down when the producer is FP32 and a consumer is low.
    if (term.consumers.size() == 1) {
      graph.addEdge(term.consumers[0], producer, toNs(term.downUs));
    } else if (!term.consumers.empty()) {
      unsigned castDown = graph.addVertex();
      for (unsigned consumer : term.consumers)
        graph.addInfiniteEdge(consumer, castDown);
      graph.addEdge(castDown, producer, toNs(term.downUs));
    }
  }
  for (auto [index, op] : llvm::enumerate(ops)) {
    double common = std::min(fp32Us[index], lowUs[index]);
    if (op.pin == Pin::Low)
      graph.addInfiniteEdge(source, index);
    else
      graph.addEdge(source, index, toNs(fp32Us[index] - common));
    if (op.pin == Pin::FP32)
      graph.addInfiniteEdge(index, sink);
    else
      graph.addEdge(index, sink, toNs(lowUs[index] - common));
  }
  std::vector<bool> sourceSide = graph.solve();
  return llvm::SmallVector<bool>(sourceSide.begin(),
                                 sourceSide.begin() + ops.size());
}
