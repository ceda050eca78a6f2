//===- NewerSchemas.cpp - Shape inference for ops newer than libonnx ------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Debian's libonnx (1.12) knows the default domain up to opset 17, so ONNX
// shape inference leaves the outputs of newer ops untyped, and with them
// everything they feed: --amp-pipeline then decides nothing there. The
// shape-inference child registers schemas with the type and shape
// functions of the newer ops that amp-opt lowers. libonnx refuses a
// since-version above 17 for the default domain, so they are registered at
// 17; no op of those names exists at 17 or before.
//
//===----------------------------------------------------------------------===//

#include "NewerSchemas.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor_proto_util.h"

#include <algorithm>
#include <mutex>
#include <optional>

using namespace onnx;

namespace {
constexpr int kHighestKnownOpset = 17;

const std::vector<std::string> &getFloatTypes() {
  static const std::vector<std::string> types = {
      "tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(double)"};
  return types;
}

/// Y has X's type and shape: RMSNormalization, RotaryEmbedding.
void propagateFirstInput(InferenceContext &ctx) {
  propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (hasInputShape(ctx, 0))
    propagateShapeFromInputToOutput(ctx, 0, 0);
}

/// Dimension `i` of input `n`'s shape when known.
std::optional<int64_t> getDim(InferenceContext &ctx, size_t n, int i) {
  if (!hasInputShape(ctx, n))
    return std::nullopt;
  const TensorShapeProto &shape = getInputShape(ctx, n);
  if (i < 0)
    i += shape.dim_size();
  if (i < 0 || i >= shape.dim_size() || !shape.dim(i).has_dim_value())
    return std::nullopt;
  return shape.dim(i).dim_value();
}

/// Sets output `n` to the element type of input `from` and `dims` (unknown
/// sizes as nullopt).
void setOutput(InferenceContext &ctx, size_t n, size_t from,
               const std::vector<std::optional<int64_t>> &dims) {
  if (n >= ctx.getNumOutputs())
    return;
  propagateElemTypeFromInputToOutput(ctx, from, n);
  TensorShapeProto shape;
  for (const std::optional<int64_t> &size : dims) {
    TensorShapeProto::Dimension *dim = shape.add_dim();
    if (size)
      dim->set_dim_value(*size);
  }
  updateOutputShape(ctx, n, shape);
}

std::optional<int64_t> multiply(std::optional<int64_t> a,
                                std::optional<int64_t> b) {
  return a && b ? std::optional<int64_t>(*a * *b) : std::nullopt;
}

std::optional<int64_t> divide(std::optional<int64_t> a, int64_t b) {
  return a && b > 0 ? std::optional<int64_t>(*a / b) : std::nullopt;
}

/// Attention-23: Y, present_key, present_value, qk_matmul_output.
void inferAttention(InferenceContext &ctx) {
  if (!hasInputShape(ctx, 0) || !hasInputShape(ctx, 1) ||
      !hasInputShape(ctx, 2))
    return;
  int rank = getInputShape(ctx, 0).dim_size();
  if (rank != 3 && rank != 4)
    return;
  std::optional<int64_t> batch = getDim(ctx, 0, 0);
  std::optional<int64_t> queries = getDim(ctx, 0, rank == 4 ? 2 : 1);
  std::optional<int64_t> keys = getDim(ctx, 1, rank == 4 ? 2 : 1);
  std::optional<int64_t> qHeads, kvHeads, keySize, valueSize;
  if (rank == 4) {
    qHeads = getDim(ctx, 0, 1);
    kvHeads = getDim(ctx, 1, 1);
    keySize = getDim(ctx, 1, 3);
    valueSize = getDim(ctx, 2, 3);
  } else {
    int64_t q = getAttribute(ctx, "q_num_heads", 0);
    int64_t kv = getAttribute(ctx, "kv_num_heads", 0);
    if (q > 0)
      qHeads = q;
    if (kv > 0)
      kvHeads = kv;
    keySize = divide(getDim(ctx, 1, 2), kv);
    valueSize = divide(getDim(ctx, 2, 2), kv);
  }
  std::optional<int64_t> total = keys;
  if (ctx.getNumInputs() > 4 && ctx.getInputType(4)) {
    std::optional<int64_t> past = getDim(ctx, 4, 2);
    total = past && keys ? std::optional<int64_t>(*past + *keys) : std::nullopt;
  }
  if (rank == 4)
    setOutput(ctx, 0, 0, {batch, qHeads, queries, valueSize});
  else
    setOutput(ctx, 0, 0, {batch, queries, multiply(qHeads, valueSize)});
  setOutput(ctx, 1, 1, {batch, kvHeads, total, keySize});
  setOutput(ctx, 2, 2, {batch, kvHeads, total, valueSize});
  setOutput(ctx, 3, 0, {batch, qHeads, queries, total});
}

/// The value of input `n` when it is a constant integer scalar.
std::optional<int64_t> getConstantScalar(InferenceContext &ctx, size_t n) {
  const TensorProto *data =
      n < ctx.getNumInputs() ? ctx.getInputData(n) : nullptr;
  if (!data)
    return std::nullopt;
  std::vector<int64_t> values;
  if (data->data_type() == TensorProto::INT64)
    values = ParseData<int64_t>(data);
  else if (data->data_type() == TensorProto::INT32)
    for (int32_t value : ParseData<int32_t>(data))
      values.push_back(value);
  if (values.size() != 1)
    return std::nullopt;
  return values[0];
}

/// STFT-17 as the spec defines it: [batch, frames, bins, 2], frames =
/// (length - frame_length) / frame_step + 1. libonnx 1.12 subtracts the
/// onesided bin count instead of the frame length (fixed in later ONNX),
/// which types most onesided spectrograms one frame too long.
void inferSTFT(InferenceContext &ctx) {
  propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::optional<int64_t> frameLength = getConstantScalar(ctx, 3);
  if (!frameLength)
    frameLength = getDim(ctx, 2, 0);
  std::optional<int64_t> step = getConstantScalar(ctx, 1);
  std::optional<int64_t> length = getDim(ctx, 0, 1);
  std::optional<int64_t> frames, bins;
  if (frameLength && step && *step > 0 && length && *length >= *frameLength)
    frames = (*length - *frameLength) / *step + 1;
  if (frameLength)
    bins =
        getAttribute(ctx, "onesided", 1) ? *frameLength / 2 + 1 : *frameLength;
  setOutput(ctx, 0, 0, {getDim(ctx, 0, 0), frames, bins, 2});
}

/// Ints of attribute `name`, or `count` copies of `fallback`.
std::vector<int64_t> getInts(InferenceContext &ctx, const char *name,
                             size_t count, int64_t fallback) {
  const AttributeProto *attr = ctx.getAttribute(name);
  if (!attr || attr->ints_size() == 0)
    return std::vector<int64_t>(count, fallback);
  return {attr->ints().begin(), attr->ints().end()};
}

/// AveragePool-19 adds `dilations`, and LpPool-18 `dilations` and
/// `ceil_mode`, which libonnx's AveragePool-11 and LpPool-11 do not read:
/// with them the output sizes are computed here, as the operators'
/// definitions give them; without them libonnx's own function runs.
InferenceFunction inferAveragePool11, inferLpPool11;

/// Slice-1 (starts, ends and axes as attributes): libonnx gives up on the
/// whole shape at a negative start or end; the spec counts them from the
/// end of the axis, then clamps to it.
void inferSlice1(InferenceContext &ctx) {
  propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!hasInputShape(ctx, 0))
    return;
  const TensorShapeProto &shape = getInputShape(ctx, 0);
  std::vector<int64_t> starts = getInts(ctx, "starts", 0, 0),
                       ends = getInts(ctx, "ends", 0, 0),
                       axes = getInts(ctx, "axes", 0, 0);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (starts.size() != ends.size() || axes.size() != starts.size())
    fail_shape_inference("Slice: starts, ends and axes differ in length");
  TensorShapeProto result = shape;
  int rank = shape.dim_size();
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank)
      fail_shape_inference("Slice: axis out of range");
    TensorShapeProto::Dimension *dim = result.mutable_dim(axis);
    if (!shape.dim(axis).has_dim_value()) {
      dim->Clear();
      continue;
    }
    int64_t size = shape.dim(axis).dim_value();
    auto clamp = [&](int64_t v) {
      return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size);
    };
    dim->Clear();
    dim->set_dim_value(std::max<int64_t>(0, clamp(ends[i]) - clamp(starts[i])));
  }
  updateOutputShape(ctx, 0, result);
}
void inferNewerPool(InferenceContext &ctx, const InferenceFunction &older) {
  const AttributeProto *dilations = ctx.getAttribute("dilations");
  bool newer = (dilations &&
                std::any_of(dilations->ints().begin(), dilations->ints().end(),
                            [](int64_t d) { return d != 1; })) ||
               getAttribute(ctx, "ceil_mode", 0);
  if (!newer || !hasInputShape(ctx, 0)) {
    if (!newer && older)
      older(ctx);
    return;
  }
  int rank = getInputShape(ctx, 0).dim_size();
  if (rank < 3)
    return;
  size_t spatial = rank - 2;
  std::vector<int64_t> kernel = getInts(ctx, "kernel_shape", spatial, 0);
  std::vector<int64_t> strides = getInts(ctx, "strides", spatial, 1);
  std::vector<int64_t> dilation = getInts(ctx, "dilations", spatial, 1);
  std::vector<int64_t> pads = getInts(ctx, "pads", 2 * spatial, 0);
  if (kernel.size() != spatial || strides.size() != spatial ||
      dilation.size() != spatial || pads.size() != 2 * spatial)
    return;
  const AttributeProto *autoPad = ctx.getAttribute("auto_pad");
  std::string mode = autoPad ? autoPad->s() : "NOTSET";
  bool ceilMode = getAttribute(ctx, "ceil_mode", 0);
  std::vector<std::optional<int64_t>> dims = {getDim(ctx, 0, 0),
                                              getDim(ctx, 0, 1)};
  for (size_t i = 0; i < spatial; ++i) {
    std::optional<int64_t> size = getDim(ctx, 0, 2 + i);
    int64_t extent = (kernel[i] - 1) * dilation[i] + 1;
    if (!size || strides[i] <= 0 || kernel[i] <= 0) {
      dims.push_back(std::nullopt);
      continue;
    }
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      dims.push_back((*size + strides[i] - 1) / strides[i]);
      continue;
    }
    int64_t padded =
        *size + (mode == "VALID" ? 0 : pads[i] + pads[i + spatial]);
    if (padded < extent) {
      dims.push_back(std::nullopt);
      continue;
    }
    int64_t steps = padded - extent;
    int64_t out =
        (ceilMode ? (steps + strides[i] - 1) : steps) / strides[i] + 1;
    // A last window that starts in the end padding is dropped.
    if (ceilMode && (out - 1) * strides[i] >= *size + pads[i])
      --out;
    dims.push_back(out);
  }
  setOutput(ctx, 0, 0, dims);
}

void registerSchemas() {
  RegisterSchema(OpSchema()
                     .SetName("RMSNormalization")
                     .SetDomain("")
                     .SinceVersion(kHighestKnownOpset)
                     .Input(0, "X", "", "T")
                     .Input(1, "scale", "", "V")
                     .Output(0, "Y", "", "V")
                     .TypeConstraint("T", getFloatTypes(), "")
                     .TypeConstraint("V", getFloatTypes(), "")
                     .AllowUncheckedAttributes()
                     .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
                       propagateElemTypeFromInputToOutput(ctx, 1, 0);
                       if (hasInputShape(ctx, 0))
                         propagateShapeFromInputToOutput(ctx, 0, 0);
                     }));
  RegisterSchema(OpSchema()
                     .SetName("RotaryEmbedding")
                     .SetDomain("")
                     .SinceVersion(kHighestKnownOpset)
                     .Input(0, "X", "", "T")
                     .Input(1, "cos_cache", "", "T")
                     .Input(2, "sin_cache", "", "T")
                     .Input(3, "position_ids", "", "M", OpSchema::Optional)
                     .Output(0, "Y", "", "T")
                     .TypeConstraint("T", getFloatTypes(), "")
                     .TypeConstraint("M", {"tensor(int64)"}, "")
                     .AllowUncheckedAttributes()
                     .TypeAndShapeInferenceFunction(propagateFirstInput));
  std::vector<std::string> maskTypes = getFloatTypes();
  maskTypes.push_back("tensor(bool)");
  RegisterSchema(
      OpSchema()
          .SetName("Attention")
          .SetDomain("")
          .SinceVersion(kHighestKnownOpset)
          .Input(0, "Q", "", "T1")
          .Input(1, "K", "", "T1")
          .Input(2, "V", "", "T2")
          .Input(3, "attn_mask", "", "U", OpSchema::Optional)
          .Input(4, "past_key", "", "T1", OpSchema::Optional)
          .Input(5, "past_value", "", "T2", OpSchema::Optional)
          .Input(6, "nonpad_kv_seqlen", "", "I", OpSchema::Optional)
          .Output(0, "Y", "", "T1")
          .Output(1, "present_key", "", "T1", OpSchema::Optional)
          .Output(2, "present_value", "", "T2", OpSchema::Optional)
          .Output(3, "qk_matmul_output", "", "T1", OpSchema::Optional)
          .TypeConstraint("T1", getFloatTypes(), "")
          .TypeConstraint("T2", getFloatTypes(), "")
          .TypeConstraint("U", maskTypes, "")
          .TypeConstraint("I", {"tensor(int64)"}, "")
          .AllowUncheckedAttributes()
          .TypeAndShapeInferenceFunction(inferAttention));
}
} // namespace

void mlir::onnxg::registerNewerSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A libonnx that knows the ops already (a newer one) keeps its own.
    if (!OpSchemaRegistry::Schema("Attention", 23, ""))
      registerSchemas();
  });
  fixShapeInference();
}

void mlir::onnxg::fixShapeInference() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The registry holds its schemas in mutable storage; only this
    // process's copy changes.
    if (const OpSchema *stft = OpSchemaRegistry::Schema("STFT", 17, ""))
      const_cast<OpSchema *>(stft)->TypeAndShapeInferenceFunction(inferSTFT);
    if (const OpSchema *slice = OpSchemaRegistry::Schema("Slice", 9, "");
        slice && slice->SinceVersion() == 1)
      const_cast<OpSchema *>(slice)->TypeAndShapeInferenceFunction(inferSlice1);
    if (const OpSchema *pool = OpSchemaRegistry::Schema("AveragePool", 17, "");
        pool && pool->SinceVersion() < 19) {
      inferAveragePool11 = pool->GetTypeAndShapeInferenceFunction();
      const_cast<OpSchema *>(pool)->TypeAndShapeInferenceFunction(
          [](InferenceContext &ctx) {
            inferNewerPool(ctx, inferAveragePool11);
          });
    }
    if (const OpSchema *pool = OpSchemaRegistry::Schema("LpPool", 17, "");
        pool && pool->SinceVersion() < 18) {
      inferLpPool11 = pool->GetTypeAndShapeInferenceFunction();
      const_cast<OpSchema *>(pool)->TypeAndShapeInferenceFunction(
          [](InferenceContext &ctx) { inferNewerPool(ctx, inferLpPool11); });
    }
  });
}
