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

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"

using namespace mlir;
using namespace mlir::onnxg;
using namespace mlir::onnxg::detail;

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
  std::string input = names[unscale.getInput()];
  if (!unscale.getInput().getType().getElementType().isF32()) {
    std::string cast = claimName(result + "/cast", /*mayShadow=*/false);
    addCastNode(input, cast, onnx::TensorProto::FLOAT, graph);
    input = cast;
  }
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
    onnx::AttributeProto &keep =
        *addNode("ReduceSum", {zeros}, sum, graph).add_attribute();
    keep.set_name("keepdims");
    keep.set_type(onnx::AttributeProto::INT);
    keep.set_i(0);
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
