//===- ContribSchemas.cpp - Types of ONNX Runtime's contrib ops -*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// libonnx has no schema for ONNX Runtime's com.microsoft ops, so ONNX shape
// inference leaves their outputs untyped, and everything they feed; a
// training graph that ONNX Runtime wrote without value_info (the older
// training API's gradient_graph.onnx) then keeps its whole backward FP32.
// The shape-inference child registers a schema per contrib op of the op
// table with ONNX Runtime's typing rule: each output's element type from
// the input it shares a type parameter with, its shape where the rule
// determines it (otherwise the output keeps a rank or stays unranked).
// The schemas accept any inputs and attributes: they type, never check.
//
//===----------------------------------------------------------------------===//

#include "ContribSchemas.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor_proto_util.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>

using namespace onnx;

namespace {
constexpr const char *kMicrosoftDomain = "com.microsoft";
constexpr const char *kATenDomain = "org.pytorch.aten";
/// The largest rank a shape input may give without its values (a bound
/// against corrupt files).
constexpr int64_t kMaxRank = 64;

/// The tensor element type of input `n`; UNDEFINED where it is absent or
/// has none (setOutput then types nothing).
int32_t getElemType(InferenceContext &ctx, size_t n) {
  const TypeProto *type =
      n < ctx.getNumInputs() ? ctx.getInputType(n) : nullptr;
  return type && type->has_tensor_type() ? type->tensor_type().elem_type()
                                         : TensorProto::UNDEFINED;
}

/// Whether output `n` exists (an omitted optional output is still counted).
bool hasOutput(InferenceContext &ctx, size_t n) {
  return n < ctx.getNumOutputs();
}

/// Output `out` gets input `from`'s element type.
void copyElemType(InferenceContext &ctx, size_t out, size_t from) {
  if (hasOutput(ctx, out) && getElemType(ctx, from) != TensorProto::UNDEFINED)
    propagateElemTypeFromInputToOutput(ctx, from, out);
}

/// Output `out` gets input `from`'s shape, where known.
void copyShape(InferenceContext &ctx, size_t out, size_t from) {
  if (hasOutput(ctx, out) && hasInputShape(ctx, from))
    propagateShapeFromInputToOutput(ctx, from, out);
}

/// Output `out` gets input `typeFrom`'s element type and input `shapeFrom`'s
/// shape.
void like(InferenceContext &ctx, size_t out, size_t typeFrom,
          size_t shapeFrom) {
  copyElemType(ctx, out, typeFrom);
  copyShape(ctx, out, shapeFrom);
}

/// A shape's dimensions: a size, a symbolic name, or neither.
using Dims = std::vector<TensorShapeProto::Dimension>;

/// A dimension of size `size`, or an unknown one.
TensorShapeProto::Dimension makeDim(std::optional<int64_t> size) {
  TensorShapeProto::Dimension dim;
  if (size)
    dim.set_dim_value(*size);
  return dim;
}

std::optional<int64_t> getSize(const TensorShapeProto::Dimension &dim) {
  return dim.has_dim_value() ? std::optional(dim.dim_value()) : std::nullopt;
}

/// Output `out` gets the element type `type` and, when given, `dims`.
void setOutput(InferenceContext &ctx, size_t out, int64_t type,
               const std::optional<Dims> &dims) {
  // An attribute may name no type (output_type = 0 or 99): leave it untyped.
  if (!hasOutput(ctx, out) || type == TensorProto::UNDEFINED ||
      !TensorProto_DataType_IsValid(static_cast<int>(type)))
    return;
  updateOutputElemType(ctx, out, static_cast<int32_t>(type));
  if (!dims)
    return;
  TensorShapeProto shape;
  for (const TensorShapeProto::Dimension &dim : *dims)
    *shape.add_dim() = dim;
  updateOutputShape(ctx, out, shape);
}

/// The dimensions of input `n`, when its rank is known.
std::optional<Dims> getDims(InferenceContext &ctx, size_t n) {
  if (!hasInputShape(ctx, n))
    return std::nullopt;
  const auto &dims = getInputShape(ctx, n).dim();
  return Dims(dims.begin(), dims.end());
}

/// The values of the int64 input `n` when they are known (an initializer
/// or a Constant).
std::optional<std::vector<int64_t>> getInt64Data(InferenceContext &ctx,
                                                 size_t n) {
  const TensorProto *data =
      n < ctx.getNumInputs() ? ctx.getInputData(n) : nullptr;
  if (!data)
    return std::nullopt;
  // PyTorch writes an empty list as an empty float tensor.
  bool empty = data->dims_size() == 1 && data->dims(0) == 0;
  if (empty)
    return std::vector<int64_t>();
  if (data->data_type() != TensorProto::INT64)
    return std::nullopt;
  return ParseData<int64_t>(data);
}

/// Output `out` gets input `typeFrom`'s element type and the shape held by
/// the int64 input `shapeInput` (a gradient's "shape of X" input): its
/// values when known, else as many unknown sizes as it has elements.
void likeShapeInput(InferenceContext &ctx, size_t out, size_t typeFrom,
                    size_t shapeInput) {
  copyElemType(ctx, out, typeFrom);
  Dims dims;
  if (std::optional<std::vector<int64_t>> values =
          getInt64Data(ctx, shapeInput)) {
    for (int64_t size : *values)
      dims.push_back(makeDim(size >= 0 ? std::optional(size) : std::nullopt));
  } else if (auto shape = getDims(ctx, shapeInput);
             shape && shape->size() == 1 && getSize((*shape)[0]) &&
             *getSize((*shape)[0]) <= kMaxRank) {
    dims.resize(*getSize((*shape)[0]));
  } else {
    return;
  }
  setOutput(ctx, out, getElemType(ctx, typeFrom), dims);
}

/// Output `out` gets input `typeFrom`'s element type and input
/// `rankFrom`'s rank, its sizes unknown.
void likeRank(InferenceContext &ctx, size_t out, size_t typeFrom,
              size_t rankFrom) {
  copyElemType(ctx, out, typeFrom);
  if (std::optional<Dims> dims = getDims(ctx, rankFrom))
    setOutput(ctx, out, getElemType(ctx, typeFrom), Dims(dims->size()));
}

/// Output 0 is input 0's type and shape: elementwise ops.
void inferLikeFirstInput(InferenceContext &ctx) { like(ctx, 0, 0, 0); }

/// Output 0 is input 0's type and the shape that inputs 0 and 1 share:
/// gradients (dY, X) -> dX of elementwise ops, where a size that dY lacks
/// (after a pooling gradient) X may give; the accumulators (buffer, value).
void inferLikeFirstTwoInputs(InferenceContext &ctx) {
  copyElemType(ctx, 0, 0);
  std::optional<Dims> dims = getDims(ctx, 0), other = getDims(ctx, 1);
  if (!dims)
    dims = other;
  if (!dims || (other && other->size() != dims->size())) {
    copyShape(ctx, 0, 0);
    return;
  }
  for (size_t i = 0; other && i < dims->size(); ++i)
    if (!getSize((*dims)[i]) && getSize((*other)[i]))
      (*dims)[i] = (*other)[i];
  setOutput(ctx, 0, getElemType(ctx, 0), dims);
}

/// A normalization's saved statistic (mean, inverse deviation): X's shape
/// with the normalized axes (`axis` on) of size 1.
void setStatistic(InferenceContext &ctx, size_t out, int64_t type) {
  std::optional<Dims> dims = getDims(ctx, 0);
  if (!dims) {
    setOutput(ctx, out, type, std::nullopt);
    return;
  }
  int64_t rank = dims->size();
  int64_t axis = getAttribute(ctx, "axis", -1);
  if (axis < 0)
    axis += rank;
  for (int64_t i = std::max<int64_t>(axis, 0); i < rank; ++i)
    (*dims)[i] = makeDim(1);
  setOutput(ctx, out, type, dims);
}

/// SimplifiedLayerNormalization(X, scale) -> (Y, inv_std_var?): Y has
/// scale's type (ONNX Runtime's V) and X's shape; the statistic stash_type.
void inferSimplifiedLayerNorm(InferenceContext &ctx) {
  copyElemType(ctx, 0, getElemType(ctx, 1) != TensorProto::UNDEFINED ? 1 : 0);
  copyShape(ctx, 0, 0);
  setStatistic(ctx, 1, getAttribute(ctx, "stash_type", TensorProto::FLOAT));
}

/// (dY, X, W) -> (dX, dW, dB) of a convolution (ConvGrad) or a transposed
/// one: dB has W's output channels.
void inferConvolutionGrad(InferenceContext &ctx, bool transposed) {
  like(ctx, 0, 0, 1);
  like(ctx, 1, 0, 2);
  copyElemType(ctx, 2, 0);
  std::optional<Dims> w = getDims(ctx, 2);
  if (!w || w->size() < 2)
    return;
  TensorShapeProto::Dimension channels = (*w)[transposed ? 1 : 0];
  int64_t group = getAttribute(ctx, "group", 1);
  if (transposed && group != 1)
    channels =
        makeDim(getSize(channels) ? std::optional(*getSize(channels) * group)
                                  : std::nullopt);
  setOutput(ctx, 2, getElemType(ctx, 0), Dims{channels});
}

/// Normalization gradients (dY, X, scale, ...) -> (dX, dscale, dbias?):
/// dX like X in dY's type, the others like scale.
void inferNormalizationGrad(InferenceContext &ctx) {
  like(ctx, 0, 0, 1);
  like(ctx, 1, 2, 2);
  like(ctx, 2, 2, 2);
}

/// SoftmaxCrossEntropyLossInternal(scores, labels, weights?, ignore_index?)
/// -> (loss, log_prob): the loss in output_type (else the scores' type),
/// per label with reduction none, else a scalar.
void inferLossInternal(InferenceContext &ctx) {
  int32_t scores = getElemType(ctx, 0);
  if (scores == TensorProto::UNDEFINED)
    return;
  std::optional<Dims> lossDims =
      getAttribute(ctx, "reduction", "mean") == "none" ? getDims(ctx, 1)
                                                       : Dims();
  setOutput(ctx, 0, getAttribute(ctx, "output_type", scores), lossDims);
  like(ctx, 1, 0, 0);
}

/// SoftmaxCrossEntropyLoss(Internal)Grad(dY, log_prob, labels, ...) ->
/// d_logits: log_prob's shape, in output_type (else log_prob's type).
void inferLossGrad(InferenceContext &ctx) {
  int32_t logProb = getElemType(ctx, 1);
  if (logProb == TensorProto::UNDEFINED)
    return;
  setOutput(ctx, 0, getAttribute(ctx, "output_type", logProb), getDims(ctx, 1));
}

/// BatchNormInternal(X, scale, B, mean, var) -> (Y, running_mean,
/// running_var, saved_mean, saved_inv_std): Y like X, the statistics like
/// the running mean.
void inferBatchNormInternal(InferenceContext &ctx) {
  like(ctx, 0, 0, 0);
  for (size_t out = 1; out < 5; ++out)
    like(ctx, out, 3, 3);
}

/// ConcatTraining(inputs...) -> (concat_result, per_input_length).
void inferConcatTraining(InferenceContext &ctx) {
  copyElemType(ctx, 0, 0);
  setOutput(ctx, 1, TensorProto::INT64,
            Dims{makeDim(static_cast<int64_t>(ctx.getNumInputs()))});
  Dims result;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    std::optional<Dims> dims = getDims(ctx, i);
    if (!dims || (i && dims->size() != result.size()))
      return;
    int64_t rank = dims->size();
    int64_t axis = getAttribute(ctx, "axis", 0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return;
    if (!i) {
      result = *dims;
      continue;
    }
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<int64_t> have = getSize(result[d]),
                             size = getSize((*dims)[d]);
      if (d == axis)
        result[d] =
            makeDim(have && size ? std::optional(*have + *size) : std::nullopt);
      else if (!have && size)
        result[d] = (*dims)[d];
    }
  }
  if (!result.empty())
    setOutput(ctx, 0, getElemType(ctx, 0), result);
}

/// SplitTraining(input, split, ...) -> outputs: the input's type; the
/// split sizes where known.
void inferSplitTraining(InferenceContext &ctx) {
  std::optional<Dims> dims = getDims(ctx, 0);
  std::optional<std::vector<int64_t>> split = getInt64Data(ctx, 1);
  int64_t axis = getAttribute(ctx, "axis", 0);
  if (dims && axis < 0)
    axis += dims->size();
  for (size_t out = 0; out < ctx.getNumOutputs(); ++out) {
    copyElemType(ctx, out, 0);
    if (!dims || axis < 0 || axis >= static_cast<int64_t>(dims->size()))
      continue;
    Dims part = *dims;
    part[axis] = makeDim(split && split->size() == ctx.getNumOutputs()
                             ? std::optional((*split)[out])
                             : std::nullopt);
    setOutput(ctx, out, getElemType(ctx, 0), part);
  }
}

/// BitmaskDropout(data, ratio?, training_mode?) -> (output, mask): the
/// mask packs a bit per element into uint32 words.
void inferBitmaskDropout(InferenceContext &ctx) {
  like(ctx, 0, 0, 0);
  std::optional<Dims> dims = getDims(ctx, 0);
  if (!dims) {
    setOutput(ctx, 1, TensorProto::UINT32, std::nullopt);
    return;
  }
  std::optional<int64_t> count = 1;
  for (const TensorShapeProto::Dimension &dim : *dims)
    count = count && getSize(dim) ? std::optional(*count * *getSize(dim))
                                  : std::nullopt;
  setOutput(
      ctx, 1, TensorProto::UINT32,
      Dims{makeDim(count ? std::optional((*count + 31) / 32) : std::nullopt)});
}

/// Output 0 like input 0, output 1 a bool mask of its shape: BiasDropout,
/// FakeQuant.
void inferWithBoolMask(InferenceContext &ctx) {
  like(ctx, 0, 0, 0);
  setOutput(ctx, 1, TensorProto::BOOL, getDims(ctx, 0));
}

/// FusedMatMul(A, B) -> Y: MatMul after transA and transB (the batch
/// transposes leave the shape unknown).
void inferFusedMatMul(InferenceContext &ctx) {
  copyElemType(ctx, 0, 0);
  std::optional<Dims> a = getDims(ctx, 0), b = getDims(ctx, 1);
  if (!a || !b || a->size() < 2 || b->size() < 2 ||
      getAttribute(ctx, "transBatchA", 0) ||
      getAttribute(ctx, "transBatchB", 0))
    return;
  if (getAttribute(ctx, "transA", 0))
    std::swap((*a)[a->size() - 1], (*a)[a->size() - 2]);
  if (getAttribute(ctx, "transB", 0))
    std::swap((*b)[b->size() - 1], (*b)[b->size() - 2]);
  // The batch dimensions broadcast, aligned from the right.
  size_t batchA = a->size() - 2, batchB = b->size() - 2;
  size_t batch = std::max(batchA, batchB);
  Dims dims(batch);
  for (size_t i = 0; i < batch; ++i) {
    TensorShapeProto::Dimension x =
        i + batchA >= batch ? (*a)[i + batchA - batch] : makeDim(1);
    TensorShapeProto::Dimension y =
        i + batchB >= batch ? (*b)[i + batchB - batch] : makeDim(1);
    if (getSize(x) == 1)
      dims[i] = y;
    else if (getSize(y) == 1 || (getSize(x) && getSize(x) == getSize(y)))
      dims[i] = x;
  }
  dims.push_back((*a)[a->size() - 2]);
  dims.push_back(b->back());
  setOutput(ctx, 0, getElemType(ctx, 0), dims);
}

/// ONNX Runtime's recurrent training ops, all outputs in X's type. With
/// X [steps, batch, size], hidden_size H and D directions: LSTMTraining
/// returns every step's hidden state [steps, D, batch, H], the last hidden
/// and cell states [D, batch, H], every step's cell state and gates
/// [steps, D, batch, 4H]; GRUTraining the hidden states and the gates
/// [steps, D, batch, 3H]; LSTMGrad and GRUGrad the gradients of X, W, R
/// (their shapes), of B [D, 2 gates H], of the initial states and (LSTM)
/// of the peepholes [D, 3H].
void inferRecurrent(InferenceContext &ctx, bool lstm, bool gradient) {
  for (size_t out = 0; out < ctx.getNumOutputs(); ++out)
    copyElemType(ctx, out, 0);
  std::optional<Dims> x = getDims(ctx, 0);
  int64_t hidden = getAttribute(ctx, "hidden_size", 0);
  int32_t type = getElemType(ctx, 0);
  if (!x || x->size() != 3 || hidden <= 0 || type == TensorProto::UNDEFINED)
    return;
  TensorShapeProto::Dimension steps = (*x)[0], batch = (*x)[1];
  TensorShapeProto::Dimension directions = makeDim(
      getAttribute(ctx, "direction", "forward") == "bidirectional" ? 2 : 1);
  int64_t gates = lstm ? 4 : 3;
  auto perStep = [&](int64_t width) {
    return Dims{steps, directions, batch, makeDim(width)};
  };
  Dims state = {directions, batch, makeDim(hidden)};
  if (!gradient) {
    std::vector<Dims> outputs = {perStep(hidden), state};
    if (lstm)
      outputs.insert(outputs.end(), {state, perStep(hidden)});
    outputs.push_back(perStep(gates * hidden));
    for (size_t out = 0; out < outputs.size(); ++out)
      setOutput(ctx, out, type, outputs[out]);
    return;
  }
  for (size_t out = 0; out < 3; ++out)
    copyShape(ctx, out, out);
  setOutput(ctx, 3, type, Dims{directions, makeDim(2 * gates * hidden)});
  setOutput(ctx, 4, type, state);
  if (lstm) {
    setOutput(ctx, 5, type, state);
    setOutput(ctx, 6, type, Dims{directions, makeDim(3 * hidden)});
  }
}

/// InPlaceAccumulatorV2(buffer, value, overwrite?) -> (updated, buffer').
void inferAccumulatorV2(InferenceContext &ctx) {
  setOutput(ctx, 0, TensorProto::BOOL, Dims{makeDim(1)});
  like(ctx, 1, 0, 0);
}

/// AdamOptimizer(R, T, weights, gradients, moment_1, moment_2, fp16
/// weights?, ...) -> (new_T, new_moment_1, new_moment_2, new_weights?,
/// new_gradients?, new fp16 weights?).
void inferAdamOptimizer(InferenceContext &ctx) {
  const size_t inputOf[] = {1, 4, 5, 2, 3, 6};
  for (size_t out = 0; out < std::size(inputOf); ++out)
    like(ctx, out, inputOf[out], inputOf[out]);
}

/// BroadcastGradientArgs(a_shape, b_shape) -> (a_axes, b_axes).
void inferBroadcastGradientArgs(InferenceContext &ctx) {
  for (size_t out = 0; out < 2; ++out)
    setOutput(ctx, out, TensorProto::INT64, Dims(1));
}

/// YieldOp(forward outputs...) -> their gradients: the inputs named in
/// non_differentiable_outputs have none; those in full_shape_outputs have
/// their input's shape, the others its type only.
void inferYield(InferenceContext &ctx) {
  auto getInts = [&](const char *name) {
    std::vector<int64_t> values;
    if (const AttributeProto *attr = ctx.getAttribute(name))
      values.assign(attr->ints().begin(), attr->ints().end());
    return values;
  };
  std::vector<int64_t> skipped = getInts("non_differentiable_outputs");
  std::vector<int64_t> fullShape = getInts("full_shape_outputs");
  auto contains = [](const std::vector<int64_t> &values, int64_t value) {
    return std::find(values.begin(), values.end(), value) != values.end();
  };
  size_t out = 0;
  for (size_t in = 0; in < ctx.getNumInputs(); ++in) {
    if (contains(skipped, in))
      continue;
    copyElemType(ctx, out, in);
    if (contains(fullShape, in))
      copyShape(ctx, out, in);
    ++out;
  }
}

/// Recv(signal, remote) -> (signal, data...) in element_types.
void inferRecv(InferenceContext &ctx) {
  setOutput(ctx, 0, TensorProto::BOOL, Dims());
  if (const AttributeProto *types = ctx.getAttribute("element_types"))
    for (int i = 0; i < types->ints_size(); ++i)
      setOutput(ctx, i + 1, types->ints(i), std::nullopt);
}

/// Send(signal, remote, data...) -> signal.
void inferSend(InferenceContext &ctx) {
  setOutput(ctx, 0, TensorProto::BOOL, Dims());
}

/// The operator of an ATen node whose `operator` is `name` and whose
/// `overload_name` is `overload`, as the typing rules name it: "aten::"
/// dropped, max and min over a dim as "max.dim" and "min.dim"; "" for an
/// overload ORTModule does not export (max and min over a dim, upsampling
/// by sizes or scales, bitwise_or of tensors), which stays untyped.
std::string getATenOperatorName(std::string name, const std::string &overload) {
  if (name.rfind("aten::", 0) == 0)
    name = name.substr(6);
  if (overload.empty())
    return name;
  if (overload == "dim" && (name == "max" || name == "min"))
    return name + ".dim";
  if ((overload == "vec" && name.rfind("upsample_nearest", 0) == 0) ||
      (overload == "Tensor" && name == "bitwise_or"))
    return name;
  return "";
}

/// The ATen operator the node being typed runs (getATenOperatorName).
std::string getATenOperator(InferenceContext &ctx) {
  return getATenOperatorName(getAttribute(ctx, "operator", ""),
                             getAttribute(ctx, "overload_name", ""));
}

/// The input that holds the sizes of the ATen gradient `op` where it takes
/// them (embedding_backward's num_weights, its rows; the others' input
/// sizes), or -1.
int getATenSizesInput(const std::string &op) {
  bool upsample = op.rfind("upsample_nearest", 0) == 0 && op.size() > 9 &&
                  op.substr(op.size() - 9) == "_backward";
  if (op == "embedding_backward" || upsample)
    return 2;
  if (op == "value_selecting_reduction_backward")
    return 3;
  if (op == "diagonal_backward" || op == "unfold_backward")
    return 1;
  return -1;
}

/// The axis that the constant int64 input `n` names in a rank `rank`
/// (negative from the end), or nullopt.
std::optional<int64_t> getAxisData(InferenceContext &ctx, size_t n,
                                   int64_t rank) {
  std::optional<std::vector<int64_t>> dim = getInt64Data(ctx, n);
  if (!dim || dim->size() != 1)
    return std::nullopt;
  int64_t axis = (*dim)[0] < 0 ? (*dim)[0] + rank : (*dim)[0];
  return axis >= 0 && axis < rank ? std::optional(axis) : std::nullopt;
}

/// Output 0 of a 2-D pool over input 0 (N, C, H, W) whose int64 inputs
/// `kernel`, `stride`, `padding` (and `dilation`, when given) hold two
/// values each, in `type`; PyTorch's sizes (floor, or ceil without windows
/// that start in the padding).
void setPoolOutput(InferenceContext &ctx, size_t out, int32_t type,
                   size_t kernel, size_t stride, size_t padding,
                   std::optional<size_t> dilation, bool ceilMode) {
  std::optional<Dims> x = getDims(ctx, 0);
  if (!x || x->size() != 4)
    return;
  auto k = getInt64Data(ctx, kernel), s = getInt64Data(ctx, stride),
       p = getInt64Data(ctx, padding);
  std::optional<std::vector<int64_t>> d =
      dilation ? getInt64Data(ctx, *dilation) : std::vector<int64_t>{1, 1};
  Dims dims{(*x)[0], (*x)[1]};
  for (int i = 0; i < 2; ++i) {
    std::optional<int64_t> size = getSize((*x)[2 + i]);
    if (!size || !k || !s || !p || !d || k->size() != 2 || p->size() != 2 ||
        d->size() != 2 || (s->size() != 2 && !s->empty())) {
      dims.push_back(makeDim(std::nullopt));
      continue;
    }
    // An empty stride is the kernel's.
    int64_t step = s->empty() ? (*k)[i] : (*s)[i];
    int64_t span = *size + 2 * (*p)[i] - (*d)[i] * ((*k)[i] - 1) - 1;
    if (step <= 0 || span < 0) {
      dims.push_back(makeDim(std::nullopt));
      continue;
    }
    int64_t outSize = (span + (ceilMode ? step - 1 : 0)) / step + 1;
    if (ceilMode && (outSize - 1) * step >= *size + (*p)[i])
      --outSize;
    dims.push_back(makeDim(outSize));
  }
  setOutput(ctx, out, type, dims);
}

/// Whether the 0-d bool or int input `n` is a known nonzero value.
bool isTrue(InferenceContext &ctx, size_t n) {
  const TensorProto *data =
      n < ctx.getNumInputs() ? ctx.getInputData(n) : nullptr;
  if (!data)
    return false;
  if (data->data_type() == TensorProto::BOOL) {
    const std::string &raw = data->raw_data();
    return data->has_raw_data()
               ? raw.size() == 1 && raw[0] != 0
               : data->int32_data_size() == 1 && data->int32_data(0) != 0;
  }
  std::optional<std::vector<int64_t>> values = getInt64Data(ctx, n);
  return values && values->size() == 1 && (*values)[0] != 0;
}

/// The dimensions of input 0 reduced over the constant dim input `dimInput`
/// (kept as 1 with the constant keepdim input `keepInput`).
std::optional<Dims> getReducedDims(InferenceContext &ctx, size_t dimInput,
                                   size_t keepInput) {
  std::optional<Dims> dims = getDims(ctx, 0);
  std::optional<int64_t> axis =
      dims ? getAxisData(ctx, dimInput, dims->size()) : std::nullopt;
  if (!axis)
    return std::nullopt;
  if (isTrue(ctx, keepInput))
    (*dims)[*axis] = makeDim(1);
  else
    dims->erase(dims->begin() + *axis);
  return dims;
}

/// The float values of input `n` (float or double) when known.
std::optional<std::vector<double>> getFloatData(InferenceContext &ctx,
                                                size_t n) {
  const TensorProto *data =
      n < ctx.getNumInputs() ? ctx.getInputData(n) : nullptr;
  if (!data)
    return std::nullopt;
  std::vector<double> values;
  if (data->data_type() == TensorProto::FLOAT)
    for (float value : ParseData<float>(data))
      values.push_back(value);
  else if (data->data_type() == TensorProto::DOUBLE)
    values = ParseData<double>(data);
  else
    return std::nullopt;
  return values;
}

/// org.pytorch.aten ATen, as ONNX Runtime's ATen kernel runs it for the
/// operators that ORTModule exports and differentiates (docs/Lowering.md,
/// "ATen"); other operators stay untyped.
void inferATen(InferenceContext &ctx) {
  std::string op = getATenOperator(ctx);
  if (!hasOutput(ctx, 0))
    return;
  int32_t first = getElemType(ctx, 0);
  if (op == "embedding") {
    // (weight, indices, padding_idx, scale_grad_by_freq, sparse).
    std::optional<Dims> weight = getDims(ctx, 0), indices = getDims(ctx, 1);
    std::optional<Dims> dims;
    if (weight && indices && weight->size() == 2) {
      dims = *indices;
      dims->push_back((*weight)[1]);
    }
    setOutput(ctx, 0, first, dims);
  } else if (op == "embedding_backward") {
    // (grad, indices, num_weights, padding_idx, scale_grad_by_freq,
    // sparse): [num_weights, grad's last size].
    std::optional<Dims> grad = getDims(ctx, 0);
    std::optional<std::vector<int64_t>> rows = getInt64Data(ctx, 2);
    std::optional<Dims> dims;
    if (grad && !grad->empty())
      dims = Dims{makeDim(rows && rows->size() == 1 ? std::optional((*rows)[0])
                                                    : std::nullopt),
                  grad->back()};
    setOutput(ctx, 0, first, dims);
  } else if (op == "max_pool2d_with_indices") {
    // (self, kernel_size, stride, padding, dilation, ceil_mode) ->
    // (values, indices in each plane).
    bool ceilMode = isTrue(ctx, 5);
    setPoolOutput(ctx, 0, first, 1, 2, 3, 4, ceilMode);
    setPoolOutput(ctx, 1, TensorProto::INT64, 1, 2, 3, 4, ceilMode);
  } else if (op == "avg_pool2d") {
    // (self, kernel_size, stride, padding, ceil_mode, count_include_pad,
    // divisor_override).
    setPoolOutput(ctx, 0, first, 1, 2, 3, std::nullopt, isTrue(ctx, 4));
  } else if (op == "_adaptive_avg_pool2d") {
    // (self, output_size).
    std::optional<Dims> x = getDims(ctx, 0);
    std::optional<std::vector<int64_t>> sizes = getInt64Data(ctx, 1);
    std::optional<Dims> dims;
    if (x && x->size() == 4 && sizes && sizes->size() == 2)
      dims = Dims{(*x)[0], (*x)[1], makeDim((*sizes)[0]), makeDim((*sizes)[1])};
    setOutput(ctx, 0, first, dims);
  } else if (op == "max_pool2d_with_indices_backward" ||
             op == "avg_pool2d_backward" ||
             op == "_adaptive_avg_pool2d_backward") {
    // (grad, self, ...) -> the gradient of self.
    like(ctx, 0, 0, 1);
  } else if (op == "numpy_T") {
    std::optional<Dims> dims = getDims(ctx, 0);
    if (dims)
      std::reverse(dims->begin(), dims->end());
    setOutput(ctx, 0, first, dims);
  } else if (op == "argmax") {
    // (self, dim?, keepdim): without a dim, of the flattened self.
    bool hasDim = ctx.getNumInputs() > 1 && ctx.getInputType(1);
    std::optional<Dims> dims = getDims(ctx, 0);
    if (dims && !hasDim)
      dims = isTrue(ctx, 2) ? Dims(dims->size(), makeDim(1)) : Dims();
    else
      dims = getReducedDims(ctx, 1, 2);
    setOutput(ctx, 0, TensorProto::INT64, dims);
  } else if (op == "max" || op == "min") {
    // (self): the extreme of all elements.
    setOutput(ctx, 0, first, Dims());
  } else if (op == "max.dim" || op == "min.dim") {
    // (self, dim, keepdim) -> (values, indices).
    std::optional<Dims> dims = getReducedDims(ctx, 1, 2);
    setOutput(ctx, 0, first, dims);
    setOutput(ctx, 1, TensorProto::INT64, dims);
  } else if (int sizes = getATenSizesInput(op); sizes >= 0) {
    // Gradients of their input's sizes: value_selecting_reduction_backward
    // (grad, dim, indices, sizes, keepdim), upsample_nearest*_backward
    // (grad, output_size, input_size, scales...), diagonal_backward and
    // unfold_backward (grad, input_sizes, ...).
    likeShapeInput(ctx, 0, 0, sizes);
  } else if (op.rfind("upsample_nearest", 0) == 0) {
    // (self, output_size?, scale_factors?): N, C and the output sizes, or
    // the sizes times the scales (floor).
    std::optional<Dims> x = getDims(ctx, 0);
    std::optional<std::vector<int64_t>> sizes = getInt64Data(ctx, 1);
    std::optional<std::vector<double>> scales = getFloatData(ctx, 2);
    if (!x || x->size() < 3) {
      setOutput(ctx, 0, first, std::nullopt);
      return;
    }
    Dims dims{(*x)[0], (*x)[1]};
    for (size_t i = 2; i < x->size(); ++i) {
      std::optional<int64_t> size = getSize((*x)[i]);
      if (sizes && sizes->size() == x->size() - 2)
        dims.push_back(makeDim((*sizes)[i - 2]));
      else if (scales && scales->size() == x->size() - 2 && size)
        dims.push_back(makeDim(
            static_cast<int64_t>(std::floor(*size * (*scales)[i - 2]))));
      else
        dims.push_back(makeDim(std::nullopt));
    }
    setOutput(ctx, 0, first, dims);
  } else if (op == "native_group_norm") {
    // (input, weight, bias, N, C, HxW, group, eps) -> (Y, mean, rstd):
    // the statistics [N, group].
    like(ctx, 0, 0, 0);
    std::optional<Dims> x = getDims(ctx, 0);
    std::optional<std::vector<int64_t>> group = getInt64Data(ctx, 6);
    std::optional<Dims> statistics;
    if (x && !x->empty() && group && group->size() == 1)
      statistics = Dims{(*x)[0], makeDim((*group)[0])};
    setOutput(ctx, 1, first, statistics);
    setOutput(ctx, 2, first, statistics);
  } else if (op == "bitwise_or") {
    // (self, other): broadcast.
    copyElemType(ctx, 0, 0);
    if (hasInputShape(ctx, 0) && hasInputShape(ctx, 1))
      bidirectionalBroadcastShapeInference(getInputShape(ctx, 0),
                                           getInputShape(ctx, 1),
                                           *getOutputShape(ctx, 0));
  } else if (op == "multinomial") {
    // (self, num_samples, ...): int64 draws, num_samples per row.
    std::optional<Dims> x = getDims(ctx, 0);
    std::optional<std::vector<int64_t>> samples = getInt64Data(ctx, 1);
    if (x && !x->empty() && samples && samples->size() == 1) {
      x->back() = makeDim((*samples)[0]);
      setOutput(ctx, 0, TensorProto::INT64, x);
    }
  } else if (op == "diagonal") {
    // (self, offset, dim1, dim2): dim1 and dim2 removed, the diagonal's
    // length appended.
    std::optional<Dims> x = getDims(ctx, 0);
    std::optional<std::vector<int64_t>> offset = getInt64Data(ctx, 1);
    if (!x || !offset || offset->size() != 1)
      return;
    auto rank = static_cast<int64_t>(x->size());
    std::optional<int64_t> dim1 = getAxisData(ctx, 2, rank),
                           dim2 = getAxisData(ctx, 3, rank);
    if (!dim1 || !dim2 || *dim1 == *dim2)
      return;
    int64_t a = *dim1, b = *dim2;
    std::optional<int64_t> rows = getSize((*x)[a]), columns = getSize((*x)[b]);
    Dims dims;
    for (int64_t i = 0; i < rank; ++i)
      if (i != a && i != b)
        dims.push_back((*x)[i]);
    int64_t shift = (*offset)[0];
    dims.push_back(
        makeDim(rows && columns
                    ? std::optional(std::max<int64_t>(
                          0, shift >= 0 ? std::min(*rows, *columns - shift)
                                        : std::min(*rows + shift, *columns)))
                    : std::nullopt));
    setOutput(ctx, 0, first, dims);
  } else if (op == "unfold") {
    // (self, dimension, size, step): the dimension's windows, then a last
    // axis of size.
    std::optional<Dims> x = getDims(ctx, 0);
    std::optional<std::vector<int64_t>> size = getInt64Data(ctx, 2),
                                        step = getInt64Data(ctx, 3);
    std::optional<int64_t> axis =
        x ? getAxisData(ctx, 1, x->size()) : std::nullopt;
    if (!axis || !size || !step || size->size() != 1 || step->size() != 1 ||
        (*step)[0] <= 0 || (*size)[0] <= 0)
      return;
    std::optional<int64_t> length = getSize((*x)[*axis]);
    (*x)[*axis] =
        makeDim(length && *length >= (*size)[0]
                    ? std::optional((*length - (*size)[0]) / (*step)[0] + 1)
                    : std::nullopt);
    x->push_back(makeDim((*size)[0]));
    setOutput(ctx, 0, first, x);
  } else if (op == "binary_cross_entropy_with_logits") {
    // (self, target, weight?, pos_weight?, reduction): reduced (mean, sum)
    // to a scalar, or none.
    std::optional<std::vector<int64_t>> reduction = getInt64Data(ctx, 4);
    if (reduction && reduction->size() == 1 && (*reduction)[0] != 0)
      setOutput(ctx, 0, first, Dims());
    else if (reduction)
      like(ctx, 0, 0, 0);
  } else if (op == "binary_cross_entropy_with_logits_backward") {
    // (grad, self, ...): like self.
    like(ctx, 0, 1, 1);
  } else if (op == "native_group_norm_backward") {
    // (dY, X, mean, rstd, weight, ...) -> (dX, dweight, dbias).
    like(ctx, 0, 0, 1);
    like(ctx, 1, 0, 4);
    like(ctx, 2, 0, 4);
  }
}

struct ContribOp {
  const char *domain;
  const char *name;
  int sinceVersion;
  InferenceFunction infer;
};

/// The rules, per op of the op table's com.microsoft rows (and ONNX
/// Runtime's default-domain pooling gradients) whose outputs ONNX Runtime
/// types.
const ContribOp kContribOps[] = {
    // Output 0 like input 0 (and 1).
    {kMicrosoftDomain, "Gelu", 1, inferLikeFirstInput},
    {kMicrosoftDomain, "FastGelu", 1, inferLikeFirstInput},
    {kMicrosoftDomain, "BiasGelu", 1, inferLikeFirstInput},
    {kMicrosoftDomain, "QuickGelu", 1, inferLikeFirstInput},
    {kMicrosoftDomain, "Scale", 1, inferLikeFirstInput},
    {kMicrosoftDomain, "Trilu", 1, inferLikeFirstInput},
    {kMicrosoftDomain, "ReluGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "LeakyReluGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "TanhGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "SigmoidGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "GeluGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "FastGeluGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "QuickGeluGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "BiasGeluGrad_dX", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "BiasFastGeluGrad_dX", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "SoftmaxGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "SoftmaxGrad_13", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "LogSoftmaxGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "LogSoftmaxGrad_13", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "DropoutGrad", 1, inferLikeFirstTwoInputs},
    {kMicrosoftDomain, "BitmaskDropoutGrad", 1, inferLikeFirstInput},
    {kMicrosoftDomain, "FakeQuantGrad", 1, inferLikeFirstInput},
    {kMicrosoftDomain, "InPlaceAccumulator", 1, inferLikeFirstTwoInputs},
    // Gradients shaped like a forward input.
    {kMicrosoftDomain, "DivGrad", 1,
     [](InferenceContext &ctx) {
       like(ctx, 0, 0, 1);
       like(ctx, 1, 0, 2);
     }},
    {kMicrosoftDomain, "ResizeGrad", 1,
     [](InferenceContext &ctx) { like(ctx, 0, 0, 1); }},
    {kMicrosoftDomain, "ConvGrad", 1,
     [](InferenceContext &ctx) { inferConvolutionGrad(ctx, false); }},
    {kMicrosoftDomain, "ConvTransposeGrad", 1,
     [](InferenceContext &ctx) { inferConvolutionGrad(ctx, true); }},
    {kMicrosoftDomain, "BatchNormalizationGrad", 1, inferNormalizationGrad},
    {kMicrosoftDomain, "LayerNormalizationGrad", 1, inferNormalizationGrad},
    {kMicrosoftDomain, "SimplifiedLayerNormalizationGrad", 1,
     inferNormalizationGrad},
    {kMicrosoftDomain, "SoftmaxCrossEntropyLossGrad", 1, inferLossGrad},
    {kMicrosoftDomain, "SoftmaxCrossEntropyLossInternalGrad", 1, inferLossGrad},
    // Gradients shaped by a "shape of X" input.
    {kMicrosoftDomain, "GatherGrad", 1,
     [](InferenceContext &ctx) { likeShapeInput(ctx, 0, 2, 0); }},
    {kMicrosoftDomain, "GatherElementsGrad", 1,
     [](InferenceContext &ctx) { likeShapeInput(ctx, 0, 0, 1); }},
    {kMicrosoftDomain, "GatherNDGrad", 1,
     [](InferenceContext &ctx) { likeShapeInput(ctx, 0, 2, 0); }},
    {kMicrosoftDomain, "SliceGrad", 1,
     [](InferenceContext &ctx) { likeShapeInput(ctx, 0, 0, 1); }},
    // Pooling gradients: X's sizes are not dY's to give.
    {"", "AveragePoolGrad", 9,
     [](InferenceContext &ctx) { likeRank(ctx, 0, 0, 0); }},
    {"", "MaxPoolGrad", 9,
     [](InferenceContext &ctx) { likeRank(ctx, 0, 0, 0); }},
    // Forward ops.
    {kMicrosoftDomain, "FusedMatMul", 1, inferFusedMatMul},
    {kMicrosoftDomain, "SimplifiedLayerNormalization", 1,
     inferSimplifiedLayerNorm},
    {kMicrosoftDomain, "BatchNormInternal", 1, inferBatchNormInternal},
    {kMicrosoftDomain, "SoftmaxCrossEntropyLossInternal", 1, inferLossInternal},
    {kMicrosoftDomain, "ConcatTraining", 1, inferConcatTraining},
    {kMicrosoftDomain, "SplitTraining", 1, inferSplitTraining},
    {kMicrosoftDomain, "BitmaskDropout", 1, inferBitmaskDropout},
    {kMicrosoftDomain, "BiasDropout", 1, inferWithBoolMask},
    {kMicrosoftDomain, "FakeQuant", 1, inferWithBoolMask},
    {kMicrosoftDomain, "LSTMTraining", 1,
     [](InferenceContext &ctx) { inferRecurrent(ctx, true, false); }},
    {kMicrosoftDomain, "GRUTraining", 1,
     [](InferenceContext &ctx) { inferRecurrent(ctx, false, false); }},
    {kMicrosoftDomain, "LSTMGrad", 1,
     [](InferenceContext &ctx) { inferRecurrent(ctx, true, true); }},
    {kMicrosoftDomain, "GRUGrad", 1,
     [](InferenceContext &ctx) { inferRecurrent(ctx, false, true); }},
    // Training runtime ops.
    {kMicrosoftDomain, "InPlaceAccumulatorV2", 1, inferAccumulatorV2},
    {kMicrosoftDomain, "AdamOptimizer", 1, inferAdamOptimizer},
    {kMicrosoftDomain, "BroadcastGradientArgs", 1, inferBroadcastGradientArgs},
    {kMicrosoftDomain, "YieldOp", 1, inferYield},
    {kMicrosoftDomain, "Send", 1, inferSend},
    {kMicrosoftDomain, "Recv", 1, inferRecv},
    {kATenDomain, "ATen", 1, inferATen},
};
} // namespace

void mlir::onnxg::registerContribSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // libonnx registers schemas only in the domains it knows.
    auto &domains = OpSchemaRegistry::DomainToVersionRange::Instance();
    for (const char *domain : {kMicrosoftDomain, kATenDomain})
      if (!domains.Map().count(domain))
        domains.AddDomainToVersion(domain, 1, 1);
    std::vector<std::string> anyType = OpSchema::all_tensor_types_with_bfloat();
    for (const ContribOp &op : kContribOps) {
      // A libonnx that knows the op keeps its own schema.
      if (OpSchemaRegistry::Schema(op.name, op.sinceVersion, op.domain))
        continue;
      RegisterSchema(OpSchema()
                         .SetName(op.name)
                         .SetDomain(op.domain)
                         .SinceVersion(op.sinceVersion)
                         .Input(0, "inputs", "", "T", OpSchema::Variadic,
                                /*is_homogeneous=*/false, /*min_arity=*/0)
                         .Output(0, "outputs", "", "T", OpSchema::Variadic,
                                 /*is_homogeneous=*/false, /*min_arity=*/0)
                         .TypeConstraint("T", anyType, "")
                         .AllowUncheckedAttributes()
                         .TypeAndShapeInferenceFunction(op.infer));
    }
  });
}

/// Whether `type` is a tensor type with every size known.
static bool hasStaticShape(const TypeProto &type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return false;
  for (const TensorShapeProto::Dimension &dim :
       type.tensor_type().shape().dim())
    if (!dim.has_dim_value())
      return false;
  return true;
}

/// The sizes of a static tensor type.
static std::vector<int64_t> getSizes(const TypeProto &type) {
  std::vector<int64_t> sizes;
  for (const TensorShapeProto::Dimension &dim :
       type.tensor_type().shape().dim())
    sizes.push_back(dim.dim_value());
  return sizes;
}

/// A node's attributes, serialized and sorted, to compare two nodes'.
static std::set<std::string> getAttributeKeys(const NodeProto &node) {
  std::set<std::string> keys;
  for (const AttributeProto &attr : node.attribute())
    keys.insert(attr.SerializeAsString());
  return keys;
}

/// Whether `node` is ONNX Runtime's MaxPoolGrad or AveragePoolGrad.
static bool isPoolingGradient(const NodeProto &node) {
  return (node.op_type() == "MaxPoolGrad" ||
          node.op_type() == "AveragePoolGrad") &&
         (node.domain().empty() || node.domain() == "ai.onnx");
}

namespace {
/// The types and producers of a graph's values, to type outputs that shape
/// inference could not from what produced their inputs.
class GraphTypes {
public:
  explicit GraphTypes(GraphProto &graph) : graph(graph) {
    for (ValueInfoProto &info : *graph.mutable_input())
      types[info.name()] = info.mutable_type();
    for (ValueInfoProto &info : *graph.mutable_value_info())
      types[info.name()] = info.mutable_type();
    // Shape inference merges what it finds into the outputs' types.
    for (ValueInfoProto &info : *graph.mutable_output())
      types[info.name()] = info.mutable_type();
    for (const NodeProto &node : graph.node())
      for (const std::string &output : node.output())
        producers[output] = &node;
  }

  /// The type of `name` when it is a tensor with every size known.
  const TypeProto *getStaticType(const std::string &name) const {
    auto it = types.find(name);
    return it != types.end() && hasStaticShape(*it->second) ? it->second
                                                            : nullptr;
  }

  /// The node that produces `name`, or null.
  const NodeProto *getProducer(const std::string &name) const {
    auto it = producers.find(name);
    return it != producers.end() ? it->second : nullptr;
  }

  /// Gives `name` the type `elementType` of `sizes`.
  void setType(const std::string &name, int32_t elementType,
               const std::vector<int64_t> &sizes) {
    TypeProto type;
    type.mutable_tensor_type()->set_elem_type(elementType);
    for (int64_t size : sizes)
      type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(
          size);
    auto it = types.find(name);
    if (it != types.end()) {
      *it->second = type;
      return;
    }
    ValueInfoProto *info = graph.add_value_info();
    info->set_name(name);
    *info->mutable_type() = type;
    types[name] = info->mutable_type();
  }

private:
  GraphProto &graph;
  std::map<std::string, TypeProto *> types;
  std::map<std::string, const NodeProto *> producers;
};
} // namespace

bool mlir::onnxg::typePoolingGradients(ModelProto &model) {
  GraphProto &graph = *model.mutable_graph();
  // Every import runs this: without a pooling gradient, no maps.
  if (std::none_of(graph.node().begin(), graph.node().end(), isPoolingGradient))
    return false;
  GraphTypes types(graph);
  auto staticType = [&](const std::string &name) {
    return types.getStaticType(name);
  };
  bool changed = false;
  for (const NodeProto &node : graph.node()) {
    bool isMax = node.op_type() == "MaxPoolGrad", isAverage = !isMax;
    if (!isPoolingGradient(node) || node.input_size() < 1 ||
        node.output_size() < 1 || node.output(0).empty() ||
        staticType(node.output(0)))
      continue;
    const TypeProto *dy = staticType(node.input(0));
    if (!dy)
      continue;
    // X: the input of the forward pool. MaxPool's is the one whose Indices
    // the gradient reads; AveragePool's the one with the gradient's
    // attributes whose output has dY's shape, when all such agree.
    std::set<std::vector<int64_t>> xShapes;
    if (isMax && node.input_size() > 1) {
      const NodeProto *pool = types.getProducer(node.input(1));
      if (pool && pool->op_type() == "MaxPool" && pool->output_size() > 1 &&
          pool->output(1) == node.input(1))
        if (const TypeProto *x = staticType(pool->input(0)))
          xShapes.insert(getSizes(*x));
    }
    if (isAverage) {
      std::set<std::string> attributes = getAttributeKeys(node);
      for (const NodeProto &forward : graph.node()) {
        if (forward.op_type() != "AveragePool" || !forward.output_size() ||
            getAttributeKeys(forward) != attributes)
          continue;
        const TypeProto *y = staticType(forward.output(0));
        const TypeProto *x =
            forward.input_size() ? staticType(forward.input(0)) : nullptr;
        if (y && x && getSizes(*y) == getSizes(*dy))
          xShapes.insert(getSizes(*x));
      }
    }
    if (xShapes.size() != 1)
      continue;
    types.setType(node.output(0), dy->tensor_type().elem_type(),
                  *xShapes.begin());
    changed = true;
  }
  return changed;
}

/// The values of the int64 tensor `name` where the graph computes them from
/// constants and static shapes: Constant, Shape of a static value, Gather
/// (axis 0) and Slice (axis 0, step 1) of those, the shape arithmetic
/// ORTModule's gradients use for sizes.
static std::optional<std::vector<int64_t>>
evaluateSizes(const GraphTypes &types, const std::string &name,
              unsigned depth = 0) {
  const NodeProto *node = types.getProducer(name);
  if (!node || depth > 4 || !node->domain().empty())
    return std::nullopt;
  auto input = [&](int i) {
    return i < node->input_size() && !node->input(i).empty()
               ? evaluateSizes(types, node->input(i), depth + 1)
               : std::nullopt;
  };
  if (node->op_type() == "Constant") {
    if (node->attribute_size() != 1 || !node->attribute(0).has_t() ||
        node->attribute(0).t().data_type() != TensorProto::INT64)
      return std::nullopt;
    return ParseData<int64_t>(&node->attribute(0).t());
  }
  if (node->op_type() == "Shape" && node->input_size() == 1 &&
      node->attribute_size() == 0) {
    const TypeProto *type = types.getStaticType(node->input(0));
    return type ? std::optional(getSizes(*type)) : std::nullopt;
  }
  std::optional<std::vector<int64_t>> data = input(0), positions = input(1);
  // Along axis 0, the only axis of a 1-D shape.
  bool alongFirst =
      std::all_of(node->attribute().begin(), node->attribute().end(),
                  [](const AttributeProto &attr) {
                    return attr.name() == "axis" && attr.i() == 0;
                  });
  if (!data || !positions || !alongFirst)
    return std::nullopt;
  std::vector<int64_t> result;
  auto size = static_cast<int64_t>(data->size());
  if (node->op_type() == "Gather") {
    for (int64_t position : *positions) {
      position += position < 0 ? size : 0;
      if (position < 0 || position >= size)
        return std::nullopt;
      result.push_back((*data)[position]);
    }
    return result;
  }
  std::optional<std::vector<int64_t>> ends = input(2);
  if (node->op_type() == "Slice" && node->input_size() == 3 && ends &&
      positions->size() == 1 && ends->size() == 1) {
    int64_t begin = std::clamp<int64_t>(
        (*positions)[0] < 0 ? (*positions)[0] + size : (*positions)[0], 0,
        size);
    int64_t end = std::clamp<int64_t>(
        (*ends)[0] < 0 ? (*ends)[0] + size : (*ends)[0], 0, size);
    for (int64_t i = begin; i < end; ++i)
      result.push_back((*data)[i]);
    return result;
  }
  return std::nullopt;
}

bool mlir::onnxg::typeATenGradients(ModelProto &model) {
  GraphProto &graph = *model.mutable_graph();
  // The operator of an ATen gradient whose sizes are an input.
  auto getGradient = [](const NodeProto &node) -> std::string {
    if (node.op_type() != "ATen" || node.domain() != kATenDomain ||
        node.output_size() < 1)
      return "";
    std::string name, overload;
    for (const AttributeProto &attr : node.attribute()) {
      if (attr.name() == "operator")
        name = attr.s();
      if (attr.name() == "overload_name")
        overload = attr.s();
    }
    std::string op = getATenOperatorName(name, overload);
    return getATenSizesInput(op) >= 0 ? op : "";
  };
  if (std::none_of(
          graph.node().begin(), graph.node().end(),
          [&](const NodeProto &node) { return !getGradient(node).empty(); }))
    return false;
  GraphTypes types(graph);
  bool changed = false;
  for (const NodeProto &node : graph.node()) {
    std::string op = getGradient(node);
    int sizesInput = getATenSizesInput(op);
    if (op.empty() || node.input_size() <= sizesInput ||
        types.getStaticType(node.output(0)))
      continue;
    const TypeProto *grad = types.getStaticType(node.input(0));
    std::optional<std::vector<int64_t>> sizes =
        evaluateSizes(types, node.input(sizesInput));
    if (!grad || !sizes ||
        std::any_of(sizes->begin(), sizes->end(),
                    [](int64_t size) { return size < 0; }))
      continue;
    std::vector<int64_t> gradSizes = getSizes(*grad);
    // embedding_backward: [num_weights, the gradient's last size].
    if (op == "embedding_backward") {
      if (sizes->size() != 1 || gradSizes.empty())
        continue;
      sizes->push_back(gradSizes.back());
    }
    types.setType(node.output(0), grad->tensor_type().elem_type(), *sizes);
    changed = true;
  }
  return changed;
}
