//===- GridMapping.h - Loops mapped to a GPU grid ---------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Helpers shared by the LinalgToGPU passes: scf.parallel loops mapped to
// blocks and threads for convert-parallel-loops-to-gpu (and, through
// amp/Conversion/BufferAccesses.h, which calls are the runtime's library
// calls).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H
#define AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H

#include "amp/Conversion/BufferAccesses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {

/// An scf.parallel over one point, from 0 to 1, at `builder`'s insertion
/// point: amp-linalg-to-grid-loops makes it a grid of one block of one
/// thread, or runs it in another grid.
scf::ParallelOp createOnePointLoop(OpBuilder &builder, Location loc);

/// Whether `op` has no memory effects and no regions: it can be cloned
/// wherever its value is needed, or moved past memory accesses.
bool isPlainOp(Operation *op);

/// The memref that `op` accesses when it is a memref.load or memref.store,
/// its indices in `indices`; null for any other op.
Value getScalarAccess(Operation *op, ValueRange &indices);

/// Maps `loop`'s one dimension to `processor`.
LogicalResult mapToProcessor(scf::ParallelOp loop, gpu::Processor processor);

/// The number of iterations of `loop`, when its bounds are constants.
std::optional<int64_t> getStaticTripCount(scf::ParallelOp loop);

/// The induction variables of `loop` (constant bounds) at the point
/// `linear` of its iteration space, the innermost dimension varying
/// fastest, as collapseParallelLoops numbers them (the outermost takes what
/// is left): each `lower + digit * step`.
SmallVector<Value> delinearizeIndex(OpBuilder &builder, Location loc,
                                    scf::ParallelOp loop, Value linear);

/// A lane loop with iter_args: for each, the op that combines it with the
/// value the iteration reduces, that value, and the combiner's neutral
/// element (each lane's partial result starts from it).
struct LaneReduction {
  SmallVector<Operation *> combiners;
  SmallVector<Value> reduced;
  SmallVector<TypedAttr> neutral;
};

/// A phase of a row shared by lanes: one lane loop that all lanes run, or
/// stores of the row's own elements that one lane does.
struct RowPhase {
  Operation *laneLoop = nullptr;
  SmallVector<Operation *> stores;
};

/// How the body of a grid loop runs when lanes share its rows: its phases
/// in order, and the reductions among the lane loops. Loads and ops without
/// memory effects run in each phase that needs their values.
struct RowPlan {
  SmallVector<RowPhase> phases;
  llvm::DenseMap<Operation *, LaneReduction> reductions;
};

/// The plan by which `lanes` threads share each iteration of `rows` (an
/// unmapped scf.parallel with static bounds, each iteration a row): its body
/// holds only `laneLoops` (scf.for loops whose iterations may run on any lane:
/// a loop over parallel dimensions, or a reduction that carries its results in
/// iter_args, each with one combiner that has a neutral element, and writes no
/// memory, each accessing rows: its induction variable is the last index of
/// contiguous rows only), memref loads and stores, and ops without memory
/// effects; at least one lane loop is a reduction and one runs at least `lanes`
/// iterations; and no op of the body writes what a load read before a later
/// phase (tileRowsIntoLanes) uses the loaded value. Nullopt where lanes cannot
/// share its rows.
std::optional<RowPlan> planRowLanes(scf::ParallelOp rows,
                                    ArrayRef<Operation *> laneLoops,
                                    int64_t lanes);

/// Tiles `rows` by its `plan` (planRowLanes) into a block loop, mapped to
/// blocks, of `blockSize / lanes` rows per block, each row shared by `lanes`
/// threads. The block's body allocates a scratch buffer per reduction
/// result (a partial result per thread), frees them at its end, and has
/// one thread loop per
/// phase of the row: a lane loop, run from `lower + lane * step` by `step *
/// lanes` (a reduction's partial results stored to its scratch buffers), or
/// the stores between lane loops, which the row's first lane does. Each
/// phase clones the loads and effect-free ops it needs; it combines a
/// reduction's partial results (in lane order, from its initial values)
/// where it needs the reduction's results. Returns the block loop.
scf::ParallelOp tileRowsIntoLanes(RewriterBase &rewriter, scf::ParallelOp rows,
                                  const RowPlan &plan, int64_t lanes,
                                  int64_t blockSize);

} // namespace mlir::amp

#endif // AMP_LIB_CONVERSION_LINALGTOGPU_GRIDMAPPING_H
