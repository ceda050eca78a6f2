//===- ExportAMPOps.cpp - ONNX forms of the amp ops -------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Each amp op becomes default-domain ONNX nodes that compute what its CPU
// lowering computes: casts, loss scaling and the FP8 ops.
//
//===----------------------------------------------------------------------===//

#include "Exporter.h"

#include "amp/Dialect/AMP/IR/FP8.h"
#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

#include <cfloat>
#include <cmath>

using namespace mlir;
using namespace mlir::onnxg;
using namespace mlir::onnxg::detail;

static void setIntAttr(onnx::NodeProto &node, StringRef name, int64_t value) {
  onnx::AttributeProto &attr = *node.add_attribute();
  attr.set_name(name.str());
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(value);
}

static void setIntsAttr(onnx::NodeProto &node, StringRef name,
                        ArrayRef<int64_t> values) {
  onnx::AttributeProto &attr = *node.add_attribute();
  attr.set_name(name.str());
  attr.set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values)
    attr.add_ints(value);
}

LogicalResult Exporter::exportCast(amp::CastOp cast, onnx::GraphProto &graph) {
  std::optional<int32_t> to = getOnnxDataType(cast.getType().getElementType());
  if (!to)
    return cast.emitError("cast to ") << cast.getType() << " has no ONNX form";
  addCastNode(names[cast.getInput()], names[cast.getResult()], *to, graph);
  addValueInfo(cast.getResult(), {}, graph);
  return success();
}

/// Mul(Cast(input, to=FLOAT), Reciprocal(scale)); the Cast only for a low
/// precision input. The helper values are named after the result.
LogicalResult Exporter::exportUnscale(amp::UnscaleOp unscale,
                                      onnx::GraphProto &graph) {
  std::string result = names[unscale.getResult()];
  std::string input =
      castToFloat32(unscale.getInput(), result + "/cast", graph);
  std::string reciprocal =
      claimName(result + "/reciprocal", /*mayShadow=*/false);
  addNode("Reciprocal", {names[unscale.getScale()]}, reciprocal, graph);
  addNode("Mul", {input, reciprocal}, result, graph);
  addValueInfo(unscale.getResult(), {}, graph);
  return success();
}

/// Mul(input, scale), the scale cast to the input's type when it differs.
LogicalResult Exporter::exportScaleLoss(amp::ScaleLossOp op,
                                        onnx::GraphProto &graph) {
  std::string result = names[op.getResult()];
  std::string scale = names[op.getScale()];
  Type element = op.getInput().getType().getElementType();
  if (!element.isF32()) {
    std::optional<int32_t> to = getOnnxDataType(element);
    if (!to)
      return op.emitError("scaling a ") << element << " seed has no ONNX form";
    std::string cast = claimName(result + "/scale", /*mayShadow=*/false);
    addCastNode(scale, cast, *to, graph);
    scale = cast;
  }
  addNode("Mul", {names[op.getInput()], scale}, result, graph);
  addValueInfo(op.getResult(), {}, graph);
  return success();
}

/// Not(IsNaN(Sum(ReduceSum(Sub(g, g)), ...))): g - g is 0 where g is finite
/// and NaN elsewhere; ReduceSum without axes reduces every dimension.
LogicalResult Exporter::exportAllFinite(amp::AllFiniteOp op,
                                        onnx::GraphProto &graph) {
  std::string result = names[op.getResult()];
  SmallVector<std::string> sums;
  for (Value input : op.getInputs()) {
    std::string name = names[input];
    if (!cast<ShapedType>(input.getType()).getElementType().isF32())
      return op.emitError("the finite check of ONNX export takes FP32 "
                          "gradients, not ")
             << input.getType();
    std::string zeros =
        addHelperNode("Sub", {name, name}, name + "/zeros", graph);
    std::string sum = claimName(name + "/zero_sum", /*mayShadow=*/false);
    setIntAttr(addNode("ReduceSum", {zeros}, sum, graph), "keepdims", 0);
    sums.push_back(sum);
  }
  std::string total = addHelperNode("Sum", sums, result + "/sum", graph);
  std::string nan = addHelperNode("IsNaN", {total}, result + "/nan", graph);
  addNode("Not", {nan}, result, graph);
  addValueInfo(op.getResult(), {}, graph);
  return success();
}

/// The update rule of amp.update_scale in Add, Less, Not, Mul, Min, Max and
/// Where nodes.
LogicalResult Exporter::exportUpdateScale(amp::UpdateScaleOp op,
                                          onnx::GraphProto &graph) {
  std::string newScale = names[op.getNewScale()];
  std::string newCount = names[op.getNewCount()];
  std::string scale = names[op.getScale()], count = names[op.getCount()];
  std::string finite = names[op.getFinite()];
  auto scalar = [&](auto value, StringRef what) {
    return addScalar(value, newScale + "/" + what.str(), graph);
  };
  auto node = [&](StringRef type, ArrayRef<std::string> inputs,
                  StringRef what) {
    return addHelperNode(type, inputs, newScale + "/" + what.str(), graph);
  };
  std::string zero = scalar(int64_t(0), "zero");
  std::string counted =
      node("Add", {count, scalar(int64_t(1), "one")}, "counted");
  std::string early = node(
      "Less", {counted, scalar(int64_t(op.getGrowthInterval()), "interval")},
      "before_interval");
  std::string grow = node("Not", {early}, "grow");
  std::string grown =
      node("Min",
           {node("Mul",
                 {scale, scalar(op.getGrowthFactor().convertToFloat(),
                                "growth_factor")},
                 "times_growth"),
            scalar(op.getMaxScale().convertToFloat(), "max_scale")},
           "grown");
  std::string shrunk =
      node("Max",
           {node("Mul",
                 {scale, scalar(op.getBackoffFactor().convertToFloat(),
                                "backoff_factor")},
                 "times_backoff"),
            scalar(op.getMinScale().convertToFloat(), "min_scale")},
           "shrunk");
  std::string cleanScale = node("Where", {grow, grown, scale}, "clean");
  std::string cleanCount = node("Where", {grow, zero, counted}, "clean_count");
  addNode("Where", {finite, cleanScale, shrunk}, newScale, graph);
  addNode("Where", {finite, cleanCount, zero}, newCount, graph);
  addValueInfo(op.getNewScale(), {}, graph);
  addValueInfo(op.getNewCount(), {}, graph);
  return success();
}

//===----------------------------------------------------------------------===//
// FP8
//===----------------------------------------------------------------------===//

std::string Exporter::addInts(ArrayRef<int64_t> values, StringRef hint,
                              onnx::GraphProto &graph) {
  onnx::TensorProto &tensor = *graph.add_initializer();
  tensor.set_name(claimName(hint, /*mayShadow=*/false));
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(values.size());
  for (int64_t value : values)
    tensor.add_int64_data(value);
  return tensor.name();
}

std::string Exporter::castToFloat32(Value input, StringRef hint,
                                    onnx::GraphProto &graph) {
  if (getElementTypeOrSelf(input.getType()).isF32())
    return names[input];
  std::string cast = claimName(hint, /*mayShadow=*/false);
  addCastNode(names[input], cast, onnx::TensorProto::FLOAT, graph);
  return cast;
}

namespace {
/// How a tensor splits into blocks: `padded` is its shape rounded up to
/// whole blocks (the last block of a dimension may be partial), `data` the
/// view [g0, b0, g1, b1, ...] of the padded tensor, `grid` [g0, 1, g1, 1,
/// ...], the shape its per-block values broadcast in.
struct BlockViews {
  SmallVector<int64_t> padded, data, grid;
};
} // namespace

/// The block views of a tensor of `shape`; failure when a dimension is
/// dynamic.
static FailureOr<BlockViews> getBlockViews(ArrayRef<int64_t> shape,
                                           ArrayRef<int64_t> block) {
  BlockViews views;
  for (auto [size, blockSize] : llvm::zip(shape, block)) {
    if (ShapedType::isDynamic(size))
      return failure();
    int64_t blocks = llvm::divideCeil(size, blockSize);
    views.padded.push_back(blocks * blockSize);
    views.data.append({blocks, blockSize});
    views.grid.append({blocks, 1});
  }
  return views;
}

/// The error for a block layout the ONNX form cannot express.
static LogicalResult emitBlockError(Operation *op, Type type,
                                    ArrayRef<int64_t> block) {
  InFlightDiagnostic diag = op->emitError("block scaling of ")
                            << type << " in blocks of [";
  llvm::interleaveComma(block, diag);
  return diag << "] has no ONNX form: each dimension must be static";
}

FailureOr<std::string> Exporter::exportFloatBlocks(
    Operation *op, Value data, std::optional<ArrayRef<int64_t>> block,
    StringRef prefix, SmallVectorImpl<int64_t> &grid,
    SmallVectorImpl<int64_t> &padded, onnx::GraphProto &graph) {
  std::string x = castToFloat32(data, prefix.str() + "/float", graph);
  if (!block)
    return x;
  auto type = cast<RankedTensorType>(data.getType());
  FailureOr<BlockViews> views = getBlockViews(type.getShape(), *block);
  if (failed(views))
    return emitBlockError(op, type, *block);
  grid.assign(views->grid);
  padded.assign(views->padded);
  // Partial blocks are padded with zeros, which change no amax.
  if (views->padded != type.getShape()) {
    SmallVector<int64_t> pads(type.getRank(), 0);
    for (auto [size, paddedSize] : llvm::zip(type.getShape(), views->padded))
      pads.push_back(paddedSize - size);
    x = addHelperNode("Pad", {x, addInts(pads, prefix.str() + "/pads", graph)},
                      prefix.str() + "/padded", graph);
  }
  return addHelperNode(
      "Reshape", {x, addInts(views->data, prefix.str() + "/blocks", graph)},
      prefix.str() + "/blocked", graph);
}

LogicalResult Exporter::exportScaled(Operation *op, Value data, Value scale,
                                     std::optional<ArrayRef<int64_t>> block,
                                     const std::string &output,
                                     onnx::GraphProto &graph) {
  SmallVector<int64_t> grid, padded;
  FailureOr<std::string> x =
      exportFloatBlocks(op, data, block, output, grid, padded, graph);
  if (failed(x))
    return failure();
  if (!block) {
    addNode("Mul", {*x, names[scale]}, output, graph);
    return success();
  }
  std::string scales = addHelperNode(
      "Reshape", {names[scale], addInts(grid, output + "/grid", graph)},
      output + "/block_scales", graph);
  std::string product =
      addHelperNode("Mul", {*x, scales}, output + "/blocked_product", graph);
  auto shape = cast<RankedTensorType>(data.getType()).getShape();
  if (ArrayRef<int64_t>(padded) == shape) {
    addNode("Reshape", {product, addInts(shape, output + "/shape", graph)},
            output, graph);
    return success();
  }
  std::string unblocked = addHelperNode(
      "Reshape", {product, addInts(padded, output + "/padded_shape", graph)},
      output + "/unblocked", graph);
  SmallVector<int64_t> starts(shape.size(), 0);
  addNode("Slice",
          {unblocked, addInts(starts, output + "/starts", graph),
           addInts(shape, output + "/ends", graph)},
          output, graph);
  return success();
}

LogicalResult Exporter::exportAmax(Operation *op, Value input,
                                   std::optional<ArrayRef<int64_t>> block,
                                   const std::string &output,
                                   onnx::GraphProto &graph) {
  SmallVector<int64_t> grid, padded;
  FailureOr<std::string> x =
      exportFloatBlocks(op, input, block, output, grid, padded, graph);
  if (failed(x))
    return failure();
  // The block view [g0, b0, g1, b1, ...] reduces over the b dimensions.
  SmallVector<int64_t> axes;
  if (block)
    for (size_t dim = 0; dim < block->size(); ++dim)
      axes.push_back(2 * dim + 1);
  exportMaxMagnitude(addHelperNode("Abs", {*x}, output + "/abs", graph), axes,
                     output, graph);
  return success();
}

void Exporter::exportMaxMagnitude(const std::string &magnitudes,
                                  ArrayRef<int64_t> axes,
                                  const std::string &output,
                                  onnx::GraphProto &graph) {
  // ReduceMax (opset 18: axes as an input; none reduces everything); NaN
  // where any element is NaN, as the CPU lowering's arith.maximumf.
  auto reduce = [&](StringRef type, const std::string &value, StringRef what) {
    SmallVector<std::string> inputs = {value};
    if (!axes.empty())
      inputs.push_back(addInts(axes, output + "/axes", graph));
    std::string reduced = claimName(output + "/" + what.str(), false);
    setIntAttr(addNode(type, inputs, reduced, graph), "keepdims", 0);
    return reduced;
  };
  std::string largest = reduce("ReduceMax", magnitudes, "max");
  std::string nanFlags = claimName(output + "/nan_flags", false);
  addCastNode(addHelperNode("IsNaN", {magnitudes}, output + "/is_nan", graph),
              nanFlags, onnx::TensorProto::FLOAT, graph);
  std::string anyNaN =
      addHelperNode("Greater",
                    {reduce("ReduceMax", nanFlags, "nan_count"),
                     addScalar(0.0f, output + "/zero", graph)},
                    output + "/any_nan", graph);
  addNode("Where", {anyNaN, addScalar(NAN, output + "/nan", graph), largest},
          output, graph);
}

std::string Exporter::exportScaleFormula(const std::string &amax,
                                         const std::string &previous,
                                         float fp8Max, int64_t margin,
                                         bool pow2, StringRef output,
                                         onnx::GraphProto &graph) {
  std::string prefix = output.str() + "/";
  auto scalar = [&](float value, StringRef what) {
    return addScalar(value, prefix + what.str(), graph);
  };
  auto node = [&](StringRef type, ArrayRef<std::string> inputs,
                  StringRef what) {
    return addHelperNode(type, inputs, prefix + what.str(), graph);
  };
  std::string inf = scalar(INFINITY, "inf");
  std::string valid =
      node("And",
           {node("Greater", {amax, scalar(0.0f, "zero")}, "positive"),
            node("Less", {amax, inf}, "finite")},
           "valid");
  std::string scale =
      node("Div", {scalar(fp8Max, "fp8_max"), amax}, "quotient");
  if (margin)
    scale = node("Mul", {scale, scalar(std::ldexp(1.0f, -margin), "margin")},
                 "with_margin");
  scale = node("Where",
               {node("Equal", {scale, inf}, "overflow"),
                scalar(FLT_MAX, "flt_max"), scale},
               "clamped");
  if (pow2) {
    // 2^floor(log2(scale)), corrected by one step where rounding of the
    // logarithm missed.
    std::string two = scalar(2.0f, "two");
    std::string power = node("Pow",
                             {two, node("Floor",
                                        {node("Div",
                                              {node("Log", {scale}, "log"),
                                               scalar(std::log(2.0f), "ln2")},
                                              "log2")},
                                        "exponent")},
                             "power");
    power = node("Where",
                 {node("Greater", {power, scale}, "above"),
                  node("Div", {power, two}, "halved"), power},
                 "not_above");
    std::string doubled = node("Mul", {power, two}, "doubled");
    scale =
        node("Where",
             {node("LessOrEqual", {doubled, scale}, "below"), doubled, power},
             "pow2");
  }
  std::string fallback = previous.empty() ? scalar(1.0f, "one") : previous;
  std::string result = output.str();
  addNode("Where", {valid, scale, fallback}, result, graph);
  return result;
}

LogicalResult Exporter::exportFP8Op(Operation *op, onnx::GraphProto &graph) {
  requiredOpset = std::max<int64_t>(requiredOpset, 19);
  if (auto quantize = dyn_cast<amp::QuantizeOp>(op)) {
    std::string result = names[quantize.getResult()];
    std::string scaled = claimName(result + "/scaled", false);
    if (failed(exportScaled(op, quantize.getInput(), quantize.getScale(),
                            quantize.getBlock(), scaled, graph)))
      return failure();
    std::optional<int32_t> to =
        getOnnxDataType(quantize.getResult().getType().getElementType());
    // Cast to FP8 saturates by default (opset 19's `saturate` = 1).
    addCastNode(scaled, result, *to, graph);
    addNode("Reciprocal", {names[quantize.getScale()]},
            names[quantize.getScaleInv()], graph);
    addValueInfo(quantize.getResult(), {}, graph);
    addValueInfo(quantize.getScaleInv(), {}, graph);
    return success();
  }
  if (auto dequantize = dyn_cast<amp::DequantizeOp>(op)) {
    std::string result = names[dequantize.getResult()];
    Type element = dequantize.getType().getElementType();
    std::string scaled =
        element.isF32() ? result : claimName(result + "/float", false);
    if (failed(exportScaled(op, dequantize.getInput(), dequantize.getScaleInv(),
                            dequantize.getBlock(), scaled, graph)))
      return failure();
    if (!element.isF32())
      addCastNode(scaled, result, *getOnnxDataType(element), graph);
    addValueInfo(dequantize.getResult(), {}, graph);
    return success();
  }
  if (auto amax = dyn_cast<amp::AmaxOp>(op)) {
    if (failed(exportAmax(op, amax.getInput(), amax.getBlock(),
                          names[amax.getResult()], graph)))
      return failure();
    addValueInfo(amax.getResult(), {}, graph);
    return success();
  }
  if (auto computeScale = dyn_cast<amp::ComputeScaleOp>(op)) {
    exportScaleFormula(
        names[computeScale.getAmax()],
        computeScale.getPrevious() ? names[computeScale.getPrevious()] : "",
        computeScale.getMax().convertToFloat(), computeScale.getMargin(),
        computeScale.getPow2(), names[computeScale.getResult()], graph);
    addValueInfo(computeScale.getResult(), {}, graph);
    return success();
  }
  if (auto update = dyn_cast<amp::FP8UpdateOp>(op)) {
    bool mostRecent = *amp::fp8::parseAmaxAlgo(update.getAlgo()) ==
                      amp::fp8::AmaxAlgo::MostRecent;
    for (auto [index, history] : llvm::enumerate(update.getHistories())) {
      int64_t length = cast<RankedTensorType>(history.getType()).getDimSize(0);
      if (ShapedType::isDynamic(length))
        return op->emitError("an amax history of dynamic length has no ONNX "
                             "form");
      Value newHistory = update.getNewHistories()[index];
      std::string prefix = names[newHistory] + "/";
      auto slice = [&](const std::string &value, int64_t begin, int64_t end,
                       StringRef what) {
        return addHelperNode(
            "Slice",
            {value, addInts({begin}, prefix + what.str() + "_begin", graph),
             addInts({end}, prefix + what.str() + "_end", graph),
             addInts({0}, prefix + what.str() + "_axis", graph)},
            prefix + what.str(), graph);
      };
      auto concat = [&](ArrayRef<std::string> parts, const std::string &out) {
        setIntAttr(addNode("Concat", parts, out, graph), "axis", 0);
      };
      std::string amax = names[update.getAmaxes()[index]];
      // Slot 0 takes this step's amax.
      SmallVector<std::string> stagedParts = {
          addHelperNode("Reshape", {amax, addInts({1}, prefix + "one", graph)},
                        prefix + "current", graph)};
      if (length > 1)
        stagedParts.push_back(slice(names[history], 1, length, "older"));
      std::string staged = claimName(prefix + "staged", false);
      concat(stagedParts, staged);
      std::string chosen = amax;
      if (!mostRecent) {
        chosen = claimName(prefix + "amax", false);
        exportMaxMagnitude(staged, {}, chosen, graph);
      }
      Value newScale = update.getNewScales()[index];
      exportScaleFormula(chosen, names[update.getScales()[index]],
                         update.getMaxes()[index], update.getMargin(),
                         /*pow2=*/false, names[newScale], graph);
      // Roll toward the front and clear slot 0: [0, h[2:], h[0]].
      onnx::TensorProto &zero = *graph.add_initializer();
      zero.set_name(claimName(prefix + "cleared", false));
      zero.set_data_type(onnx::TensorProto::FLOAT);
      zero.add_dims(1);
      zero.add_float_data(0.0f);
      SmallVector<std::string> rolled = {zero.name()};
      if (length > 2)
        rolled.push_back(slice(staged, 2, length, "shifted"));
      if (length > 1)
        rolled.push_back(slice(staged, 0, 1, "current_last"));
      concat(rolled, names[newHistory]);
      addValueInfo(newHistory, {}, graph);
      addValueInfo(newScale, {}, graph);
    }
    return success();
  }
  auto matmul = cast<amp::ScaledMatMulOp>(op);
  std::string result = names[matmul.getResult()];
  auto operand = [&](Value data, Value scaleInv,
                     std::optional<ArrayRef<int64_t>> block, bool transposed,
                     StringRef what) -> FailureOr<std::string> {
    std::string value = claimName(result + "/" + what.str(), false);
    if (failed(exportScaled(op, data, scaleInv, block, value, graph)))
      return failure();
    if (!transposed)
      return value;
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    std::string output = claimName(result + "/" + what.str() + "_t", false);
    setIntsAttr(addNode("Transpose", {value}, output, graph), "perm", perm);
    return output;
  };
  FailureOr<std::string> a =
      operand(matmul.getA(), matmul.getAScaleInv(), matmul.getABlock(),
              matmul.getTransposeA(), "a");
  FailureOr<std::string> b =
      operand(matmul.getB(), matmul.getBScaleInv(), matmul.getBBlock(),
              matmul.getTransposeB(), "b");
  if (failed(a) || failed(b))
    return failure();
  // The last node writes the result, a Cast when it is not FP32.
  Type element = matmul.getType().getElementType();
  Value bias = matmul.getBias();
  std::string product =
      !bias && element.isF32() ? result : claimName(result + "/product", false);
  addNode("MatMul", {*a, *b}, product, graph);
  if (bias) {
    std::string biased =
        element.isF32() ? result : claimName(result + "/biased", false);
    addNode("Add", {product, castToFloat32(bias, result + "/bias", graph)},
            biased, graph);
    product = biased;
  }
  if (!element.isF32())
    addCastNode(product, result, *getOnnxDataType(element), graph);
  addValueInfo(matmul.getResult(), {}, graph);
  return success();
}
