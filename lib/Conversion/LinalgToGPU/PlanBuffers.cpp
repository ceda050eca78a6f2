//===- PlanBuffers.cpp - A step's temporaries in one arena ----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-plan-buffers pass: the static buffers of a function's body that
// only grids, library calls and frees use get offsets in one arena by
// their live ranges in the body's order, largest first at the lowest free
// offset, and become views of it.
//
//===----------------------------------------------------------------------===//

#include "GridMapping.h"

#include "amp/Conversion/BufferAccesses.h"
#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::amp {
#define GEN_PASS_DEF_PLANBUFFERS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
/// A buffer of the plan: its allocation, bytes, live range (first and last
/// accessing op of the body, by index) and offset in the arena.
struct PlannedBuffer {
  memref::AllocOp alloc;
  int64_t bytes;
  size_t first, last;
  int64_t offset = 0;
};
} // namespace

/// The bytes of a statically shaped memref type, or nullopt.
static std::optional<int64_t> getBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return std::nullopt;
  return type.getNumElements() * (bits / 8);
}

/// `alloc` as a buffer of the plan, its accesses all grids, library calls
/// or frees in `body` (indices in `positions`); nullopt otherwise.
static std::optional<PlannedBuffer>
getPlannedBuffer(memref::AllocOp alloc, Block &body,
                 const llvm::DenseMap<Operation *, size_t> &positions) {
  std::optional<int64_t> bytes = getBytes(alloc.getType());
  if (!bytes || alloc->getBlock() != &body || !alloc.getDynamicSizes().empty())
    return std::nullopt;
  std::optional<SmallVector<Operation *>> ops =
      amp::getAccessingOps(alloc.getMemref(), body);
  if (!ops)
    return std::nullopt;
  PlannedBuffer buffer{alloc, *bytes, SIZE_MAX, 0};
  for (Operation *op : *ops) {
    if (!isa<scf::ParallelOp>(op) && !amp::isLibraryCall(op))
      return std::nullopt;
    size_t position = positions.lookup(op);
    buffer.first = std::min(buffer.first, position);
    buffer.last = std::max(buffer.last, position);
  }
  if (buffer.first == SIZE_MAX)
    return std::nullopt;
  return buffer;
}

/// Gives each of `buffers` an offset, a multiple of `alignment`: largest
/// first, each at the lowest offset where it overlaps no placed buffer live
/// at the same time. Returns the arena's bytes.
static int64_t assignOffsets(MutableArrayRef<PlannedBuffer> buffers,
                             int64_t alignment) {
  // Largest first; equal sizes in body order (buffers are in body order).
  SmallVector<PlannedBuffer *> order;
  for (PlannedBuffer &buffer : buffers)
    order.push_back(&buffer);
  llvm::sort(order, [](PlannedBuffer *a, PlannedBuffer *b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a < b;
  });
  int64_t arenaBytes = 0;
  SmallVector<PlannedBuffer *> placed;
  for (PlannedBuffer *buffer : order) {
    // The placed buffers live at the same time, by offset.
    SmallVector<PlannedBuffer *> overlapping;
    for (PlannedBuffer *other : placed)
      if (other->first <= buffer->last && buffer->first <= other->last)
        overlapping.push_back(other);
    llvm::sort(overlapping, [](PlannedBuffer *a, PlannedBuffer *b) {
      return a->offset < b->offset;
    });
    int64_t offset = 0;
    for (PlannedBuffer *other : overlapping) {
      if (offset + buffer->bytes <= other->offset)
        break;
      offset = std::max(offset, int64_t(llvm::alignTo(
                                    other->offset + other->bytes, alignment)));
    }
    buffer->offset = offset;
    arenaBytes = std::max(arenaBytes, offset + buffer->bytes);
    placed.push_back(buffer);
  }
  return arenaBytes;
}

namespace {
struct PlanBuffersPass : amp::impl::PlanBuffersBase<PlanBuffersPass> {
  using PlanBuffersBase::PlanBuffersBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (alignment < 1) {
      emitError(func.getLoc(), "amp-plan-buffers: alignment must be positive");
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, size_t> positions;
    for (Operation &op : body)
      positions[&op] = positions.size();
    SmallVector<PlannedBuffer> buffers;
    int64_t bufferBytes = 0;
    for (auto alloc : body.getOps<memref::AllocOp>())
      if (std::optional<PlannedBuffer> buffer =
              getPlannedBuffer(alloc, body, positions)) {
        buffers.push_back(*buffer);
        bufferBytes += buffer->bytes;
      }
    if (buffers.empty())
      return;
    int64_t arenaBytes = assignOffsets(buffers, alignment);
    if (emitRemarks)
      emitRemark(func.getLoc())
          << "planned " << buffers.size() << " buffers of " << bufferBytes
          << " bytes into an arena of " << arenaBytes << " bytes";

    OpBuilder b = OpBuilder::atBlockBegin(&body);
    Location loc = func.getLoc();
    Value arena = memref::AllocOp::create(
        b, loc, MemRefType::get({arenaBytes}, b.getI8Type()),
        b.getI64IntegerAttr(alignment));
    for (PlannedBuffer &buffer : buffers) {
      b.setInsertionPoint(buffer.alloc);
      Value offset = arith::ConstantIndexOp::create(b, buffer.alloc.getLoc(),
                                                    buffer.offset);
      Value view = memref::ViewOp::create(
          b, buffer.alloc.getLoc(), buffer.alloc.getType(), arena, offset, {});
      for (Operation *user :
           llvm::make_early_inc_range(buffer.alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      buffer.alloc.replaceAllUsesWith(view);
      buffer.alloc.erase();
    }
    b.setInsertionPoint(body.getTerminator());
    memref::DeallocOp::create(b, loc, arena);
  }
};
} // namespace
