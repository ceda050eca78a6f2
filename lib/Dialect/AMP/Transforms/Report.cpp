//===- Report.cpp - The mixed-precision report ----------------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-report: what amp-assign-precision decided and what the casts cost, as
// a JSON file (docs/Report.md) and a short summary on stderr.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/CostModel.h"
#include "amp/Dialect/AMP/Transforms/MemoryPlan.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Dialect/AMP/Transforms/RecomputePlan.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPREPORT
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
class ReportPass : public amp::impl::AMPReportBase<ReportPass> {
public:
  using AMPReportBase::AMPReportBase;
  void runOnOperation() override;
};
} // namespace

/// An op that kept its types for want of them (`unknown-type`), for the
/// summary: its name and type, and the op without a schema whose untyped
/// result it reads, directly or through other untyped ops.
static std::string describeUntyped(Operation *op) {
  std::string text = (PrecisionPolicy::getNodeName(op) + "' (" +
                      PrecisionPolicy::getOpTypeKey(op) + ")")
                         .str();
  auto untypedOperand = [](Operation *user) -> Value {
    for (Value operand : user->getOperands())
      if (isa<onnxg::UnknownType>(operand.getType()))
        return operand;
    return Value();
  };
  Operation *source = op;
  // The untyped values form a DAG; its depth bounds the walk.
  while (Value operand = untypedOperand(source)) {
    Operation *producer = operand.getDefiningOp();
    if (!producer)
      return text + ", reads the graph input '" +
             onnxg::getValueName(operand).str() + "', which has no type";
    source = producer;
  }
  if (source == op)
    return text;
  StringRef name = PrecisionPolicy::getNodeName(source);
  return text + ", reads what " + PrecisionPolicy::getOpTypeKey(source) +
         (name.empty() ? "" : " '" + name.str() + "'") + " computes";
}

/// The `training` section of the report, and its summary line.
static llvm::json::Value describeTraining(DictionaryAttr roles,
                                          std::string &summary) {
  auto text = [&](StringRef key) {
    auto value = roles.getAs<StringAttr>(key);
    return value ? value.str() : std::string();
  };
  auto count = [&](StringRef key) {
    auto list = roles.getAs<ArrayAttr>(key);
    return static_cast<int64_t>(list ? list.size() : 0);
  };
  summary = "amp: " + text("kind") + ": loss '" + text("loss") + "', " +
            std::to_string(count("parameters")) + " parameters with gradients";
  return llvm::json::Object{{"kind", text("kind")},
                            {"loss", text("loss")},
                            {"seeds", count("seeds")},
                            {"parameters", count("parameters")},
                            {"updates", count("updates")}};
}

/// A value's name for people: its ONNX name, else its producer's node
/// name, else the producer's op name.
static std::string getHolderName(Value value) {
  StringRef name = onnxg::getValueName(value);
  if (!name.empty())
    return name.str();
  Operation *producer = value.getDefiningOp();
  if (!producer)
    return "";
  name = PrecisionPolicy::getNodeName(producer);
  return name.empty() ? producer->getName().getStringRef().str() : name.str();
}

/// The report's `memory` section: the planner's peak, what the inputs
/// take, the activations the backward keeps, and the largest values live
/// at the peak.
static llvm::json::Value describeMemory(const MemoryPlan &plan,
                                        func::FuncOp func) {
  llvm::json::Array top;
  for (const MemoryPlan::Holder &holder : plan.getPeakHolders(5))
    top.push_back(llvm::json::Object{{"name", getHolderName(holder.value)},
                                     {"bytes", holder.bytes}});
  llvm::json::Object memory{
      {"function", func.getSymName()},
      {"peak_bytes", plan.getPeakBytes()},
      {"peak_at", plan.getPeakOp()
                      ? PrecisionPolicy::getNodeName(plan.getPeakOp())
                      : StringRef()},
      {"input_bytes", plan.getInputBytes()},
      {"peak_holders", std::move(top)}};
  if (plan.hasRegions()) {
    memory["saved_activation_bytes"] = plan.getSavedBytes();
    memory["saved_activations"] = int64_t(plan.getSavedActivations().size());
  }
  return memory;
}

/// The float `key` of a record the passes leave (amp.assignment, amp.fp8),
/// 0 when it is absent.
static double getNumber(DictionaryAttr record, StringRef key) {
  auto value = record.getAs<FloatAttr>(key);
  return value ? value.getValueAsDouble() : 0.0;
}

/// The report's `recompute` section from amp-recompute's record and the
/// planner's view of the step after it; `summary` gets its line.
static llvm::json::Value describeRecompute(DictionaryAttr record,
                                           const MemoryPlan &plan,
                                           func::FuncOp func,
                                           std::string &summary) {
  auto number = [&](StringRef key) { return getNumber(record, key); };
  llvm::json::Object byType;
  if (auto types = record.getAs<DictionaryAttr>("recomputed_by_type"))
    for (NamedAttribute entry : types)
      byType[entry.getName().getValue()] =
          cast<IntegerAttr>(entry.getValue()).getInt();
  int64_t recomputed = 0;
  if (auto count = record.getAs<IntegerAttr>("recomputed"))
    recomputed = count.getInt();
  llvm::json::Array saved;
  for (const MemoryPlan::Holder &holder : plan.getSavedActivations())
    saved.push_back(llvm::json::Object{
        {"name", getHolderName(holder.value)},
        {"bytes", holder.bytes},
        {"reason",
         getSaveReason(getRecomputeKind(holder.value.getDefiningOp()))}});
  llvm::json::Array clones;
  func.walk([&](Operation *op) {
    if (!op->hasAttr(kRecomputedAttrName))
      return;
    StringRef name = PrecisionPolicy::getNodeName(op);
    clones.push_back(name.empty() ? op->getName().getStringRef() : name);
  });
  StringRef mode = "";
  if (auto value = record.getAs<StringAttr>("mode"))
    mode = value.getValue();
  double extraPercent =
      number("flops_before") > 0
          ? 100 * number("extra_flops") / number("flops_before")
          : 0.0;
  llvm::raw_string_ostream os(summary);
  os << "amp: recompute=" << mode << ": " << recomputed << " ops recomputed (+"
     << llvm::format("%.2f", extraPercent) << "% FLOPs), saved activations "
     << llvm::format("%.1f", number("saved_bytes_before") / 1e6) << " MB -> "
     << llvm::format("%.1f", number("saved_bytes_after") / 1e6) << " MB, peak "
     << llvm::format("%.1f", number("peak_bytes_before") / 1e6) << " MB -> "
     << llvm::format("%.1f", number("peak_bytes_after") / 1e6) << " MB\n";
  llvm::json::Object section{
      {"function", func.getSymName()},
      {"mode", mode},
      {"budget_bytes", record.get("budget_bytes")
                           ? llvm::json::Value(number("budget_bytes"))
                           : nullptr},
      {"saved_activation_bytes",
       llvm::json::Object{{"before", number("saved_bytes_before")},
                          {"after", number("saved_bytes_after")}}},
      {"peak_bytes", llvm::json::Object{{"before", number("peak_bytes_before")},
                                        {"after", number("peak_bytes_after")}}},
      {"recomputed_ops", recomputed},
      {"recomputed_by_type", std::move(byType)},
      {"recomputed_nodes", std::move(clones)},
      {"extra_flops", number("extra_flops")},
      {"extra_flops_percent", extraPercent},
      {"extra_modeled_us", number("extra_us")},
      {"extra_modeled_percent",
       number("us_before") > 0 ? 100 * number("extra_us") / number("us_before")
                               : 0.0},
      {"saved", std::move(saved)}};
  if (auto met = record.getAs<BoolAttr>("budget_met"))
    section["budget_met"] = met.getValue();
  if (auto proven = record.getAs<BoolAttr>("optimal_proven"))
    section["optimal_proven"] = proven.getValue();
  for (StringRef key : {"peak_checked_plans", "peak_skipped_plans"})
    if (auto count = record.getAs<IntegerAttr>(key))
      section[key] = count.getInt();
  if (record.get("fastest_extra_us"))
    section["fastest_extra_modeled_us"] = number("fastest_extra_us");
  return section;
}

void ReportPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::optional<CostModel> model = CostModel::create(
      device, casts, defaultDimSize, dimSizes, module, "amp-report");
  if (!model)
    return signalPassFailure();
  DimSizes &sizes = model->getSizes();
  // Every dynamic dimension an estimate guessed, in order of first use.
  llvm::SetVector<StringRef> guessedDims;
  llvm::StringSet<> guessedDimNames;
  Type f32 = Float32Type::get(&getContext());

  int64_t total = 0, low = 0, inserted = 0, fused = 0, remaining = 0;
  double flops = 0, lowFlops = 0, fp32Us = 0, ampUs = 0, castUs = 0;
  // What amp-assign-precision's objective said: the modeled time of the
  // propagation rules' decisions and of the cut, and how many decisions
  // change with the guessed dimensions 8x larger.
  double propagateUs = 0, cutUs = 0;
  bool anyOptimal = false;
  int64_t freeOps = 0, sensitivityChanged = 0, sensitivityDimSize = 0;
  bool sensitivityKnown = false;
  std::string precision = "low precision";
  // Ops the cost model kept in FP32, and the largest of them by FLOPs.
  int64_t costKept = 0;
  double largestKeptFlops = -1;
  std::string largestKept;
  // Ops that kept their types because a data slot has no type.
  int64_t untyped = 0;
  std::string firstUntyped;
  // What amp-fp8 did: GEMMs in FP8, quantizations, scaling states.
  int64_t fp8Gemms = 0, quantizations = 0, fp8States = 0;
  StringRef fp8Recipe, fp8Format;
  // Per op type: [total, low precision].
  llvm::MapVector<StringRef, std::pair<int64_t, int64_t>> byType;
  // Owns the op type keys byType refers to.
  llvm::StringSet<> typeNames;
  llvm::json::Array decisions;
  // What amp-analyze-training and amp-insert-loss-scaling found and did.
  llvm::json::Value training = nullptr;
  llvm::json::Value lossScaling = llvm::json::Object{{"mode", "none"}};
  std::string trainingSummary;
  llvm::json::Value memory = nullptr, recompute = nullptr;
  std::string recomputeSummary;
  double peakBytes = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto roles = func->getAttrOfType<DictionaryAttr>(kTrainingAttrName);
    auto kind = roles ? roles.getAs<StringAttr>("kind") : StringAttr();
    if (kind && kind.getValue() != "forward")
      training = describeTraining(roles, trainingSummary);
    if (auto settings = func->getAttrOfType<StringAttr>(kLossScalingAttrName)) {
      llvm::Expected<llvm::json::Value> parsed =
          llvm::json::parse(settings.getValue());
      if (parsed)
        lossScaling = std::move(*parsed);
      else
        llvm::consumeError(parsed.takeError());
    }
    if (auto count = func->getAttrOfType<IntegerAttr>(kCastsInsertedAttrName))
      inserted += count.getInt();
    if (auto count = func->getAttrOfType<IntegerAttr>(kCastsFusedAttrName))
      fused += count.getInt();
    if (func.isExternal())
      continue;
    if (auto record = func->getAttrOfType<DictionaryAttr>(kFP8AttrName)) {
      fp8Recipe = record.getAs<StringAttr>("recipe").getValue();
      fp8Format = record.getAs<StringAttr>("format").getValue();
      if (auto states = record.getAs<IntegerAttr>("states"))
        fp8States += states.getInt();
    }
    auto assignment = func->getAttrOfType<DictionaryAttr>(kAssignmentAttrName);
    auto mode =
        assignment ? assignment.getAs<StringAttr>("mode") : StringAttr();
    auto lowType = assignment ? assignment.getAs<TypeAttr>("low") : TypeAttr();
    double ampUsBefore = ampUs;
    // Every op of the body and of its subgraphs, in order.
    SmallVector<Operation *> ops;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op != func)
        ops.push_back(op);
    });
    for (Operation *opInBody : ops) {
      Operation &op = *opInBody;
      if (auto castOp = dyn_cast<CastOp>(op)) {
        ++remaining;
        double us = model->getCastTimeUs(
            castOp.getInput(),
            cast<FloatType>(castOp.getType().getElementType()));
        ampUs += us;
        castUs += us;
        continue;
      }
      if (auto record = op.getAttrOfType<DictionaryAttr>(kFP8AttrName)) {
        // amp-fp8's quantizations and GEMMs, with their modeled times.
        auto number = [&](StringRef key) { return getNumber(record, key); };
        if (isa<QuantizeOp>(op)) {
          ampUs += number("time_us");
          ++quantizations;
          continue;
        }
        auto opType = record.getAs<StringAttr>("op_type");
        StringRef type =
            typeNames.insert(opType ? opType.getValue() : "scaled_matmul")
                .first->getKey();
        auto &counts = byType[type];
        ++counts.first;
        ++counts.second;
        ++total;
        ++low;
        ++fp8Gemms;
        flops += number("flops");
        lowFlops += number("flops");
        fp32Us += number("fp32_us");
        ampUs += number("fp8_us");
        llvm::json::Object entry{
            {"name", PrecisionPolicy::getNodeName(&op)},
            {"op_type", type},
            {"precision", "fp8"},
            {"reason", "fp8"},
            {"flops", number("flops")},
            {"time_us",
             llvm::json::Object{{"fp32", number("fp32_us")},
                                {"base", number("base_us")},
                                {"fp8", number("fp8_us")},
                                {"quantize", number("quantize_us")}}},
            {"formats", llvm::json::Object{
                            {"a", record.getAs<StringAttr>("a").getValue()},
                            {"b", record.getAs<StringAttr>("b").getValue()}}}};
        if (auto region = op.getAttrOfType<StringAttr>(kRegionAttrName))
          entry["region"] = region.getValue();
        if (!file.empty())
          decisions.push_back(std::move(entry));
        continue;
      }
      auto decision = op.getAttrOfType<TypeAttr>(kPrecisionAttrName);
      auto reason = op.getAttrOfType<StringAttr>(kReasonAttrName);
      if (!decision)
        continue;
      if (reason && reason.getValue() == "unknown-type" && !untyped++)
        firstUntyped = describeUntyped(&op);
      bool isLow = decision.getValue() != f32;
      ++total;
      low += isLow;
      StringRef type =
          typeNames.insert(PrecisionPolicy::getOpTypeKey(&op)).first->getKey();
      auto &counts = byType[type];
      ++counts.first;
      counts.second += isLow;
      if (isLow)
        precision = isa<BFloat16Type>(decision.getValue()) ? "bf16" : "fp16";
      sizes.resetGuesses();
      std::string typeName;
      llvm::raw_string_ostream os(typeName);
      os << decision.getValue();
      llvm::json::Object entry{{"name", PrecisionPolicy::getNodeName(&op)},
                               {"op_type", type},
                               {"precision", typeName},
                               {"reason", reason ? reason.getValue() : ""}};
      if (auto precisionOp = dyn_cast<PrecisionOpInterface>(op)) {
        double opFlops = precisionOp.estimateFlops(sizes);
        flops += opFlops;
        lowFlops += isLow ? opFlops : 0;
        if (!isLow && reason && reason.getValue() == "cost-model") {
          ++costKept;
          if (opFlops > largestKeptFlops) {
            largestKeptFlops = opFlops;
            largestKept = PrecisionPolicy::getNodeName(&op);
          }
        }
        entry["flops"] = opFlops;
        double opFP32Us = model->getOpTimeUs(precisionOp, cast<FloatType>(f32));
        fp32Us += opFP32Us;
        ampUs += model->getOpTimeUs(precisionOp,
                                    cast<FloatType>(decision.getValue()));
        // The op's time at each label, and the casts it reads and whose
        // input it writes.
        llvm::json::Object times{{"fp32", opFP32Us}};
        auto lowLabel = isLow     ? dyn_cast<FloatType>(decision.getValue())
                        : lowType ? dyn_cast<FloatType>(lowType.getValue())
                                  : FloatType();
        if (lowLabel)
          times["low"] = model->getOpTimeUs(precisionOp, lowLabel);
        entry["time_us"] = std::move(times);
        int64_t castsIn = llvm::count_if(op.getOperands(), [](Value value) {
          return value.getDefiningOp<CastOp>() != nullptr;
        });
        int64_t castsOut = llvm::count_if(op.getResults(), [](Value value) {
          return llvm::any_of(value.getUsers(), [](Operation *user) {
            return isa<CastOp>(user);
          });
        });
        entry["casts"] = llvm::json::Object{{"in", castsIn}, {"out", castsOut}};
      }
      if (auto region = op.getAttrOfType<StringAttr>(kRegionAttrName))
        entry["region"] = region.getValue();
      if (!sizes.getGuesses().empty()) {
        llvm::json::Array names;
        for (const std::string &name : sizes.getGuesses()) {
          names.push_back(name);
          guessedDims.insert(guessedDimNames.insert(name).first->getKey());
        }
        entry["guessed_dims"] = std::move(names);
      }
      // The decisions go only to the file: a large step's take gigabytes.
      if (!file.empty())
        decisions.push_back(std::move(entry));
    }
    // The memory planner's view of the converted step: the function with
    // the highest peak.
    MemoryPlan plan(func.getBody().front(), sizes);
    sizes.resetGuesses();
    if (memory == nullptr || plan.getPeakBytes() > peakBytes) {
      peakBytes = plan.getPeakBytes();
      memory = describeMemory(plan, func);
    }
    if (auto record = func->getAttrOfType<DictionaryAttr>(kRecomputeAttrName))
      recompute = describeRecompute(record, plan, func, recomputeSummary);
    // The objective's values: those of the cut, or with assign=propagate the
    // modeled time of this function itself.
    if (mode && mode.getValue() == "optimal") {
      anyOptimal = true;
      auto number = [&](StringRef key) { return getNumber(assignment, key); };
      propagateUs += number("propagate_us");
      cutUs += number("cut_us");
      if (auto count = assignment.getAs<IntegerAttr>("free_ops"))
        freeOps += count.getInt();
      if (auto count = assignment.getAs<IntegerAttr>("sensitivity_changed")) {
        sensitivityChanged += count.getInt();
        sensitivityKnown = true;
      }
      if (auto size = assignment.getAs<IntegerAttr>("sensitivity_dim_size"))
        sensitivityDimSize = size.getInt();
    } else {
      propagateUs += ampUs - ampUsBefore;
    }
  }

  if (fp8Gemms)
    precision = "fp8";
  // The summary, for people.
  llvm::raw_ostream &err = llvm::errs();
  if (total == 0 && remaining == 0) {
    // Nothing was decided (precision=fp32): every op kept its types.
    err << "amp: no precision decisions: every op keeps its types\n";
  } else {
    err << "amp: " << low << " of " << total << " ops in " << precision << " ("
        << llvm::format("%.1f", flops > 0 ? 100 * lowFlops / flops : 0.0)
        << "% of FLOPs), " << remaining << " casts (" << inserted
        << " inserted, " << fused << " fused), modeled "
        << llvm::format("%.1f", fp32Us) << " us FP32 -> "
        << llvm::format("%.1f", ampUs) << " us on " << device;
    if (anyOptimal)
      err << " (propagation rules: " << llvm::format("%.1f", propagateUs)
          << " us)";
    err << "\n";
  }
  // Nothing went low because nothing was worth it: say so, and how to
  // force it, rather than leave an FP32 step that looks converted.
  if (low == 0 && costKept > 0)
    err << "amp: no op is faster in low precision on " << device
        << " at these sizes: the cost model kept all " << costKept
        << " GEMMs and convolutions in FP32 (the largest, '" << largestKept
        << "', " << llvm::format("%.3g", largestKeptFlops)
        << " FLOPs, is bound by kernel launches and casts); force them "
           "with op-class=MatMul:always,Gemm:always,Conv:always, or give "
           "the real sizes with dim=<name>:<size>"
        << (model->hasFusedCasts()
                ? ""
                : ", or cast inside neighbouring kernels with casts=fused")
        << "\n";
  // Untyped ops are silently FP32: say how many, and why.
  if (untyped > 0)
    err << "amp: " << untyped
        << " ops keep their types because ONNX shape inference could not "
           "type their data (the first, '"
        << firstUntyped
        << "): ops without an ONNX schema (other domains, contrib ops that "
           "amp-opt does not type) type their outputs only by the file's "
           "value_info; they and what they feed stay as they are\n";
  if (!trainingSummary.empty()) {
    const llvm::json::Object *settings = lossScaling.getAsObject();
    std::optional<StringRef> mode = settings->getString("mode");
    err << trainingSummary << ", loss scaling " << mode.value_or("none");
    if (std::optional<double> init = settings->getNumber("init_scale"))
      err << " from " << llvm::format("%g", *init);
    err << "\n";
  }
  if (!guessedDims.empty())
    err << "amp: modeled times assume default-dim-size=" << defaultDimSize
        << " for dims " << llvm::join(guessedDims, ", ")
        << " (set sizes with dim=<name>:<size>)\n";
  if (!fp8Recipe.empty())
    err << "amp: fp8: " << fp8Gemms << " GEMMs in FP8 (recipe " << fp8Recipe
        << ", " << fp8Format << "), " << quantizations << " quantizations, "
        << fp8States << " scaling states\n";
  err << recomputeSummary;
  if (sensitivityKnown)
    err << "amp: sensitivity: " << sensitivityChanged << " of " << freeOps
        << " cost-decided ops change with default-dim-size="
        << sensitivityDimSize << "\n";
  if (file.empty())
    return;

  llvm::json::Object types;
  for (auto &[type, counts] : byType)
    types[type] = llvm::json::Object{{"total", counts.first},
                                     {"low_precision", counts.second}};
  llvm::json::Object report{
      {"precision", precision},
      {"device", device.getValue()},
      {"ops", llvm::json::Object{{"total", total},
                                 {"low_precision", low},
                                 {"by_type", std::move(types)}}},
      {"casts",
       llvm::json::Object{
           {"inserted", inserted},
           {"eliminated", std::max<int64_t>(inserted - fused - remaining, 0)},
           {"fused", fused},
           {"remaining", remaining}}},
      {"flops",
       llvm::json::Object{{"total", flops}, {"low_precision", lowFlops}}},
      {"modeled_time_us", llvm::json::Object{{"fp32", fp32Us},
                                             {"amp", ampUs},
                                             {"casts", castUs},
                                             {"propagate", propagateUs}}},
      {"cut_us", anyOptimal ? llvm::json::Value(cutUs) : nullptr},
      {"sensitivity",
       sensitivityKnown
           ? llvm::json::Value(llvm::json::Object{
                 {"default_dim_size", sensitivityDimSize / kSensitivityFactor},
                 {"scaled_dim_size", sensitivityDimSize},
                 {"cost_decided_ops", freeOps},
                 {"changed", sensitivityChanged}})
           : nullptr},
      {"sizes_guessed", !guessedDims.empty()},
      {"guessed_dims", llvm::json::Array(guessedDims.getArrayRef())},
      {"training", std::move(training)},
      {"memory", std::move(memory)},
      {"recompute", std::move(recompute)},
      {"loss_scaling", std::move(lossScaling)},
      {"fp8", fp8Recipe.empty() ? llvm::json::Value(nullptr)
                                : llvm::json::Value(llvm::json::Object{
                                      {"recipe", fp8Recipe},
                                      {"format", fp8Format},
                                      {"gemms", fp8Gemms},
                                      {"quantizations", quantizations},
                                      {"states", fp8States}})},
      {"decisions", std::move(decisions)}};
  llvm::Error error =
      llvm::writeToOutput(file, [&](llvm::raw_ostream &os) -> llvm::Error {
        os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report)))
           << "\n";
        return llvm::Error::success();
      });
  if (error) {
    emitError(module.getLoc()) << "amp-report: cannot write '" << file
                               << "': " << llvm::toString(std::move(error));
    return signalPassFailure();
  }
}
