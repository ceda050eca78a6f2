//===- Convolution.cpp - Lower Conv, ConvTranspose and pooling ------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Channels-first convolutions of any spatial rank as an implicit GEMM (the
// input windows gathered into im2col columns, then one contraction with an
// f32 accumulator, groups as a loop), ConvTranspose as a convolution of the
// zero-upsampled input with the flipped kernel, ConvGrad from the two,
// max/average pooling as window reductions over a padded input, and
// MaxPoolGrad as a scatter through MaxPool's Indices.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::amp::lowering;

namespace {
/// The spatial attributes of a convolution or pooling node, resolved
/// against static input sizes.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padsBegin, padsEnd;

  /// Extent of the dilated kernel along spatial dimension `i`.
  int64_t getExtent(int64_t i) const {
    return (kernel[i] - 1) * dilations[i] + 1;
  }
  /// The number of window positions along spatial dimension `i` of an
  /// input of `size` (rounded up with `ceilMode`, without a last window
  /// that would start in the end padding: PyTorch's rule, which ONNX 1.15
  /// and ONNX Runtime adopted).
  int64_t getOutputSize(int64_t i, int64_t size, bool ceilMode = false) const {
    int64_t span = size + padsBegin[i] + padsEnd[i] - getExtent(i);
    if (!ceilMode)
      return span / strides[i] + 1;
    int64_t out = llvm::divideCeil(span, strides[i]) + 1;
    return (out - 1) * strides[i] >= size + padsBegin[i] ? out - 1 : out;
  }
};
} // namespace

/// Reads kernel_shape, strides, dilations, pads and auto_pad for
/// `spatialRank` spatial dimensions of static sizes `inputSizes`.
static FailureOr<Window> getWindow(NodeLowering &node,
                                   ArrayRef<int64_t> inputSizes,
                                   ArrayRef<int64_t> kernel) {
  int64_t rank = inputSizes.size();
  Window window;
  window.kernel.assign(kernel.begin(), kernel.end());
  window.strides =
      node.getInts("strides").value_or(SmallVector<int64_t>(rank, 1));
  window.dilations =
      node.getInts("dilations").value_or(SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> pads =
      node.getInts("pads").value_or(SmallVector<int64_t>(2 * rank, 0));
  if (int64_t(window.strides.size()) != rank ||
      int64_t(window.dilations.size()) != rank ||
      int64_t(pads.size()) != 2 * rank || int64_t(kernel.size()) != rank)
    return node.emitError() << "strides, dilations, pads and the kernel must "
                               "match the "
                            << rank << " spatial dimensions";
  window.padsBegin.assign(pads.begin(), pads.begin() + rank);
  window.padsEnd.assign(pads.begin() + rank, pads.end());
  StringRef autoPad = node.getString("auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < rank; ++i) {
      if (ShapedType::isDynamic(inputSizes[i]))
        return node.emitError() << "auto_pad needs static spatial sizes";
      int64_t out = llvm::divideCeil(inputSizes[i], window.strides[i]);
      int64_t total =
          std::max<int64_t>(0, (out - 1) * window.strides[i] +
                                   window.getExtent(i) - inputSizes[i]);
      int64_t small = total / 2;
      window.padsBegin[i] = autoPad == "SAME_UPPER" ? small : total - small;
      window.padsEnd[i] = total - window.padsBegin[i];
    }
  } else if (autoPad == "VALID") {
    window.padsBegin.assign(rank, 0);
    window.padsEnd.assign(rank, 0);
  } else if (autoPad != "NOTSET") {
    return node.emitError() << "unknown auto_pad '" << autoPad << "'";
  }
  return window;
}

/// Pads the spatial dimensions (after the first two) of `input` with
/// `value`; negative pads crop.
static Value padSpatial(OpBuilder &b, Location loc, Value input,
                        ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                        double value) {
  SmallVector<int64_t> lowPads(2, 0), highPads(2, 0);
  llvm::append_range(lowPads, low);
  llvm::append_range(highPads, high);
  Type elementType = cast<RankedTensorType>(input.getType()).getElementType();
  return padTensor(b, loc, input, lowPads, highPads,
                   createScalar(b, loc, elementType, value));
}

/// The input windows of a convolution as im2col columns
/// col[n, g, c*k, o] = in[n, g*C + c, o*s + k*d] (`input` already padded),
/// for `groups` groups of `channelsPerGroup` channels.
static Value buildColumns(OpBuilder &b, Location loc, Value input,
                          int64_t groups, int64_t channelsPerGroup,
                          ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> dilations,
                          ArrayRef<int64_t> outSizes) {
  auto inputType = cast<RankedTensorType>(input.getType());
  MLIRContext *ctx = b.getContext();
  int64_t spatial = inputType.getRank() - 2;
  auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
  // col[n, g, c, k..., o...] first, then collapsed.
  int64_t colRank = 3 + 2 * spatial;
  SmallVector<AffineExpr> inExprs = {d(0), d(1) * channelsPerGroup + d(2)};
  SmallVector<OpFoldResult> colSizes = {tensor::getMixedSize(b, loc, input, 0),
                                        b.getIndexAttr(groups),
                                        b.getIndexAttr(channelsPerGroup)};
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(d(3 + spatial + i) * strides[i] +
                      d(3 + i) * dilations[i]);
    colSizes.push_back(b.getIndexAttr(kernel[i]));
  }
  for (int64_t size : outSizes)
    colSizes.push_back(b.getIndexAttr(size));
  Value colInit = createEmpty(b, loc, colSizes, inputType.getElementType());
  Value columns = linalg::GenericOp::create(
                      b, loc, colInit.getType(), input, colInit,
                      {AffineMap::get(colRank, 0, inExprs, ctx),
                       b.getMultiDimIdentityMap(colRank)},
                      SmallVector<utils::IteratorType>(
                          colRank, utils::IteratorType::parallel),
                      [](OpBuilder &nb, Location nl, ValueRange args) {
                        linalg::YieldOp::create(nb, nl, args[0]);
                      })
                      .getResult(0);
  SmallVector<ReassociationIndices> colGroups = {{0}, {1}, {2}, {}};
  for (int64_t i = 0; i < spatial; ++i) {
    colGroups[2].push_back(3 + i);
    colGroups[3].push_back(3 + spatial + i);
  }
  return tensor::CollapseShapeOp::create(b, loc, columns, colGroups);
}

/// out[n, g*M + m, o...] = sum_{c, k...} in[n, g*C + c, o*s + k*d] *
/// w[g*M + m, c, k...] (w[g*C + c, m, K-1-k...] when `transposedWeights`),
/// accumulated in getAccumulatorType; `input` is already padded. Built as an
/// implicit GEMM: the input windows are gathered into columns
/// col[n, g, c*k, o] (im2col), the weights viewed as [g, m, c*k], and one
/// GEMM-like generic contracts c*k, which amp-vectorize-contractions can
/// register-block.
static Value buildConvolution(OpBuilder &b, Location loc, Value input,
                              Value weight, int64_t groups,
                              ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> dilations,
                              ArrayRef<int64_t> outSizes,
                              bool transposedWeights) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto weightType = cast<RankedTensorType>(weight.getType());
  MLIRContext *ctx = b.getContext();
  int64_t spatial = inputType.getRank() - 2;
  int64_t channelsPerGroup = transposedWeights
                                 ? weightType.getDimSize(0) / groups
                                 : weightType.getDimSize(1);
  int64_t outPerGroup = transposedWeights ? weightType.getDimSize(1)
                                          : weightType.getDimSize(0) / groups;
  ArrayRef<int64_t> kernel = weightType.getShape().drop_front(2);
  int64_t kernelVolume = 1, outVolume = 1;
  for (int64_t size : kernel)
    kernelVolume *= size;
  for (int64_t size : outSizes)
    outVolume *= size;
  int64_t depth = channelsPerGroup * kernelVolume;
  auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
  auto identity = [&](int64_t rank) { return b.getMultiDimIdentityMap(rank); };
  auto allParallel = [](int64_t rank) {
    return SmallVector<utils::IteratorType>(rank,
                                            utils::IteratorType::parallel);
  };
  OpFoldResult batch = tensor::getMixedSize(b, loc, input, 0);
  Value columns = buildColumns(b, loc, input, groups, channelsPerGroup, kernel,
                               strides, dilations, outSizes);

  // Weights as [g, m, c*k]; a transposed convolution's are regrouped and
  // its kernel flipped first.
  if (transposedWeights) {
    int64_t rank = 3 + spatial;
    SmallVector<AffineExpr> exprs = {d(0) * channelsPerGroup + d(2), d(1)};
    for (int64_t i = 0; i < spatial; ++i)
      exprs.push_back((kernel[i] - 1) - d(3 + i));
    SmallVector<int64_t> grouped = {groups, outPerGroup, channelsPerGroup};
    grouped.append(kernel.begin(), kernel.end());
    Value init =
        tensor::EmptyOp::create(b, loc, grouped, weightType.getElementType());
    weight = linalg::GenericOp::create(
                 b, loc, init.getType(), weight, init,
                 {AffineMap::get(rank, 0, exprs, ctx), identity(rank)},
                 allParallel(rank),
                 [](OpBuilder &nb, Location nl, ValueRange args) {
                   linalg::YieldOp::create(nb, nl, args[0]);
                 })
                 .getResult(0);
  }
  auto matrixType = RankedTensorType::get({groups, outPerGroup, depth},
                                          weightType.getElementType());
  Value matrix = reshapeTo(b, loc, weight, matrixType);

  // out[n, g, m, o] = sum_ck matrix[g, m, ck] * col[n, g, ck, o].
  Type accType = getAccumulatorType(inputType.getElementType());
  SmallVector<OpFoldResult> accSizes = {batch, b.getIndexAttr(groups),
                                        b.getIndexAttr(outPerGroup),
                                        b.getIndexAttr(outVolume)};
  Value acc = createFilled(b, loc, accSizes, createScalar(b, loc, accType, 0));
  SmallVector<utils::IteratorType> iterators = allParallel(5);
  iterators[4] = utils::IteratorType::reduction;
  Value product =
      linalg::GenericOp::create(
          b, loc, acc.getType(), ValueRange{matrix, columns}, acc,
          {AffineMap::get(5, 0, {d(1), d(2), d(4)}, ctx),
           AffineMap::get(5, 0, {d(0), d(1), d(4), d(3)}, ctx),
           AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)},
          iterators,
          [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
            linalg::YieldOp::create(nested, nestedLoc,
                                    multiplyAccumulate(nested, nestedLoc,
                                                       args[0], args[1],
                                                       args[2]));
          })
          .getResult(0);
  // [n, g, m, o] -> [n, g, m, o...] -> [n, g*m, o...]
  SmallVector<OpFoldResult> expandedSizes = {batch, b.getIndexAttr(groups),
                                             b.getIndexAttr(outPerGroup)};
  SmallVector<int64_t> expandedShape = {inputType.getDimSize(0), groups,
                                        outPerGroup};
  SmallVector<ReassociationIndices> expandGroups = {{0}, {1}, {2}, {}};
  SmallVector<ReassociationIndices> collapseGroups = {{0}, {1, 2}};
  for (int64_t i = 0; i < spatial; ++i) {
    expandedSizes.push_back(b.getIndexAttr(outSizes[i]));
    expandedShape.push_back(outSizes[i]);
    expandGroups[3].push_back(3 + i);
    collapseGroups.push_back({3 + i});
  }
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(expandedShape, accType), product,
      expandGroups, expandedSizes);
  return tensor::CollapseShapeOp::create(b, loc, expanded, collapseGroups);
}

/// Adds the per-channel `bias` to the f32 `acc` and rounds to `type`.
static Value addBias(OpBuilder &b, Location loc, Value acc, Value bias,
                     Type elementType) {
  auto accType = cast<RankedTensorType>(acc.getType());
  SmallVector<Value> operands = {acc};
  if (bias) {
    // (M) -> (M, 1, ..., 1) to broadcast over the spatial dimensions.
    auto biasType = cast<RankedTensorType>(bias.getType());
    SmallVector<int64_t> shape = {biasType.getDimSize(0)};
    shape.append(accType.getRank() - 2, 1);
    operands.push_back(reshapeTo(b, loc, bias, biasType.clone(shape)));
  }
  return buildElementwise(
      b, loc, accType.clone(elementType), operands,
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        if (args.size() == 1)
          return args[0];
        return arith::AddFOp::create(nested, nestedLoc, args[0], args[1])
            .getResult();
      });
}

/// Checks the operand ranks and static sizes a convolution needs.
static LogicalResult checkConvOperands(NodeLowering &node, Value input,
                                       Value weight) {
  auto inputType = getRankedType(input);
  auto weightType = getRankedType(weight);
  if (!inputType || !weightType || inputType.getRank() < 3 ||
      weightType.getRank() != inputType.getRank())
    return node.emitError() << "expects input and weight of equal rank >= 3";
  if (!isa<FloatType>(inputType.getElementType()))
    return node.emitError() << "expects float tensors";
  if (!weightType.hasStaticShape() ||
      llvm::any_of(inputType.getShape().drop_front(), ShapedType::isDynamic))
    return node.emitError()
           << "expects static channel, spatial and kernel sizes";
  return success();
}

namespace {
/// What a Conv node computes: its window, groups and output sizes.
struct ConvShape {
  Window window;
  int64_t groups;
  SmallVector<int64_t> outSizes;
};
} // namespace

/// Checks a Conv's input and weight and resolves its attributes.
static FailureOr<ConvShape> getConvShape(NodeLowering &node, Value input,
                                         Value weight) {
  if (failed(checkConvOperands(node, input, weight)))
    return failure();
  auto inputType = cast<RankedTensorType>(input.getType());
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t groups = node.getInt("group", 1);
  if (groups < 1 || weightType.getDimSize(0) % groups ||
      weightType.getDimSize(1) * groups != inputType.getDimSize(1))
    return node.emitError()
           << "the input has " << inputType.getDimSize(1)
           << " channels, the weight " << weightType.getDimSize(1)
           << " per group with group " << groups;
  FailureOr<Window> window = getWindow(node, inputType.getShape().drop_front(2),
                                       weightType.getShape().drop_front(2));
  if (failed(window))
    return failure();
  ConvShape shape{*window, groups, {}};
  for (auto [i, size] : llvm::enumerate(inputType.getShape().drop_front(2)))
    shape.outSizes.push_back(window->getOutputSize(i, size));
  return shape;
}

static LoweringResult lowerConv(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0), weight = node.operand(1);
  FailureOr<ConvShape> shape = getConvShape(node, input, weight);
  if (failed(shape))
    return failure();
  auto inputType = cast<RankedTensorType>(input.getType());
  const Window &window = shape->window;
  Value padded =
      padSpatial(b, loc, input, window.padsBegin, window.padsEnd, 0.0);
  Value acc = buildConvolution(b, loc, padded, weight, shape->groups,
                               window.strides, window.dilations,
                               shape->outSizes, /*transposedWeights=*/false);
  return SmallVector<Value>{
      addBias(b, loc, acc, node.operand(2),
              node.resultElementType(0, inputType.getElementType()))};
}

/// The transposed convolution of `input` by `weight` ([C, M/g, k...]) in
/// the accumulator type: a convolution of the input zero-upsampled by the
/// strides and padded by extent - 1 - pad (output_padding at the end) with
/// the flipped kernel.
static Value buildTransposedConvolution(OpBuilder &b, Location loc, Value input,
                                        Value weight, int64_t groups,
                                        const Window &window,
                                        ArrayRef<int64_t> outputPadding) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t spatial = inputType.getRank() - 2;
  // Zero-upsample by the strides: x_up[h * s] = x[h].
  SmallVector<int64_t> upShape(inputType.getShape());
  SmallVector<OpFoldResult> offsets, sizes = getSizes(b, loc, input), steps;
  for (int64_t i = 0; i < inputType.getRank(); ++i) {
    offsets.push_back(b.getIndexAttr(0));
    int64_t stride = i < 2 ? 1 : window.strides[i - 2];
    steps.push_back(b.getIndexAttr(stride));
    if (i >= 2)
      upShape[i] = (upShape[i] - 1) * stride + 1;
  }
  Value upsampled = input;
  if (llvm::any_of(window.strides, [](int64_t s) { return s != 1; })) {
    SmallVector<OpFoldResult> upSizes = getSizes(b, loc, input);
    for (int64_t i = 2; i < inputType.getRank(); ++i)
      upSizes[i] = b.getIndexAttr(upShape[i]);
    Value zeros = createFilled(
        b, loc, upSizes, createScalar(b, loc, inputType.getElementType(), 0));
    upsampled = tensor::InsertSliceOp::create(b, loc, input, zeros, offsets,
                                              sizes, steps);
  }
  // Pad by extent - 1 - pad on each side (output_padding at the end).
  SmallVector<int64_t> low, high, outSizes;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t extent = (window.kernel[i] - 1) * window.dilations[i];
    low.push_back(extent - window.padsBegin[i]);
    high.push_back(extent - window.padsEnd[i] + outputPadding[i]);
    outSizes.push_back(upShape[2 + i] + low.back() + high.back() - extent);
  }
  Value padded = padSpatial(b, loc, upsampled, low, high, 0.0);
  SmallVector<int64_t> ones(spatial, 1);
  return buildConvolution(b, loc, padded, weight, groups, ones,
                          window.dilations, outSizes,
                          /*transposedWeights=*/true);
}

/// The output padding that makes the transposed convolution of a tensor of
/// spatial sizes `outSizes` (a window's outputs) by `window` as large as
/// `inSizes` (the window's input): the adjoint of the window, as a gradient
/// needs it. Negative where the last windows reach into the end padding.
static SmallVector<int64_t> getOutputPadding(const Window &window,
                                             ArrayRef<int64_t> outSizes,
                                             ArrayRef<int64_t> inSizes) {
  SmallVector<int64_t> padding;
  for (auto [i, size] : llvm::enumerate(inSizes))
    padding.push_back(size - ((outSizes[i] - 1) * window.strides[i] +
                              window.getExtent(i) - window.padsBegin[i] -
                              window.padsEnd[i]));
  return padding;
}

/// ConvTranspose's pads from `output_shape` or `auto_pad` (SAME_UPPER,
/// SAME_LOWER: the input's sizes times the strides), as ONNX defines them:
/// the full output's excess over the shape, halved, the odd element at the
/// end for SAME_UPPER and at the start otherwise. A shape larger than the
/// full output extends it at the end. Explicit pads stay otherwise.
static LogicalResult setTransposedPads(NodeLowering &node,
                                       RankedTensorType inputType,
                                       Window &window,
                                       ArrayRef<int64_t> outputPadding) {
  int64_t spatial = inputType.getRank() - 2;
  StringRef autoPad = node.getString("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outputShape =
      node.getInts("output_shape");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (!outputShape && !same) {
    if (autoPad == "VALID") {
      window.padsBegin.assign(spatial, 0);
      window.padsEnd.assign(spatial, 0);
    }
    return success();
  }
  // output_shape lists the spatial sizes (or all, N and C first).
  if (outputShape && int64_t(outputShape->size()) == spatial + 2)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && int64_t(outputShape->size()) != spatial)
    return node.emitError() << "output_shape must have " << spatial
                            << " spatial sizes, not " << outputShape->size();
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t size = inputType.getDimSize(2 + i);
    if (ShapedType::isDynamic(size))
      return node.emitError()
             << "output_shape and auto_pad need static spatial sizes";
    int64_t target = outputShape ? (*outputShape)[i] : size * window.strides[i];
    int64_t total = window.strides[i] * (size - 1) + outputPadding[i] +
                    window.getExtent(i) - target;
    if (total < 0) {
      window.padsBegin[i] = 0;
      window.padsEnd[i] = total;
      continue;
    }
    int64_t half = total / 2;
    window.padsBegin[i] = autoPad == "SAME_UPPER" ? half : total - half;
    window.padsEnd[i] = total - window.padsBegin[i];
  }
  return success();
}

namespace {
/// What a ConvTranspose node computes: its window (pads resolved), groups
/// and output padding.
struct TransposedConvShape {
  Window window;
  int64_t groups;
  SmallVector<int64_t> outputPadding;
};
} // namespace

/// Checks a ConvTranspose's input and weight ([C, M/g, k...]) and resolves
/// its attributes.
static FailureOr<TransposedConvShape>
getTransposedConvShape(NodeLowering &node, Value input, Value weight) {
  if (failed(checkConvOperands(node, input, weight)))
    return failure();
  auto inputType = cast<RankedTensorType>(input.getType());
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t spatial = inputType.getRank() - 2;
  int64_t groups = node.getInt("group", 1);
  if (groups < 1 || weightType.getDimSize(0) != inputType.getDimSize(1) ||
      inputType.getDimSize(1) % groups)
    return node.emitError()
           << "the input has " << inputType.getDimSize(1)
           << " channels, the weight " << weightType.getDimSize(0)
           << ", with group " << groups;
  FailureOr<Window> window = getWindow(node, inputType.getShape().drop_front(2),
                                       weightType.getShape().drop_front(2));
  if (failed(window))
    return failure();
  SmallVector<int64_t> outputPadding =
      node.getInts("output_padding").value_or(SmallVector<int64_t>(spatial, 0));
  if (int64_t(outputPadding.size()) != spatial)
    return node.emitError()
           << "output_padding must have " << spatial << " values";
  if (failed(setTransposedPads(node, inputType, *window, outputPadding)))
    return failure();
  return TransposedConvShape{*window, groups, outputPadding};
}

static LoweringResult lowerConvTranspose(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0), weight = node.operand(1);
  FailureOr<TransposedConvShape> shape =
      getTransposedConvShape(node, input, weight);
  if (failed(shape))
    return failure();
  Value acc = buildTransposedConvolution(b, loc, input, weight, shape->groups,
                                         shape->window, shape->outputPadding);
  return SmallVector<Value>{addBias(
      b, loc, acc, node.operand(2),
      node.resultElementType(
          0, cast<RankedTensorType>(input.getType()).getElementType()))};
}

/// The weight gradient of a convolution of `padded` (its input, padded) by
/// a weight of `weightType` ([g*M, C, k...]) whose output's gradient is `dy`
/// ([N, g*M, o...], `outSizes` positions): dW[g, m, c*k] = sum_{n, o}
/// dY[n, g, m, o] * col[n, g, c*k, o], in `accType`, shaped as the weight.
static Value buildWeightGradient(OpBuilder &b, Location loc, Value dy,
                                 Value padded, RankedTensorType weightType,
                                 int64_t groups, const Window &window,
                                 ArrayRef<int64_t> outSizes, Type accType) {
  auto dyType = cast<RankedTensorType>(dy.getType());
  int64_t spatial = dyType.getRank() - 2;
  int64_t channelsPerGroup = weightType.getDimSize(1);
  int64_t outPerGroup = weightType.getDimSize(0) / groups;
  ArrayRef<int64_t> kernel = weightType.getShape().drop_front(2);
  int64_t depth = channelsPerGroup, outVolume = 1;
  for (int64_t size : kernel)
    depth *= size;
  for (int64_t size : outSizes)
    outVolume *= size;
  Value columns = buildColumns(b, loc, padded, groups, channelsPerGroup, kernel,
                               window.strides, window.dilations, outSizes);
  SmallVector<ReassociationIndices> collapse = {{0}, {1}, {}};
  for (int64_t i = 0; i < spatial; ++i)
    collapse[2].push_back(2 + i);
  Value flatDy = tensor::CollapseShapeOp::create(b, loc, dy, collapse);
  Value groupedDy = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get(
          {dyType.getDimSize(0), groups, outPerGroup, outVolume},
          dyType.getElementType()),
      flatDy, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}},
      SmallVector<OpFoldResult>{
          tensor::getMixedSize(b, loc, dy, 0), b.getIndexAttr(groups),
          b.getIndexAttr(outPerGroup), b.getIndexAttr(outVolume)});
  Value acc = createFilled(b, loc,
                           {b.getIndexAttr(groups), b.getIndexAttr(outPerGroup),
                            b.getIndexAttr(depth)},
                           createScalar(b, loc, accType, 0));
  auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
  MLIRContext *ctx = b.getContext();
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  Value product =
      linalg::GenericOp::create(
          b, loc, acc.getType(), ValueRange{groupedDy, columns}, acc,
          {AffineMap::get(5, 0, {d(3), d(0), d(1), d(4)}, ctx),
           AffineMap::get(5, 0, {d(3), d(0), d(2), d(4)}, ctx),
           AffineMap::get(5, 0, {d(0), d(1), d(2)}, ctx)},
          iterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl, multiplyAccumulate(nb, nl, args[0], args[1], args[2]));
          })
          .getResult(0);
  return reshapeTo(b, loc, product, weightType.clone(accType));
}

/// A convolution's bias gradient: dY ([N, C, o...]) summed over the batch
/// and the positions, as `elementType`.
static Value buildBiasGradient(OpBuilder &b, Location loc, Value dy,
                               Type elementType) {
  SmallVector<int64_t> axes = {0};
  for (int64_t i = 2; i < cast<RankedTensorType>(dy.getType()).getRank(); ++i)
    axes.push_back(i);
  return convertTensor(b, loc, buildSum(b, loc, dy, axes), elementType);
}

/// com.microsoft ConvGrad(dY, X, W) -> (dX, dW, dB) for a Conv with the
/// node's attributes: dX is the transposed convolution of dY by W (output
/// padding chosen to give X's sizes), dW contracts dY with X's im2col
/// columns over the batch and the output positions, dB sums dY over them.
static LoweringResult lowerConvGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0), input = node.operand(1), weight = node.operand(2);
  FailureOr<ConvShape> shape = getConvShape(node, input, weight);
  if (failed(shape))
    return failure();
  auto inputType = cast<RankedTensorType>(input.getType());
  auto weightType = cast<RankedTensorType>(weight.getType());
  auto dyType = getRankedType(dy);
  int64_t groups = shape->groups;
  const Window &window = shape->window;
  ArrayRef<int64_t> outSizes = shape->outSizes;
  SmallVector<int64_t> expectedDy = {inputType.getDimSize(0),
                                     weightType.getDimSize(0)};
  expectedDy.append(outSizes.begin(), outSizes.end());
  if (!dyType || !isa<FloatType>(dyType.getElementType()) ||
      failed(verifyCompatibleShape(dyType.getShape(), expectedDy)))
    return node.emitError() << "dY must be a float tensor of the Conv's "
                               "output shape";
  dy = castToType(b, loc, dy, dyType.clone(expectedDy));
  Type accType = getAccumulatorType(dyType.getElementType());
  SmallVector<Value> results(3);

  if (node.isResultUsed(0)) {
    Value acc = buildTransposedConvolution(
        b, loc, dy, weight, groups, window,
        getOutputPadding(window, outSizes, inputType.getShape().drop_front(2)));
    results[0] = convertTensor(
        b, loc, acc, node.resultElementType(0, inputType.getElementType()));
  }

  if (node.getNumResults() > 1 && node.isResultUsed(1)) {
    Value padded =
        padSpatial(b, loc, input, window.padsBegin, window.padsEnd, 0.0);
    results[1] =
        convertTensor(b, loc,
                      buildWeightGradient(b, loc, dy, padded, weightType,
                                          groups, window, outSizes, accType),
                      node.resultElementType(1, weightType.getElementType()));
  }

  if (node.getNumResults() > 2 && node.isResultUsed(2))
    results[2] = buildBiasGradient(
        b, loc, dy, node.resultElementType(2, dyType.getElementType()));
  results.resize(node.getNumResults());
  return results;
}

/// com.microsoft ConvTransposeGrad(dY, X, W) -> (dX, dW, dB) for a
/// ConvTranspose with the node's attributes. A transposed convolution's
/// adjoint is the convolution with the same window: dX = Conv(dY, W); dW is
/// that convolution's weight gradient with dY as its input and X as its
/// output's gradient; dB sums dY.
static LoweringResult lowerConvTransposeGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0), input = node.operand(1), weight = node.operand(2);
  FailureOr<TransposedConvShape> shape =
      getTransposedConvShape(node, input, weight);
  if (failed(shape))
    return failure();
  auto inputType = cast<RankedTensorType>(input.getType());
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t spatial = inputType.getRank() - 2;
  int64_t groups = shape->groups;
  const Window &window = shape->window;
  ArrayRef<int64_t> outputPadding = shape->outputPadding;
  ArrayRef<int64_t> inSizes = inputType.getShape().drop_front(2);
  SmallVector<int64_t> expectedDy = {inputType.getDimSize(0),
                                     weightType.getDimSize(1) * groups};
  for (int64_t i = 0; i < spatial; ++i)
    expectedDy.push_back(window.strides[i] * (inSizes[i] - 1) +
                         outputPadding[i] + window.getExtent(i) -
                         window.padsBegin[i] - window.padsEnd[i]);
  auto dyType = getRankedType(dy);
  if (!dyType || !isa<FloatType>(dyType.getElementType()) ||
      failed(verifyCompatibleShape(dyType.getShape(), expectedDy)))
    return node.emitError() << "dY must be a float tensor of the "
                               "ConvTranspose's output shape";
  dy = castToType(b, loc, dy, dyType.clone(expectedDy));
  Type accType = getAccumulatorType(dyType.getElementType());
  SmallVector<Value> results(3);
  Value padded;
  if (node.isResultUsed(0) ||
      (node.getNumResults() > 1 && node.isResultUsed(1)))
    padded = padSpatial(b, loc, dy, window.padsBegin, window.padsEnd, 0.0);
  if (node.isResultUsed(0)) {
    Value acc = buildConvolution(b, loc, padded, weight, groups, window.strides,
                                 window.dilations, inSizes,
                                 /*transposedWeights=*/false);
    results[0] = convertTensor(
        b, loc, acc, node.resultElementType(0, inputType.getElementType()));
  }
  if (node.getNumResults() > 1 && node.isResultUsed(1))
    results[1] =
        convertTensor(b, loc,
                      buildWeightGradient(b, loc, input, padded, weightType,
                                          groups, window, inSizes, accType),
                      node.resultElementType(1, weightType.getElementType()));
  if (node.getNumResults() > 2 && node.isResultUsed(2))
    results[2] = buildBiasGradient(
        b, loc, dy, node.resultElementType(2, dyType.getElementType()));
  results.resize(node.getNumResults());
  return results;
}

/// The iterators of a window loop nest: n, c and the `spatial` output
/// positions in parallel, then the window offsets reduced.
static SmallVector<utils::IteratorType> getWindowIterators(int64_t spatial) {
  SmallVector<utils::IteratorType> iterators(2 + spatial,
                                             utils::IteratorType::parallel);
  iterators.append(spatial, utils::IteratorType::reduction);
  return iterators;
}

/// |x|^p, what LpPool sums.
static Value lpPower(OpBuilder &b, Location loc, Value x, int64_t p) {
  if (p == 2)
    return arith::MulFOp::create(b, loc, x, x);
  Value magnitude = math::AbsFOp::create(b, loc, x);
  if (p == 1)
    return magnitude;
  return math::PowFOp::create(b, loc, magnitude,
                              createScalar(b, loc, x.getType(), double(p)));
}

/// sum^(1/p), LpPool's result from its sum.
static Value lpRoot(OpBuilder &b, Location loc, Value sum, int64_t p) {
  if (p == 1)
    return sum;
  if (p == 2)
    return math::SqrtOp::create(b, loc, sum);
  return math::PowFOp::create(
      b, loc, sum, createScalar(b, loc, sum.getType(), 1.0 / double(p)));
}

/// LpPool's and GlobalLpPool's p, which must be positive.
static FailureOr<int64_t> getLpNorm(NodeLowering &node) {
  int64_t p = node.getInt("p", 2);
  if (p <= 0)
    return node.emitError() << "p must be positive, not " << p;
  return p;
}

/// MaxPool, AveragePool and LpPool: a window reduction over the padded
/// input.
static LoweringResult lowerPool(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  StringRef opType = node.getNode().getOpType();
  bool isMax = opType == "MaxPool", isLp = opType == "LpPool";
  FailureOr<int64_t> lpNorm = isLp ? getLpNorm(node) : FailureOr<int64_t>(1);
  if (failed(lpNorm))
    return failure();
  Value input = node.operand(0);
  auto inputType = getRankedType(input);
  if (!inputType || inputType.getRank() < 3 ||
      !isa<FloatType>(inputType.getElementType()))
    return node.emitError() << "expects a float tensor of rank >= 3";
  if (llvm::any_of(inputType.getShape().drop_front(2), ShapedType::isDynamic))
    return node.emitError() << "expects static spatial sizes";
  bool wantIndices = node.getNumResults() > 1 && node.isResultUsed(1);
  if (wantIndices && node.getInt("storage_order", 0) != 0)
    return node.emitError() << "column-major Indices do not lower yet";
  int64_t spatial = inputType.getRank() - 2;
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  if (!kernel)
    return node.emitError() << "kernel_shape is required";
  FailureOr<Window> window =
      getWindow(node, inputType.getShape().drop_front(2), *kernel);
  if (failed(window))
    return failure();
  bool ceilMode = node.getInt("ceil_mode", 0);
  bool countPad = node.getInt("count_include_pad", 0);
  SmallVector<int64_t> outSizes, high(window->padsEnd);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t size = inputType.getDimSize(2 + i);
    int64_t extent = window->getExtent(i);
    int64_t out = window->getOutputSize(i, size, ceilMode);
    outSizes.push_back(out);
    // ceil_mode windows may run past the end: pad so they fit.
    int64_t needed = (out - 1) * window->strides[i] + extent;
    int64_t padded = size + window->padsBegin[i] + window->padsEnd[i];
    high[i] += std::max<int64_t>(0, needed - padded);
  }
  Type accType = getAccumulatorType(inputType.getElementType());
  double padValue = isMax ? -INFINITY : 0.0;
  Value padded = padSpatial(b, loc, input, window->padsBegin, high, padValue);

  // Loops: n, c, o..., k...
  int64_t loops = 2 + 2 * spatial;
  auto d = [&](int64_t i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs = {d(0), d(1)}, windowExprs,
                          outExprs = {d(0), d(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = d(2 + i), k = d(2 + spatial + i);
    inExprs.push_back(o * window->strides[i] + k * window->dilations[i]);
    windowExprs.push_back(k);
    outExprs.push_back(o);
  }
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, ctx),
                                 AffineMap::get(loops, 0, windowExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators = getWindowIterators(spatial);
  SmallVector<OpFoldResult> kernelSizes,
      sizes = {tensor::getMixedSize(b, loc, input, 0),
               tensor::getMixedSize(b, loc, input, 1)};
  for (int64_t i = 0; i < spatial; ++i) {
    kernelSizes.push_back(b.getIndexAttr((*kernel)[i]));
    sizes.push_back(b.getIndexAttr(outSizes[i]));
  }
  Value windowShape = createEmpty(b, loc, kernelSizes, accType);
  auto reduce = [&](Value source, double init, bool max) {
    Value acc =
        createFilled(b, loc, sizes, createScalar(b, loc, accType, init));
    return linalg::GenericOp::create(
               b, loc, acc.getType(), ValueRange{source, windowShape}, acc,
               maps, iterators,
               [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
                 Value x = convertScalar(nested, nestedLoc, args[0], accType);
                 if (isLp)
                   x = lpPower(nested, nestedLoc, x, *lpNorm);
                 Value y =
                     max ? arith::MaximumFOp::create(nested, nestedLoc, args[2],
                                                     x)
                               .getResult()
                         : arith::AddFOp::create(nested, nestedLoc, args[2], x)
                               .getResult();
                 linalg::YieldOp::create(nested, nestedLoc, y);
               })
        .getResult(0);
  };
  Type elementType = node.resultElementType(0, inputType.getElementType());
  auto outType = RankedTensorType::get(
      cast<RankedTensorType>(createEmpty(b, loc, sizes, accType).getType())
          .getShape(),
      elementType);
  if (isMax && wantIndices) {
    // The first maximum of each window and its row-major position in the
    // unpadded input (n, c and the spatial indices flattened).
    Type i64 = b.getI64Type();
    Value maxInit =
        createFilled(b, loc, sizes, createScalar(b, loc, accType, -INFINITY));
    Value indexInit = createFilled(b, loc, sizes, createScalar(b, loc, i64, 0));
    maps.push_back(maps.back());
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{maxInit.getType(), indexInit.getType()},
        ValueRange{padded, windowShape}, ValueRange{maxInit, indexInit}, maps,
        iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value x = convertScalar(nb, nl, args[0], accType);
          // Position: ((n * C + c) * H + h) * W + w, h = o*s + k*d - pad.
          Value position = linalg::IndexOp::create(nb, nl, 0);
          position = arith::AddIOp::create(
              nb, nl,
              arith::MulIOp::create(
                  nb, nl, position,
                  tensor::DimOp::create(nb, nl, input, 1).getResult()),
              linalg::IndexOp::create(nb, nl, 1));
          for (int64_t i = 0; i < spatial; ++i) {
            Value o = linalg::IndexOp::create(nb, nl, 2 + i);
            Value k = linalg::IndexOp::create(nb, nl, 2 + spatial + i);
            Value h = arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(
                    nb, nl, o,
                    arith::ConstantIndexOp::create(nb, nl, window->strides[i])),
                arith::MulIOp::create(nb, nl, k,
                                      arith::ConstantIndexOp::create(
                                          nb, nl, window->dilations[i])));
            h = arith::SubIOp::create(
                nb, nl, h,
                arith::ConstantIndexOp::create(nb, nl, window->padsBegin[i]));
            position = arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(nb, nl, position,
                                      arith::ConstantIndexOp::create(
                                          nb, nl, inputType.getDimSize(2 + i))),
                h);
          }
          Value greater = arith::CmpFOp::create(
              nb, nl, arith::CmpFPredicate::OGT, x, args[2]);
          Value newMax = arith::SelectOp::create(nb, nl, greater, x, args[2]);
          Value newIndex = arith::SelectOp::create(
              nb, nl, greater, convertScalar(nb, nl, position, i64), args[3]);
          linalg::YieldOp::create(nb, nl, ValueRange{newMax, newIndex});
        });
    return SmallVector<Value>{
        convertTensor(b, loc, generic.getResult(0), elementType),
        generic.getResult(1)};
  }
  if (isMax)
    return SmallVector<Value>{
        convertTensor(b, loc, reduce(padded, -INFINITY, true), elementType)};
  Value sum = reduce(padded, 0.0, false);
  if (isLp)
    return SmallVector<Value>{buildElementwise(
        b, loc, outType, sum,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          return lpRoot(nested, nestedLoc, args[0], *lpNorm);
        })};
  int64_t windowSize = 1;
  for (int64_t k : *kernel)
    windowSize *= k;
  bool padded0 = llvm::any_of(window->padsBegin, [](int64_t p) { return p; }) ||
                 llvm::any_of(window->padsEnd, [](int64_t p) { return p; });
  // ceil_mode's last windows may run past the padded input: that part is
  // never counted.
  SmallVector<int64_t> beyond;
  for (auto [extended, explicitEnd] : llvm::zip(high, window->padsEnd))
    beyond.push_back(extended - explicitEnd);
  bool runsPast = llvm::any_of(beyond, [](int64_t p) { return p > 0; });
  if ((countPad || !padded0) && !runsPast) {
    return SmallVector<Value>{buildElementwise(
        b, loc, outType, sum,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          return arith::DivFOp::create(
                     nested, nestedLoc, args[0],
                     createScalar(nested, nestedLoc, accType, windowSize))
              .getResult();
        })};
  }
  // Divide by the number of elements each window counts: the real ones,
  // and with count_include_pad the explicit pads too.
  Value ones =
      createFilled(b, loc, getSizes(b, loc, input),
                   createScalar(b, loc, inputType.getElementType(), 1));
  Value counted =
      countPad ? padSpatial(b, loc,
                            padSpatial(b, loc, ones, window->padsBegin,
                                       window->padsEnd, 1.0),
                            SmallVector<int64_t>(spatial, 0), beyond, 0.0)
               : padSpatial(b, loc, ones, window->padsBegin, high, 0.0);
  Value counts = reduce(counted, 0.0, false);
  return SmallVector<Value>{buildElementwise(
      b, loc, outType, ValueRange{sum, counts},
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        return arith::DivFOp::create(nested, nestedLoc, args[0], args[1])
            .getResult();
      })};
}

/// `values` combined (`kind`; overwritten without one) into zeros of
/// `type`'s element count at the flat positions `indices` names (MaxPool's
/// Indices), reshaped to `type`.
static Value scatterAtFlatIndices(OpBuilder &b, Location loc, Value values,
                                  Value indices, RankedTensorType type,
                                  std::optional<CombineKind> kind) {
  Value zeros = createFilled(b, loc, {b.getIndexAttr(type.getNumElements())},
                             createScalar(b, loc, type.getElementType(), 0));
  Value flat = buildScatter(
      b, loc, zeros, values, kind,
      [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        return SmallVector<Value>{convertScalar(
            nb, nl, tensor::ExtractOp::create(nb, nl, indices, ivs),
            nb.getIndexType())};
      });
  return reshapeTo(b, loc, flat, type);
}

/// MaxPoolGrad(dY, Indices): each dY element summed into the element of
/// X that MaxPool's Indices output names (a flat position in X); dX has
/// the declared type, which must be static.
static LoweringResult lowerMaxPoolGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0), indices = node.operand(1);
  RankedTensorType dyType = getRankedType(dy);
  RankedTensorType indicesType = getRankedType(indices);
  RankedTensorType type = node.resultType(0);
  if (!dyType || !indicesType || !isa<FloatType>(dyType.getElementType()) ||
      failed(verifyCompatibleShape(dyType, indicesType)))
    return node.emitError() << "expects a float dY and Indices of its shape";
  if (!type || !type.hasStaticShape())
    return node.emitError() << "needs a static dX type (X's shape)";
  Type accType = getAccumulatorType(dyType.getElementType());
  Value sums = scatterAtFlatIndices(b, loc, dy, indices, type.clone(accType),
                                    CombineKind::Add);
  return SmallVector<Value>{convertTensor(b, loc, sums, type.getElementType())};
}

/// AveragePoolGrad(dY) of ONNX Runtime (the default domain, as MaxPoolGrad),
/// for an AveragePool with the node's kernel_shape, strides, pads and
/// count_include_pad: each dY element divided by its window's count (the
/// kernel's volume with count_include_pad, else the window's part inside
/// X, as ONNX Runtime's kernel counts it) and summed into every element of
/// its window: the transposed convolution of the scaled dY by a kernel of
/// ones, one group per channel. dX has the declared type, which must be
/// static.
static LoweringResult lowerAveragePoolGrad(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value dy = node.operand(0);
  RankedTensorType dyType = getRankedType(dy);
  RankedTensorType type = node.resultType(0);
  if (!dyType || !isa<FloatType>(dyType.getElementType()) ||
      dyType.getRank() < 3 ||
      llvm::any_of(dyType.getShape().drop_front(), ShapedType::isDynamic))
    return node.emitError()
           << "expects a float dY of rank >= 3 with static channels and "
              "spatial sizes";
  if (!type || !type.hasStaticShape() || type.getRank() != dyType.getRank())
    return node.emitError() << "needs a static dX type (X's shape)";
  int64_t spatial = dyType.getRank() - 2;
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  if (!kernel)
    return node.emitError() << "needs kernel_shape";
  ArrayRef<int64_t> inSizes = type.getShape().drop_front(2);
  ArrayRef<int64_t> outSizes = dyType.getShape().drop_front(2);
  FailureOr<Window> window = getWindow(node, inSizes, *kernel);
  if (failed(window))
    return failure();
  if (llvm::any_of(window->dilations, [](int64_t d) { return d != 1; }))
    return node.emitError() << "has no dilations";
  bool countPad = node.getInt("count_include_pad", 0) != 0;
  // 1 / count per output position, row-major over the spatial sizes.
  int64_t positions = 1, volume = 1;
  for (int64_t i = 0; i < spatial; ++i) {
    positions *= outSizes[i];
    volume *= (*kernel)[i];
  }
  Type accType = getAccumulatorType(dyType.getElementType());
  SmallVector<double> scales(positions);
  for (int64_t flat = 0; flat < positions; ++flat) {
    int64_t count = 1, rest = flat;
    for (int64_t i = spatial - 1; i >= 0; --i) {
      int64_t o = rest % outSizes[i];
      rest /= outSizes[i];
      int64_t start = o * window->strides[i] - window->padsBegin[i];
      int64_t end = std::min(start + (*kernel)[i], inSizes[i]);
      count *= std::max<int64_t>(end - std::max<int64_t>(start, 0), 0);
    }
    int64_t divisor = countPad ? volume : count;
    scales[flat] = divisor > 0 ? 1.0 / double(divisor) : 0.0;
  }
  SmallVector<int64_t> scaleShape(2, 1);
  llvm::append_range(scaleShape, outSizes);
  Value scale = createNumberConstant(
      b, loc, RankedTensorType::get(scaleShape, accType), scales);
  Value scaled = buildElementwise(
      b, loc, dyType.clone(accType), ValueRange{dy, scale},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::MulFOp::create(nb, nl, args[0], args[1]).getResult();
      });
  int64_t channels = dyType.getDimSize(1);
  SmallVector<int64_t> onesShape = {channels, 1};
  llvm::append_range(onesShape, *kernel);
  Value ones =
      createFilled(b, loc, getAsIndexOpFoldResult(b.getContext(), onesShape),
                   createScalar(b, loc, accType, 1));
  Value acc =
      buildTransposedConvolution(b, loc, scaled, ones, channels, *window,
                                 getOutputPadding(*window, outSizes, inSizes));
  return SmallVector<Value>{convertTensor(b, loc, acc, type.getElementType())};
}

/// MaxUnpool(X, I, output_shape?): zeros of the shape (in - 1) * stride +
/// kernel - pads per spatial axis with each element of X written at its
/// flat index in I (MaxPool's Indices), then padded at the end to
/// output_shape when given (ONNX's reference).
static LoweringResult lowerMaxUnpool(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value x = node.operand(0), indices = node.operand(1);
  RankedTensorType type = getRankedType(x);
  RankedTensorType indicesType = getRankedType(indices);
  if (!type || type.getRank() < 3 || !type.hasStaticShape() || !indicesType ||
      failed(verifyCompatibleShape(type, indicesType)))
    return node.emitError() << "expects X of static shape and rank >= 3, and "
                               "indices of its shape";
  int64_t spatial = type.getRank() - 2;
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  if (!kernel || int64_t(kernel->size()) != spatial)
    return node.emitError() << "kernel_shape must give one size per spatial "
                               "dimension";
  SmallVector<int64_t> strides =
      node.getInts("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads =
      node.getInts("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if (int64_t(strides.size()) != spatial || int64_t(pads.size()) != 2 * spatial)
    return node.emitError() << "strides and pads must give one value per "
                               "spatial dimension (pads two)";
  SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(1)};
  for (int64_t i = 0; i < spatial; ++i)
    shape.push_back((type.getDimSize(2 + i) - 1) * strides[i] + (*kernel)[i] -
                    pads[i] - pads[spatial + i]);
  if (llvm::any_of(shape, [](int64_t size) { return size <= 0; }))
    return node.emitError() << "the output shape must be positive";
  SmallVector<int64_t> padded = shape;
  if (node.operand(2)) {
    std::optional<SmallVector<int64_t>> given = node.getConstantInts(2);
    if (!given || given->size() != shape.size() ||
        llvm::any_of(llvm::zip(*given, shape), [](auto sizes) {
          return std::get<0>(sizes) < std::get<1>(sizes);
        }))
      return node.emitError() << "output_shape must be a constant of one size "
                                 "per dimension, each at least the unpooled "
                                 "one";
    padded = *given;
  }
  auto outType = RankedTensorType::get(shape, type.getElementType());
  Value unpooled =
      scatterAtFlatIndices(b, loc, x, indices, outType, std::nullopt);
  if (padded == shape)
    return SmallVector<Value>{unpooled};
  SmallVector<int64_t> high;
  for (auto [size, inferred] : llvm::zip(padded, shape))
    high.push_back(size - inferred);
  return SmallVector<Value>{
      padTensor(b, loc, unpooled, SmallVector<int64_t>(shape.size(), 0), high,
                createScalar(b, loc, type.getElementType(), 0))};
}

/// Col2Im (opset 18), the inverse of im2col (nn.Fold, and the gradient of
/// nn.Unfold): input [N, C * prod(block), L] holds, for each of the L
/// block positions, the C * prod(block) values of its window; each output
/// element [N, C, image...] sums the window values that land on it. One
/// generic over the output and the window offsets reads them (a gather,
/// not a scatter: no two iterations write one element).
static LoweringResult lowerCol2Im(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type || type.getRank() != 3 || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects a float input of static shape "
                               "[N, C * prod(block_shape), L]";
  std::optional<SmallVector<int64_t>> image = node.getConstantInts(1);
  std::optional<SmallVector<int64_t>> block = node.getConstantInts(2);
  if (!image || !block || image->size() != block->size() || image->empty())
    return node.emitError() << "image_shape and block_shape must be "
                               "constants of one size per spatial dimension";
  int64_t spatial = image->size();
  SmallVector<int64_t> strides =
      node.getInts("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> dilations =
      node.getInts("dilations").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads =
      node.getInts("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if (int64_t(strides.size()) != spatial ||
      int64_t(dilations.size()) != spatial ||
      int64_t(pads.size()) != 2 * spatial)
    return node.emitError() << "strides, dilations and pads must give one "
                               "value per spatial dimension (pads two)";
  // Blocks along each dimension, as im2col slides them.
  SmallVector<int64_t> blocks;
  int64_t blockSize = 1, blockCount = 1;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t extent = ((*block)[i] - 1) * dilations[i] + 1;
    int64_t room = (*image)[i] + pads[i] + pads[spatial + i] - extent;
    if ((*block)[i] <= 0 || strides[i] <= 0 || dilations[i] <= 0 || room < 0)
      return node.emitError() << "the block does not fit the padded image "
                                 "along spatial dimension "
                              << i;
    blocks.push_back(room / strides[i] + 1);
    blockSize *= (*block)[i];
    blockCount *= blocks.back();
  }
  if (type.getDimSize(1) % blockSize || type.getDimSize(2) != blockCount)
    return node.emitError()
           << "the input has " << type.getDimSize(1) << " rows and "
           << type.getDimSize(2) << " blocks; expected a multiple of "
           << blockSize << " rows and " << blockCount << " blocks";
  int64_t channels = type.getDimSize(1) / blockSize;
  Type accType = getAccumulatorType(type.getElementType());

  // Loops: n, c, y... (the output), k... (the window offsets).
  int64_t loops = 2 + 2 * spatial;
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> outExprs, windowExprs;
  for (int64_t i = 0; i < 2 + spatial; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  for (int64_t i = 0; i < spatial; ++i)
    windowExprs.push_back(b.getAffineDimExpr(2 + spatial + i));
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, windowExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators = getWindowIterators(spatial);
  SmallVector<OpFoldResult> windowSizes,
      outSizes = {b.getIndexAttr(type.getDimSize(0)), b.getIndexAttr(channels)};
  for (int64_t i = 0; i < spatial; ++i) {
    windowSizes.push_back(b.getIndexAttr((*block)[i]));
    outSizes.push_back(b.getIndexAttr((*image)[i]));
  }
  Value window = createEmpty(b, loc, windowSizes, accType);
  Value init = createFilled(b, loc, outSizes, createScalar(b, loc, accType, 0));
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), window, init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto index = [&](int64_t value) {
          return arith::ConstantIndexOp::create(nb, nl, value).getResult();
        };
        Value zero = index(0);
        Value valid = arith::ConstantOp::create(nb, nl, nb.getBoolAttr(true));
        // The window row: c * prod(block) + the offsets' row-major index;
        // the block: the row-major index of (y + pad - k * dilation) / stride.
        Value row = linalg::IndexOp::create(nb, nl, 1);
        Value position = zero;
        for (int64_t i = 0; i < spatial; ++i) {
          Value y = linalg::IndexOp::create(nb, nl, 2 + i);
          Value k = linalg::IndexOp::create(nb, nl, 2 + spatial + i);
          row = arith::AddIOp::create(
              nb, nl, arith::MulIOp::create(nb, nl, row, index((*block)[i])),
              k);
          Value offset = arith::SubIOp::create(
              nb, nl, arith::AddIOp::create(nb, nl, y, index(pads[i])),
              arith::MulIOp::create(nb, nl, k, index(dilations[i])));
          Value nonNegative = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::sge, offset, zero);
          offset = arith::SelectOp::create(nb, nl, nonNegative, offset, zero);
          Value start =
              arith::DivUIOp::create(nb, nl, offset, index(strides[i]));
          Value aligned = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::eq,
              arith::RemUIOp::create(nb, nl, offset, index(strides[i])), zero);
          Value inside = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::ult, start, index(blocks[i]));
          valid = arith::AndIOp::create(
              nb, nl, valid,
              arith::AndIOp::create(
                  nb, nl, nonNegative,
                  arith::AndIOp::create(nb, nl, aligned, inside)));
          start = arith::SelectOp::create(nb, nl, inside, start, zero);
          position = arith::AddIOp::create(
              nb, nl, arith::MulIOp::create(nb, nl, position, index(blocks[i])),
              start);
        }
        Value n = linalg::IndexOp::create(nb, nl, 0);
        Value x =
            convertScalar(nb, nl,
                          tensor::ExtractOp::create(
                              nb, nl, input, ValueRange{n, row, position}),
                          accType);
        Value sum = arith::AddFOp::create(nb, nl, args[1], x);
        linalg::YieldOp::create(
            nb, nl,
            arith::SelectOp::create(nb, nl, valid, sum, args[1]).getResult());
      });
  return SmallVector<Value>{
      convertTensor(b, loc, generic.getResult(0), type.getElementType())};
}

/// GlobalAveragePool, GlobalMaxPool and GlobalLpPool: a reduction over
/// the spatial dimensions, kept as 1s.
static LoweringResult lowerGlobalPool(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  StringRef opType = node.getNode().getOpType();
  bool isMax = opType == "GlobalMaxPool", isLp = opType == "GlobalLpPool";
  Value input = node.operand(0);
  auto type = getRankedType(input);
  if (!type || type.getRank() < 3 || !isa<FloatType>(type.getElementType()))
    return node.emitError() << "expects a float tensor of rank >= 3";
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < type.getRank(); ++i)
    axes.push_back(i);
  Type accType = getAccumulatorType(type.getElementType());
  if (isLp) {
    FailureOr<int64_t> p = getLpNorm(node);
    if (failed(p))
      return failure();
    Value powers = buildElementwise(
        b, loc, type.clone(accType), input,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return lpPower(nb, nl, convertScalar(nb, nl, args[0], accType), *p);
        });
    Value kept = keepDims(b, loc, buildSum(b, loc, powers, axes), input, axes);
    auto keptType = cast<RankedTensorType>(kept.getType());
    return SmallVector<Value>{
        buildElementwise(b, loc, keptType.clone(type.getElementType()), kept,
                         [&](OpBuilder &nb, Location nl, ValueRange args) {
                           return lpRoot(nb, nl, args[0], *p);
                         })};
  }
  Value reduced =
      isMax ? buildMax(b, loc, input, axes) : buildSum(b, loc, input, axes);
  Value kept = keepDims(b, loc, reduced, input, axes);
  if (isMax)
    return SmallVector<Value>{
        convertTensor(b, loc, kept, type.getElementType())};
  // Divide by the number of spatial elements.
  Value count = convertScalar(b, loc, getElementCount(b, loc, input, axes),
                              getAccumulatorType(type.getElementType()));
  auto keptType = cast<RankedTensorType>(kept.getType());
  return SmallVector<Value>{buildElementwise(
      b, loc, keptType.clone(type.getElementType()), kept,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        return arith::DivFOp::create(nested, nestedLoc, args[0], count)
            .getResult();
      })};
}

void amp::lowering::populateConvolutionLowerings(LoweringTable &table) {
  table.add("", "Conv", lowerConv);
  table.add("", "ConvTranspose", lowerConvTranspose);
  table.add("com.microsoft", "ConvGrad", lowerConvGrad);
  table.add("com.microsoft", "ConvTransposeGrad", lowerConvTransposeGrad);
  table.add("", "MaxPool", lowerPool);
  table.add("", "AveragePool", lowerPool);
  table.add("", "LpPool", lowerPool);
  table.add("", "MaxPoolGrad", lowerMaxPoolGrad);
  table.add("", "AveragePoolGrad", lowerAveragePoolGrad);
  table.add("", "MaxUnpool", lowerMaxUnpool);
  table.add("", "Col2Im", lowerCol2Im);
  table.add("", "GlobalAveragePool", lowerGlobalPool);
  table.add("", "GlobalMaxPool", lowerGlobalPool);
  table.add("", "GlobalLpPool", lowerGlobalPool);
}
