//===- MemoryPlan.h - Live bytes of a training step -------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The memory planner amp-recompute and amp-report use: the bytes a
// function's body holds at each op when it runs in order, its peak, and the
// activations the backward keeps from the forward.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_MEMORYPLAN_H
#define AMP_DIALECT_AMP_TRANSFORMS_MEMORYPLAN_H

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "mlir/IR/Block.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::amp {

/// Liveness over a block's op order: each result of a top-level op is
/// allocated when the op runs and freed after its last reader (an op of a
/// nested region reads through its top-level ancestor); results the
/// terminator returns live to the end; the block's arguments (inputs and
/// parameters) live throughout. A value's bytes are its elements times its
/// element width (FP16 two bytes, FP8 one), dynamic dimensions sized by
/// `sizes`. Saved activations are the results of `forward` ops (amp.region)
/// that a `backward` op reads.
class MemoryPlan {
public:
  MemoryPlan(Block &body, DimSizes &sizes);

  /// A value and its bytes.
  struct Holder {
    Value value;
    double bytes;
  };

  /// The bytes of the block's arguments.
  double getInputBytes() const { return inputBytes; }
  /// The most bytes live at once, arguments included.
  double getPeakBytes() const { return peakBytes; }
  /// The op while which the peak is live (null for an empty body).
  Operation *getPeakOp() const { return peakOp; }
  /// The bytes live while each top-level op runs, in block order.
  llvm::ArrayRef<double> getLiveBytes() const { return liveBytes; }
  /// The forward results the backward reads, in block order.
  llvm::ArrayRef<Holder> getSavedActivations() const { return saved; }
  double getSavedBytes() const { return savedBytes; }
  /// Whether the ops carry forward/backward regions at all.
  bool hasRegions() const { return regions; }
  /// The `count` largest values live at the peak, largest first.
  llvm::SmallVector<Holder> getPeakHolders(size_t count) const;

private:
  double inputBytes = 0, peakBytes = 0, savedBytes = 0;
  Operation *peakOp = nullptr;
  bool regions = false;
  llvm::SmallVector<double> liveBytes;
  llvm::SmallVector<Holder> saved;
  /// Every top-level result with its bytes and its live range [first, last]
  /// in op indices.
  struct Interval {
    Holder holder;
    size_t first, last;
  };
  llvm::SmallVector<Interval> intervals;
  size_t peakIndex = 0;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_MEMORYPLAN_H
