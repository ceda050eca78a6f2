//===- PrecisionCut.h - Two-label precision assignment by min-cut -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The optimal assignment of amp-assign-precision (docs/OptimalAssignment.md):
// each op is FP32 or low precision; the objective is the sum of the ops'
// modeled times at their labels plus one cast per value and target type,
// however many consumers share it. With two labels the problem is an s-t
// min-cut, solved with Boost.Graph's Boykov-Kolmogorov max-flow.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_PRECISIONCUT_H
#define AMP_DIALECT_AMP_TRANSFORMS_PRECISIONCUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::amp {

class PrecisionCut {
public:
  /// An op the problem must keep in one precision.
  enum class Pin { None, FP32, Low };

  /// Adds an op that takes `fp32Us` in FP32 and `lowUs` in low precision;
  /// returns its index.
  unsigned addOp(double fp32Us, double lowUs, Pin pin = Pin::None);

  /// A result of op `producer`, low when the producer is, read as data by
  /// the ops `consumers`. `otherReaders`: some other use (a function result,
  /// a slot that is not data) reads it in its type before. A cast back
  /// costs `upUs` when the producer is low and a reader is FP32; a cast down
  /// costs `downUs` when the producer is FP32 and a consumer is low.
  void addResult(unsigned producer, llvm::ArrayRef<unsigned> consumers,
                 bool otherReaders, double upUs, double downUs);

  /// A value whose type no decision changes (a graph input, an
  /// initializer), not in the low type, read as data by `consumers`: a cast
  /// down costs `downUs` when any of them is low. `foldable`: the producer
  /// converts itself instead (a constant) when every use is by a low
  /// consumer, so the cast costs only when low and FP32 readers share it;
  /// `otherReaders` as for addResult.
  void addInput(llvm::ArrayRef<unsigned> consumers, bool otherReaders,
                double downUs, bool foldable);

  unsigned getNumOps() const { return ops.size(); }
  bool isPinned(unsigned op) const { return ops[op].pin != Pin::None; }
  /// The modeled time of op `op` at each label.
  double getOpUs(unsigned op, bool low) const {
    return low ? ops[op].lowUs : ops[op].fp32Us;
  }

  /// The objective for `low` (one label per op, true for low precision),
  /// computed from the definition; pins are not checked.
  double evaluate(llvm::ArrayRef<bool> low) const;
  /// Free ops FP32, pinned ops at their pins: always feasible.
  llvm::SmallVector<bool> getBaseline() const;

  /// A labeling of least objective that respects the pins; among equal
  /// ones, the one with the fewest low ops (ties break toward FP32). Times
  /// count in whole nanoseconds: smaller differences are ties.
  llvm::SmallVector<bool> solve() const;

private:
  struct OpCosts {
    double fp32Us;
    double lowUs;
    Pin pin;
  };
  struct Term {
    /// Producing op, or -1 for a value of fixed type.
    int producer;
    llvm::SmallVector<unsigned, 2> consumers;
    bool otherReaders;
    double upUs;
    double downUs;
    bool foldable;
  };
  /// What `term` costs under `low`.
  static double evaluateTerm(const Term &term, llvm::ArrayRef<bool> low);

  std::vector<OpCosts> ops;
  std::vector<Term> terms;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_PRECISIONCUT_H
