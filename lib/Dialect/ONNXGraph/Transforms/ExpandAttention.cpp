//===- ExpandAttention.cpp - Attention and RotaryEmbedding as nodes -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The onnxg-expand-attention pass: opset 23's Attention becomes MatMul,
// Softmax and the nodes of its masks (GEMMs that reach BLAS and cuBLASLt),
// and RotaryEmbedding the slices, products and concatenations of its
// rotation, as ONNX's reference implementation computes them.
//
//===----------------------------------------------------------------------===//

#include "NodeEmitter.h"

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>

namespace mlir::onnxg {
#define GEN_PASS_DEF_ONNXGRAPHEXPANDATTENTION
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"
} // namespace mlir::onnxg

using namespace mlir;
using namespace mlir::onnxg;

namespace {
/// The shared parts of the two expansions.
class Expansion {
public:
  Expansion(NodeOp node, OpBuilder &builder)
      : node(node), nodes(node, builder, node.getOpType()), builder(builder) {}

protected:
  InFlightDiagnostic emitError() { return node.emitNodeError(); }
  Value getOperand(unsigned i) { return node.getOptionalOperand(i); }
  int64_t getInt(StringRef name, int64_t defaultValue) {
    auto attr =
        dyn_cast_or_null<IntegerAttr>(node.getOnnxAttrsOrEmpty().get(name));
    return attr ? attr.getInt() : defaultValue;
  }
  std::optional<double> getFloat(StringRef name) {
    auto attr =
        dyn_cast_or_null<FloatAttr>(node.getOnnxAttrsOrEmpty().get(name));
    return attr ? std::optional<double>(attr.getValueAsDouble()) : std::nullopt;
  }
  static RankedTensorType getType(Value value) {
    return dyn_cast<RankedTensorType>(value.getType());
  }
  /// The type arithmetic runs in: f64 for f64, else f32.
  Type getComputeType(Type elementType) {
    return elementType.isF64() ? elementType : builder.getF32Type();
  }
  /// `value` of shape `shape` (sizes of 1 added or removed), through
  /// Reshape; 0 in `shape` copies the size at that position.
  Value reshape(Value value, ArrayRef<int64_t> shape) {
    SmallVector<int64_t> resultShape;
    for (auto [i, size] : llvm::enumerate(shape))
      resultShape.push_back(size == 0 ? getType(value).getDimSize(i) : size);
    return nodes.reshape(value, shape, resultShape);
  }
  /// The elements [start, end) by `step` of the last axis.
  Value sliceLast(Value value, int64_t start, int64_t end, int64_t step = 1) {
    RankedTensorType type = getType(value);
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = (end - start + step - 1) / step;
    return nodes.create("Slice", type.clone(shape),
                        {value, nodes.createI64s({start}),
                         nodes.createI64s({end}), nodes.createI64s({-1}),
                         nodes.createI64s({step})});
  }
  /// Replaces result `i` by `value`, cast to its declared element type.
  void replaceResult(unsigned i, Value value) {
    Value result = node.getResult(i);
    if (auto declared = dyn_cast<RankedTensorType>(result.getType()))
      value = nodes.castTo(value, declared.getElementType());
    result.replaceAllUsesWith(value);
  }

  NodeOp node;
  NodeEmitter nodes;
  OpBuilder &builder;
};

/// Opset 23's Attention(Q, K, V, attn_mask?, past_key?, past_value?) ->
/// (Y, present_key?, present_value?).
class AttentionExpansion : public Expansion {
public:
  using Expansion::Expansion;
  LogicalResult run();

private:
  /// Q, K or V as [batch, heads, sequence, head size]: 3-D ones are split
  /// into `heads`.
  FailureOr<Value> toHeads(Value value, int64_t heads, StringRef what);
  /// K or V of `kvHeads` heads repeated for `qHeads` query heads (group
  /// query attention: query head h reads key head h / group).
  Value repeatHeads(Value value, int64_t kvHeads, int64_t qHeads);
  /// What attn_mask and is_causal add to the scores ([..., Sq, St] in
  /// `computeType`), or null.
  FailureOr<Value> buildBias(Value mask, int64_t queries, int64_t keys,
                             int64_t past, Type computeType);
};

/// Opset 23's RotaryEmbedding(X, cos_cache, sin_cache, position_ids?).
class RotaryExpansion : public Expansion {
public:
  using Expansion::Expansion;
  LogicalResult run();
};
} // namespace

FailureOr<Value> AttentionExpansion::toHeads(Value value, int64_t heads,
                                             StringRef what) {
  RankedTensorType type = getType(value);
  if (type.getRank() == 4)
    return value;
  int64_t hidden = type.getDimSize(2);
  if (heads <= 0 || ShapedType::isDynamic(hidden) || hidden % heads)
    return emitError() << "a 3-D " << what << " needs q_num_heads and "
                       << "kv_num_heads that divide its hidden size";
  Value split = reshape(value, {0, 0, heads, hidden / heads});
  return nodes.transpose(split, {0, 2, 1, 3});
}

Value AttentionExpansion::repeatHeads(Value value, int64_t kvHeads,
                                      int64_t qHeads) {
  RankedTensorType type = getType(value);
  int64_t group = qHeads / kvHeads;
  int64_t sequence = type.getDimSize(2), size = type.getDimSize(3);
  Value grouped = reshape(value, {0, kvHeads, 1, sequence, size});
  SmallVector<int64_t> expandedShape(getType(grouped).getShape());
  expandedShape[2] = group;
  Value expanded =
      nodes.create("Expand", type.clone(expandedShape),
                   {grouped, nodes.createI64s({1, 1, group, 1, 1})});
  return reshape(expanded, {0, qHeads, sequence, size});
}

FailureOr<Value> AttentionExpansion::buildBias(Value mask, int64_t queries,
                                               int64_t keys, int64_t past,
                                               Type computeType) {
  Value bias;
  double negInf = -std::numeric_limits<double>::infinity();
  if (mask) {
    RankedTensorType maskType = getType(mask);
    int64_t covered = maskType.getShape().back();
    if (ShapedType::isDynamic(covered) || covered > keys)
      return emitError() << "attn_mask covers " << covered << " keys, not "
                         << "the " << keys << " of past and present";
    // A bool mask says which keys to attend: 0 there, -inf elsewhere.
    if (maskType.getElementType().isInteger(1))
      mask = nodes.create("Where", maskType.clone(computeType),
                          {mask, nodes.scalar(computeType, 0),
                           nodes.scalar(computeType, negInf)});
    else
      mask = nodes.castTo(mask, computeType);
    // A mask shorter than the keys (past ones added) masks the rest.
    if (covered < keys) {
      int64_t rank = maskType.getRank();
      SmallVector<int64_t> pads(2 * rank, 0), shape(maskType.getShape());
      pads.back() = keys - covered;
      shape.back() = keys;
      mask = nodes.create(
          "Pad", maskType.clone(shape).clone(computeType),
          {mask, nodes.createI64s(pads), nodes.scalar(computeType, negInf)});
    }
    bias = mask;
  }
  if (getInt("is_causal", 0)) {
    if (ShapedType::isDynamic(queries) || ShapedType::isDynamic(keys))
      return emitError() << "is_causal needs static sequence lengths";
    // Query i sees the past and the present keys up to its own position.
    auto type = RankedTensorType::get({queries, keys}, computeType);
    SmallVector<Attribute> values;
    for (int64_t i = 0; i < queries; ++i)
      for (int64_t j = 0; j < keys; ++j)
        values.push_back(
            builder.getFloatAttr(computeType, j > i + past ? negInf : 0.0));
    Value causal = nodes.create(
        "Constant", type, {},
        builder.getNamedAttr("value", DenseElementsAttr::get(type, values)));
    bias = bias ? nodes.binary("Add", bias, causal) : causal;
  }
  return bias;
}

LogicalResult AttentionExpansion::run() {
  Value q = getOperand(0), k = getOperand(1), v = getOperand(2),
        mask = getOperand(3), pastKey = getOperand(4),
        pastValue = getOperand(5);
  if (getOperand(6))
    return emitError() << "nonpad_kv_seqlen (opset 24) does not lower yet";
  if (node.getNumResults() > 3 && !node.getResult(3).use_empty())
    return emitError() << "qk_matmul_output does not lower yet";
  RankedTensorType qType = getType(q);
  for (Value value : {q, k, v})
    if (!getType(value) || !isa<FloatType>(getType(value).getElementType()) ||
        (getType(value).getRank() != 3 && getType(value).getRank() != 4) ||
        getType(value).getRank() != qType.getRank())
      return emitError() << "Q, K and V must be float tensors, all 3-D or "
                            "all 4-D";
  if (bool(pastKey) != bool(pastValue))
    return emitError() << "past_key and past_value come together";
  int64_t rank = qType.getRank();
  FailureOr<Value> q4 = toHeads(q, getInt("q_num_heads", 0), "Q");
  if (failed(q4))
    return failure();
  FailureOr<Value> k4 = toHeads(k, getInt("kv_num_heads", 0), "K");
  if (failed(k4))
    return failure();
  FailureOr<Value> v4 = toHeads(v, getInt("kv_num_heads", 0), "V");
  if (failed(v4))
    return failure();
  Value keys = *k4, values = *v4;
  int64_t past = 0;
  if (pastKey) {
    past = getType(pastKey).getDimSize(2);
    if (ShapedType::isDynamic(past))
      return emitError() << "past_key needs a static sequence length";
    keys = nodes.concat(
        {nodes.castTo(pastKey, getType(keys).getElementType()), keys}, 2);
    values = nodes.concat(
        {nodes.castTo(pastValue, getType(values).getElementType()), values}, 2);
  }
  int64_t qHeads = getType(*q4).getDimSize(1),
          kvHeads = getType(keys).getDimSize(1);
  if (ShapedType::isDynamic(qHeads) || ShapedType::isDynamic(kvHeads) ||
      qHeads % kvHeads)
    return emitError() << "the query heads (" << qHeads << ") must be a "
                       << "static multiple of the key heads (" << kvHeads
                       << ")";
  Value attendedKeys = keys, attendedValues = values;
  if (qHeads != kvHeads) {
    attendedKeys = repeatHeads(keys, kvHeads, qHeads);
    attendedValues = repeatHeads(values, kvHeads, qHeads);
  }
  // Q and K each times sqrt(scale), as ONNX's reference (keeps 16-bit
  // products in range); the scores, mask and softmax in f32.
  int64_t headSize = getType(*q4).getDimSize(3);
  std::optional<double> scale = getFloat("scale");
  if (!scale && ShapedType::isDynamic(headSize))
    return emitError() << "the default scale needs a static head size";
  double factor = scale ? *scale : 1.0 / std::sqrt(double(headSize));
  double root = std::sqrt(std::abs(factor));
  Type dataType = qType.getElementType();
  // A negative scale's sign goes on Q.
  Value scaledQ = nodes.binary(
      "Mul", *q4, nodes.scalar(dataType, factor < 0 ? -root : root));
  Value scaledK =
      nodes.binary("Mul", attendedKeys,
                   nodes.scalar(getType(attendedKeys).getElementType(), root));
  Value scores = nodes.matmul(scaledQ, nodes.transpose(scaledK, {0, 1, 3, 2}));
  Type computeType = getComputeType(dataType);
  scores = nodes.castTo(scores, computeType);
  if (std::optional<double> softcap = getFloat("softcap");
      softcap && *softcap > 0) {
    Value capped =
        nodes.unary("Tanh", nodes.binary("Div", scores,
                                         nodes.scalar(computeType, *softcap)));
    scores = nodes.binary("Mul", capped, nodes.scalar(computeType, *softcap));
  }
  int64_t queries = getType(scores).getDimSize(2),
          keyCount = getType(scores).getDimSize(3);
  FailureOr<Value> bias = buildBias(mask, queries, keyCount, past, computeType);
  if (failed(bias))
    return failure();
  if (*bias)
    scores = nodes.binary("Add", scores, *bias);
  Value probabilities = nodes.unary(
      "Softmax", scores,
      {builder.getNamedAttr("axis", builder.getI64IntegerAttr(-1))});
  Type valueType = getType(attendedValues).getElementType();
  Value output =
      nodes.matmul(nodes.castTo(probabilities, valueType), attendedValues);
  if (rank == 3) {
    int64_t valueSize = getType(output).getDimSize(3);
    output = reshape(nodes.transpose(output, {0, 2, 1, 3}),
                     {0, 0, qHeads * valueSize});
  }
  replaceResult(0, output);
  if (node.getNumResults() > 1)
    replaceResult(1, keys);
  if (node.getNumResults() > 2)
    replaceResult(2, values);
  node.erase();
  return success();
}

LogicalResult RotaryExpansion::run() {
  Value x = getOperand(0), cosCache = getOperand(1), sinCache = getOperand(2),
        positions = getOperand(3);
  RankedTensorType type = getType(x);
  if (!type || !isa<FloatType>(type.getElementType()) ||
      (type.getRank() != 3 && type.getRank() != 4) || !type.hasStaticShape())
    return emitError() << "X must be a 3-D or 4-D float tensor of static "
                          "shape";
  int64_t rank = type.getRank();
  int64_t heads = rank == 4 ? type.getDimSize(1) : getInt("num_heads", 0);
  int64_t hidden = type.getShape().back();
  if (rank == 3 && (heads <= 0 || hidden % heads))
    return emitError() << "a 3-D X needs num_heads that divides its hidden "
                          "size";
  int64_t headSize = rank == 4 ? hidden : hidden / heads;
  int64_t rotated = getInt("rotary_embedding_dim", 0);
  if (rotated == 0)
    rotated = headSize;
  if (rotated < 0 || rotated > headSize || rotated % 2)
    return emitError() << "rotary_embedding_dim " << rotated
                       << " must be even and at most the head size "
                       << headSize;
  // As [batch, heads, sequence, head size] or [batch, sequence, heads, head
  // size]: the caches, [batch, sequence, rotated / 2], broadcast over the
  // heads' axis.
  Value heads4 = rank == 4 ? x : reshape(x, {0, 0, heads, headSize});
  int64_t headsAxis = rank == 4 ? 1 : 2;
  Type computeType = getComputeType(type.getElementType());
  auto prepareCache = [&](Value cache) -> FailureOr<Value> {
    RankedTensorType cacheType = getType(cache);
    if (!cacheType || !isa<FloatType>(cacheType.getElementType()))
      return emitError() << "the cos and sin caches must be float tensors";
    if (positions) {
      RankedTensorType positionType = getType(positions);
      if (!positionType || cacheType.getRank() != 2)
        return emitError() << "with position_ids the caches must be 2-D";
      SmallVector<int64_t> shape(positionType.getShape());
      shape.push_back(cacheType.getDimSize(1));
      cache = nodes.create(
          "Gather", cacheType.clone(shape), {cache, positions},
          builder.getNamedAttr("axis", builder.getI64IntegerAttr(0)));
    }
    RankedTensorType gathered = getType(cache);
    if (gathered.getRank() != 3 || !gathered.hasStaticShape() ||
        gathered.getDimSize(2) != rotated / 2)
      return emitError() << "the caches must give [batch, sequence, "
                         << rotated / 2 << "] values, not " << gathered;
    SmallVector<int64_t> shape(gathered.getShape());
    shape.insert(shape.begin() + headsAxis, 1);
    return nodes.reshape(nodes.castTo(cache, computeType), shape, shape);
  };
  FailureOr<Value> cos = prepareCache(cosCache);
  FailureOr<Value> sin = prepareCache(sinCache);
  if (failed(cos) || failed(sin))
    return failure();
  Value data = nodes.castTo(heads4, computeType);
  bool interleaved = getInt("interleaved", 0);
  Value first = interleaved ? sliceLast(data, 0, rotated, 2)
                            : sliceLast(data, 0, rotated / 2);
  Value second = interleaved ? sliceLast(data, 1, rotated, 2)
                             : sliceLast(data, rotated / 2, rotated);
  Value real = nodes.binary("Sub", nodes.binary("Mul", *cos, first),
                            nodes.binary("Mul", *sin, second));
  Value imaginary = nodes.binary("Add", nodes.binary("Mul", *sin, first),
                                 nodes.binary("Mul", *cos, second));
  Value rotatedPart;
  if (interleaved) {
    // (real, imaginary) pairs back in place: stack on a new last axis.
    SmallVector<int64_t> pairShape(getType(real).getShape());
    pairShape.push_back(1);
    SmallVector<int64_t> pairReshape(pairShape.size(), 0);
    pairReshape.back() = 1;
    Value pairs =
        nodes.concat({nodes.reshape(real, pairReshape, pairShape),
                      nodes.reshape(imaginary, pairReshape, pairShape)},
                     pairShape.size() - 1);
    rotatedPart = reshape(pairs, {0, 0, 0, rotated});
  } else {
    rotatedPart = nodes.concat({real, imaginary}, 3);
  }
  Value output =
      rotated < headSize
          ? nodes.concat({rotatedPart, sliceLast(data, rotated, headSize)}, 3)
          : rotatedPart;
  if (rank == 3)
    output = reshape(output, {0, 0, hidden});
  replaceResult(0, output);
  node.erase();
  return success();
}

namespace {
struct ONNXGraphExpandAttentionPass
    : public onnxg::impl::ONNXGraphExpandAttentionBase<
          ONNXGraphExpandAttentionPass> {
  void runOnOperation() override {
    if (failed(expandNodes(
            getOperation(),
            [](NodeOp node) {
              return isDefaultDomain(node.getDomain()) &&
                     (node.getOpType() == "Attention" ||
                      node.getOpType() == "RotaryEmbedding");
            },
            [](NodeOp node, OpBuilder &builder) {
              return node.getOpType() == "Attention"
                         ? AttentionExpansion(node, builder).run()
                         : RotaryExpansion(node, builder).run();
            })))
      signalPassFailure();
  }
};
} // namespace
