//===- ContractionsToGemmRecords.cpp - linalg.contract to GEMM records ----===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-contractions-to-gemm-records pass: derives, at compile time, the
// cuBLASLt-style parameter record (include/amp/Runtime/GemmRecord.h) of
// each linalg.contract on memrefs with static shapes and strides, and
// replaces the contraction by a call to `amp_gemm` with that record. A
// zero fill of the output just before becomes the record's overwrite flag
// (cuBLASLt's beta 0) and is erased. A contraction whose two inputs are
// dequantized FP8 buffers (amp-store-fp8-gemm-operands) becomes an FP8
// record on the FP8 buffers, with their dequantization factors. An f16 or
// bf16 GEMM whose f32 result the next kernel only rounds to the inputs'
// type writes it rounded (cuBLASLt's output type), and the next kernel
// reads it without the truncation. A bias addition, a ReLU, GELU's tanh
// approximation (its input kept in the aux matrix where the backward reads
// it) or a bias and one of them right after a GEMM become its epilogue;
// so do a bias gradient and, after the GEMM of an activation's output
// gradient, GELU's derivative (DGELU) or ReLU's mask (DRELU, the forward
// GEMM then writing the mask). A
// transposed copy made only for the GEMM to read, or of its result only,
// goes: the GEMM reads the copy's source or writes its target through
// permuted strides.
//
//===----------------------------------------------------------------------===//

#include "EntryPoints.h"
#include "amp/Conversion/BiasGradients.h"
#include "amp/Conversion/BufferAccesses.h"
#include "amp/Conversion/GELUBodies.h"

#include "amp/Conversion/OutputCasts.h"
#include "amp/Conversion/OutputFills.h"
#include "amp/Conversion/Passes.h"
#include "amp/Conversion/TransposedCopies.h"
#include "amp/Runtime/GemmRecord.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"

#include <array>
#include <optional>
#include <vector>

namespace mlir::amp {
#define GEN_PASS_DEF_CONTRACTIONSTOGEMMRECORDS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp::runtime;
using mlir::amp::canWriteBefore;
using mlir::amp::isDefinedBefore;
using mlir::amp::moveDefinitionBefore;

using GemmRecord = std::array<int64_t, kGemmRecordFields>;

namespace {
/// The loops of one role (batch, M, N or K) collapsed into one dimension:
/// its size and each operand's stride along it.
struct LoopGroup {
  int64_t size = 1;
  std::array<int64_t, 3> strides = {0, 0, 0};
};

/// An operand as the GEMM reads it: its element type and its strides along
/// the dims the contraction indexes it by.
struct OperandView {
  Type elementType;
  SmallVector<int64_t> strides;
};

/// A linalg.generic that fills a contraction's input with `extf(data) *
/// scaleInv`, `data` an FP8 buffer read through a permutation, `scaleInv`
/// a 0-d f32 buffer.
struct Dequantization {
  linalg::GenericOp generic;
  Value data;
  Value scaleInv;
};

/// How a column-major GEMM reads a stored matrix.
struct MatrixLayout {
  bool transposed;
  int64_t leadingDim;
};
} // namespace

/// The layout in which a GEMM reads a `rows` x `cols` matrix whose elements
/// are `rowStride` and `colStride` apart: column-major (rows contiguous), or
/// transposed (columns contiguous, cuBLAS's OP_T), or none.
static std::optional<MatrixLayout> getLayout(int64_t rows, int64_t cols,
                                             int64_t rowStride,
                                             int64_t colStride,
                                             bool allowTranspose) {
  if ((rows == 1 || rowStride == 1) && (cols == 1 || colStride >= rows))
    return MatrixLayout{false, cols == 1 ? rows : colStride};
  if (allowTranspose && (cols == 1 || colStride == 1) &&
      (rows == 1 || rowStride >= cols))
    return MatrixLayout{true, rows == 1 ? cols : rowStride};
  return std::nullopt;
}

/// `loops` (in loop order) as one dimension: each operand indexes all of
/// them, laid out contiguously (its stride the innermost loop's), or none
/// (stride 0); nullopt otherwise.
static std::optional<LoopGroup>
collapseLoops(ArrayRef<unsigned> loops, ArrayRef<AffineMap> maps,
              ArrayRef<SmallVector<int64_t>> strides,
              ArrayRef<int64_t> loopSizes) {
  LoopGroup group;
  for (unsigned loop : loops)
    group.size *= loopSizes[loop];
  for (auto [i, map] : llvm::enumerate(maps)) {
    unsigned indexed = 0;
    std::optional<int64_t> expected;
    for (unsigned loop : llvm::reverse(loops)) {
      std::optional<unsigned> position =
          map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
      if (!position)
        continue;
      int64_t stride = strides[i][*position];
      if (!expected)
        group.strides[i] = stride;
      else if (stride != *expected)
        return std::nullopt;
      expected = stride * loopSizes[loop];
      ++indexed;
    }
    if (indexed != 0 && indexed != loops.size())
      return std::nullopt;
  }
  return group;
}

/// Operand `index`, `operand`, as a GEMM reads it in place, or the reason it
/// cannot in `why`.
static std::optional<OperandView> getOperandView(Value operand, unsigned index,
                                                 std::string &why) {
  auto type = cast<MemRefType>(operand.getType());
  int64_t offset;
  OperandView view{type.getElementType(), {}};
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(view.strides, offset)) ||
      llvm::any_of(view.strides, ShapedType::isDynamic)) {
    why = "operand " + std::to_string(index) + " has a dynamic shape or stride";
    return std::nullopt;
  }
  return view;
}

/// The dequantization that fills `operand`, an input of `op`, just before
/// it: the last writer of `operand` before `op`, with nothing writing its
/// FP8 data or factor in between.
static std::optional<Dequantization> matchDequantization(linalg::ContractOp op,
                                                         Value operand) {
  auto generic = dyn_cast_if_present<linalg::GenericOp>(
      amp::getLastWriterBefore(op, operand));
  if (!generic || generic.getNumDpsInputs() != 2 ||
      generic.getNumDpsInits() != 1 ||
      generic.getDpsInits().front() != operand ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getIndexingMapsArray()[2].isIdentity() ||
      !generic.getIndexingMapsArray()[0].isPermutation())
    return std::nullopt;
  Value data = generic.getDpsInputs()[0];
  Value scaleInv = generic.getDpsInputs()[1];
  auto scaleType = dyn_cast<MemRefType>(scaleInv.getType());
  if (!isa<Float8E4M3FNType, Float8E5M2Type>(getElementTypeOrSelf(data)) ||
      !scaleType || scaleType.getRank() != 0 ||
      !scaleType.getElementType().isF32())
    return std::nullopt;
  // The body: extf(data) * scaleInv, nothing else.
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto product = yield.getOperand(0).getDefiningOp<arith::MulFOp>();
  if (body->getOperations().size() != 3 || !product)
    return std::nullopt;
  auto widen = product.getLhs().getDefiningOp<arith::ExtFOp>();
  Value factor = product.getRhs();
  if (!widen) {
    widen = product.getRhs().getDefiningOp<arith::ExtFOp>();
    factor = product.getLhs();
  }
  if (!widen || widen.getIn() != body->getArgument(0) ||
      factor != body->getArgument(1) ||
      amp::isWrittenBetween(generic, op, data) ||
      amp::isWrittenBetween(generic, op, scaleInv))
    return std::nullopt;
  return Dequantization{generic, data, scaleInv};
}

/// The FP8 data of `dequantization` as the contraction reads its f32
/// operand: data dim i holds the operand's dim `map(i)`.
static std::optional<OperandView>
getDequantizedView(const Dequantization &dequantization, unsigned index,
                   std::string &why) {
  std::optional<OperandView> data =
      getOperandView(dequantization.data, index, why);
  if (!data)
    return std::nullopt;
  linalg::GenericOp generic = dequantization.generic;
  AffineMap map = generic.getIndexingMapsArray()[0];
  OperandView view{data->elementType,
                   SmallVector<int64_t>(data->strides.size())};
  for (auto [position, expr] : llvm::enumerate(map.getResults()))
    view.strides[cast<AffineDimExpr>(expr).getPosition()] =
        data->strides[position];
  return view;
}

/// The record of `op` reading its operands as `views`, or the reason it
/// has none in `why`.
static std::optional<GemmRecord> deriveRecord(linalg::ContractOp op,
                                              ArrayRef<OperandView> views,
                                              std::string &why) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(
          maps, [](AffineMap map) { return map.isProjectedPermutation(); })) {
    why = "an indexing map is not a projected permutation";
    return std::nullopt;
  }
  std::array<Type, 3> elementTypes;
  SmallVector<SmallVector<int64_t>> strides;
  for (auto [i, view] : llvm::enumerate(views)) {
    elementTypes[i] = view.elementType;
    strides.push_back(view.strides);
  }

  // Each loop's role from the operands that index it; each role's loops in
  // loop order, collapsed where every operand lays them out contiguously.
  auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
  SmallVector<int64_t> loopSizes = linalgOp.getStaticLoopRanges();
  enum Role { Batch, M, N, K };
  std::array<LoopGroup, 4> groups;
  std::array<SmallVector<unsigned>, 4> groupLoops;
  for (unsigned loop = 0; loop < loopSizes.size(); ++loop) {
    if (loopSizes[loop] == 1)
      continue;
    unsigned mask = 0;
    for (auto [i, map] : llvm::enumerate(maps))
      if (map.isFunctionOfDim(loop))
        mask |= 1u << i;
    Role role = mask == 7 ? Batch : mask == 5 ? M : mask == 6 ? N : K;
    if (mask != 7 && mask != 5 && mask != 6 && mask != 3) {
      why = "loop " + std::to_string(loop) + " indexes one operand only";
      return std::nullopt;
    }
    groupLoops[role].push_back(loop);
  }
  // The outer loops of an M or N role that do not collapse with the rest
  // become batch loops, the operand that does not index them shared by
  // every batch (a convolution's weight across images).
  auto collapse = [&](ArrayRef<unsigned> loops) {
    return collapseLoops(loops, maps, strides, loopSizes);
  };
  for (Role role : {M, N}) {
    SmallVector<unsigned> &loops = groupLoops[role];
    size_t first = 0;
    while (first < loops.size() && !collapse(ArrayRef(loops).drop_front(first)))
      ++first;
    groupLoops[Batch].append(loops.begin(), loops.begin() + first);
    loops.erase(loops.begin(), loops.begin() + first);
  }
  llvm::sort(groupLoops[Batch]);
  for (unsigned role = 0; role < 4; ++role) {
    std::optional<LoopGroup> group = collapse(groupLoops[role]);
    if (!group) {
      why = role == K ? "the reduction loops are not contiguous in an operand"
                      : "the batch loops are not contiguous in an operand";
      return std::nullopt;
    }
    groups[role] = *group;
  }

  // Column-major D = C (m x n), or D = C^T with the operands swapped when
  // C's rows are contiguous.
  const LoopGroup &gm = groups[M], &gn = groups[N], &gk = groups[K];
  for (bool swapped : {false, true}) {
    unsigned a = swapped ? 1 : 0, b = swapped ? 0 : 1;
    const LoopGroup &rows = swapped ? gn : gm, &cols = swapped ? gm : gn;
    std::optional<MatrixLayout> d =
        getLayout(rows.size, cols.size, rows.strides[2], cols.strides[2],
                  /*allowTranspose=*/false);
    std::optional<MatrixLayout> la =
        getLayout(rows.size, gk.size, rows.strides[a], gk.strides[a], true);
    std::optional<MatrixLayout> lb =
        getLayout(gk.size, cols.size, gk.strides[b], cols.strides[b], true);
    if (!d || !la || !lb)
      continue;
    int64_t batch = groups[Batch].size;
    auto batchStride = [&](unsigned i) {
      return batch == 1 ? 0 : groups[Batch].strides[i];
    };
    GemmRecord record = {};
    record[kGemmM] = rows.size;
    record[kGemmN] = cols.size;
    record[kGemmK] = gk.size;
    record[kGemmBatch] = batch;
    record[kGemmTransA] = la->transposed;
    record[kGemmTransB] = lb->transposed;
    record[kGemmLdA] = la->leadingDim;
    record[kGemmLdB] = lb->leadingDim;
    record[kGemmLdD] = d->leadingDim;
    record[kGemmBatchStrideA] = batchStride(a);
    record[kGemmBatchStrideB] = batchStride(b);
    record[kGemmBatchStrideD] = batchStride(2);
    record[kGemmTypeA] = amp::getGemmDataType(elementTypes[a]);
    record[kGemmTypeB] = amp::getGemmDataType(elementTypes[b]);
    record[kGemmTypeD] = amp::getGemmDataType(elementTypes[2]);
    record[kGemmSwapped] = swapped;
    return record;
  }
  why = "no column-major layout reads the operands in place";
  return std::nullopt;
}

namespace {
/// The elementwise epilogue of a GEMM that reads its result:
/// `out = D + bias[i]`, `out = max(D + bias[i], 0)` or `out = max(D, 0)`,
/// each possibly rounded to an f16 or bf16 `out`.
struct Epilogue {
  linalg::GenericOp generic;
  /// Null without a bias.
  Value bias;
  Value out;
  GemmActivation activation;
  /// The f16 or bf16 type of `out`; null for an f32 one.
  FloatType narrow;
  /// The bias is f32 and the body rounds it to `narrow` first.
  bool roundsBias;
};

/// What an epilogue generic's body computes (matchEpilogueBody).
struct EpilogueBody {
  GemmActivation activation = kGemmNoActivation;
  bool roundsBias = false;
};
} // namespace

/// Whether `op` is an `arith.truncf` to nearest even from f32 to `type`.
static bool isRoundingTo(Operation *op, Type type) {
  auto truncation = dyn_cast_if_present<arith::TruncFOp>(op);
  return truncation && !truncation.getRoundingmodeAttr() &&
         truncation.getType() == type && truncation.getIn().getType().isF32();
}

/// `value` without the round trips through `narrow` that a rounding to
/// `narrow` after it makes redundant (`extf(truncf(x))` with x f32: it
/// keeps x's sign and order, so a ReLU and a final rounding give the same
/// bits), their ops added to `chain`. `value` itself when `narrow` is null.
static Value stripRoundTrips(Value value, FloatType narrow,
                             SmallPtrSetImpl<Operation *> &chain) {
  while (narrow) {
    auto extension = value.getDefiningOp<arith::ExtFOp>();
    if (!extension || !extension.getType().isF32() ||
        !isRoundingTo(extension.getIn().getDefiningOp(), narrow))
      break;
    Operation *rounding = extension.getIn().getDefiningOp();
    chain.insert(extension);
    chain.insert(rounding);
    value = rounding->getOperand(0);
  }
  return value;
}

/// The bias element that `addend` widens to f32 for an addition whose sum
/// is rounded to `narrow`: `b` for `extf(b)` with `b` of `narrow`, or for
/// `extf(truncf(b))` with `b` f32 (`roundsBias`: cuBLASLt's bias, of D's
/// type, is then a rounded copy). Their ops go into `chain`; null for any
/// other value.
static Value getWidenedBias(Value addend, FloatType narrow, bool &roundsBias,
                            SmallPtrSetImpl<Operation *> &chain) {
  auto extension = addend ? addend.getDefiningOp<arith::ExtFOp>() : nullptr;
  if (!extension || !extension.getType().isF32())
    return Value();
  chain.insert(extension);
  Value bias = extension.getIn();
  roundsBias = isRoundingTo(bias.getDefiningOp(), narrow);
  if (roundsBias) {
    chain.insert(bias.getDefiningOp());
    return bias.getDefiningOp()->getOperand(0);
  }
  return bias.getType() == narrow ? bias : Value();
}

/// Whether `op`'s record (`record`) overwrites one packed D of static
/// shape (`dType`): what an elementwise epilogue needs to map D's elements
/// to the next kernel's.
static bool overwritesOnePackedD(const GemmRecord &record, MemRefType dType) {
  return record[kGemmOverwrite] && record[kGemmBatch] == 1 &&
         record[kGemmLdD] == record[kGemmM] &&
         memref::isStaticShapeAndContiguousRowMajor(dType);
}

/// The f16 or bf16 type that a GEMM with record `record`, D of element type
/// `dElement`, writes rounded to when its epilogue's output has element
/// type `outElement`: null for D's own type, the inputs' f16 or bf16 type;
/// nullopt for any other.
static std::optional<FloatType>
getOutputRounding(Type outElement, Type dElement, const GemmRecord &record) {
  if (outElement == dElement)
    return FloatType();
  if ((!outElement.isF16() && !outElement.isBF16()) ||
      amp::getGemmDataType(outElement) != record[kGemmTypeA])
    return std::nullopt;
  return cast<FloatType>(outElement);
}

/// The elementwise generic that next accesses `buffer` after `after`, on
/// buffers, with `numInputs` inputs, one output and identity maps.
static linalg::GenericOp getIdentityElementwiseAccess(Operation *after,
                                                      Value buffer,
                                                      unsigned numInputs) {
  auto generic =
      dyn_cast_if_present<linalg::GenericOp>(amp::getNextAccess(after, buffer));
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() != numInputs || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return nullptr;
  return generic;
}

/// What the body of the elementwise `generic` computes from its inputs
/// `d` and `bias` (null: no bias input), as an epilogue: a bias addition,
/// a ReLU, or both, in f32; with `narrow`, then rounded to it, the bias of
/// that type widened or an f32 one rounded to it and widened. Or GELU of
/// D plus a bias of the output's type (computesGELU). Nullopt for anything
/// else (another op, a value used outside the chain).
static std::optional<EpilogueBody> matchEpilogueBody(linalg::GenericOp generic,
                                                     Value d, Value bias,
                                                     FloatType narrow) {
  Block *body = generic.getBody();
  // GELU of D (plus the bias), however spelled; a bias of the output's
  // type (cuBLASLt's bias type), widened in the body.
  Type outElement = narrow ? Type(narrow) : d.getType();
  if ((!bias || bias.getType() == outElement) &&
      amp::computesGELU(body, d, bias))
    return EpilogueBody{kGemmGELU, false};
  SmallPtrSet<Operation *, 8> chain;
  EpilogueBody result;
  Value value = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0);
  if (narrow) {
    if (!isRoundingTo(value.getDefiningOp(), narrow))
      return std::nullopt;
    chain.insert(value.getDefiningOp());
    value =
        stripRoundTrips(value.getDefiningOp()->getOperand(0), narrow, chain);
  }
  // max(x, +0.0), either order: arith.maximumf, as Relu lowers.
  if (auto max = value.getDefiningOp<arith::MaximumFOp>()) {
    if (matchPattern(max.getRhs(), m_PosZeroFloat()))
      value = max.getLhs();
    else if (matchPattern(max.getLhs(), m_PosZeroFloat()))
      value = max.getRhs();
    else
      return std::nullopt;
    chain.insert(max);
    result.activation = kGemmReLU;
    value = stripRoundTrips(value, narrow, chain);
  }
  if (bias) {
    auto sum = value.getDefiningOp<arith::AddFOp>();
    if (!sum)
      return std::nullopt;
    chain.insert(sum);
    Value addend = sum.getLhs() == d   ? sum.getRhs()
                   : sum.getRhs() == d ? sum.getLhs()
                                       : Value();
    if (narrow)
      addend = getWidenedBias(addend, narrow, result.roundsBias, chain);
    if (!addend || addend != bias)
      return std::nullopt;
  } else if (value != d || !result.activation) {
    return std::nullopt;
  }
  // Nothing else computed, and nothing of the chain used outside it.
  for (Operation &op : body->without_terminator())
    if (!isa<arith::ConstantOp>(op) && !chain.contains(&op))
      return std::nullopt;
  for (Operation *op : chain)
    for (Operation *user : op->getUsers())
      if (!chain.contains(user) && !isa<linalg::YieldOp>(user))
        return std::nullopt;
  return result;
}

namespace {
/// Where a GEMM writes the output of the elementwise kernel it takes over.
enum class OutputPlacement {
  /// It cannot.
  None,
  /// Where the GEMM is: the output written early.
  AtGEMM,
  /// Where the kernel is: the GEMM moves there.
  AtKernel
};
} // namespace

/// Where the GEMM `op`, whose result `d` the elementwise `generic` reads,
/// may write `generic`'s output `out` (not `d`, none of the GEMM's inputs)
/// instead, `d` being a new buffer read after `generic` by nothing unless
/// `keepsD` (the GEMM writes it too): early, when nothing in between uses
/// `out` and it is defined before the GEMM or a new buffer that can move
/// there; else, with `mayMove`, at `generic`, when nothing in between
/// writes what the GEMM reads (its inputs and `alsoRead`).
static OutputPlacement placeOutput(linalg::ContractOp op,
                                   linalg::GenericOp generic, Value d,
                                   Value out, bool keepsD, bool mayMove,
                                   ValueRange alsoRead = {}) {
  if (!keepsD &&
      (!d.getDefiningOp<memref::AllocOp>() || amp::isReadAfter(generic, d)))
    return OutputPlacement::None;
  Value outRoot = memref::skipViewLikeOps(cast<MemrefValue>(out));
  if (outRoot == memref::skipViewLikeOps(cast<MemrefValue>(d)) ||
      llvm::any_of(op.getInputs(), [&](Value input) {
        return memref::skipViewLikeOps(cast<MemrefValue>(input)) == outRoot;
      }))
    return OutputPlacement::None;
  bool untouched = canWriteBefore(out, op);
  for (Operation *between = op->getNextNode(); untouched && between != generic;
       between = between->getNextNode())
    untouched = !amp::mayRead(between, out) && !amp::mayWrite(between, out);
  if (untouched)
    return OutputPlacement::AtGEMM;
  auto isWritten = [&](Value value) {
    return amp::isWrittenBetween(op, generic, value);
  };
  return mayMove && llvm::none_of(op.getInputs(), isWritten) &&
                 llvm::none_of(alsoRead, isWritten)
             ? OutputPlacement::AtKernel
             : OutputPlacement::None;
}

/// The generic right after `op` (record `record`, D overwritten, f32)
/// that adds a bias along the rows of its column-major result D, applies
/// a ReLU, or both, when the GEMM can write its output instead (cuBLASLt's
/// BIAS, RELU and RELU_BIAS epilogues): D packed, the output of D's shape,
/// and either D itself (in place) or a buffer untouched in between and
/// none of the GEMM's inputs, D then a new buffer read by nothing else. An
/// output of the GEMM's f16 or bf16 input type that the generic rounds the
/// result to is cuBLASLt's output type: the bias is then of that type (or
/// rounded to it in the body, when the record's caller makes the copy).
static std::optional<Epilogue> matchEpilogue(linalg::ContractOp op,
                                             const GemmRecord &record) {
  Value d = op.getDpsInits().front();
  auto dType = cast<MemRefType>(d.getType());
  if (!overwritesOnePackedD(record, dType))
    return std::nullopt;
  auto generic =
      dyn_cast_if_present<linalg::GenericOp>(amp::getNextAccess(op, d));
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() < 1 || generic.getNumDpsInputs() > 2 ||
      generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return std::nullopt;
  // out = f(view(D), bias): identity maps but the bias's, one loop of it.
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  unsigned numInputs = generic.getNumDpsInputs();
  unsigned dSide = amp::stripReshapes(generic.getDpsInputs()[0]) == d ? 0 : 1;
  Value view = generic.getDpsInputs()[dSide];
  Value bias = numInputs == 2 ? generic.getDpsInputs()[1 - dSide] : Value();
  Value out = generic.getDpsInits().front();
  auto viewType = cast<MemRefType>(view.getType());
  auto outType = dyn_cast<MemRefType>(out.getType());
  int64_t rank = viewType.getRank();
  if (amp::stripReshapes(view) != d || !maps[dSide].isIdentity() ||
      !maps[numInputs].isIdentity() || !outType ||
      outType.getShape() != viewType.getShape() ||
      !outType.getLayout().isIdentity() ||
      viewType.getShape().back() != record[kGemmM])
    return std::nullopt;
  // An f32 output, or one of the inputs' f16 or bf16 type.
  std::optional<FloatType> narrow = getOutputRounding(
      outType.getElementType(), dType.getElementType(), record);
  if (!narrow)
    return std::nullopt;
  if (bias) {
    auto biasType = dyn_cast<MemRefType>(bias.getType());
    if (!biasType || biasType.getRank() != 1 ||
        !biasType.getLayout().isIdentity() ||
        maps[1 - dSide] !=
            AffineMap::get(rank, 0,
                           getAffineDimExpr(rank - 1, op.getContext())))
      return std::nullopt;
  }
  Block *body = generic.getBody();
  std::optional<EpilogueBody> computed =
      matchEpilogueBody(generic, body->getArgument(dSide),
                        bias ? body->getArgument(1 - dSide) : Value(), *narrow);
  // The GEMM reads the bias earlier: nothing may write it in between.
  if (!computed || (bias && amp::isWrittenBetween(op, generic, bias)))
    return std::nullopt;
  if (bias && !isDefinedBefore(bias, op))
    return std::nullopt;
  Epilogue epilogue{
      generic, bias, out, computed->activation, *narrow, computed->roundsBias};
  // In place: the GEMM writes the result into D.
  if (amp::stripReshapes(out) == d) {
    epilogue.out = d;
    return epilogue;
  }
  if (placeOutput(op, generic, d, out, /*keepsD=*/false, /*mayMove=*/false) ==
      OutputPlacement::None)
    return std::nullopt;
  return epilogue;
}

namespace {
/// An elementwise kernel after a GEMM that cuBLASLt's epilogue computes
/// with an aux matrix or after the bias epilogue: GELU of what the GEMM
/// wrote (`aux` that input where it is read later), or D times GELU's
/// derivative at `aux`.
struct AuxEpilogue {
  linalg::GenericOp generic;
  Value out;
  /// Null for GELU whose input nothing reads later.
  Value aux;
  GemmActivation activation;
  /// The f16 or bf16 type the GEMM then writes; null for f32.
  FloatType narrow;
  /// The GEMM runs where `generic` was (OutputPlacement::AtKernel).
  bool runsAtGeneric = false;
};
} // namespace

/// The elementwise generic that next reads `written`, a packed buffer the
/// GEMM `op` (record `record`, one batch, overwriting, no activation)
/// writes, last by `writer` (`op`, or its bias epilogue's kernel), as its
/// only input through identity maps (reshapes aside), and writes its
/// output, of `written`'s shape and type: when the body computes GELU
/// (computesGELU), it is the GEMM's GELU epilogue, which writes `written`
/// as its aux matrix when something reads it later (GELU's input, for the
/// backward). The GEMM writes the output early or runs at the GELU kernel
/// (placeOutput; `bias`, null without one, read at the GEMM).
static std::optional<AuxEpilogue>
matchGELUAfter(linalg::ContractOp op, const GemmRecord &record, Value written,
               Operation *writer, Value bias) {
  auto writtenType = cast<MemRefType>(written.getType());
  if (record[kGemmBatch] != 1 || !record[kGemmOverwrite] ||
      record[kGemmActivation] != kGemmNoActivation ||
      record[kGemmBias] > kGemmBiasAdd ||
      !memref::isStaticShapeAndContiguousRowMajor(writtenType))
    return std::nullopt;
  linalg::GenericOp generic =
      getIdentityElementwiseAccess(writer, written, /*numInputs=*/1);
  if (!generic)
    return std::nullopt;
  Value view = generic.getDpsInputs()[0];
  Value out = generic.getDpsInits()[0];
  auto viewType = cast<MemRefType>(view.getType());
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (amp::stripReshapes(view) != written || !outType ||
      outType.getShape() != viewType.getShape() ||
      outType.getElementType() != writtenType.getElementType() ||
      !outType.getLayout().isIdentity() ||
      viewType.getShape().back() != record[kGemmM] ||
      !amp::computesGELU(generic.getBody(), generic.getBody()->getArgument(0),
                         Value()))
    return std::nullopt;
  // In place: GELU overwrites its input.
  if (amp::stripReshapes(out) == written)
    return AuxEpilogue{generic, written, Value(), kGemmGELU, nullptr};
  bool keepsInput = amp::isReadAfter(generic, written);
  if (keepsInput && record[kGemmLdD] % 8 != 0)
    return std::nullopt;
  OutputPlacement placement =
      placeOutput(op, generic, written, out, keepsInput, /*mayMove=*/true,
                  bias ? ValueRange(bias) : ValueRange());
  if (placement == OutputPlacement::None)
    return std::nullopt;
  return AuxEpilogue{generic,
                     out,
                     keepsInput ? written : Value(),
                     keepsInput ? kGemmGELUAux : kGemmGELU,
                     nullptr,
                     placement == OutputPlacement::AtKernel};
}

/// The runtime's entry point `<prefix><A>_<B>_<D>` of a record's call on
/// operands of element types `types` (A, B, D): the one that rounds to D
/// where D is f16 or bf16; "" when the runtime has none.
static std::string getRecordEntryName(ArrayRef<Type> types, StringRef prefix) {
  return types[2].isF16() || types[2].isBF16()
             ? amp::getRoundedResultEntryName(types[0], types[2], prefix)
             : amp::getContractEntryName(types[0], types[1], types[2], prefix);
}

namespace {
/// A GEMM whose record has a ReLU (kGemmReLU), by the buffer it writes
/// the ReLU's output to: where a later DRELU reads the mask, its call
/// becomes RELU_AUX's, which writes the mask.
struct ReLUForward {
  func::CallOp call;
  GemmRecord record;
  /// A, B and D's element types, and whether the call adds a bias.
  SmallVector<Type, 3> types;
  bool hasBias;
};
using ReLUForwards = llvm::DenseMap<Value, ReLUForward>;
} // namespace

/// `predicate` with its operands swapped: `a < b` as `b > a`.
static arith::CmpFPredicate swapOperands(arith::CmpFPredicate predicate) {
  using Predicate = arith::CmpFPredicate;
  switch (predicate) {
  case Predicate::OLT:
    return Predicate::OGT;
  case Predicate::OGT:
    return Predicate::OLT;
  case Predicate::OLE:
    return Predicate::OGE;
  case Predicate::OGE:
    return Predicate::OLE;
  case Predicate::ULT:
    return Predicate::UGT;
  case Predicate::UGT:
    return Predicate::ULT;
  case Predicate::ULE:
    return Predicate::UGE;
  case Predicate::UGE:
    return Predicate::ULE;
  default:
    return predicate;
  }
}

/// Whether `body` yields `d` where `y` is positive and +0.0 elsewhere (or
/// where y is NaN, for `y <= 0`'s form), rounded to `narrow` when not
/// null: ReLU's backward at its output `y`, `select(y > 0, d, 0)` or
/// `select(y <= 0, 0, d)`, either operand order, y possibly widened, d
/// possibly through round trips to `narrow`.
static bool isReLUGradientBody(Block *body, Value d, Value y,
                               FloatType narrow) {
  SmallPtrSet<Operation *, 4> chain;
  Value value = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0);
  if (narrow) {
    if (!isRoundingTo(value.getDefiningOp(), narrow))
      return false;
    chain.insert(value.getDefiningOp());
    value = value.getDefiningOp()->getOperand(0);
  }
  auto select = value.getDefiningOp<arith::SelectOp>();
  auto compare =
      select ? select.getCondition().getDefiningOp<arith::CmpFOp>() : nullptr;
  if (!compare)
    return false;
  chain.insert(select);
  chain.insert(compare);
  auto isY = [&](Value operand) {
    if (auto widening = operand.getDefiningOp<arith::ExtFOp>()) {
      chain.insert(widening);
      operand = widening.getIn();
    }
    return operand == y;
  };
  auto isZero = [](Value operand) {
    return matchPattern(operand, m_PosZeroFloat());
  };
  using Predicate = arith::CmpFPredicate;
  // The predicate as `y ? 0`: y > 0 passes d, y <= 0 zeroes it.
  Predicate predicate = compare.getPredicate();
  if (isZero(compare.getLhs()) && isY(compare.getRhs()))
    predicate = swapOperands(predicate);
  else if (!isY(compare.getLhs()) || !isZero(compare.getRhs()))
    return false;
  bool passes = predicate == Predicate::OGT || predicate == Predicate::UGT;
  bool zeroes = predicate == Predicate::OLE || predicate == Predicate::ULE;
  // dY, through round trips to `narrow` that the final rounding makes
  // redundant.
  Value passed = stripRoundTrips(
      passes ? select.getTrueValue() : select.getFalseValue(), narrow, chain);
  Value zeroed = passes ? select.getFalseValue() : select.getTrueValue();
  if ((!passes && !zeroes) || passed != d || !isZero(zeroed))
    return false;
  for (Operation &op : body->without_terminator())
    if (!isa<arith::ConstantOp>(op) && !chain.contains(&op))
      return false;
  return true;
}

/// The generic right after `op` (record `record`, one batch, D overwritten,
/// f32, packed, a new buffer read by nothing after it) that computes an
/// activation's backward from D (dY) and another input of D's shape, when
/// the GEMM can write its output instead (placeOutput); the output f32 or
/// of the GEMM's f16 or bf16 input type:
/// - D times GELU's derivative at an input `aux` (computesGELUGradient),
///   defined before the GEMM, written by nothing until the generic and of
///   the output's type (cuBLASLt's DGELU, its aux matrix GELU's input, of
///   D's type, D's leading dimension a multiple of 8);
/// - D where an input `y` is positive (isReLUGradientBody), `y` the ReLU
///   output of an earlier GEMM in `forwards`, written by nothing since
///   (cuBLASLt's DRELU, its aux the mask that GEMM then writes: the
///   returned `aux` is `y`, for the caller to replace).
static std::optional<AuxEpilogue>
matchActivationGradient(linalg::ContractOp op, const GemmRecord &record,
                        const ReLUForwards &forwards) {
  Value d = op.getDpsInits().front();
  auto dType = cast<MemRefType>(d.getType());
  if (!overwritesOnePackedD(record, dType))
    return std::nullopt;
  linalg::GenericOp generic =
      getIdentityElementwiseAccess(op, d, /*numInputs=*/2);
  if (!generic)
    return std::nullopt;
  unsigned dSide = amp::stripReshapes(generic.getDpsInputs()[0]) == d ? 0 : 1;
  Value view = generic.getDpsInputs()[dSide];
  Value aux = generic.getDpsInputs()[1 - dSide];
  Value out = generic.getDpsInits()[0];
  auto viewType = cast<MemRefType>(view.getType());
  auto auxType = dyn_cast<MemRefType>(aux.getType());
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (amp::stripReshapes(view) != d || !auxType || !outType ||
      viewType.getShape().back() != record[kGemmM] ||
      auxType.getShape() != viewType.getShape() ||
      outType.getShape() != viewType.getShape() ||
      !auxType.getLayout().isIdentity() || !outType.getLayout().isIdentity())
    return std::nullopt;
  Type outElement = outType.getElementType();
  std::optional<FloatType> narrow =
      getOutputRounding(outElement, dType.getElementType(), record);
  if (!narrow)
    return std::nullopt;
  Block *body = generic.getBody();
  Value dElement = body->getArgument(dSide);
  Value auxElement = body->getArgument(1 - dSide);
  Value outRoot = memref::skipViewLikeOps(cast<MemrefValue>(out));
  GemmActivation activation;
  if (record[kGemmLdD] % 8 == 0 && auxType.getElementType() == outElement &&
      amp::computesGELUGradient(body, dElement, auxElement) &&
      isDefinedBefore(aux, op) && !amp::isWrittenBetween(op, generic, aux) &&
      memref::skipViewLikeOps(cast<MemrefValue>(aux)) != outRoot) {
    activation = kGemmDGELU;
  } else {
    auto forward = forwards.find(amp::stripReshapes(aux));
    if (forward == forwards.end() ||
        forward->second.call->getBlock() != op->getBlock() ||
        !isReLUGradientBody(body, dElement, auxElement, *narrow) ||
        amp::isWrittenBetween(forward->second.call, generic, aux))
      return std::nullopt;
    activation = kGemmDReLU;
  }
  if (amp::stripReshapes(out) == d)
    return AuxEpilogue{generic, d, aux, activation, nullptr};
  OutputPlacement placement =
      placeOutput(op, generic, d, out, /*keepsD=*/false, /*mayMove=*/true);
  if (placement == OutputPlacement::None)
    return std::nullopt;
  return AuxEpilogue{generic, out,
                     aux,     activation,
                     *narrow, placement == OutputPlacement::AtKernel};
}

namespace {
/// A bias addition at the start of the kernel that reads an f16 or bf16
/// GEMM's f32 result D: `sum = D + extf(bias)` or `D + extf(truncf(bias))`,
/// only ever rounded to the inputs' type.
struct RoundedBiasAddition {
  arith::AddFOp sum;
  /// D's element, and the widened bias the sum adds to it.
  BlockArgument element;
  Value addend;
  /// The f32 or narrow bias buffer the generic reads.
  Value bias;
  FloatType narrow;
  bool roundsBias;
};
} // namespace

/// The bias addition in the generic that next reads the result D of `op`
/// (record `record`: one batch, D overwritten, f32, packed, a new buffer),
/// when the GEMM can add the bias itself and write D rounded to its f16 or
/// bf16 inputs' type (cuBLASLt's BIAS epilogue with its output type): D's
/// element used only by that addition, whose result is used only in
/// roundings to that type, the bias of that type (widened) or f32 rounded
/// to it, indexed by D's last index (the record's m), defined before the
/// GEMM and written by nothing in between. An f32 bias, which needs a
/// rounded copy (a kernel more), only when D has `minElements` or more.
static std::optional<RoundedBiasAddition>
matchRoundedBiasAddition(linalg::ContractOp op, const GemmRecord &record,
                         int64_t minElements) {
  Value d = op.getDpsInits().front();
  auto dType = cast<MemRefType>(d.getType());
  auto narrow = dyn_cast<FloatType>(
      getElementTypeOrSelf(op.getDpsInputs().front().getType()));
  if (!overwritesOnePackedD(record, dType) || !narrow ||
      (!narrow.isF16() && !narrow.isBF16()))
    return std::nullopt;
  // D a new buffer read once, as an input through reshapes, and never
  // after (the output cast's rules).
  std::optional<std::pair<linalg::GenericOp, unsigned>> reader =
      amp::getReaderOfNewResult(op, d);
  if (!reader)
    return std::nullopt;
  auto [generic, dIndex] = *reader;
  OpOperand &dOperand = generic->getOpOperand(dIndex);
  auto viewType = cast<MemRefType>(dOperand.get().getType());
  AffineMap dMap = generic.getMatchingIndexingMap(&dOperand);
  if (viewType.getShape().back() != record[kGemmM] || dMap.getNumResults() == 0)
    return std::nullopt;
  BlockArgument element = generic.getMatchingBlockArgument(&dOperand);
  if (!element.hasOneUse())
    return std::nullopt;
  auto sum = dyn_cast<arith::AddFOp>(*element.getUsers().begin());
  if (!sum)
    return std::nullopt;
  if (sum->getResult(0).use_empty() ||
      llvm::any_of(sum->getUsers(), [&](Operation *user) {
        return !isRoundingTo(user, narrow);
      }))
    return std::nullopt;
  // The addend: extf(bias) of `narrow`, or extf(truncf(bias)) of f32.
  Value addend = sum.getLhs() == element ? sum.getRhs() : sum.getLhs();
  bool roundsBias = false;
  SmallPtrSet<Operation *, 2> widening;
  auto argument = dyn_cast_if_present<BlockArgument>(
      getWidenedBias(addend, narrow, roundsBias, widening));
  if (!argument || argument.getOwner() != generic.getBody() ||
      argument.getArgNumber() >= generic.getNumDpsInputs())
    return std::nullopt;
  OpOperand *biasOperand = generic.getDpsInputOperand(argument.getArgNumber());
  Value bias = biasOperand->get();
  auto biasType = dyn_cast<MemRefType>(bias.getType());
  AffineMap biasMap = generic.getMatchingIndexingMap(biasOperand);
  if (!biasType || biasType.getRank() != 1 ||
      !biasType.getLayout().isIdentity() || biasMap.getNumResults() != 1 ||
      biasMap.getResult(0) != dMap.getResults().back() ||
      !isDefinedBefore(bias, op) || amp::isWrittenBetween(op, generic, bias) ||
      (roundsBias && dType.getNumElements() < minElements))
    return std::nullopt;
  return RoundedBiasAddition{sum, element, addend, bias, narrow, roundsBias};
}

namespace {
/// A reduction that sums a GEMM input over k: `gradient` = the reduction's
/// zero-filled output.
struct BiasGradientEpilogue {
  linalg::GenericOp reduction;
  linalg::FillOp zeros;
  Value gradient;
  GemmBiasEpilogue epilogue;
};
} // namespace

/// The reduction in `op`'s block that is its bias gradient
/// (getBiasGradientInput), when the GEMM (record `record`, one batch, f32
/// D) can write the gradient instead (cuBLASLt's BGRADA or BGRADB): the
/// gradient zero-filled before the reduction, a packed f32 vector none of
/// the GEMM's operands, nothing writing the input or touching the gradient
/// between the two, and the gradient's buffer defined before the GEMM or
/// a new one that can move there.
static std::optional<BiasGradientEpilogue>
matchBiasGradient(linalg::ContractOp op, const GemmRecord &record) {
  if (record[kGemmBatch] != 1 || record[kGemmTypeD] != kGemmF32 ||
      !op.hasPureBufferSemantics())
    return std::nullopt;
  Block *block = op->getBlock();
  for (unsigned input : {0u, 1u}) {
    Value x = op.getDpsInputs()[input];
    for (Operation *user : x.getUsers()) {
      auto reduction = dyn_cast<linalg::GenericOp>(user);
      if (!reduction || reduction->getBlock() != block ||
          !reduction.hasPureBufferSemantics() ||
          amp::getBiasGradientInput(op, reduction) != input)
        continue;
      Value gradient = reduction.getDpsInits()[0];
      auto gradientType = cast<MemRefType>(gradient.getType());
      linalg::FillOp zeros = amp::getZeroFillOfOutput(reduction, gradient);
      if (!zeros || !gradientType.getLayout().isIdentity())
        continue;
      Value root = memref::skipViewLikeOps(cast<MemrefValue>(gradient));
      if (llvm::any_of(op->getOperands(), [&](Value operand) {
            return memref::skipViewLikeOps(cast<MemrefValue>(operand)) == root;
          }))
        continue;
      // Between the two (either order): x unwritten, the gradient untouched
      // but for its fill.
      bool after = op->isBeforeInBlock(reduction);
      Operation *first = after ? op.getOperation() : reduction.getOperation();
      Operation *last = after ? reduction.getOperation() : op.getOperation();
      bool clear = !amp::isWrittenBetween(first, last, x);
      for (Operation *between = first->getNextNode(); clear && between != last;
           between = between->getNextNode())
        clear = between == zeros.getOperation() ||
                (!amp::mayRead(between, gradient) &&
                 !amp::mayWrite(between, gradient));
      if (!clear || !canWriteBefore(gradient, op))
        continue;
      unsigned a = record[kGemmSwapped] ? 1 : 0;
      return BiasGradientEpilogue{reduction, zeros, gradient,
                                  input == a ? kGemmBiasGradA : kGemmBiasGradB};
    }
  }
  return std::nullopt;
}

/// Whether `record` and `other` multiply matrices of the same sizes, as
/// many times: no loop moved into the batch.
static bool isSameProblem(const GemmRecord &record, const GemmRecord &other) {
  auto sizes = [](const GemmRecord &r) {
    return std::array<int64_t, 4>{std::min(r[kGemmM], r[kGemmN]),
                                  std::max(r[kGemmM], r[kGemmN]), r[kGemmK],
                                  r[kGemmBatch]};
  };
  return sizes(record) == sizes(other);
}

/// Whether `reader` is the only op that reads what `writer` wrote into
/// `buffer`.
static bool isOnlyReader(Operation *writer, Operation *reader, Value buffer) {
  for (Operation *op = writer->getNextNode(); op != reader;
       op = op->getNextNode())
    if (!op || amp::mayRead(op, buffer))
      return false;
  return !amp::isReadAfter(reader, buffer);
}

namespace {
/// A contraction's record and what the call reads: A, B and D (operand
/// order), their views, and for an FP8 record the dequantizations of A
/// and B.
struct RecordedContraction {
  linalg::ContractOp op;
  GemmRecord record;
  std::array<Value, 3> operands;
  std::optional<std::array<Dequantization, 2>> fp8;
  SmallVector<OperandView, 3> views = {};
  /// The transposed copies of inputs whose sources the call reads, and the
  /// chain of copies of the result into the buffer that it writes.
  SmallVector<amp::TransposedCopy, 2> inputCopies = {};
  SmallVector<amp::TransposedCopy, 2> resultCopies = {};
};

struct ContractionsToGemmRecordsPass
    : amp::impl::ContractionsToGemmRecordsBase<ContractionsToGemmRecordsPass> {
  using ContractionsToGemmRecordsBase::ContractionsToGemmRecordsBase;

  /// `op`'s record on its operands, or the reason it has none in `why`.
  std::optional<RecordedContraction> record(linalg::ContractOp op,
                                            std::string &why) {
    if (!op.hasPureBufferSemantics() || op->getNumOperands() != 3) {
      why = "not a contraction of three memrefs";
      return std::nullopt;
    }
    SmallVector<OperandView, 3> views;
    for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
      std::optional<OperandView> view = getOperandView(operand, index, why);
      if (!view)
        return std::nullopt;
      views.push_back(*view);
    }
    if (amp::getContractEntryName(views[0].elementType, views[1].elementType,
                                  views[2].elementType)
            .empty()) {
      why = "element types (an f32 accumulator over f32, f16 or bf16, or f64 "
            "throughout)";
      return std::nullopt;
    }
    std::optional<GemmRecord> record = deriveRecord(op, views, why);
    if (!record)
      return std::nullopt;
    RecordedContraction recorded{
        op,
        *record,
        {op->getOperand(0), op->getOperand(1), op->getOperand(2)},
        std::nullopt,
        views};
    for (unsigned input : {0u, 1u})
      if (foldTransposes)
        foldInputTranspose(recorded, input);
    return recorded;
  }

  /// The record of `recorded` with operand `index` read as `view`, when it
  /// multiplies the same matrices (isSameProblem).
  static std::optional<GemmRecord> rederive(const RecordedContraction &recorded,
                                            unsigned index,
                                            const OperandView &view) {
    SmallVector<OperandView, 3> views = recorded.views;
    views[index] = view;
    std::string why;
    std::optional<GemmRecord> record = deriveRecord(recorded.op, views, why);
    if (!record || !isSameProblem(*record, recorded.record))
      return std::nullopt;
    return record;
  }

  /// Reads input `index` of `recorded` from the source of the transposed
  /// copy that wrote it, when nothing else reads the copy and the source
  /// is unchanged until the GEMM.
  static void foldInputTranspose(RecordedContraction &recorded,
                                 unsigned index) {
    linalg::ContractOp op = recorded.op;
    Value input = recorded.operands[index];
    std::optional<amp::TransposedCopy> copy =
        amp::matchTransposedCopy(amp::getLastWriterBefore(op, input));
    std::string why;
    auto isFolded = [&](const amp::TransposedCopy &folded) {
      return folded.op == copy->op;
    };
    if (!copy || copy->target != input ||
        llvm::any_of(recorded.inputCopies, isFolded) ||
        amp::isWrittenBetween(copy->op, op, copy->source) ||
        !isOnlyReader(copy->op, op, input))
      return;
    std::optional<OperandView> source =
        getOperandView(copy->source, index, why);
    if (!source)
      return;
    // Target dimension i is source dimension permutation[i].
    OperandView view{source->elementType, {}};
    for (int64_t sourceDim : copy->permutation)
      view.strides.push_back(source->strides[sourceDim]);
    std::optional<GemmRecord> record = rederive(recorded, index, view);
    if (!record)
      return;
    recorded.record = *record;
    recorded.views[index] = view;
    recorded.operands[index] = copy->source;
    recorded.inputCopies.push_back(*copy);
  }

  /// Writes the result of `recorded`, a GEMM that overwrites it, where the
  /// copies that alone read it put it: along the chain of transposed copies
  /// (an output cast's reader that only rounds, now a copy, among them),
  /// each the next op to access the buffer that the one before wrote and
  /// the last to read it, into the target of the farthest copy that
  /// nothing accesses between the GEMM and that copy, through the
  /// copies' composed permutation. Keeps the record's epilogue fields; a
  /// bias keeps its orientation (`swapped`).
  static void foldResultCopies(RecordedContraction &recorded) {
    linalg::ContractOp op = recorded.op;
    GemmRecord &record = recorded.record;
    auto root = [](Value buffer) {
      return memref::skipViewLikeOps(cast<MemrefValue>(buffer));
    };
    Value current = recorded.operands[2];
    Operation *after = op;
    // The result's dimension permutation[i] is the copies' target's i.
    auto permutation = llvm::to_vector(
        llvm::seq<int64_t>(0, cast<MemRefType>(current.getType()).getRank()));
    SmallVector<amp::TransposedCopy, 2> pending;
    while (std::optional<amp::TransposedCopy> copy =
               amp::matchTransposedCopy(amp::getNextAccess(after, current))) {
      if (copy->source != current || amp::isReadAfter(copy->op, current))
        return;
      SmallVector<int64_t> composed;
      for (int64_t dim : copy->permutation)
        composed.push_back(permutation[dim]);
      permutation = composed;
      pending.push_back(*copy);
      current = copy->target;
      after = copy->op;
      Value target = copy->target;
      std::string why;
      std::optional<OperandView> targetView = getOperandView(target, 2, why);
      if (!targetView || !canWriteBefore(target, op) ||
          amp::getNextAccess(op, target) != copy->op ||
          root(target) == root(recorded.operands[0]) ||
          root(target) == root(recorded.operands[1]))
        continue;
      OperandView view{targetView->elementType,
                       SmallVector<int64_t>(permutation.size())};
      for (auto [targetDim, resultDim] : llvm::enumerate(permutation))
        view.strides[resultDim] = targetView->strides[targetDim];
      std::optional<GemmRecord> folded = rederive(recorded, 2, view);
      if (!folded || (record[kGemmBias] != kGemmNoBias &&
                      (*folded)[kGemmSwapped] != record[kGemmSwapped]))
        continue;
      for (unsigned field :
           {kGemmOverwrite, kGemmBias, kGemmActivation, kGemmTypeD})
        (*folded)[field] = record[field];
      if (checkGemmRecord(folded->data(), (*folded)[kGemmTypeA],
                          (*folded)[kGemmTypeB], (*folded)[kGemmTypeD]))
        continue;
      record = *folded;
      recorded.views[2] = view;
      recorded.operands[2] = target;
      recorded.resultCopies.append(pending);
      pending.clear();
      moveDefinitionBefore(target, op);
    }
  }

  /// `op`'s FP8 record when both its inputs are dequantized FP8 data, or
  /// nullopt (the reason in `why` when they are).
  static std::optional<RecordedContraction> recordFP8(linalg::ContractOp op,
                                                      std::string &why) {
    if (!op.hasPureBufferSemantics() || op->getNumOperands() != 3)
      return std::nullopt;
    std::optional<Dequantization> a =
        matchDequantization(op, op.getInputs()[0]);
    std::optional<Dequantization> b =
        matchDequantization(op, op.getInputs()[1]);
    if (!a || !b)
      return std::nullopt;
    std::optional<OperandView> viewA = getDequantizedView(*a, 0, why);
    std::optional<OperandView> viewB = getDequantizedView(*b, 1, why);
    std::optional<OperandView> viewD =
        getOperandView(op.getOutputs()[0], 2, why);
    if (!viewA || !viewB || !viewD)
      return std::nullopt;
    std::optional<GemmRecord> record =
        deriveRecord(op, {*viewA, *viewB, *viewD}, why);
    if (!record)
      return std::nullopt;
    // cuBLASLt's FP8 rules (layout, types).
    if (const char *error =
            checkGemmRecord(record->data(), (*record)[kGemmTypeA],
                            (*record)[kGemmTypeB], (*record)[kGemmTypeD])) {
      why = error;
      return std::nullopt;
    }
    return RecordedContraction{op,
                               *record,
                               {a->data, b->data, op.getOutputs()[0]},
                               std::array<Dequantization, 2>{*a, *b},
                               {*viewA, *viewB, *viewD}};
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    std::vector<RecordedContraction> records;
    ReLUForwards reluForwards;
    // One global per distinct record, by its value.
    llvm::DenseMap<Attribute, StringAttr> globals;
    module.walk([&](linalg::ContractOp op) {
      std::string whyNotFP8, why;
      std::optional<RecordedContraction> recorded = recordFP8(op, whyNotFP8);
      if (!whyNotFP8.empty() && emitRemarks)
        op.emitRemark() << "no FP8 GEMM record: " << whyNotFP8;
      if (!recorded)
        recorded = record(op, why);
      if (recorded)
        records.push_back(*recorded);
      else if (warnUnrecorded)
        op.emitWarning() << "no GEMM record, so the contraction stays a "
                            "kernel of the grid loops: "
                         << why;
      else if (emitRemarks)
        op.emitRemark() << "no GEMM record: " << why;
    });
    llvm::SetVector<linalg::GenericOp> dequantizations;
    for (RecordedContraction &recorded : records) {
      linalg::ContractOp op = recorded.op;
      GemmRecord &record = recorded.record;
      linalg::FillOp zeros =
          amp::getZeroFillOfOutput(op, op.getDpsInits().front());
      record[kGemmOverwrite] = zeros ? 1 : 0;
      if (zeros)
        zeros.erase();
      // A bias addition or ReLU after it becomes its epilogue (an f32
      // accumulator over one input type, not FP8: the runtime's bias entry
      // points; the result f32 or rounded to the input type).
      std::optional<Epilogue> epilogue;
      if (!recorded.fp8 && record[kGemmTypeA] == record[kGemmTypeB] &&
          record[kGemmTypeD] == kGemmF32 && record[kGemmTypeA] != kGemmF64)
        epilogue = matchEpilogue(op, record);
      record[kGemmBias] =
          epilogue && epilogue->bias ? kGemmBiasAdd : kGemmNoBias;
      record[kGemmActivation] =
          epilogue ? epilogue->activation : kGemmNoActivation;
      // GELU after the GEMM or its bias (GELU's input the aux matrix where
      // it is read later), or D times GELU's derivative.
      std::optional<AuxEpilogue> auxEpilogue;
      if (!recorded.fp8 && record[kGemmTypeA] == record[kGemmTypeB] &&
          record[kGemmTypeA] != kGemmF64 && record[kGemmTypeD] == kGemmF32) {
        if (!epilogue || epilogue->activation == kGemmNoActivation)
          auxEpilogue = matchGELUAfter(
              op, record, epilogue ? epilogue->out : recorded.operands[2],
              epilogue ? epilogue->generic.getOperation() : op.getOperation(),
              epilogue ? epilogue->bias : Value());
        if (!epilogue && !auxEpilogue)
          auxEpilogue = matchActivationGradient(op, record, reluForwards);
      }
      if (auxEpilogue)
        record[kGemmActivation] = auxEpilogue->activation;
      // Or a reduction of an input over k becomes its bias gradient.
      std::optional<BiasGradientEpilogue> gradient;
      if (!recorded.fp8 && !epilogue && !auxEpilogue &&
          record[kGemmTypeA] == record[kGemmTypeB] &&
          record[kGemmTypeA] != kGemmF64)
        gradient = matchBiasGradient(op, record);
      if (gradient) {
        record[kGemmBias] = gradient->epilogue;
        moveDefinitionBefore(gradient->gradient, op);
      }
      if (epilogue) {
        recorded.operands[2] = epilogue->out;
        moveDefinitionBefore(epilogue->out, op);
        if (epilogue->narrow)
          record[kGemmTypeD] = record[kGemmTypeA];
        if (epilogue->roundsBias)
          epilogue->bias =
              createRoundedBias(op, epilogue->bias, epilogue->narrow);
      }
      // The aux epilogue writes its output (after the bias epilogue's);
      // DRELU reads the mask that its forward's GEMM now writes.
      Value writtenBefore = recorded.operands[2];
      if (auxEpilogue && auxEpilogue->activation == kGemmDReLU) {
        Value y = amp::stripReshapes(auxEpilogue->aux);
        ReLUForward forward = reluForwards.find(y)->second;
        if (emitRemarks)
          emitRemark(forward.call.getLoc(),
                     "writes its ReLU's mask for a backward GEMM "
                     "(activation=5)");
        auxEpilogue->aux = writeReLUMask(symbols, module, globals, forward);
        reluForwards.erase(y);
      }
      if (auxEpilogue) {
        recorded.operands[2] = auxEpilogue->out;
        if (auxEpilogue->runsAtGeneric)
          op->moveBefore(auxEpilogue->generic);
        moveDefinitionBefore(auxEpilogue->out, op);
        if (auxEpilogue->narrow)
          record[kGemmTypeD] = record[kGemmTypeA];
      }
      // A bias added first in the next kernel, and only rounded to the
      // inputs' f16 or bf16 type after, is the GEMM's: the kernel then
      // reads D + bias, which the output cast below rounds.
      std::optional<RoundedBiasAddition> biasAddition;
      if (!recorded.fp8 && !epilogue && !auxEpilogue && !gradient &&
          record[kGemmTypeA] == record[kGemmTypeB])
        biasAddition =
            matchRoundedBiasAddition(op, record, roundedBiasMinElements);
      Value roundedBias;
      if (biasAddition) {
        BlockArgument element = biasAddition->element;
        biasAddition->sum.replaceAllUsesWith(element);
        biasAddition->sum.erase();
        // The bias's widening (and rounding) unless still used.
        for (Operation *widening = biasAddition->addend.getDefiningOp();
             widening && widening->use_empty() &&
             widening->getBlock() == element.getOwner();) {
          Operation *next = widening->getOperand(0).getDefiningOp();
          widening->erase();
          widening = next;
        }
        record[kGemmBias] = kGemmBiasAdd;
        roundedBias = biasAddition->roundsBias
                          ? createRoundedBias(op, biasAddition->bias,
                                              biasAddition->narrow)
                          : biasAddition->bias;
      }
      // A result only rounded to the inputs' f16 or bf16 type is written
      // rounded.
      std::optional<amp::OutputCast> outputCast;
      if (!recorded.fp8 && !epilogue && !auxEpilogue && !gradient &&
          record[kGemmOverwrite] && record[kGemmTypeA] == record[kGemmTypeB])
        outputCast = amp::matchOutputCast(
            op, recorded.operands[2],
            getElementTypeOrSelf(recorded.operands[0].getType()));
      assert((!biasAddition || outputCast) &&
             "a rounded bias addition's result is an output cast");
      if (outputCast) {
        recorded.operands[2] =
            amp::applyOutputCast(*outputCast, recorded.operands[2]);
        record[kGemmTypeD] = record[kGemmTypeA];
      }
      // A result that copies only move is written where they put it.
      if (foldTransposes && !recorded.fp8 && !epilogue && !auxEpilogue &&
          !biasAddition && record[kGemmOverwrite])
        foldResultCopies(recorded);
      if (emitRemarks) {
        emitRecordRemark(op, record);
        if (auxEpilogue && auxEpilogue->activation == kGemmDReLU)
          op.emitRemark() << "reads the ReLU mask that its forward's GEMM "
                             "writes";
        else if (auxEpilogue && auxEpilogue->aux)
          op.emitRemark() << (auxEpilogue->activation == kGemmDGELU
                                  ? "reads GELU's input from"
                                  : "writes GELU's input to")
                          << " the aux matrix";
        if (!recorded.inputCopies.empty())
          op.emitRemark() << "reads " << recorded.inputCopies.size()
                          << " transposed input(s) from their sources";
        if (!recorded.resultCopies.empty())
          op.emitRemark() << "writes its result where "
                          << recorded.resultCopies.size()
                          << " copies of it put it";
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<Value> arguments = {amp::getRecordMemRef(
          b, symbols, module, globals, loc, "amp_gemm_record", record)};
      // A, B and D in the record's order (then A's and B's factors).
      unsigned first = record[kGemmSwapped] ? 1 : 0;
      SmallVector<Type, 3> types;
      for (unsigned i : {first, 1 - first, 2u}) {
        Value operand = recorded.operands[i];
        types.push_back(cast<MemRefType>(operand.getType()).getElementType());
        arguments.push_back(amp::castToUnranked(b, loc, operand));
      }
      std::string name;
      if (recorded.fp8) {
        for (unsigned i : {first, 1 - first}) {
          Dequantization &dequantization = (*recorded.fp8)[i];
          arguments.push_back(
              amp::castToUnranked(b, loc, dequantization.scaleInv));
          dequantizations.insert(dequantization.generic);
        }
        name = amp::getFP8GemmEntryName(types[0], types[1], types[2]);
      } else if (auxEpilogue && auxEpilogue->aux) {
        bool isMask = auxEpilogue->activation == kGemmDReLU;
        StringRef prefix = isMask ? kMaskGemmEntryPrefix : kAuxGemmEntryPrefix;
        if (epilogue && epilogue->bias) {
          arguments.push_back(amp::castToUnranked(b, loc, epilogue->bias));
          prefix = kBiasAuxGemmEntryPrefix;
        }
        arguments.push_back(amp::castToUnranked(b, loc, auxEpilogue->aux));
        name = getRecordEntryName(types, prefix);
      } else if (epilogue && epilogue->bias) {
        arguments.push_back(amp::castToUnranked(b, loc, epilogue->bias));
        name = getRecordEntryName(types, kBiasGemmEntryPrefix);
      } else if (biasAddition) {
        arguments.push_back(amp::castToUnranked(b, loc, roundedBias));
        name = getRecordEntryName(types, kBiasGemmEntryPrefix);
      } else if (gradient) {
        arguments.push_back(amp::castToUnranked(b, loc, gradient->gradient));
        name = getRecordEntryName(types, kBiasGradGemmEntryPrefix);
      } else {
        // D rounded to f16 or bf16 (by the epilogue or an output cast), or
        // not.
        name = getRecordEntryName(types, kGemmEntryPrefix);
      }
      auto call = func::CallOp::create(
          b, loc, amp::getOrDeclareEntryPoint(symbols, module, name, arguments),
          arguments);
      // A ReLU whose backward may read its mask.
      if (record[kGemmActivation] == kGemmReLU && record[kGemmBatch] == 1)
        reluForwards[amp::stripReshapes(recorded.operands[2])] = {
            call, record, types, epilogue && epilogue->bias};
      // The mask goes once its DRELU has read it.
      if (auxEpilogue && auxEpilogue->activation == kGemmDReLU) {
        b.setInsertionPointAfter(call);
        memref::DeallocOp::create(b, loc, auxEpilogue->aux);
      }
      Value d = op.getDpsInits().front();
      op.erase();
      if (epilogue)
        epilogue->generic.erase();
      if (auxEpilogue)
        auxEpilogue->generic.erase();
      if (gradient) {
        gradient->reduction.erase();
        gradient->zeros.erase();
      }
      // D and the buffers between the result's copies, once unaccessed.
      llvm::SetVector<Value> written;
      if (epilogue || auxEpilogue || outputCast ||
          !recorded.resultCopies.empty())
        written.insert(amp::stripReshapes(d));
      if (auxEpilogue && !auxEpilogue->aux)
        written.insert(amp::stripReshapes(writtenBefore));
      for (const amp::TransposedCopy &copy : recorded.resultCopies) {
        written.insert(amp::stripReshapes(copy.source));
        copy.op->erase();
      }
      for (Value buffer : written)
        amp::eraseIfUnaccessed(buffer);
      for (const amp::TransposedCopy &copy : recorded.inputCopies)
        amp::eraseWriterIfUnread(copy.op, copy.target);
    }
    // A dequantization goes once no contraction reads its f32 values.
    for (linalg::GenericOp dequantization : dequantizations)
      amp::eraseWriterIfUnread(dequantization,
                               dequantization.getDpsInits().front());
  }

  /// Makes `forward`'s call (a GEMM with a ReLU) write whether each of its
  /// results is positive into a new bit mask too (RELU_AUX, RELU_AUX_BIAS:
  /// `amp_gemm_mask_*`, `amp_gemm_bias_mask_*`), and returns the mask: an
  /// i8 buffer of getGemmReLUMaskBytes, allocated just before the call.
  static Value writeReLUMask(SymbolTable &symbols, ModuleOp module,
                             llvm::DenseMap<Attribute, StringAttr> &globals,
                             const ReLUForward &forward) {
    func::CallOp call = forward.call;
    OpBuilder b(call);
    Location loc = call.getLoc();
    GemmRecord record = forward.record;
    record[kGemmActivation] = kGemmReLUMask;
    Value mask = memref::AllocOp::create(
        b, loc,
        MemRefType::get({getGemmReLUMaskBytes(record[kGemmM], record[kGemmN])},
                        b.getI8Type()));
    SmallVector<Value> arguments = {amp::getRecordMemRef(
        b, symbols, module, globals, loc, "amp_gemm_record", record)};
    arguments.append(std::next(call.operand_begin()), call.operand_end());
    arguments.push_back(amp::castToUnranked(b, loc, mask));
    std::string name = getRecordEntryName(
        forward.types,
        forward.hasBias ? kBiasMaskGemmEntryPrefix : kMaskGemmEntryPrefix);
    func::CallOp::create(
        b, loc, amp::getOrDeclareEntryPoint(symbols, module, name, arguments),
        arguments);
    // The old record's read, and its global once nothing reads it.
    Value oldRecord = call.getOperand(0);
    call.erase();
    auto cast = oldRecord.getDefiningOp<memref::CastOp>();
    auto read =
        cast ? cast.getSource().getDefiningOp<memref::GetGlobalOp>() : nullptr;
    if (!read || !cast->use_empty())
      return mask;
    cast.erase();
    auto global = symbols.lookup<memref::GlobalOp>(read.getName());
    if (read->use_empty())
      read.erase();
    if (global && SymbolTable::symbolKnownUseEmpty(global, module)) {
      globals.erase(*global.getInitialValue());
      symbols.erase(global);
    }
    return mask;
  }

  /// A copy of the f32 vector `bias` rounded to `narrow` (cuBLASLt's bias
  /// has D's type), made by a new generic just before the GEMM `op`; freed
  /// after it when the GEMM's output buffer is freed explicitly.
  static Value createRoundedBias(linalg::ContractOp op, Value bias,
                                 FloatType narrow) {
    OpBuilder b(op);
    Location loc = bias.getLoc();
    Value copy = amp::createRoundedCopy(b, loc, bias, narrow);
    Value d = amp::stripReshapes(op.getDpsInits().front());
    if (llvm::any_of(d.getUsers(), llvm::IsaPred<memref::DeallocOp>)) {
      b.setInsertionPointAfter(op);
      memref::DeallocOp::create(b, loc, copy);
    }
    return copy;
  }

  void emitRecordRemark(linalg::ContractOp op, const GemmRecord &record) {
    static constexpr const char *kNames[kGemmRecordFields] = {
        "m",        "n",         "k",      "batch",     "trans_a",
        "trans_b",  "lda",       "ldb",    "ldd",       "stride_a",
        "stride_b", "stride_d",  "type_a", "type_b",    "type_d",
        "swapped",  "overwrite", "bias",   "activation"};
    InFlightDiagnostic remark = op.emitRemark() << "GEMM record:";
    for (unsigned field = 0; field < kGemmRecordFields; ++field)
      remark << " " << kNames[field] << "=" << record[field];
  }
};
} // namespace
