//===- ConvolutionsToDNNRecords.cpp - im2col GEMMs to cuDNN records -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The amp-convolutions-to-dnn-records pass: the graph lowering builds a
// convolution as an implicit GEMM, its input windows gathered into im2col
// columns by a copying linalg.generic and contracted with the weights (or,
// for the weight gradient, with dY). After bufferization this pass finds
// each linalg.contract that reads such columns, derives the cuDNN-style
// record (include/amp/Runtime/ConvRecord.h) of the convolution it computes
// from the gather's indexing map and the contraction's, and replaces the
// contraction by a call to `amp_conv` that reads the gathered buffer
// itself; the gather goes once no contraction reads its columns. A data
// gradient, built as a convolution of the upsampled, padded dY by the
// flipped W, becomes cuDNN's backward data of dY and W, and a weight
// gradient built as a convolution of X and dY transposed batch-last,
// transposed back, its backward filter of X and dY. An f16
// or bf16 convolution (an f32 accumulator) has a record only when the next
// kernel just rounds its result to the inputs' type, after a bias or not:
// cuDNN writes it rounded (its PSEUDO_HALF configuration), and the kernel
// reads it so (widened back before its bias).
//
//===----------------------------------------------------------------------===//

#include "EntryPoints.h"
#include "amp/Conversion/BufferAccesses.h"
#include "amp/Conversion/TransposedCopies.h"

#include "amp/Conversion/OutputCasts.h"
#include "amp/Conversion/OutputFills.h"
#include "amp/Conversion/Passes.h"
#include "amp/Runtime/ConvRecord.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

#include "llvm/ADT/MapVector.h"

#include <array>
#include <optional>

namespace mlir::amp {
#define GEN_PASS_DEF_CONVOLUTIONSTODNNRECORDS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using mlir::amp::isOneToOneParallel;
using mlir::amp::matchTransposedCopy;
using mlir::amp::TransposedCopy;
using mlir::amp::yieldsItsInput;
using namespace mlir::amp::runtime;

using ConvRecord = std::array<int64_t, kConvRecordFields>;

namespace {
/// An affine expression as sum_i coefficients[i] * d_i + constant.
struct LinearForm {
  SmallVector<int64_t> coefficients;
  int64_t constant = 0;
};

/// What an im2col gather copies: col[n, g, c, k..., o...] =
/// input[n, g*C + c, o*s + k*d] for `spatial` dimensions.
struct Im2Col {
  linalg::GenericOp gather;
  Value input;
  Value columns;
  int64_t spatial;
  SmallVector<int64_t> kernel, outSizes, strides, dilations;
};
} // namespace

/// `expr` as a linear form over `numDims` dimensions, or nullopt when it
/// is not one (a product of dimensions, a division, a symbol).
static std::optional<LinearForm> getLinearForm(AffineExpr expr,
                                               unsigned numDims) {
  LinearForm form;
  form.coefficients.assign(numDims, 0);
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    form.coefficients[dim.getPosition()] = 1;
    return form;
  }
  if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
    form.constant = constant.getValue();
    return form;
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary || (expr.getKind() != AffineExprKind::Add &&
                  expr.getKind() != AffineExprKind::Mul))
    return std::nullopt;
  std::optional<LinearForm> lhs = getLinearForm(binary.getLHS(), numDims);
  std::optional<LinearForm> rhs = getLinearForm(binary.getRHS(), numDims);
  if (!lhs || !rhs)
    return std::nullopt;
  if (expr.getKind() == AffineExprKind::Add) {
    for (unsigned i = 0; i < numDims; ++i)
      form.coefficients[i] = lhs->coefficients[i] + rhs->coefficients[i];
    form.constant = lhs->constant + rhs->constant;
    return form;
  }
  // A product with a constant factor (MLIR keeps constants on the right).
  auto factor = dyn_cast<AffineConstantExpr>(binary.getRHS());
  if (!factor)
    return std::nullopt;
  for (unsigned i = 0; i < numDims; ++i)
    form.coefficients[i] = lhs->coefficients[i] * factor.getValue();
  form.constant = lhs->constant * factor.getValue();
  return form;
}

/// Whether `form` is sum_{(dim, coefficient) in terms} coefficient * d_dim
/// + `constant`, a term whose loop has one iteration (`sizes`) free to have
/// any coefficient.
static bool isLinearCombination(const LinearForm &form, ArrayRef<int64_t> sizes,
                                ArrayRef<std::pair<unsigned, int64_t>> terms,
                                int64_t constant = 0) {
  if (form.constant != constant)
    return false;
  for (unsigned dim = 0; dim < form.coefficients.size(); ++dim) {
    int64_t coefficient = form.coefficients[dim];
    const auto *term = llvm::find_if(
        terms, [&](const auto &entry) { return entry.first == dim; });
    int64_t expected = term == terms.end() ? 0 : term->second;
    if (coefficient != expected && sizes[dim] != 1)
      return false;
  }
  return true;
}

/// A statically shaped memref whose elements lie contiguously in row-major
/// order, as cuDNN's packed channels-first tensors do.
static bool isPacked(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && memref::isStaticShapeAndContiguousRowMajor(type);
}

/// The im2col gather whose columns `operand`, an input of `reader`, holds
/// there (the last op before `reader` that writes them), or the reason
/// there is none in `why`.
static std::optional<Im2Col> matchIm2Col(Value operand, Operation *reader,
                                         std::string &why) {
  auto collapse = operand.getDefiningOp<memref::CollapseShapeOp>();
  if (!collapse) {
    why = "no operand is a collapsed im2col buffer";
    return std::nullopt;
  }
  Value columns = collapse.getSrc();
  auto columnsType = cast<MemRefType>(columns.getType());
  int64_t rank = columnsType.getRank();
  if (!columns.getDefiningOp<memref::AllocOp>() || rank < 5 || rank % 2 == 0) {
    why = "no operand is a collapsed im2col buffer";
    return std::nullopt;
  }
  int64_t spatial = (rank - 3) / 2;
  // [n], [g], [c, k...], [o...]
  SmallVector<ReassociationIndices> expected = {{0}, {1}, {2}, {}};
  for (int64_t i = 0; i < spatial; ++i) {
    expected[2].push_back(3 + i);
    expected[3].push_back(3 + spatial + i);
  }
  if (collapse.getReassociationIndices() != expected) {
    why = "the columns are not collapsed to [n, g, c*k, o]";
    return std::nullopt;
  }
  auto gather = dyn_cast_if_present<linalg::GenericOp>(
      amp::getLastWriterBefore(reader, columns));
  if (!isOneToOneParallel(gather) || gather.getDpsInits().front() != columns) {
    why = "the columns are not written by one copying gather";
    return std::nullopt;
  }
  if (!yieldsItsInput(gather)) {
    why = "the gather computes instead of copying";
    return std::nullopt;
  }
  Value input = gather.getDpsInputs().front();
  auto inputType = dyn_cast<MemRefType>(input.getType());
  if (!isPacked(input) || inputType.getRank() != 2 + spatial ||
      inputType.getElementType() != columnsType.getElementType()) {
    why = "the gathered input is not a packed channels-first tensor";
    return std::nullopt;
  }

  // input[n, g*C + c, o*s + k*d] with every window inside the input.
  ArrayRef<int64_t> sizes = columnsType.getShape();
  AffineMap map = gather.getMatchingIndexingMap(gather.getDpsInputOperand(0));
  SmallVector<LinearForm> forms;
  for (AffineExpr expr : map.getResults()) {
    std::optional<LinearForm> form = getLinearForm(expr, rank);
    if (!form) {
      why = "the gather's indexing is not linear";
      return std::nullopt;
    }
    forms.push_back(*form);
  }
  Im2Col im2col{gather, input, columns, spatial, {}, {}, {}, {}};
  bool matches =
      isLinearCombination(forms[0], sizes, {{0, 1}}) &&
      isLinearCombination(forms[1], sizes, {{1, sizes[2]}, {2, 1}}) &&
      sizes[1] * sizes[2] == inputType.getDimSize(1) &&
      sizes[0] == inputType.getDimSize(0);
  for (int64_t i = 0; matches && i < spatial; ++i) {
    unsigned kernelDim = 3 + i, outDim = 3 + spatial + i;
    int64_t stride = std::max<int64_t>(forms[2 + i].coefficients[outDim], 1);
    int64_t dilation =
        std::max<int64_t>(forms[2 + i].coefficients[kernelDim], 1);
    matches = isLinearCombination(forms[2 + i], sizes,
                                  {{outDim, stride}, {kernelDim, dilation}}) &&
              (sizes[outDim] - 1) * stride + (sizes[kernelDim] - 1) * dilation <
                  inputType.getDimSize(2 + i);
    im2col.kernel.push_back(sizes[kernelDim]);
    im2col.outSizes.push_back(sizes[outDim]);
    im2col.strides.push_back(stride);
    im2col.dilations.push_back(dilation);
  }
  if (!matches) {
    why = "the gather does not read input[n, g*C + c, o*s + k*d]";
    return std::nullopt;
  }
  return im2col;
}

/// The record of `op`, the operands of its call (X, the second factor, the
/// result) in `operands` and its gather in `im2col`; or the reason there
/// is none in `why`.
static std::optional<ConvRecord> deriveRecord(linalg::ContractOp op,
                                              std::array<Value, 3> &operands,
                                              Im2Col &im2col,
                                              std::string &why) {
  if (!op.hasPureBufferSemantics() || op->getNumOperands() != 3) {
    why = "not a contraction of three memrefs";
    return std::nullopt;
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::optional<Im2Col> match;
  unsigned columnsOperand = 0;
  for (; columnsOperand < 2 && !match; ++columnsOperand)
    match = matchIm2Col(op->getOperand(columnsOperand), op, why);
  if (!match)
    return std::nullopt;
  --columnsOperand;
  Value factor = op->getOperand(1 - columnsOperand);
  Value result = op->getOperand(2);
  if (!isPacked(factor) || !isPacked(result)) {
    why = "the weights, dY or the result are not packed";
    return std::nullopt;
  }

  // The columns' loops [n, g, c*k, o] and the one loop m only the factor
  // and the result index.
  AffineMap columnsMap = maps[columnsOperand];
  AffineMap factorMap = maps[1 - columnsOperand], resultMap = maps[2];
  if (columnsMap.getNumResults() != 4 || !llvm::all_of(maps, [](AffineMap map) {
        return map.isProjectedPermutation();
      })) {
    why = "the contraction's indexing is not a convolution's";
    return std::nullopt;
  }
  AffineExpr n = columnsMap.getResult(0), g = columnsMap.getResult(1);
  AffineExpr ck = columnsMap.getResult(2), o = columnsMap.getResult(3);
  // Five loops of which the columns' (a projected permutation) index four.
  if (op.getNumLoops() != 5) {
    why = "the contraction's indexing is not a convolution's";
    return std::nullopt;
  }
  unsigned mLoop = 0;
  while (columnsMap.isFunctionOfDim(mLoop))
    ++mLoop;
  AffineExpr m = getAffineDimExpr(mLoop, op.getContext());
  auto results = [](AffineMap map) {
    return SmallVector<AffineExpr>(map.getResults());
  };
  ConvMode mode;
  if (results(resultMap) == SmallVector<AffineExpr>{n, g, m, o} &&
      results(factorMap) == SmallVector<AffineExpr>{g, m, ck}) {
    mode = kConvForward;
  } else if (results(resultMap) == SmallVector<AffineExpr>{g, m, ck} &&
             results(factorMap) == SmallVector<AffineExpr>{n, g, m, o}) {
    mode = kConvBackwardFilter;
  } else {
    why = "the contraction's indexing is not a convolution's";
    return std::nullopt;
  }

  // cuDNN convolves f32 or f64 into its own type, or f16 or bf16 through
  // an f32 accumulator rounded to their type (the caller checks that
  // rounding is all the result's reader does).
  Type type = getElementTypeOrSelf(match->input.getType());
  Type resultType = getElementTypeOrSelf(result.getType());
  bool wide = (type.isF32() || type.isF64()) && resultType == type;
  bool rounded = (type.isF16() || type.isBF16()) && resultType.isF32();
  if ((!wide && !rounded) || getElementTypeOrSelf(factor.getType()) != type) {
    why = "cuDNN convolves f32 or f64 into their type, or f16 or bf16 into "
          "an f32 accumulator";
    return std::nullopt;
  }
  if (amp::isWrittenBetween(match->gather, op, match->input)) {
    why = "the gathered input changes before the contraction";
    return std::nullopt;
  }

  auto inputType = cast<MemRefType>(match->input.getType());
  SmallVector<int64_t> loopSizes =
      cast<linalg::LinalgOp>(op.getOperation()).getStaticLoopRanges();
  int64_t groups = inputType.getDimSize(1) /
                   cast<MemRefType>(match->columns.getType()).getDimSize(2);
  ConvRecord record = {};
  record[kConvMode] = mode;
  record[kConvSpatialRank] = std::max<int64_t>(match->spatial, 2);
  record[kConvBatch] = inputType.getDimSize(0);
  record[kConvInChannels] = inputType.getDimSize(1);
  record[kConvOutChannels] = groups * loopSizes[mLoop];
  record[kConvGroups] = groups;
  // Right-aligned: the unused leading spatial dimensions have size 1.
  int64_t unused = kConvMaxSpatialRank - match->spatial;
  for (int64_t i = 0; i < kConvMaxSpatialRank; ++i) {
    bool used = i >= unused;
    record[kConvInput + i] = used ? inputType.getDimSize(2 + i - unused) : 1;
    record[kConvKernel + i] = used ? match->kernel[i - unused] : 1;
    record[kConvOutput + i] = used ? match->outSizes[i - unused] : 1;
    record[kConvStride + i] = used ? match->strides[i - unused] : 1;
    record[kConvDilation + i] = used ? match->dilations[i - unused] : 1;
  }
  int64_t dataType = amp::getGemmDataType(type);
  record[kConvTypeX] = record[kConvTypeFactor] = record[kConvTypeResult] =
      dataType;
  if (const char *error =
          checkConvRecord(record.data(), dataType, dataType, dataType)) {
    why = error;
    return std::nullopt;
  }
  operands = {match->input, factor, result};
  im2col = *match;
  return record;
}

namespace {
/// A zero-filled buffer with a packed `source` copied into a window of it:
/// a zero fill of the whole buffer, then a copy of `source` into a strided
/// window (the whole batch and channels). The graph lowering pads a
/// convolution's input so (unit strides), and upsamples a data gradient's
/// dY (zero offsets, strides the convolution's).
struct ZeroWindow {
  Operation *fill;
  memref::CopyOp copy;
  Value source;
  /// Per spatial dimension: the zeros before and after the window's
  /// extent ((source size - 1) * stride + 1), and the window's strides.
  SmallVector<int64_t> before, after, strides;

  bool hasUnitStrides() const {
    return llvm::all_of(strides, [](int64_t stride) { return stride == 1; });
  }
};
} // namespace

/// Whether `op` sets every element of `buffer` to zero: a linalg.fill of a
/// zero, or a linalg.map with no inputs that yields one.
static bool isZeroFill(Operation *op, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getOutputs().front() == buffer &&
           matchPattern(fill.getInputs().front(), m_AnyZeroFloat());
  auto map = dyn_cast<linalg::MapOp>(op);
  return map && map.getInputs().empty() && map.getInit() == buffer &&
         matchPattern(map.getMapper().front().getTerminator()->getOperand(0),
                      m_AnyZeroFloat());
}

/// The zero window that `buffer`, with `spatial` spatial dimensions, holds
/// when `reader` reads it, with its source unchanged until `reader`; else
/// nullopt.
static std::optional<ZeroWindow>
matchZeroWindow(Value buffer, Operation *reader, int64_t spatial) {
  auto copy = dyn_cast_if_present<memref::CopyOp>(
      amp::getLastWriterBefore(reader, buffer));
  auto window =
      copy ? copy.getTarget().getDefiningOp<memref::SubViewOp>() : nullptr;
  if (!window || window.getSource() != buffer)
    return std::nullopt;
  ArrayRef<int64_t> offsets = window.getStaticOffsets();
  ArrayRef<int64_t> sizes = window.getStaticSizes();
  ArrayRef<int64_t> strides = window.getStaticStrides();
  ArrayRef<int64_t> shape = cast<MemRefType>(buffer.getType()).getShape();
  Value source = copy.getSource();
  if (!isPacked(source) ||
      cast<MemRefType>(source.getType()).getShape() != sizes ||
      llvm::any_of(offsets, ShapedType::isDynamic) ||
      llvm::any_of(strides,
                   [](int64_t stride) {
                     return ShapedType::isDynamic(stride) || stride < 1;
                   }) ||
      int64_t(shape.size()) != 2 + spatial || offsets[0] != 0 ||
      offsets[1] != 0 || strides[0] != 1 || strides[1] != 1 ||
      sizes[0] != shape[0] || sizes[1] != shape[1])
    return std::nullopt;
  Operation *fill = amp::getLastWriterBefore(copy, buffer);
  if (!fill || !isZeroFill(fill, buffer) ||
      amp::isWrittenBetween(copy, reader, source))
    return std::nullopt;
  ZeroWindow zeroWindow{fill, copy, source, {}, {}, {}};
  for (int64_t i = 2; i < 2 + spatial; ++i) {
    zeroWindow.before.push_back(offsets[i]);
    zeroWindow.after.push_back(shape[i] - offsets[i] -
                               (sizes[i] - 1) * strides[i] - 1);
    zeroWindow.strides.push_back(strides[i]);
  }
  return zeroWindow;
}

/// Whether `generic`'s body only rounds its input (to nearest even) to
/// the type it yields.
static bool yieldsItsInputRounded(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  auto rounding = dyn_cast<arith::TruncFOp>(body.front());
  return rounding && !rounding.getRoundingmodeAttr() &&
         rounding.getIn() == body.getArgument(0) &&
         body.getTerminator()->getOperand(0) == rounding.getResult();
}

namespace {
/// The copy of W that a transposed convolution's contraction reads as its
/// weight matrix: the copying generic, and whether it also rounds W (an
/// f32 parameter that an f16 or bf16 convolution reads).
struct FlippedWeights {
  linalg::GenericOp flip;
  bool rounded;
};
} // namespace

/// The copy of W that a transposed convolution's contraction reads as its
/// weight matrix `factor` [g, m, c*k]: the graph lowering regroups W
/// [G*C, M, k...] and flips its kernel, w[g, m, c, k] = W[g*C + c, m,
/// K-1-k], by a copying linalg.generic, which may also round W to the
/// convolution's type. Nullopt when `factor` is not such a copy of a
/// packed W unchanged until `reader`.
static std::optional<FlippedWeights>
matchFlippedWeights(Value factor, Operation *reader, int64_t spatial) {
  auto collapse = factor.getDefiningOp<memref::CollapseShapeOp>();
  if (!collapse)
    return std::nullopt;
  Value grouped = collapse.getSrc();
  auto groupedType = cast<MemRefType>(grouped.getType());
  int64_t rank = groupedType.getRank();
  SmallVector<ReassociationIndices> expected = {{0}, {1}, {}};
  for (int64_t i = 2; i < rank; ++i)
    expected[2].push_back(i);
  if (rank != 3 + spatial || collapse.getReassociationIndices() != expected)
    return std::nullopt;
  auto flip = dyn_cast_if_present<linalg::GenericOp>(
      amp::getLastWriterBefore(reader, grouped));
  if (!isOneToOneParallel(flip) || flip.getDpsInits().front() != grouped)
    return std::nullopt;
  bool rounded = !yieldsItsInput(flip);
  if (rounded && !yieldsItsInputRounded(flip))
    return std::nullopt;
  Value weights = flip.getDpsInputs().front();
  auto weightsType = dyn_cast<MemRefType>(weights.getType());
  ArrayRef<int64_t> sizes = groupedType.getShape();
  if (!isPacked(weights) || weightsType.getRank() != 2 + spatial ||
      (!rounded &&
       weightsType.getElementType() != groupedType.getElementType()) ||
      weightsType.getDimSize(0) != sizes[0] * sizes[2] ||
      weightsType.getDimSize(1) != sizes[1] ||
      amp::isWrittenBetween(flip, reader, weights))
    return std::nullopt;
  AffineMap map = flip.getMatchingIndexingMap(flip.getDpsInputOperand(0));
  SmallVector<std::optional<LinearForm>> forms;
  for (AffineExpr expr : map.getResults())
    forms.push_back(getLinearForm(expr, rank));
  if (llvm::any_of(forms, [](const auto &form) { return !form; }) ||
      !isLinearCombination(*forms[0], sizes, {{0, sizes[2]}, {2, 1}}) ||
      !isLinearCombination(*forms[1], sizes, {{1, 1}}))
    return std::nullopt;
  for (int64_t i = 0; i < spatial; ++i)
    if (weightsType.getDimSize(2 + i) != sizes[3 + i] ||
        !isLinearCombination(*forms[2 + i], sizes, {{3 + i, -1}},
                             sizes[3 + i] - 1))
      return std::nullopt;
  return FlippedWeights{flip, rounded};
}

/// W as a backward-data call reads it, in its own layout: W itself, or,
/// where the flip also rounds it, a copy rounded to the convolution's type
/// by a new generic just before `op`, freed after it.
static Value getUnflippedWeights(Operation *op, FlippedWeights flipped) {
  Value weights = flipped.flip.getDpsInputs().front();
  if (!flipped.rounded)
    return weights;
  auto narrow = cast<FloatType>(
      getElementTypeOrSelf(flipped.flip.getDpsInits()[0].getType()));
  OpBuilder b(op);
  Location loc = flipped.flip.getLoc();
  Value copy = amp::createRoundedCopy(b, loc, weights, narrow);
  b.setInsertionPointAfter(op);
  memref::DeallocOp::create(b, loc, copy);
  return copy;
}

/// The backward-data record of the data gradient that `forward`, a forward
/// record over `window`'s buffer, computes with flipped weights: the
/// convolution of dY (`window`'s source) upsampled by the strides and
/// padded by extent - p before and extent - p + output padding after.
/// Nullopt when cuDNN's backward data cannot say the same.
static std::optional<ConvRecord>
getBackwardDataRecord(const ConvRecord &forward, const ZeroWindow &window) {
  ConvRecord record = forward;
  record[kConvMode] = kConvBackwardData;
  record[kConvInChannels] = forward[kConvOutChannels];
  record[kConvOutChannels] = forward[kConvInChannels];
  auto sourceType = cast<MemRefType>(window.source.getType());
  int64_t spatial = window.strides.size();
  int64_t unused = kConvMaxSpatialRank - spatial;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t field = unused + i;
    if (forward[kConvStride + field] != 1)
      return std::nullopt;
    int64_t extent =
        (forward[kConvKernel + field] - 1) * forward[kConvDilation + field];
    // The fewest zeros after dX that give its size: an output padding
    // below the stride makes up the rest.
    int64_t before = extent - window.before[i];
    int64_t outputPadding = std::max<int64_t>(0, window.after[i] - extent);
    record[kConvInput + field] = forward[kConvOutput + field];
    record[kConvOutput + field] = sourceType.getDimSize(2 + i);
    record[kConvStride + field] = window.strides[i];
    record[kConvPadBefore + field] = before;
    record[kConvPadAfter + field] = extent - window.after[i] + outputPadding;
    if (before < 0)
      return std::nullopt;
  }
  int64_t type = record[kConvTypeX];
  if (checkConvRecord(record.data(), type, type, type))
    return std::nullopt;
  return record;
}

/// The zero windows that a convolution `reader` reads through, outermost
/// first, each with its buffer: the padding of `input` and, inside a
/// padding with unit strides, an upsampling.
static SmallVector<std::pair<ZeroWindow, Value>>
matchInputWindows(Value input, Operation *reader, int64_t spatial) {
  SmallVector<std::pair<ZeroWindow, Value>> windows;
  std::optional<ZeroWindow> outer = matchZeroWindow(input, reader, spatial);
  if (!outer)
    return windows;
  windows.push_back({*outer, input});
  if (!outer->hasUnitStrides())
    return windows;
  std::optional<ZeroWindow> inner =
      matchZeroWindow(outer->source, outer->copy, spatial);
  if (inner && !amp::isWrittenBetween(inner->copy, reader, inner->source))
    windows.push_back({*inner, outer->source});
  return windows;
}

/// The one zero window that `windows` (outermost first, the outer ones
/// with unit strides) make of the source of the last; `input` itself with
/// no zeros when there is none.
static ZeroWindow combineWindows(ArrayRef<std::pair<ZeroWindow, Value>> windows,
                                 Value input) {
  int64_t spatial = cast<MemRefType>(input.getType()).getRank() - 2;
  ZeroWindow combined{nullptr,
                      nullptr,
                      input,
                      SmallVector<int64_t>(spatial, 0),
                      SmallVector<int64_t>(spatial, 0),
                      SmallVector<int64_t>(spatial, 1)};
  for (const auto &[window, buffer] : windows) {
    for (int64_t i = 0; i < spatial; ++i) {
      combined.before[i] += window.before[i];
      combined.after[i] += window.after[i];
    }
    combined.source = window.source;
    combined.strides = window.strides;
  }
  return combined;
}

/// Where `op`'s call writes its result `operands[2]`: a packed buffer that
/// an identity copy, the next access of both after `op`, moves the result
/// into, and nothing reads the result after (the reader of an output cast
/// whose only work was rounding is such a copy). The copy goes, the call
/// writes that buffer, and the result's buffer is returned for erasing;
/// null when there is no such copy.
static Value foldResultCopy(Operation *op, std::array<Value, 3> &operands) {
  Value result = amp::stripReshapes(operands[2]);
  std::optional<TransposedCopy> copy =
      matchTransposedCopy(amp::getNextAccess(op, result));
  if (!copy || amp::stripReshapes(copy->source) != result ||
      !llvm::equal(copy->permutation,
                   llvm::seq<int64_t>(0, copy->permutation.size())) ||
      amp::isReadAfter(copy->op, result))
    return {};
  Value target = copy->target;
  auto root = [](Value buffer) {
    return memref::skipViewLikeOps(cast<MemrefValue>(buffer));
  };
  if (!isPacked(target) || !amp::canWriteBefore(target, op) ||
      amp::getNextAccess(op, target) != copy->op ||
      root(target) == root(operands[0]) || root(target) == root(operands[1]))
    return {};
  amp::moveDefinitionBefore(target, op);
  copy->op->erase();
  operands[2] = target;
  return result;
}

namespace {
/// X or dY as a weight gradient reads it: its first two dimensions
/// swapped by a transpose, maybe then converted by an elementwise kernel.
struct SwappedOperand {
  Operation *transpose;
  linalg::GenericOp elementwise;
  /// The packed X or dY.
  Value source;
};

/// A weight gradient that the step computes as the convolution of X
/// transposed ([C, N, ...]) by dY transposed ([M, N, ...]), transposed
/// back into dW: cuDNN's backward filter of X and dY.
struct WeightGradient {
  ConvRecord record;
  std::array<Value, 3> operands;
  /// X and dY as the convolution reads them (erased once nothing reads
  /// them), and the transpose into dW, which the call replaces.
  SwappedOperand x, dy;
  TransposedCopy resultTranspose;
  /// An elementwise op between the result and its transpose (an AMP
  /// result's rounding), or null; a copy goes with the transpose.
  linalg::GenericOp elementwise;
  bool isElementwiseCopy;
};
} // namespace

/// Whether `op` is an elementwise linalg.generic (identity maps) of one
/// input into one new buffer: a conversion, or the rounding of an AMP
/// result.
static bool isElementwise(linalg::GenericOp op) {
  return isOneToOneParallel(op) &&
         op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity() &&
         op.getDpsInits().front().getDefiningOp<memref::AllocOp>();
}

/// How `buffer`, which `reader` reads, holds a packed tensor with its
/// first two dimensions swapped: its last writer before `reader` is that
/// transpose, or an elementwise kernel (a conversion) of the transpose's
/// result, and the tensor is unchanged until `reader`. Nullopt otherwise.
static std::optional<SwappedOperand> matchSwappedOperand(Value buffer,
                                                         Operation *reader) {
  Operation *writer = amp::getLastWriterBefore(reader, buffer);
  auto elementwise = dyn_cast_if_present<linalg::GenericOp>(writer);
  Value swapped = buffer;
  if (isElementwise(elementwise) &&
      amp::stripReshapes(elementwise.getDpsInits().front()) == buffer) {
    swapped = amp::stripReshapes(elementwise.getDpsInputs().front());
    writer = amp::getLastWriterBefore(elementwise, swapped);
  } else {
    elementwise = nullptr;
  }
  std::optional<TransposedCopy> copy = matchTransposedCopy(writer);
  if (!copy || amp::stripReshapes(copy->target) != swapped ||
      !isPacked(copy->source) ||
      amp::isWrittenBetween(copy->op, reader, copy->source))
    return std::nullopt;
  SmallVector<int64_t> expected =
      llvm::to_vector(llvm::seq<int64_t>(0, copy->permutation.size()));
  if (expected.size() < 3)
    return std::nullopt;
  std::swap(expected[0], expected[1]);
  if (copy->permutation != expected)
    return std::nullopt;
  return SwappedOperand{copy->op, elementwise, copy->source};
}

/// The weight gradient that `op`, with forward record `forward` over
/// `operands` (X transposed, the weight matrix, the overwritten result),
/// computes, or nullopt.
static std::optional<WeightGradient>
matchWeightGradient(Operation *op, const std::array<Value, 3> &operands,
                    const ConvRecord &forward) {
  if (forward[kConvMode] != kConvForward || forward[kConvGroups] != 1 ||
      !forward[kConvOverwrite])
    return std::nullopt;
  std::optional<SwappedOperand> x = matchSwappedOperand(operands[0], op);
  std::optional<SwappedOperand> dy =
      matchSwappedOperand(amp::stripReshapes(operands[1]), op);
  if (!x || !dy)
    return std::nullopt;
  // The result [C, (1,) M, k...] goes next, and only, into dW [M, C, k...]
  // through a transpose, maybe after an elementwise op, and nothing
  // touches dW in between.
  Value result = amp::stripReshapes(operands[2]);
  Operation *next = amp::getNextAccess(op, result);
  auto elementwise = dyn_cast_if_present<linalg::GenericOp>(next);
  std::optional<TransposedCopy> back;
  if (isElementwise(elementwise) &&
      amp::stripReshapes(elementwise.getDpsInputs().front()) == result &&
      !amp::isReadAfter(elementwise, result)) {
    result = elementwise.getDpsInits().front();
    back = matchTransposedCopy(amp::getNextAccess(elementwise, result));
  } else {
    elementwise = nullptr;
    back = matchTransposedCopy(next);
  }
  if (!back || amp::stripReshapes(back->source) != result ||
      amp::isReadAfter(back->op, result))
    return std::nullopt;
  int64_t rank = back->permutation.size();
  auto sourceShape = cast<MemRefType>(back->source.getType()).getShape();
  SmallVector<int64_t> expected = {1, 0};
  if (rank >= 4 && sourceShape[1] == 1)
    expected = {1, 2, 0};
  for (int64_t i = expected.size(); i < rank; ++i)
    expected.push_back(i);
  // dW [M, C, k...], or [1, M, C, k...] with the group.
  Value dw = amp::stripReshapes(back->target);
  auto dwType = cast<MemRefType>(dw.getType());
  int64_t spatial = cast<MemRefType>(operands[0].getType()).getRank() - 2;
  ArrayRef<int64_t> dwShape = dwType.getShape();
  if (int64_t(dwShape.size()) == 3 + spatial && dwShape[0] == 1)
    dwShape = dwShape.drop_front();
  int64_t batch = forward[kConvBatch], channels = forward[kConvOutChannels];
  int64_t unused = kConvMaxSpatialRank - spatial;
  // An elementwise copy (what an AMP result's rounding leaves once the
  // call rounds) goes too.
  bool isCopy = elementwise && yieldsItsInput(elementwise) &&
                getElementTypeOrSelf(operands[2].getType()) ==
                    getElementTypeOrSelf(dw.getType());
  Operation *writer = elementwise && !isCopy ? elementwise.getOperation() : op;
  if (back->permutation != expected || !isPacked(dw) ||
      int64_t(dwShape.size()) != 2 + spatial || dwShape[0] != channels ||
      dwShape[1] != batch || amp::getNextAccess(writer, dw) != back->op ||
      !(isa<BlockArgument>(dw) ||
        (isa_and_present<memref::AllocOp>(dw.getDefiningOp()) &&
         dw.getDefiningOp()->getBlock() == op->getBlock())) ||
      dwType.getNumElements() !=
          cast<MemRefType>(back->target.getType()).getNumElements())
    return std::nullopt;
  for (int64_t i = 0; i < spatial; ++i)
    if (dwShape[2 + i] != forward[kConvOutput + unused + i])
      return std::nullopt;

  // dW[m, c, k] = sum_{n, o} X[n, c, o*s + k*d - p] dY[n, m, o]: the
  // forward convolution's kernel positions are dY's, its outputs dW's,
  // and its stride and dilation trade places.
  WeightGradient gradient{forward, {}, *x, *dy, *back, elementwise, isCopy};
  ConvRecord &record = gradient.record;
  record[kConvMode] = kConvBackwardFilter;
  record[kConvBatch] = forward[kConvInChannels];
  record[kConvInChannels] = batch;
  for (int64_t i = 0; i < kConvMaxSpatialRank; ++i) {
    record[kConvKernel + i] = forward[kConvOutput + i];
    record[kConvOutput + i] = forward[kConvKernel + i];
    record[kConvStride + i] = forward[kConvDilation + i];
    record[kConvDilation + i] = forward[kConvStride + i];
  }
  int64_t type = record[kConvTypeX];
  if (checkConvRecord(record.data(), type, type, type))
    return std::nullopt;
  gradient.operands = {x->source, dy->source, dw};
  return gradient;
}

/// Rewrites the IR after `op`, whose call replaces it, for `gradient`: the
/// transpose into dW goes, and the call writes dW itself, or, with an
/// elementwise op in between, a new buffer in dW's layout that the
/// elementwise op reads to write dW (the caller erases the old result).
/// Sets the call's `operands`, the first two X's and dY's.
static void applyWeightGradient(Operation *op, const WeightGradient &gradient,
                                std::array<Value, 3> &operands) {
  // A converted X or dY: the conversion again, of the unswapped tensor,
  // into a new buffer just before the call.
  OpBuilder b(op);
  for (auto [swapped, operand] :
       llvm::zip(SmallVector<SwappedOperand>{gradient.x, gradient.dy},
                 SmallVector<Value *>{&operands[0], &operands[1]})) {
    if (!swapped.elementwise)
      continue;
    auto sourceType = cast<MemRefType>(swapped.source.getType());
    Value converted = memref::AllocOp::create(
        b, op->getLoc(),
        MemRefType::get(sourceType.getShape(),
                        getElementTypeOrSelf(
                            swapped.elementwise.getDpsInits()[0].getType())));
    Operation *conversion = b.clone(*swapped.elementwise);
    conversion->setOperand(0, swapped.source);
    conversion->setOperand(1, converted);
    *operand = converted;
    OpBuilder after(op->getContext());
    after.setInsertionPointAfter(op);
    memref::DeallocOp::create(after, op->getLoc(), converted);
  }
  Value dw = operands[2];
  linalg::GenericOp elementwise = gradient.elementwise;
  Value transposed = gradient.resultTranspose.source;
  gradient.resultTranspose.op->erase();
  if (elementwise && gradient.isElementwiseCopy) {
    elementwise->erase();
    amp::eraseIfUnaccessed(amp::stripReshapes(transposed));
    elementwise = nullptr;
  }
  Operation *writer = elementwise ? elementwise.getOperation() : op;
  // dW's allocation may come after its new writer.
  Operation *allocation = dw.getDefiningOp();
  if (allocation && writer->isBeforeInBlock(allocation))
    allocation->moveBefore(writer);
  operands[2] = dw;
  if (!elementwise)
    return;
  // The view of dW that the transpose wrote, as the elementwise op's
  // output; its input a new buffer of that shape.
  Value target = gradient.resultTranspose.target;
  if (Operation *view = target.getDefiningOp();
      view && writer->isBeforeInBlock(view))
    view->moveBefore(writer);
  b.setInsertionPoint(op);
  auto targetType = cast<MemRefType>(target.getType());
  Value input = memref::AllocOp::create(
      b, op->getLoc(),
      MemRefType::get(
          targetType.getShape(),
          getElementTypeOrSelf(elementwise.getDpsInputs().front().getType())));
  elementwise->setOperand(0, input);
  elementwise->setOperand(1, target);
  b.setInsertionPointAfter(elementwise);
  memref::DeallocOp::create(b, op->getLoc(), input);
  amp::eraseIfUnaccessed(amp::stripReshapes(transposed));
  operands[2] = input;
}

namespace {
struct ConvolutionsToDNNRecordsPass
    : amp::impl::ConvolutionsToDNNRecordsBase<ConvolutionsToDNNRecordsPass> {
  using ConvolutionsToDNNRecordsBase::ConvolutionsToDNNRecordsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::DenseMap<Attribute, StringAttr> globals;
    SmallVector<linalg::ContractOp> contractions;
    module.walk([&](linalg::ContractOp op) { contractions.push_back(op); });
    llvm::SetVector<linalg::GenericOp> gathers, flips;
    llvm::SetVector<Operation *> transposedCopies;
    // The zero windows (padded or upsampled copies) that records read
    // past, by their copy: its fill, the buffer.
    llvm::MapVector<Operation *, std::pair<Operation *, Value>> zeroWindows;
    for (linalg::ContractOp op : contractions) {
      std::array<Value, 3> operands;
      Im2Col im2col;
      std::string why;
      std::optional<ConvRecord> record =
          deriveRecord(op, operands, im2col, why);
      if (!record) {
        if (emitRemarks)
          op.emitRemark() << "no convolution record: " << why;
        continue;
      }
      // An f16 or bf16 convolution writes its result rounded: only when
      // that is all its reader does with it.
      linalg::FillOp zeros = amp::getZeroFillOfOutput(op, operands[2]);
      std::optional<amp::OutputCast> outputCast;
      Type type = getElementTypeOrSelf(operands[0].getType());
      if (getElementTypeOrSelf(operands[2].getType()) != type) {
        if (zeros)
          outputCast = amp::matchOutputCast(op, operands[2], type);
        // Or rounded before its reader adds a bias and rounds again: the
        // reader widens it back.
        if (zeros && !outputCast)
          outputCast = amp::matchWidenedOutput(op, operands[2], type);
        if (!outputCast) {
          if (emitRemarks)
            op.emitRemark()
                << "no convolution record: the f32 accumulator "
                   "of an f16 or bf16 convolution is not "
                   "overwritten, then only rounded to its type (after a bias)";
          continue;
        }
      }
      // cuDNN pads the input itself, and a data gradient's dY is read as
      // it is: the record reads the unpadded input, or dY.
      SmallVector<std::pair<ZeroWindow, Value>> windows =
          matchInputWindows(operands[0], op, im2col.spatial);
      std::optional<FlippedWeights> flipped =
          (*record)[kConvMode] == kConvForward
              ? matchFlippedWeights(operands[1], op, im2col.spatial)
              : std::nullopt;
      std::optional<ConvRecord> dataRecord;
      ZeroWindow combined = combineWindows(windows, operands[0]);
      if (flipped)
        dataRecord = getBackwardDataRecord(*record, combined);
      if (dataRecord) {
        *record = *dataRecord;
        operands[0] = combined.source;
        operands[1] = getUnflippedWeights(op, *flipped);
        flips.insert(flipped->flip);
      } else if (!windows.empty() && windows.front().first.hasUnitStrides()) {
        const ZeroWindow &padding = windows.front().first;
        int64_t unused = kConvMaxSpatialRank - im2col.spatial;
        auto sourceType = cast<MemRefType>(padding.source.getType());
        for (int64_t i = 0; i < im2col.spatial; ++i) {
          (*record)[kConvInput + unused + i] = sourceType.getDimSize(2 + i);
          (*record)[kConvPadBefore + unused + i] = padding.before[i];
          (*record)[kConvPadAfter + unused + i] = padding.after[i];
        }
        operands[0] = padding.source;
        windows.resize(1);
      } else {
        windows.clear();
      }
      for (auto &[window, buffer] : windows)
        zeroWindows[window.copy] = {window.fill, buffer};
      (*record)[kConvOverwrite] = zeros ? 1 : 0;
      if (zeros)
        zeros.erase();
      Value result = operands[2];
      if (outputCast)
        operands[2] = amp::applyOutputCast(*outputCast, result);
      // A weight gradient computed through transposes reads X and dY and
      // writes dW itself.
      std::optional<WeightGradient> weightGradient;
      if (!dataRecord)
        weightGradient = matchWeightGradient(op, operands, *record);
      if (weightGradient) {
        *record = weightGradient->record;
        Value transposed = operands[2];
        operands = weightGradient->operands;
        applyWeightGradient(op, *weightGradient, operands);
        amp::eraseIfUnaccessed(amp::stripReshapes(transposed));
        for (const SwappedOperand &swapped :
             {weightGradient->x, weightGradient->dy}) {
          if (swapped.elementwise)
            transposedCopies.insert(swapped.elementwise);
          transposedCopies.insert(swapped.transpose);
        }
      }
      // A result that a copy only moves is written where it puts it.
      Value moved = weightGradient ? Value() : foldResultCopy(op, operands);
      if (emitRemarks)
        emitRecordRemark(op, *record);
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<Value> arguments = {amp::getRecordMemRef(
          b, symbols, module, globals, loc, "amp_conv_record", *record)};
      for (Value operand : operands)
        arguments.push_back(amp::castToUnranked(b, loc, operand));
      std::string name =
          outputCast
              ? amp::getRoundedResultEntryName(type, outputCast->type,
                                               kConvEntryPrefix)
              : amp::getContractEntryName(type, type, type, kConvEntryPrefix);
      func::CallOp::create(
          b, loc, amp::getOrDeclareEntryPoint(symbols, module, name, arguments),
          arguments);
      op.erase();
      if (outputCast)
        amp::eraseIfUnaccessed(amp::stripReshapes(result));
      if (moved)
        amp::eraseIfUnaccessed(moved);
      gathers.insert(im2col.gather);
    }
    // A gather goes once no contraction reads its columns.
    for (linalg::GenericOp gather : gathers)
      amp::eraseWriterIfUnread(gather, gather.getDpsInits().front());
    // A padded or upsampled copy goes once nothing reads it (its gathers
    // went above; an upsampled one once its padded copy went).
    SmallVector<std::pair<Operation *, std::pair<Operation *, Value>>> pending =
        zeroWindows.takeVector();
    for (bool erased = true; erased;) {
      erased = false;
      llvm::erase_if(pending, [&](const auto &entry) {
        auto [copy, window] = entry;
        if (!amp::eraseWriterIfUnread(copy, window.second))
          return false;
        amp::eraseWriterIfUnread(window.first, window.second);
        return erased = true;
      });
    }
    // A flipped copy of the weights, a transposed (and converted) copy of X
    // or dY, goes once nothing reads it (a padded copy of it went above).
    for (linalg::GenericOp flip : flips)
      amp::eraseWriterIfUnread(flip, flip.getDpsInits().front());
    for (Operation *copy : transposedCopies)
      amp::eraseWriterIfUnread(
          copy,
          amp::stripReshapes(cast<linalg::LinalgOp>(copy).getDpsInits()[0]));
  }

  void emitRecordRemark(linalg::ContractOp op, const ConvRecord &record) {
    InFlightDiagnostic remark =
        op.emitRemark() << "convolution record: "
                        << (record[kConvMode] == kConvForward ? "forward"
                            : record[kConvMode] == kConvBackwardFilter
                                ? "backward-filter"
                                : "backward-data");
    auto list = [&](StringRef name, unsigned first) {
      remark << " " << name << "=";
      for (int64_t i = 0; i < kConvMaxSpatialRank; ++i)
        remark << (i ? "x" : "") << record[first + i];
    };
    remark << " rank=" << record[kConvSpatialRank]
           << " batch=" << record[kConvBatch]
           << " in_channels=" << record[kConvInChannels]
           << " out_channels=" << record[kConvOutChannels]
           << " groups=" << record[kConvGroups];
    list("input", kConvInput);
    list("kernel", kConvKernel);
    list("output", kConvOutput);
    list("stride", kConvStride);
    list("dilation", kConvDilation);
    remark << " type=" << record[kConvTypeX]
           << " overwrite=" << record[kConvOverwrite];
    list("pad_before", kConvPadBefore);
    list("pad_after", kConvPadAfter);
  }
};
} // namespace
