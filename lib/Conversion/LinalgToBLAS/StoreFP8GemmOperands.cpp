//===- StoreFP8GemmOperands.cpp - FP8 GEMM operands as FP8 buffers --------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-store-fp8-gemm-operands pass: a fused quantize-dequantize
// linalg.generic that feeds contractions also stores its FP8 values, K
// innermost for each contraction, and a dequantizing generic refills the
// contraction's f32 operand from them just before it; the generic stops
// writing the f32 buffer once nothing else reads it.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/BufferAccesses.h"

#include "amp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_STOREFP8GEMMOPERANDS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
/// An output of a generic that yields `extf(quantized) * scaleInv`, with
/// `quantized` an FP8 truncf and `scaleInv` computed from 0-d inputs.
struct QuantizedOutput {
  unsigned index;
  Value buffer;
  Value quantized;
  Value scaleInv;
  /// The body's ops `scaleInv` is computed by, in order.
  SmallVector<Operation *> scaleOps;
};

/// One FP8 copy of a quantized output: its dims in stored order (K last).
struct StoredLayout {
  SmallVector<int64_t> permutation;
  Value buffer;
};
} // namespace

/// A new buffer, aligned as bufferization aligns the others.
static Value createAlloc(OpBuilder &b, Location loc, MemRefType type) {
  return memref::AllocOp::create(b, loc, type, b.getI64IntegerAttr(64));
}

/// The ops of `generic`'s body that compute `value` from block arguments of
/// 0-d inputs and values from outside the body, in body order; nullopt when
/// it needs anything else (an element of a tensor, an output, an effect).
static std::optional<SmallVector<Operation *>>
getScalarSlice(linalg::GenericOp generic, Value value) {
  Block *body = generic.getBody();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value next = worklist.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(next)) {
      if (argument.getOwner() != body)
        continue;
      OpOperand *operand = generic.getMatchingOpOperand(argument);
      if (!generic.isDpsInput(operand) ||
          generic.getMatchingIndexingMap(operand).getNumResults() != 0)
        return std::nullopt;
      continue;
    }
    Operation *op = next.getDefiningOp();
    if (op->getBlock() != body)
      continue;
    if (!isPure(op) || op->getNumRegions() != 0)
      return std::nullopt;
    if (slice.insert(op))
      llvm::append_range(worklist, op->getOperands());
  }
  SmallVector<Operation *> ordered;
  for (Operation &op : *body)
    if (slice.contains(&op))
      ordered.push_back(&op);
  return ordered;
}

/// Output `index` of `generic` as a quantized output, or nullopt (with the
/// reason in `why` when it yields a dequantized FP8 value all the same).
static std::optional<QuantizedOutput>
matchQuantizedOutput(linalg::GenericOp generic, unsigned index,
                     std::string &why) {
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  auto product = yield.getOperand(index).getDefiningOp<arith::MulFOp>();
  if (!product || !product.getType().isF32())
    return std::nullopt;
  for (unsigned side : {0u, 1u}) {
    auto widen = product->getOperand(side).getDefiningOp<arith::ExtFOp>();
    auto truncate =
        widen ? widen.getIn().getDefiningOp<arith::TruncFOp>() : nullptr;
    if (!truncate || !isa<Float8E4M3FNType, Float8E5M2Type>(truncate.getType()))
      continue;
    Value scaleInv = product->getOperand(1 - side);
    std::optional<SmallVector<Operation *>> scaleOps =
        getScalarSlice(generic, scaleInv);
    if (!scaleOps) {
      why = "its factor varies over the tensor (block scaling)";
      return std::nullopt;
    }
    return QuantizedOutput{index, generic.getDpsInits()[index],
                           truncate.getResult(), scaleInv, *scaleOps};
  }
  return std::nullopt;
}

/// The dims of `operand` (an input of `contraction`) in the order that puts
/// the contraction's reduction dims innermost, the others in their order.
static SmallVector<int64_t> getKInnermostOrder(linalg::ContractOp contraction,
                                               OpOperand &operand) {
  auto linalgOp = cast<linalg::LinalgOp>(contraction.getOperation());
  AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
  AffineMap output =
      linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0));
  SmallVector<int64_t> outer, inner;
  for (auto [position, expr] : llvm::enumerate(map.getResults())) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    (output.isFunctionOfDim(loop) ? outer : inner).push_back(position);
  }
  llvm::append_range(outer, inner);
  return outer;
}

/// The contractions that read what `generic` wrote into `output.buffer`
/// (as an input, before anything writes it again), or the reason in `why`
/// when something else may read it.
static SmallVector<std::pair<linalg::ContractOp, unsigned>>
getContractionReaders(linalg::GenericOp generic, const QuantizedOutput &output,
                      std::string &why) {
  SmallVector<std::pair<linalg::ContractOp, unsigned>> readers;
  auto type = dyn_cast<MemRefType>(output.buffer.getType());
  if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity()) {
    why = "its buffer has a dynamic shape or a layout";
    return {};
  }
  std::optional<SmallVector<Operation *>> accesses =
      amp::getAccessingOps(output.buffer, *generic->getBlock());
  if (!accesses) {
    why = "it is used in another block";
    return {};
  }
  for (Operation *op = generic->getNextNode(); op; op = op->getNextNode()) {
    if (!llvm::is_contained(*accesses, op))
      continue;
    // A contraction that reads it as one input, and only there.
    auto contraction = dyn_cast<linalg::ContractOp>(op);
    auto reads = [&](OpOperand &use) { return use.get() == output.buffer; };
    if (contraction && contraction.hasPureBufferSemantics() &&
        llvm::all_of(
            contraction.getIndexingMapsArray(),
            [](AffineMap map) { return map.isProjectedPermutation(); }) &&
        llvm::count_if(contraction->getOpOperands(), reads) == 1) {
      OpOperand &read = *llvm::find_if(contraction->getOpOperands(), reads);
      if (contraction.isDpsInput(&read)) {
        readers.emplace_back(contraction, read.getOperandNumber());
        continue;
      }
    }
    if (amp::mayRead(op, output.buffer)) {
      why = "'" + op->getName().getStringRef().str() + "' reads it too";
      return {};
    }
    // Written again: what follows sees other values.
    if (amp::mayWrite(op, output.buffer))
      break;
  }
  if (readers.empty())
    why = "no contraction reads it";
  return readers;
}

/// A generic before `generic` that computes `output.scaleInv` from the 0-d
/// inputs it needs into a new 0-d f32 buffer, its output.
static linalg::GenericOp buildScaleInverse(OpBuilder &b,
                                           linalg::GenericOp generic,
                                           const QuantizedOutput &output) {
  Location loc = generic.getLoc();
  SmallVector<Value> inputs;
  SmallVector<BlockArgument> arguments;
  for (OpOperand *operand : generic.getDpsInputOperands()) {
    BlockArgument argument = generic.getMatchingBlockArgument(operand);
    bool used = argument == output.scaleInv ||
                llvm::any_of(output.scaleOps, [&](Operation *op) {
                  return llvm::is_contained(op->getOperands(), argument);
                });
    if (used) {
      inputs.push_back(operand->get());
      arguments.push_back(argument);
    }
  }
  auto type = MemRefType::get({}, b.getF32Type());
  Value buffer = createAlloc(b, loc, type);
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              AffineMap::get(b.getContext()));
  return linalg::GenericOp::create(
      b, loc, inputs, ValueRange{buffer}, maps, {},
      [&](OpBuilder &nb, Location nl, ValueRange blockArgs) {
        IRMapping mapping;
        for (auto [argument, value] : llvm::zip(arguments, blockArgs))
          mapping.map(argument, value);
        for (Operation *op : output.scaleOps)
          nb.clone(*op, mapping);
        linalg::YieldOp::create(nb, nl,
                                mapping.lookupOrDefault(output.scaleInv));
      });
}

/// Before `contraction`: a new f32 buffer like `like`, filled with
/// `extf(stored) * scaleInv` by a generic that reads `stored` in `order`.
static Value buildDequantization(OpBuilder &b, linalg::ContractOp contraction,
                                 MemRefType like, const StoredLayout &stored,
                                 Value scaleInv) {
  Location loc = contraction.getLoc();
  b.setInsertionPoint(contraction);
  Value buffer = createAlloc(b, loc, like);
  unsigned rank = like.getRank();
  SmallVector<unsigned> permutation(stored.permutation.begin(),
                                    stored.permutation.end());
  SmallVector<AffineMap> maps = {
      AffineMap::getPermutationMap(permutation, b.getContext()),
      AffineMap::get(rank, 0, {}, b.getContext()),
      b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, ValueRange{stored.buffer, scaleInv}, ValueRange{buffer}, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value widened = arith::ExtFOp::create(nb, nl, nb.getF32Type(), args[0]);
        linalg::YieldOp::create(
            nb, nl,
            arith::MulFOp::create(nb, nl, widened, args[1]).getResult());
      });
  return buffer;
}

/// An FP8 copy for `generic` to write: the value, its buffer, and the map
/// it is written with.
struct AddedOutput {
  Value quantized;
  Value buffer;
  AffineMap map;
};

/// Replaces `generic` by one without the outputs `dropped` (indices in
/// ascending order) and with `added` after the others.
static void rebuildGeneric(linalg::GenericOp generic,
                           ArrayRef<unsigned> dropped,
                           ArrayRef<AddedOutput> added) {
  OpBuilder b(generic);
  SmallVector<AffineMap> maps;
  for (OpOperand *input : generic.getDpsInputOperands())
    maps.push_back(generic.getMatchingIndexingMap(input));
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  SmallVector<Value> outputs, yielded;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    unsigned index = init.getOperandNumber() - generic.getNumDpsInputs();
    if (llvm::is_contained(dropped, index))
      continue;
    outputs.push_back(init.get());
    maps.push_back(generic.getMatchingIndexingMap(&init));
    yielded.push_back(yield.getOperand(index));
  }
  for (const AddedOutput &output : added) {
    outputs.push_back(output.buffer);
    maps.push_back(output.map);
    yielded.push_back(output.quantized);
  }
  auto rebuilt = linalg::GenericOp::create(
      b, generic.getLoc(), TypeRange(), generic.getDpsInputs(), outputs, maps,
      generic.getIteratorTypesArray());
  rebuilt->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  rebuilt.getRegion().takeBody(generic.getRegion());
  Block *body = rebuilt.getBody();
  unsigned inputs = generic.getNumDpsInputs();
  for (unsigned index : llvm::reverse(dropped))
    body->eraseArgument(inputs + index);
  for (const AddedOutput &output : added)
    body->addArgument(output.quantized.getType(), generic.getLoc());
  body->getTerminator()->setOperands(yielded);
  // What computed the dropped f32 values.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  generic.erase();
}

/// Whether `generic` (a 0-d generic of buildScaleInvBuffer) reads only
/// function arguments that nothing writes before it, and uses no value of
/// the function but constants: it can move to the function's start.
static bool readsUnwrittenArguments(linalg::GenericOp generic) {
  for (Value input : generic.getDpsInputs())
    if (!isa<BlockArgument>(input) || amp::getLastWriterBefore(generic, input))
      return false;
  return !generic.getBody()
              ->walk([&](Operation *op) {
                for (Value value : op->getOperands()) {
                  Operation *def = value.getDefiningOp();
                  if (def && !generic->isAncestor(def) &&
                      !matchPattern(value, m_Constant()))
                    return WalkResult::interrupt();
                }
                return WalkResult::advance();
              })
              .wasInterrupted();
}

/// The bytes of kernel parameters that one merged generic's memrefs may
/// take: sm_80 kernels take at most 4352 bytes with PTX before 8.1, and a
/// memref is a descriptor of 3 + 2 * rank 8-byte words.
static constexpr int64_t kMaxMergedParameterBytes = 4096;

static int64_t getDescriptorBytes(Value memref) {
  return 8 * (3 + 2 * cast<MemRefType>(memref.getType()).getRank());
}

/// `generics` (0-d, each one output) as one generic at the function's
/// start: one single-thread kernel instead of one per FP8 tensor. With
/// delayed scaling every factor comes from the step's scale inputs.
static void mergeScaleInverses(func::FuncOp func,
                               ArrayRef<linalg::GenericOp> generics) {
  if (generics.size() < 2)
    return;
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Value> inputs, outputs;
  for (linalg::GenericOp generic : generics) {
    llvm::append_range(inputs, generic.getDpsInputs());
    outputs.push_back(generic.getDpsInits().front());
  }
  // The buffers first, in order, then the generic.
  for (Value output : llvm::reverse(outputs))
    output.getDefiningOp()->moveBefore(&entry, entry.begin());
  b.setInsertionPointAfter(outputs.back().getDefiningOp());
  SmallVector<AffineMap> maps(inputs.size() + outputs.size(),
                              AffineMap::get(b.getContext()));
  linalg::GenericOp::create(
      b, func.getLoc(), inputs, outputs, maps, {},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> yielded;
        unsigned next = 0;
        for (linalg::GenericOp generic : generics) {
          IRMapping mapping;
          Block *body = generic.getBody();
          for (unsigned i = 0; i < generic.getNumDpsInputs(); ++i)
            mapping.map(body->getArgument(i), args[next++]);
          // The constants it uses, inside: they may be defined later.
          body->walk([&](Operation *op) {
            for (Value value : op->getOperands())
              if (Operation *def = value.getDefiningOp();
                  def && !generic->isAncestor(def) && !mapping.contains(value))
                mapping.map(value, nb.clone(*def)->getResult(0));
          });
          for (Operation &op : body->without_terminator())
            nb.clone(op, mapping);
          yielded.push_back(
              mapping.lookupOrDefault(body->getTerminator()->getOperand(0)));
        }
        linalg::YieldOp::create(nb, nl, yielded);
      });
  for (linalg::GenericOp generic : generics)
    generic.erase();
}

namespace {
struct StoreFP8GemmOperandsPass
    : amp::impl::StoreFP8GemmOperandsBase<StoreFP8GemmOperandsPass> {
  using StoreFP8GemmOperandsBase::StoreFP8GemmOperandsBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (generic.hasPureBufferSemantics() &&
          generic.getNumParallelLoops() == generic.getNumLoops())
        generics.push_back(generic);
    });
    SmallVector<linalg::GenericOp> scaleInverses;
    for (linalg::GenericOp generic : generics)
      storeQuantizedOutputs(generic, scaleInverses);
    // Merged as few kernels as the kernel parameter space allows (the
    // large FP8 transformer has 266 factors: 12.8 KB in one).
    SmallVector<linalg::GenericOp> hoistable;
    int64_t bytes = 0;
    for (linalg::GenericOp generic : scaleInverses) {
      if (!readsUnwrittenArguments(generic))
        continue;
      int64_t genericBytes = 0;
      for (Value operand : generic->getOperands())
        genericBytes += getDescriptorBytes(operand);
      if (bytes + genericBytes > kMaxMergedParameterBytes) {
        mergeScaleInverses(getOperation(), hoistable);
        hoistable.clear();
        bytes = 0;
      }
      hoistable.push_back(generic);
      bytes += genericBytes;
    }
    mergeScaleInverses(getOperation(), hoistable);
  }

  /// Stores `generic`'s quantized outputs as FP8; appends the generics
  /// that compute their factors to `scaleInverses`.
  void
  storeQuantizedOutputs(linalg::GenericOp generic,
                        SmallVectorImpl<linalg::GenericOp> &scaleInverses) {
    OpBuilder b(generic);
    Location loc = generic.getLoc();
    SmallVector<AddedOutput> added;
    SmallVector<unsigned> dropped;
    SmallVector<Value> allocated;
    for (unsigned index = 0; index < generic.getNumDpsInits(); ++index) {
      std::string why;
      std::optional<QuantizedOutput> output =
          matchQuantizedOutput(generic, index, why);
      SmallVector<std::pair<linalg::ContractOp, unsigned>> readers;
      if (output)
        readers = getContractionReaders(generic, *output, why);
      else if (why.empty())
        continue;
      OpOperand *init = generic.getDpsInitOperand(index);
      AffineMap outputMap = generic.getMatchingIndexingMap(init);
      if (output && !readers.empty() && !outputMap.isPermutation()) {
        why = "its indexing map is not a permutation";
        readers.clear();
      }
      if (readers.empty()) {
        if (emitRemarks)
          generic.emitRemark()
              << "FP8 GEMM operand " << index << " stays f32: " << why;
        continue;
      }
      auto type = cast<MemRefType>(output->buffer.getType());
      b.setInsertionPoint(generic);
      linalg::GenericOp scaleInverse = buildScaleInverse(b, generic, *output);
      scaleInverses.push_back(scaleInverse);
      Value scaleInv = scaleInverse.getDpsInits().front();
      allocated.push_back(scaleInv);
      SmallVector<StoredLayout> layouts;
      for (auto [contraction, operandNumber] : readers) {
        SmallVector<int64_t> order = getKInnermostOrder(
            contraction, contraction->getOpOperand(operandNumber));
        auto *layout = llvm::find_if(layouts, [&](const StoredLayout &l) {
          return l.permutation == order;
        });
        if (layout == layouts.end()) {
          SmallVector<int64_t> shape;
          SmallVector<AffineExpr> results;
          for (int64_t dim : order) {
            shape.push_back(type.getDimSize(dim));
            results.push_back(outputMap.getResult(dim));
          }
          b.setInsertionPoint(generic);
          Value buffer = createAlloc(
              b, loc, MemRefType::get(shape, output->quantized.getType()));
          allocated.push_back(buffer);
          added.push_back({output->quantized, buffer,
                           AffineMap::get(outputMap.getNumDims(), 0, results,
                                          b.getContext())});
          layouts.push_back({order, buffer});
          layout = std::prev(layouts.end());
        }
        Value refilled =
            buildDequantization(b, contraction, type, *layout, scaleInv);
        allocated.push_back(refilled);
        contraction->setOperand(operandNumber, refilled);
      }
      bool unread = !amp::isReadAfter(generic, output->buffer) &&
                    generic.getMatchingBlockArgument(init).use_empty();
      if (unread)
        dropped.push_back(index);
      if (emitRemarks) {
        InFlightDiagnostic remark = generic.emitRemark()
                                    << "FP8 GEMM operand " << index
                                    << " stored as";
        for (const StoredLayout &layout : layouts)
          remark << " " << layout.buffer.getType();
        remark << (unread ? ", f32 output dropped" : ", f32 output kept");
      }
    }
    if (added.empty())
      return;
    SmallVector<Value> droppedBuffers;
    for (unsigned index : dropped)
      droppedBuffers.push_back(generic.getDpsInits()[index]);
    // Freed where the function frees its other buffers: at its end.
    b.setInsertionPoint(generic->getBlock()->getTerminator());
    for (Value buffer : allocated)
      memref::DeallocOp::create(b, loc, buffer);
    rebuildGeneric(generic, dropped, added);
    for (Value buffer : droppedBuffers)
      amp::eraseIfUnaccessed(buffer);
  }
};
} // namespace
