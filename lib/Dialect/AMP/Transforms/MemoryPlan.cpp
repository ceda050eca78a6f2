//===- MemoryPlan.cpp - Live bytes of a training step ---------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/MemoryPlan.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"

#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace mlir::amp;

MemoryPlan::MemoryPlan(Block &body, DimSizes &sizes) {
  for (BlockArgument argument : body.getArguments())
    inputBytes += sizes.getBytes(argument);
  llvm::DenseMap<Operation *, size_t> index;
  for (auto [position, op] : llvm::enumerate(body))
    index[&op] = position;
  size_t count = index.size();

  // Live ranges, and the activations a backward op reads.
  for (Operation &op : body) {
    bool forward = getRegionName(&op) == "forward";
    regions |= !getRegionName(&op).empty();
    for (Value result : op.getResults()) {
      Interval interval{
          {result, sizes.getBytes(result)}, index[&op], index[&op]};
      bool readByBackward = false;
      for (OpOperand &use : result.getUses()) {
        Operation *reader = body.findAncestorOpInBlock(*use.getOwner());
        if (!reader)
          continue;
        // The terminator is last: a returned value stays to the end.
        interval.last = std::max(interval.last, index[reader]);
        readByBackward |= getRegionName(reader) == "backward";
      }
      if (forward && readByBackward) {
        saved.push_back(interval.holder);
        savedBytes += interval.holder.bytes;
      }
      intervals.push_back(interval);
    }
  }

  // A sweep: allocate at the definition, free after the last reader.
  SmallVector<double> delta(count + 1, 0.0);
  for (const Interval &interval : intervals) {
    delta[interval.first] += interval.holder.bytes;
    delta[interval.last + 1] -= interval.holder.bytes;
  }
  double live = inputBytes;
  peakBytes = inputBytes;
  for (auto [position, op] : llvm::enumerate(body)) {
    live += delta[position];
    liveBytes.push_back(live);
    if (!peakOp || live > peakBytes) {
      peakBytes = live;
      peakOp = &op;
      peakIndex = position;
    }
  }
}

SmallVector<MemoryPlan::Holder> MemoryPlan::getPeakHolders(size_t count) const {
  SmallVector<const Interval *> live;
  for (const Interval &interval : intervals)
    if (interval.first <= peakIndex && peakIndex <= interval.last &&
        interval.holder.bytes > 0)
      live.push_back(&interval);
  // Largest first; equal sizes in block order.
  llvm::sort(live, [](const Interval *a, const Interval *b) {
    return std::make_pair(-a->holder.bytes, a) <
           std::make_pair(-b->holder.bytes, b);
  });
  SmallVector<Holder> holders;
  for (const Interval *interval : llvm::ArrayRef(live).take_front(count))
    holders.push_back(interval->holder);
  return holders;
}
