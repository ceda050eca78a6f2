//===- InsertLossScaling.cpp - Static and dynamic loss scaling -----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-insert-loss-scaling: multiplies the backward seeds that
// amp-analyze-training found by a loss scale, unscales every gradient
// before anything reads it and, in dynamic mode, skips the update after an
// overflow and updates the scale (docs/LossScaling.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/TrainingDataflow.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPINSERTLOSSSCALING
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;
using onnxg::ValueNames;

/// Names of the state the pass threads through the step (DESIGN.md).
static constexpr StringLiteral kScaleName = "amp.loss_scale";
static constexpr StringLiteral kCountName = "amp.growth_count";
static constexpr StringLiteral kFiniteName = "amp.grads_finite";

namespace {
class InsertLossScalingPass
    : public amp::impl::AMPInsertLossScalingBase<InsertLossScalingPass> {
public:
  using AMPInsertLossScalingBase::AMPInsertLossScalingBase;
  void runOnOperation() override;

private:
  LogicalResult checkOptions(ModuleOp module);
  /// Scales `func`; false, with a warning, when it has nothing to scale.
  FailureOr<bool> scale(func::FuncOp func, DictionaryAttr training);
  std::string describeSettings(bool withFiniteOutput);
};
} // namespace

/// `value` as printf's %g writes it: 2, 0.5, 1e+40.
static std::string formatNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

LogicalResult InsertLossScalingPass::checkOptions(ModuleOp module) {
  auto fail = [&]() {
    return emitError(module.getLoc()) << "amp-insert-loss-scaling: ";
  };
  if (mode != "dynamic" && mode != "static" && mode != "none")
    return fail() << "mode='" << mode << "' is not dynamic, static or none";
  float init = static_cast<float>(initScale);
  if (!(init > 0.0f) || !std::isfinite(init))
    return fail() << "init-scale=" << formatNumber(initScale)
                  << " is not a positive finite FP32 number";
  if (mode != "dynamic")
    return success();
  if (!(growthFactor >= 1.0))
    return fail() << "growth-factor=" << formatNumber(growthFactor)
                  << " is below 1";
  if (!(backoffFactor > 0.0 && backoffFactor < 1.0))
    return fail() << "backoff-factor=" << formatNumber(backoffFactor)
                  << " does not lie in (0, 1)";
  if (growthInterval < 1)
    return fail() << "growth-interval=" << growthInterval << " is below 1";
  if (!(minScale > 0.0 && minScale <= maxScale &&
        std::isfinite(static_cast<float>(maxScale))))
    return fail() << "min-scale=" << formatNumber(minScale)
                  << " and max-scale=" << formatNumber(maxScale)
                  << " do not satisfy 0 < min <= max < inf";
  return success();
}

/// The location of a new value named `name`, as the exporter reads it.
static Location nameLoc(Location loc, ArrayRef<std::string> names) {
  return onnxg::makeNodeLoc(loc.getContext(), names.front(), names, loc);
}

/// Makes `value` the input of a new op `create` builds right after its
/// definition, and every other use read the op's result, except uses by
/// ops of region `keepIn` (a gradient that feeds other gradients stays
/// scaled in the backward; a seed constant the forward shares stays 1).
template <typename Create>
static Value insertAfter(OpBuilder &builder, Value value, Create create,
                         StringRef keepIn = "") {
  OpBuilder::InsertionGuard guard(builder);
  Block *block = value.getParentBlock();
  if (Operation *op = value.getDefiningOp())
    builder.setInsertionPointAfter(op);
  else
    builder.setInsertionPointToStart(block);
  Value result = create();
  value.replaceUsesWithIf(result, [&](OpOperand &use) {
    Operation *owner = block->findAncestorOpInBlock(*use.getOwner());
    if (owner == result.getDefiningOp())
      return false;
    return keepIn.empty() || !owner || getRegionName(owner) != keepIn;
  });
  return result;
}

/// The names in the string array `key` of the `amp.training` attribute.
static SmallVector<StringRef> getNames(DictionaryAttr training, StringRef key) {
  SmallVector<StringRef> names;
  if (auto list = training.getAs<ArrayAttr>(key))
    for (Attribute name : list)
      if (auto str = dyn_cast<StringAttr>(name))
        names.push_back(str.getValue());
  return names;
}

FailureOr<bool> InsertLossScalingPass::scale(func::FuncOp func,
                                             DictionaryAttr training) {
  MLIRContext *ctx = &getContext();
  OpBuilder builder(ctx);
  ValueNames names(func);
  Location loc = func.getLoc();
  auto kind = training.getAs<StringAttr>("kind");
  auto lossName = training.getAs<StringAttr>("loss");
  bool differentiatesLoss = kind && kind.getValue() == "onnx.gradient";

  // Resolve the names the analysis recorded.
  auto resolve = [&](StringRef name) -> FailureOr<Value> {
    if (Value value = names.lookup(name))
      return value;
    return emitError(func.getLoc()) << "amp.training names '" << name
                                    << "', which is no value of the graph",
           failure();
  };
  // The distinct values the list `key` names.
  auto resolveAll = [&](StringRef key,
                        SmallVectorImpl<Value> &values) -> LogicalResult {
    for (StringRef name : getNames(training, key)) {
      FailureOr<Value> value = resolve(name);
      if (failed(value))
        return failure();
      if (!llvm::is_contained(values, *value))
        values.push_back(*value);
    }
    return success();
  };
  // The analysis lists where the scale comes out when that is more than
  // the gradients (docs/TrainingGraphs.md).
  SmallVector<Value> seeds, gradients;
  if (failed(resolveAll("seeds", seeds)) ||
      failed(resolveAll(getNames(training, "unscale").empty() ? "gradients"
                                                              : "unscale",
                        gradients)))
    return failure();
  Value loss = lossName && !lossName.getValue().empty()
                   ? names.lookup(lossName.getValue())
                   : Value();
  if (gradients.empty() || (seeds.empty() && !(differentiatesLoss && loss))) {
    // A training step without a seed: the analysis has said why.
    if (kind && kind.getValue() == "training_step" && seeds.empty())
      return false;
    emitWarning(func.getLoc())
        << "no " << (gradients.empty() ? "gradients" : "seed")
        << " found: loss scaling was not inserted and no "
           "barrier was placed";
    return false;
  }
  for (Value value : llvm::concat<Value>(seeds, gradients))
    if (!amp::isFloatTensor(value.getType()))
      return emitError(func.getLoc())
                 << "'" << onnxg::getValueName(value) << "' has type "
                 << value.getType() << "; loss scaling needs float tensors",
             failure();

  auto scalarType = [&](Type element) {
    return RankedTensorType::get({}, element);
  };
  Type f32 = Float32Type::get(ctx);
  Value scale = addStateInput(
      func, kScaleName,
      DenseElementsAttr::get(scalarType(f32),
                             builder.getF32FloatAttr(initScale).getValue()));

  // Scale the seeds, or the loss a Gradient op differentiates.
  if (seeds.empty()) {
    // Only the Gradient ops read the scaled loss, by name: the graph's own
    // uses (its loss output) keep the loss.
    std::string scaled = (lossName.getValue() + ".scaled").str();
    OpBuilder::InsertionGuard guard(builder);
    if (Operation *op = loss.getDefiningOp())
      builder.setInsertionPointAfter(op);
    else
      builder.setInsertionPointToStart(&func.getBody().front());
    ScaleLossOp::create(builder, nameLoc(loc, {scaled}), loss.getType(), loss,
                        scale);
    for (Operation &op : func.getBody().front())
      if (auto node = dyn_cast<onnxg::NodeOp>(op))
        if (node.getOpType() == "Gradient" &&
            node.getOnnxAttrsOrEmpty().get("y") == lossName)
          node.setOnnxAttr("y", builder.getStringAttr(scaled));
  }
  for (Value seed : seeds) {
    std::string name = (onnxg::getValueName(seed) + ".scaled").str();
    insertAfter(
        builder, seed,
        [&] {
          return ScaleLossOp::create(builder, nameLoc(loc, {name}),
                                     seed.getType(), seed, scale);
        },
        /*keepIn=*/"forward");
  }

  // Unscale every gradient before anything reads it.
  SmallVector<Value> unscaled;
  for (Value gradient : gradients) {
    std::string name = (onnxg::getValueName(gradient) + ".unscaled").str();
    auto type = cast<RankedTensorType>(gradient.getType()).clone(f32);
    unscaled.push_back(insertAfter(
        builder, gradient,
        [&] {
          return UnscaleOp::create(builder, nameLoc(loc, {name}), type,
                                   gradient, scale);
        },
        /*keepIn=*/"backward"));
  }
  if (mode == "static") {
    func->setAttr(kLossScalingAttrName,
                  builder.getStringAttr(describeSettings(false)));
    return true;
  }

  // Dynamic: check, skip the update after an overflow, update the scale.
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  builder.setInsertionPoint(ret);
  Type i64 = builder.getI64Type();
  Value count = addStateInput(
      func, kCountName,
      DenseElementsAttr::get(scalarType(i64), builder.getI64IntegerAttr(0)));
  Value finite =
      AllFiniteOp::create(builder, nameLoc(loc, {std::string(kFiniteName)}),
                          scalarType(builder.getI1Type()), unscaled);
  SmallVector<Attribute> updates;
  if (auto list = training.getAs<ArrayAttr>("updates"))
    updates.assign(list.begin(), list.end());
  for (Attribute entry : updates) {
    auto pair = dyn_cast<ArrayAttr>(entry);
    if (!pair || pair.size() != 2 || !isa<StringAttr>(pair[0]) ||
        !isa<StringAttr>(pair[1]))
      return emitError(func.getLoc(),
                       "amp.training 'updates' must hold [updated, "
                       "previous] name pairs"),
             failure();
    FailureOr<Value> updated = resolve(cast<StringAttr>(pair[0]).getValue());
    FailureOr<Value> previous = resolve(cast<StringAttr>(pair[1]).getValue());
    if (failed(updated) || failed(previous))
      return failure();
    if (!isa<RankedTensorType>(updated->getType()) ||
        updated->getType() != previous->getType())
      return emitError(func.getLoc())
                 << "update '" << cast<StringAttr>(pair[0])
                 << "' and its previous value differ in type",
             failure();
    std::string name = (cast<StringAttr>(pair[0]).getValue() + ".kept").str();
    Value kept = UpdateIfFiniteOp::create(builder, nameLoc(loc, {name}),
                                          updated->getType(), finite, *updated,
                                          *previous);
    ret->replaceUsesOfWith(*updated, kept);
  }
  if (updates.empty()) {
    // The optimizer runs elsewhere: hand it zeros after an overflow, and
    // tell the caller.
    for (Value value : unscaled) {
      std::string name = (onnxg::getValueName(value) + ".finite").str();
      Value zero = onnxg::InitializerOp::create(
          builder, NameLoc::get(builder.getStringAttr(name + ".zero")),
          scalarType(f32), name + ".zero",
          DenseElementsAttr::get(scalarType(f32), 0.0f));
      Value kept = UpdateIfFiniteOp::create(
          builder, nameLoc(loc, {name}), value.getType(), finite, value, zero);
      value.replaceAllUsesExcept(kept, kept.getDefiningOp());
      // all_finite itself reads the unscaled value, not the gated one.
      finite.getDefiningOp()->replaceUsesOfWith(kept, value);
    }
    addStateOutput(func, kFiniteName, finite);
  }
  auto update = UpdateScaleOp::create(
      builder,
      nameLoc(loc, {std::string(kScaleName) + ".updated",
                    std::string(kCountName) + ".updated"}),
      TypeRange{scalarType(f32), scalarType(i64)}, scale, count, finite,
      builder.getF32FloatAttr(growthFactor),
      builder.getF32FloatAttr(backoffFactor),
      builder.getI64IntegerAttr(growthInterval),
      builder.getF32FloatAttr(minScale), builder.getF32FloatAttr(maxScale));
  addStateOutput(func, std::string(kScaleName) + ".updated",
                 update.getNewScale());
  addStateOutput(func, std::string(kCountName) + ".updated",
                 update.getNewCount());
  // The gated uses of gradients now come before the check they read.
  if (!sortTopologically(&body, body.without_terminator()))
    return emitError(func.getLoc(), "the step has a cycle after loss scaling"),
           failure();
  func->setAttr(kLossScalingAttrName,
                builder.getStringAttr(describeSettings(updates.empty())));
  return true;
}

/// The settings as the JSON of metadata `amp_opt.loss_scaling`.
std::string InsertLossScalingPass::describeSettings(bool withFiniteOutput) {
  llvm::json::Object settings{{"mode", std::string(mode)},
                              {"init_scale", double(initScale)},
                              {"scale", kScaleName}};
  if (mode == "dynamic") {
    settings["scale_updated"] = (kScaleName + ".updated").str();
    settings["count"] = kCountName;
    settings["count_updated"] = (kCountName + ".updated").str();
    settings["growth_interval"] = int64_t(growthInterval);
    settings["growth_factor"] = double(growthFactor);
    settings["backoff_factor"] = double(backoffFactor);
    settings["min_scale"] = double(minScale);
    settings["max_scale"] = double(maxScale);
    settings["grads_finite"] =
        withFiniteOutput ? llvm::json::Value(kFiniteName) : nullptr;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(settings));
  return text;
}

void InsertLossScalingPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(checkOptions(module)))
    return signalPassFailure();
  if (mode == "none")
    return;
  // Scaling a converted step again would scale its seeds twice and clash
  // with the state the first conversion added.
  if (!onnxg::getMetadataProp(module, kLossScalingMetadataKey).empty()) {
    emitError(module.getLoc())
        << "the step already has loss scaling (metadata "
        << kLossScalingMetadataKey
        << ": amp-opt converted it before); convert the original step, or "
           "pass loss-scale=none";
    return signalPassFailure();
  }
  std::string settings;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    auto training = func->getAttrOfType<DictionaryAttr>(kTrainingAttrName);
    if (!training) {
      emitError(func.getLoc(), "the function has no amp.training attribute: "
                               "run amp-analyze-training first");
      return signalPassFailure();
    }
    auto kind = training.getAs<StringAttr>("kind");
    if (kind &&
        (kind.getValue() == "forward" || kind.getValue() == "optimizer"))
      continue;
    FailureOr<bool> scaled = scale(func, training);
    if (failed(scaled))
      return signalPassFailure();
    if (*scaled)
      settings = func->getAttrOfType<StringAttr>(kLossScalingAttrName).str();
  }
  if (settings.empty())
    return;
  // Tools that run the step find its state here.
  onnxg::setMetadataProp(module, kLossScalingMetadataKey, settings);
}
