//===- GridPhasesToGPU.cpp - Phased grids to launches with barriers -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-grid-phases-to-gpu pass: a block loop whose body allocates
// scratch buffers and holds thread loops, one per phase (the rows that
// amp-linalg-to-grid-loops gives several lanes), becomes one gpu.launch:
// the scratch buffers in shared memory, a barrier between the phases.
//
//===----------------------------------------------------------------------===//

#include "GridMapping.h"

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::amp {
#define GEN_PASS_DEF_GRIDPHASESTOGPU
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The processor that `loop`, of one dimension, is mapped to.
static std::optional<gpu::Processor> getProcessor(scf::ParallelOp loop) {
  auto mapping = loop->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  if (!mapping || mapping.size() != 1 || loop.getNumLoops() != 1)
    return std::nullopt;
  auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(mapping[0]);
  if (!dim)
    return std::nullopt;
  return dim.getProcessor();
}

/// Whether `blocks`, a block loop, allocates memory in its body: scratch
/// buffers for its phases.
static bool hasPhaseScratch(scf::ParallelOp blocks) {
  return !blocks.getBody()->getOps<memref::AllocOp>().empty();
}

/// Makes `blocks`, a block loop with scratch buffers (hasPhaseScratch),
/// one gpu.launch (see the pass's description).
static LogicalResult convertPhasedGrid(RewriterBase &rewriter,
                                       scf::ParallelOp blocks) {
  std::optional<int64_t> gridSize = amp::getStaticTripCount(blocks);
  if (!gridSize)
    return blocks.emitOpError("with phases needs constant bounds");
  SmallVector<memref::AllocOp> scratch;
  std::optional<int64_t> threads;
  for (Operation &op : blocks.getBody()->without_terminator()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (!alloc.getType().hasStaticShape() ||
          !alloc.getType().getLayout().isIdentity())
        return alloc.emitOpError(
            "of a grid's phases needs a static shape and no layout");
      scratch.push_back(alloc);
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      if (!dealloc.getMemref().getDefiningOp<memref::AllocOp>() ||
          dealloc.getMemref().getDefiningOp()->getBlock() != blocks.getBody())
        return dealloc.emitOpError(
            "may free only the scratch buffers of a grid's phases");
      continue;
    }
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      std::optional<int64_t> count = amp::getStaticTripCount(loop);
      if (getProcessor(loop) != gpu::Processor::ThreadX || !count ||
          getConstantIntValue(loop.getLowerBound()[0]) != 0 ||
          getConstantIntValue(loop.getStep()[0]) != 1 ||
          (threads && *threads != *count))
        return loop.emitOpError(
            "must be a thread loop from 0 by 1, as long as the other phases");
      threads = count;
      continue;
    }
    if (!amp::isPlainOp(&op))
      return op.emitOpError("cannot run beside a grid's phases");
  }
  if (!threads)
    return blocks.emitOpError("with scratch buffers has no thread loop");

  Location loc = blocks.getLoc();
  rewriter.setInsertionPoint(blocks);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  Value one = constant(1);
  auto workgroup = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                              gpu::AddressSpace::Workgroup);
  SmallVector<Type> shared =
      llvm::map_to_vector(scratch, [&](memref::AllocOp alloc) -> Type {
        MemRefType type = alloc.getType();
        return MemRefType::get(type.getShape(), type.getElementType(),
                               MemRefLayoutAttrInterface(), workgroup);
      });
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, constant(*gridSize), one, one, constant(*threads), one,
      one, /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, shared);
  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToEnd(&body);
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPoint(terminator);

  IRMapping mapping;
  Value blockIndex = arith::AddIOp::create(
      rewriter, loc, blocks.getLowerBound()[0],
      arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x,
                            blocks.getStep()[0]));
  mapping.map(blocks.getInductionVars()[0], blockIndex);
  for (auto [alloc, attribution] :
       llvm::zip(scratch, launch.getWorkgroupAttributions()))
    mapping.map(alloc.getResult(), attribution);
  bool firstPhase = true;
  for (Operation &op : blocks.getBody()->without_terminator()) {
    if (isa<memref::AllocOp, memref::DeallocOp>(op))
      continue;
    auto loop = dyn_cast<scf::ParallelOp>(op);
    if (!loop) {
      rewriter.clone(op, mapping);
      continue;
    }
    if (!firstPhase)
      gpu::BarrierOp::create(rewriter, loc);
    firstPhase = false;
    mapping.map(loop.getInductionVars()[0], launch.getThreadIds().x);
    for (Operation &nested : loop.getBody()->without_terminator())
      rewriter.clone(nested, mapping);
  }
  rewriter.eraseOp(blocks);
  return success();
}

namespace {
struct GridPhasesToGPUPass
    : amp::impl::GridPhasesToGPUBase<GridPhasesToGPUPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> grids;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (getProcessor(loop) == gpu::Processor::BlockX && hasPhaseScratch(loop))
        grids.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp blocks : grids)
      if (failed(convertPhasedGrid(rewriter, blocks)))
        return signalPassFailure();
  }
};
} // namespace
