//===- Signal.cpp - Lower DFT, STFT and MelWeightMatrix -------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// A discrete Fourier transform of static length is a GEMM against a
// constant matrix of cosines and sines (O(n^2) per transform, not an FFT):
// it goes through BLAS on the CPU and cuBLASLt on the GPU as every other
// contraction does. STFT frames the signal with a strided window read
// (the window multiplied in) and transforms the frames the same way.
// MelWeightMatrix is a constant.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"
#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp::lowering;

/// The constant W[n * channels + c][2 * k + j] that turns `inputLength`
/// samples of `channels` (1: real, 2: complex) into `bins` complex bins of
/// a transform of length `length`: output = input W, samples at or past
/// `length` ignored (ONNX truncates them) and missing ones zero (padded).
/// The inverse transform conjugates the twiddles and divides by `length`.
static Value buildTransformMatrix(OpBuilder &b, Location loc,
                                  int64_t inputLength, int64_t channels,
                                  int64_t length, int64_t bins, bool inverse,
                                  FloatType type) {
  int64_t rows = inputLength * channels, cols = 2 * bins;
  SmallVector<double> values(rows * cols, 0.0);
  double scale = inverse ? 1.0 / double(length) : 1.0;
  double sign = inverse ? 1.0 : -1.0;
  for (int64_t n = 0; n < std::min(inputLength, length); ++n) {
    for (int64_t k = 0; k < bins; ++k) {
      // The angle from (k n mod length), exact in integers; quarter turns
      // give exact zeros and ones.
      int64_t turn = (k * n) % length;
      double angle = 2 * M_PI * double(turn) / double(length);
      double c = std::cos(angle), s = std::sin(angle);
      if ((4 * turn) % length == 0) {
        int64_t quarter = 4 * turn / length;
        c = quarter == 0 ? 1 : quarter == 2 ? -1 : 0;
        s = quarter == 1 ? 1 : quarter == 3 ? -1 : 0;
      }
      c *= scale;
      s *= sign * scale;
      // (re + i im)(c + i s) = (re c - im s) + i (re s + im c).
      int64_t row = n * channels;
      values[row * cols + 2 * k] = c;
      values[row * cols + 2 * k + 1] = s;
      if (channels == 2) {
        values[(row + 1) * cols + 2 * k] = -s;
        values[(row + 1) * cols + 2 * k + 1] = c;
      }
    }
  }
  return createNumberConstant(b, loc, RankedTensorType::get({rows, cols}, type),
                              values);
}

/// The transform of `frames` ([outer..., n, channels], static, in the
/// compute type) against `matrix` (buildTransformMatrix): [outer...,
/// bins, 2] in the compute type, one contraction over (n, channels).
static Value applyTransform(OpBuilder &b, Location loc, Value frames,
                            Value matrix) {
  auto type = cast<RankedTensorType>(frames.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  // [outer..., n * channels] with at least one outer dimension (M).
  SmallVector<int64_t> flatShape(shape.begin(), shape.end() - 2);
  bool noOuter = flatShape.empty();
  if (noOuter)
    flatShape.push_back(1);
  flatShape.push_back(shape[rank - 2] * shape[rank - 1]);
  Value flat = reshapeTo(b, loc, frames, type.clone(flatShape));
  Value product = buildContraction(b, loc, {flat, false}, {matrix, false});
  int64_t bins = cast<RankedTensorType>(matrix.getType()).getDimSize(1) / 2;
  SmallVector<int64_t> outShape(shape.begin(), shape.end() - 2);
  outShape.append({bins, 2});
  return reshapeTo(b, loc, product,
                   cast<RankedTensorType>(product.getType()).clone(outShape));
}

/// The compute type of a transform of `elementType` values: f64 for f64,
/// f32 otherwise (twiddles of f16 lose digits).
static FloatType getTransformType(Type elementType) {
  return cast<FloatType>(getAccumulatorType(elementType));
}

/// A constant scalar operand `i` (an integer), or nullopt.
static std::optional<int64_t> getConstantScalar(NodeLowering &node,
                                                unsigned i) {
  std::optional<SmallVector<int64_t>> values = node.getConstantInts(i);
  if (!values || values->size() != 1)
    return std::nullopt;
  return (*values)[0];
}

/// DFT(input, [dft_length], [axis]) (axis an attribute before opset 20):
/// the transform along `axis` of input [batch, n_1, ..., n_k, 1 or 2],
/// `onesided` keeping bins 0 to length / 2 of a real input (forward only),
/// `inverse` the inverse transform.
static LoweringResult lowerDFT(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value input = node.operand(0);
  RankedTensorType type = getRankedType(input);
  if (!type || !isa<FloatType>(type.getElementType()) ||
      !type.hasStaticShape() || type.getRank() < 2)
    return node.emitError() << "expects a float input of static shape and "
                               "rank >= 2";
  int64_t rank = type.getRank();
  int64_t channels = type.getDimSize(rank - 1);
  if (channels != 1 && channels != 2)
    return node.emitError() << "the last dimension of the input must be 1 "
                               "(real) or 2 (complex), not "
                            << channels;
  int64_t axis = node.getInt("axis", 1);
  if (node.getNode().getOpset() >= 20) {
    axis = -2;
    if (node.operand(2)) {
      std::optional<int64_t> value = getConstantScalar(node, 2);
      if (!value)
        return node.emitError() << "axis (input 2) must be a constant scalar";
      axis = *value;
    }
  }
  // The last dimension holds the real and imaginary parts.
  std::optional<int64_t> signalAxis = normalizeAxis(axis, rank);
  if (!signalAxis || *signalAxis == rank - 1)
    return node.emitError() << "axis " << axis << " is not a signal "
                            << "dimension of an input of rank " << rank;
  int64_t inputLength = type.getDimSize(*signalAxis);
  int64_t length = inputLength;
  if (node.operand(1)) {
    std::optional<int64_t> value = getConstantScalar(node, 1);
    if (!value || *value < 1)
      return node.emitError() << "dft_length must be a constant scalar of at "
                                 "least 1";
    length = *value;
  }
  bool onesided = node.getInt("onesided", 0) != 0;
  bool inverse = node.getInt("inverse", 0) != 0;
  if (onesided && channels == 2)
    return node.emitError() << "onesided needs a real input (last "
                               "dimension 1)";
  // The spec defines onesided for real inputs only; ONNX Runtime reads an
  // inverse one as a complex half spectrum.
  if (onesided && inverse)
    return node.emitError() << "onesided inverse transforms do not lower: "
                               "implementations disagree on their input";
  int64_t bins = onesided ? length / 2 + 1 : length;

  // Move the signal axis next to the channels, transform, move it back.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != *signalAxis)
      perm.push_back(d);
  perm.append({*signalAxis, rank - 1});
  SmallVector<int64_t> inversePerm(rank);
  for (auto [position, d] : llvm::enumerate(perm))
    inversePerm[d] = position;
  bool moved = *signalAxis != rank - 2;

  FloatType computeType = getTransformType(type.getElementType());
  Value frames = convertTensor(b, loc, input, computeType);
  if (moved)
    frames = transposeTensor(b, loc, frames, perm);
  Value matrix = buildTransformMatrix(b, loc, inputLength, channels, length,
                                      bins, inverse, computeType);
  Value result = applyTransform(b, loc, frames, matrix);
  if (moved)
    result = transposeTensor(b, loc, result, inversePerm);
  return SmallVector<Value>{convertTensor(
      b, loc, result, node.resultElementType(0, type.getElementType()))};
}

/// STFT(signal, frame_step, [window], [frame_length]): signal [batch,
/// length, 1 or 2] cut into frames of frame_length samples frame_step
/// apart, each multiplied by the window and transformed: [batch, frames,
/// bins, 2], bins frame_length / 2 + 1 when `onesided` (the default).
static LoweringResult lowerSTFT(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  Value signal = node.operand(0);
  RankedTensorType type = getRankedType(signal);
  if (!type || !isa<FloatType>(type.getElementType()) ||
      !type.hasStaticShape() || type.getRank() != 3)
    return node.emitError() << "expects a float signal [batch, length, 1 or "
                               "2] of static shape";
  int64_t channels = type.getDimSize(2), signalLength = type.getDimSize(1);
  if (channels != 1 && channels != 2)
    return node.emitError() << "the last dimension of the signal must be 1 "
                               "(real) or 2 (complex), not "
                            << channels;
  std::optional<int64_t> step = getConstantScalar(node, 1);
  if (!step || *step < 1)
    return node.emitError() << "frame_step must be a constant scalar of at "
                               "least 1";
  Value window = node.operand(2);
  RankedTensorType windowType = getRankedType(window);
  if (window &&
      (!windowType || windowType.getRank() != 1 || windowType.isDynamicDim(0) ||
       !isa<FloatType>(windowType.getElementType())))
    return node.emitError() << "the window must be a float vector of static "
                               "size";
  std::optional<int64_t> frameLength;
  if (node.operand(3)) {
    frameLength = getConstantScalar(node, 3);
    if (!frameLength || *frameLength < 1)
      return node.emitError() << "frame_length must be a constant scalar of "
                                 "at least 1";
  }
  if (window && frameLength && windowType.getDimSize(0) != *frameLength)
    return node.emitError() << "the window has " << windowType.getDimSize(0)
                            << " elements, frame_length is " << *frameLength;
  if (!frameLength && !window)
    return node.emitError() << "needs a window or frame_length";
  int64_t length = frameLength ? *frameLength : windowType.getDimSize(0);
  if (length > signalLength)
    return node.emitError()
           << "frame_length " << length << " is longer than the signal ("
           << signalLength << ")";
  bool onesided = node.getInt("onesided", 1) != 0;
  if (onesided && channels == 2)
    return node.emitError() << "onesided needs a real signal (last "
                               "dimension 1)";
  int64_t frames = (signalLength - length) / *step + 1;
  int64_t bins = onesided ? length / 2 + 1 : length;
  int64_t batch = type.getDimSize(0);

  // frames[b, f, t, c] = signal[b, f * step + t, c] (* window[t]).
  FloatType computeType = getTransformType(type.getElementType());
  MLIRContext *ctx = b.getContext();
  AffineExpr db, df, dt, dc;
  bindDims(ctx, db, df, dt, dc);
  SmallVector<Value> inputs = {signal};
  SmallVector<AffineMap> maps = {
      AffineMap::get(4, 0, {db, df * *step + dt, dc}, ctx)};
  if (window) {
    inputs.push_back(window);
    maps.push_back(AffineMap::get(4, 0, {dt}, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{batch, frames, length, channels}, computeType);
  auto framing = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps,
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value value = convertScalar(nb, nl, args[0], computeType);
        if (window)
          value = arith::MulFOp::create(
              nb, nl, value, convertScalar(nb, nl, args[1], computeType));
        linalg::YieldOp::create(nb, nl, value);
      });
  Value matrix = buildTransformMatrix(b, loc, length, channels, length, bins,
                                      /*inverse=*/false, computeType);
  Value result = applyTransform(b, loc, framing.getResult(0), matrix);
  return SmallVector<Value>{convertTensor(
      b, loc, result, node.resultElementType(0, type.getElementType()))};
}

/// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
/// upper_edge_hertz): the constant [dft_length / 2 + 1, num_mel_bins] of
/// triangular filters between mel-spaced bin edges, computed as ONNX's
/// reference does (the mel edges in f32, the bins floored).
static LoweringResult lowerMelWeightMatrix(NodeLowering &node) {
  OpBuilder &b = node.getBuilder();
  std::optional<int64_t> melBins = getConstantScalar(node, 0);
  std::optional<int64_t> dftLength = getConstantScalar(node, 1);
  std::optional<int64_t> sampleRate = getConstantScalar(node, 2);
  std::optional<SmallVector<double>> lower = node.getConstantFloats(3);
  std::optional<SmallVector<double>> upper = node.getConstantFloats(4);
  if (!melBins || !dftLength || !sampleRate || !lower || !upper ||
      lower->size() != 1 || upper->size() != 1)
    return node.emitError() << "every input must be a constant scalar";
  if (*melBins < 1 || *dftLength < 1 || *sampleRate < 1)
    return node.emitError() << "num_mel_bins, dft_length and sample_rate "
                               "must be positive";
  Type elementType =
      onnxg::getElementType(b.getContext(), node.getInt("output_datatype", 1));
  elementType = node.resultElementType(0, elementType);
  if (!elementType || !isa<FloatType, IntegerType>(elementType))
    return node.emitError() << "output_datatype is not a number type";

  auto toMel = [](float hertz) {
    return 2595.0f * std::log10(1.0f + hertz / 700.0f);
  };
  float lowMel = toMel(float((*lower)[0])), highMel = toMel(float((*upper)[0]));
  float melStep = (highMel - lowMel) / float(*melBins + 2);
  int64_t spectrumBins = *dftLength / 2 + 1;
  SmallVector<int64_t> edges;
  for (int64_t i = 0; i < *melBins + 2; ++i) {
    double mel = double(i) * double(melStep) + double(lowMel);
    double hertz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    edges.push_back(int64_t(
        std::floor(double(*dftLength + 1) * hertz / double(*sampleRate))));
  }
  SmallVector<double> values(spectrumBins * *melBins, 0.0);
  auto set = [&](int64_t row, int64_t column, double value) {
    if (row >= 0 && row < spectrumBins)
      values[row * *melBins + column] = value;
  };
  for (int64_t i = 0; i < *melBins; ++i) {
    int64_t low = edges[i], center = edges[i + 1], high = edges[i + 2];
    if (center == low)
      set(center, i, 1.0);
    for (int64_t j = low; center > low && j <= center; ++j)
      set(j, i, double(j - low) / double(center - low));
    for (int64_t j = center; j < high; ++j)
      set(j, i, double(high - j) / double(high - center));
  }
  auto tensorType =
      RankedTensorType::get({spectrumBins, *melBins}, elementType);
  return SmallVector<Value>{
      createNumberConstant(b, node.getLoc(), tensorType, values)};
}

void amp::lowering::populateSignalLowerings(LoweringTable &table) {
  table.add("", "DFT", lowerDFT);
  table.add("", "STFT", lowerSTFT);
  table.add("", "MelWeightMatrix", lowerMelWeightMatrix);
}
