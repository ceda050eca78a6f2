//===- FP8.cpp - Run the GEMMs that gain from it in FP8 -------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-fp8 (docs/FP8.md): finds the eligible GEMMs, decides which go FP8 with
// one min-cut over GEMMs and shared quantizations (PrecisionCut: a GEMM's
// two labels are its base precision and FP8, a quantization is a value that
// must be converted when any of its GEMMs is FP8), and rewrites them into
// amp.quantize + amp.scaled_matmul with the recipe's scaling state.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/IR/FP8.h"
#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/CostModel.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Dialect/AMP/Transforms/PrecisionCut.h"
#include "amp/Dialect/AMP/Transforms/TrainingDataflow.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFP8
#include "amp/Dialect/AMP/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
/// What an operand of a GEMM is, for its format and its block shape.
enum class OperandRole { Activation, Weight, Gradient };

/// One operand of an FP8 GEMM: the value, its FP8 type and its block shape
/// (empty for per-tensor scaling). Shared by every GEMM that reads the same
/// value in the same format and blocks.
struct Quantization {
  Value value;
  FloatType format;
  SmallVector<int64_t> block;
  /// The GEMMs (indices) that read it, and its modeled time.
  SmallVector<unsigned> readers;
  double us = 0;
  /// Filled when rewriting.
  Value data, scaleInv;
};

/// An eligible GEMM.
struct Gemm {
  onnxg::NodeOp node;
  Value a, b, bias;
  bool transposeA = false, transposeB = false;
  FloatType baseType;
  double fp32Us = 0, baseUs = 0, fp8Us = 0, flops = 0;
  /// With FP8: its share of the quantizations it reads, each split evenly
  /// among the FP8 GEMMs that read it.
  double quantizeUs = 0;
  FP8Choice choice = FP8Choice::Default;
  bool batchedActivations = false;
  unsigned quantA = 0, quantB = 0;
};

struct FP8Pass : amp::impl::AMPFP8Base<FP8Pass> {
  using AMPFP8Base::AMPFP8Base;

  void runOnOperation() override;

private:
  void convert(func::FuncOp func, CostModel &model,
               const PrecisionPolicy &policy, llvm::json::Array &states,
               int64_t &converted);
  /// The GEMM `node` as a Gemm, or the reason it is not eligible.
  FailureOr<Gemm> match(onnxg::NodeOp node, std::string &why);
  /// The quantization of `value` for `gemm` in `role`, deduplicated.
  unsigned quantize(Value value, OperandRole role, bool contractsLastDim);
  /// Builds the quantizations and the FP8 GEMMs of `chosen`.
  void rewrite(func::FuncOp func, ArrayRef<Gemm *> chosen,
               llvm::json::Array &states);

  /// `format` with auto resolved: hybrid or e4m3.
  std::string formatName;
  std::vector<Quantization> quantizations;
  llvm::DenseMap<std::pair<Value, unsigned>, unsigned> quantizationIndex;
  const SeedLinearity *linearity = nullptr;
  llvm::StringSet<> parameters;
};
} // namespace

static bool isGemmType(onnxg::NodeOp node) {
  StringRef type = node.getOpType();
  if (onnxg::isDefaultDomain(node.getDomain()))
    return type == "MatMul" || type == "Gemm";
  return node.getDomain() == "com.microsoft" && type == "FusedMatMul";
}

static bool isStatic(int64_t size) { return !ShapedType::isDynamic(size); }

FailureOr<Gemm> FP8Pass::match(onnxg::NodeOp node, std::string &why) {
  auto fail = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  if (getRegionName(node) == "optimizer")
    return fail("in the optimizer");
  auto decision = node->getAttrOfType<TypeAttr>(kPrecisionAttrName);
  auto reason = node->getAttrOfType<StringAttr>(kReasonAttrName);
  if (!decision || !reason)
    return fail("no precision decision");
  // Classes and pins that keep FP32 for numerics keep it here too.
  StringRef pinned = reason.getValue();
  if (decision.getValue().isF32() && pinned != "cost-model" &&
      pinned != "follow" && pinned != "infer")
    return fail("kept FP32 (" + pinned + ")");
  Gemm gemm;
  gemm.node = node;
  gemm.baseType = dyn_cast<FloatType>(decision.getValue());
  if (!gemm.baseType || gemm.baseType.isF64())
    return fail("not FP32, FP16 or BF16");
  gemm.a = node.getOperand(0);
  gemm.b = node.getOperand(1);
  DictionaryAttr attrs = node.getOnnxAttrsOrEmpty();
  auto getInt = [&](StringRef name) {
    auto attr = attrs.getAs<IntegerAttr>(name);
    return attr ? attr.getInt() : 0;
  };
  auto getFloat = [&](StringRef name) {
    auto attr = attrs.getAs<FloatAttr>(name);
    return attr ? attr.getValueAsDouble() : 1.0;
  };
  StringRef type = node.getOpType();
  if (type != "MatMul") {
    gemm.transposeA = getInt("transA") != 0;
    gemm.transposeB = getInt("transB") != 0;
    if (getFloat("alpha") != 1.0)
      return fail("alpha is not 1");
  }
  if (getInt("transBatchA") || getInt("transBatchB"))
    return fail("transposes batch dimensions");
  if (type == "Gemm" && node.getNumOperands() > 2 &&
      !isa_and_nonnull<onnxg::NoneOp>(node.getOperand(2).getDefiningOp())) {
    auto biasType = dyn_cast<RankedTensorType>(node.getOperand(2).getType());
    if (!biasType || biasType.getRank() != 1 || getFloat("beta") != 1.0)
      return fail("C is not a bias [N] with beta 1");
    gemm.bias = node.getOperand(2);
  }
  auto aType = dyn_cast<RankedTensorType>(gemm.a.getType());
  auto bType = dyn_cast<RankedTensorType>(gemm.b.getType());
  auto resultType = dyn_cast<RankedTensorType>(node.getResult(0).getType());
  if (!aType || !bType || !resultType || aType.getRank() < 2 ||
      (bType.getRank() != 2 && bType.getRank() != aType.getRank()))
    return fail("operands are not [..., M, K] and [K, N] or batched alike");
  if (!isa<FloatType>(aType.getElementType()) ||
      !isa<FloatType>(bType.getElementType()))
    return fail("operands are not float");
  int64_t rank = aType.getRank(), bRank = bType.getRank();
  int64_t k = aType.getDimSize(rank - (gemm.transposeA ? 2 : 1));
  int64_t n = bType.getDimSize(bRank - (gemm.transposeB ? 2 : 1));
  int64_t multiple = recipe == "block" ? 128 : 16;
  if (!isStatic(k) || !isStatic(n) || k % 16 || n % 16)
    return fail("K = " + Twine(k) + " and N = " + Twine(n) +
                " are not static multiples of 16");
  if (k % multiple)
    return fail("K = " + Twine(k) + " is not a multiple of the block, 128");
  if (linearity && linearity->dependsOnSeed(gemm.a) &&
      linearity->dependsOnSeed(gemm.b))
    return fail("both operands are gradients");
  gemm.batchedActivations = rank > 2 && bRank > 2;
  return gemm;
}

/// Whether `value` is a parameter, seen through casts and transposes.
static bool derivesFromParameter(Value value,
                                 const llvm::StringSet<> &parameters) {
  while (true) {
    if (isa<BlockArgument>(value))
      return parameters.contains(onnxg::getValueName(value));
    Operation *op = value.getDefiningOp();
    if (auto castOp = dyn_cast<CastOp>(op)) {
      value = castOp.getInput();
      continue;
    }
    auto node = dyn_cast<onnxg::NodeOp>(op);
    if (!node || !onnxg::isDefaultDomain(node.getDomain()) ||
        node.getNumOperands() == 0 ||
        !llvm::is_contained({"Cast", "Transpose", "Identity"},
                            node.getOpType()))
      return false;
    value = node.getOperand(0);
  }
}

unsigned FP8Pass::quantize(Value value, OperandRole role,
                           bool contractsLastDim) {
  MLIRContext *ctx = value.getContext();
  FloatType fp8Type = role == OperandRole::Gradient && formatName == "hybrid"
                          ? FloatType(Float8E5M2Type::get(ctx))
                          : FloatType(Float8E4M3FNType::get(ctx));
  SmallVector<int64_t> block;
  // 0: per tensor; 1: 128x128 (weights); 2, 3: 128 along the last or the
  // second-to-last dimension (K of the others).
  unsigned blockKind = 0;
  if (recipe == "block") {
    int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
    block.assign(rank, 1);
    if (role == OperandRole::Weight) {
      block[rank - 1] = block[rank - 2] = 128;
      blockKind = 1;
    } else {
      block[rank - (contractsLastDim ? 1 : 2)] = 128;
      blockKind = contractsLastDim ? 2 : 3;
    }
  }
  unsigned layout = (isa<Float8E5M2Type>(fp8Type) ? 1 : 0) + 2 * blockKind;
  auto [it, inserted] =
      quantizationIndex.try_emplace({value, layout}, quantizations.size());
  if (inserted)
    quantizations.push_back({value, fp8Type, block, {}, 0, {}, {}});
  return it->second;
}

/// The part of a state's name that names its value: the value's name, or
/// `value<index>` for an unnamed one.
static std::string getStateStem(Value value, unsigned index) {
  StringRef name = onnxg::getValueName(value);
  return name.empty() ? ("value" + Twine(index)).str() : name.str();
}

/// "e4m3" or "e5m2".
static StringRef getFormatName(FloatType format) {
  return isa<Float8E5M2Type>(format) ? "e5m2" : "e4m3";
}

/// The `block` attribute of a quantization, null for per-tensor scaling.
static DenseI64ArrayAttr getBlockAttr(Builder &builder,
                                      const Quantization &quant) {
  return quant.block.empty() ? nullptr
                             : builder.getDenseI64ArrayAttr(quant.block);
}

void FP8Pass::rewrite(func::FuncOp func, ArrayRef<Gemm *> chosen,
                      llvm::json::Array &states) {
  MLIRContext *ctx = func.getContext();
  OpBuilder builder(ctx);
  Type f32 = Float32Type::get(ctx);
  auto scalarType = RankedTensorType::get({}, f32);
  // The quantizations the chosen GEMMs read, in first-use order.
  llvm::SetVector<unsigned> needed;
  for (Gemm *gemm : chosen) {
    needed.insert(gemm->quantA);
    needed.insert(gemm->quantB);
  }
  SmallVector<Value> histories, amaxes, scales;
  SmallVector<float> maxes;
  // "amp.fp8.<value>" of each delayed-scaling state, in order.
  SmallVector<std::string> prefixes;
  for (unsigned index : needed) {
    Quantization &quant = quantizations[index];
    Value value = quant.value;
    Location loc = value.getLoc();
    auto valueType = cast<RankedTensorType>(value.getType());
    float fp8Max = fp8::getMaxFinite(quant.format);
    Value scale;
    if (recipe == "delayed") {
      std::string prefix = "amp.fp8." + getStateStem(value, index);
      if (llvm::is_contained(prefixes, prefix))
        prefix += ("." + getFormatName(quant.format)).str();
      prefixes.push_back(prefix);
      auto historyType = RankedTensorType::get({amaxHistory}, f32);
      Value history = addStateInput(
          func, prefix + ".amax_history",
          DenseElementsAttr::get(historyType, builder.getF32FloatAttr(0)));
      scale = addStateInput(
          func, prefix + ".scale",
          DenseElementsAttr::get(scalarType, builder.getF32FloatAttr(1)));
      builder.setInsertionPointAfterValue(value);
      Value amax = AmaxOp::create(builder, loc, scalarType, value, nullptr);
      histories.push_back(history);
      amaxes.push_back(amax);
      scales.push_back(scale);
      maxes.push_back(fp8Max);
      states.push_back(llvm::json::Object{
          {"value", onnxg::getValueName(value)},
          {"format", getFormatName(quant.format)},
          {"amax_history", prefix + ".amax_history"},
          {"amax_history_updated", prefix + ".amax_history.updated"},
          {"scale", prefix + ".scale"},
          {"scale_updated", prefix + ".scale.updated"}});
    } else {
      builder.setInsertionPointAfterValue(value);
      auto gridType =
          quant.block.empty()
              ? scalarType
              : RankedTensorType::get(
                    fp8::getBlockGridShape(valueType.getShape(), quant.block),
                    f32);
      Value amax = AmaxOp::create(builder, loc, gridType, value,
                                  getBlockAttr(builder, quant));
      scale = ComputeScaleOp::create(
          builder, loc, gridType, amax, Value(),
          builder.getF32FloatAttr(fp8Max), builder.getI64IntegerAttr(margin),
          recipe == "block" ? builder.getUnitAttr() : nullptr);
    }
    auto quantizeOp = QuantizeOp::create(
        builder, loc, valueType.clone(quant.format), scale.getType(), value,
        scale, getBlockAttr(builder, quant));
    quantizeOp->setAttr(kFP8AttrName,
                        builder.getDictionaryAttr(builder.getNamedAttr(
                            "time_us", builder.getF64FloatAttr(quant.us))));
    quant.data = quantizeOp.getResult();
    quant.scaleInv = quantizeOp.getScaleInv();
  }
  for (Gemm *gemm : chosen) {
    onnxg::NodeOp node = gemm->node;
    builder.setInsertionPoint(node);
    Quantization &a = quantizations[gemm->quantA];
    Quantization &b = quantizations[gemm->quantB];
    auto matmul = ScaledMatMulOp::create(
        builder, node.getLoc(), node.getResult(0).getType(), a.data, a.scaleInv,
        b.data, b.scaleInv, gemm->bias,
        gemm->transposeA ? builder.getUnitAttr() : nullptr,
        gemm->transposeB ? builder.getUnitAttr() : nullptr,
        getBlockAttr(builder, a), getBlockAttr(builder, b));
    matmul->setAttr(
        kFP8AttrName,
        builder.getDictionaryAttr({
            builder.getNamedAttr(
                "op_type",
                builder.getStringAttr(PrecisionPolicy::getOpTypeKey(node))),
            builder.getNamedAttr("flops", builder.getF64FloatAttr(gemm->flops)),
            builder.getNamedAttr("fp32_us",
                                 builder.getF64FloatAttr(gemm->fp32Us)),
            builder.getNamedAttr("base_us",
                                 builder.getF64FloatAttr(gemm->baseUs)),
            builder.getNamedAttr("fp8_us",
                                 builder.getF64FloatAttr(gemm->fp8Us)),
            builder.getNamedAttr("quantize_us",
                                 builder.getF64FloatAttr(gemm->quantizeUs)),
            builder.getNamedAttr(
                "a", builder.getStringAttr(getFormatName(a.format))),
            builder.getNamedAttr(
                "b", builder.getStringAttr(getFormatName(b.format))),
        }));
    if (auto region = node->getAttrOfType<StringAttr>(kRegionAttrName))
      matmul->setAttr(kRegionAttrName, region);
    SmallVector<Value> operands(node->getOperands());
    node.getResult(0).replaceAllUsesWith(matmul.getResult());
    node.erase();
    // The casts the quantizations read around.
    for (Value operand : operands)
      if (auto castOp = operand.getDefiningOp<CastOp>())
        if (castOp->use_empty())
          castOp.erase();
  }
  if (histories.empty())
    return;
  Operation *ret = func.getBody().front().getTerminator();
  builder.setInsertionPoint(ret);
  auto update = FP8UpdateOp::create(builder, func.getLoc(), histories, amaxes,
                                    scales, builder.getDenseF32ArrayAttr(maxes),
                                    builder.getI64IntegerAttr(margin),
                                    builder.getStringAttr(amaxAlgo));
  for (auto [index, prefix] : llvm::enumerate(prefixes)) {
    addStateOutput(func, prefix + ".amax_history.updated",
                   update.getNewHistories()[index]);
    addStateOutput(func, prefix + ".scale.updated",
                   update.getNewScales()[index]);
  }
}

void FP8Pass::convert(func::FuncOp func, CostModel &model,
                      const PrecisionPolicy &policy, llvm::json::Array &states,
                      int64_t &converted) {
  quantizations.clear();
  quantizationIndex.clear();
  parameters.clear();
  // Gradients are the values that depend on the backward seeds.
  std::optional<SeedLinearity> seedLinearity;
  if (auto training = func->getAttrOfType<DictionaryAttr>(kTrainingAttrName)) {
    onnxg::ValueNames names(func);
    SmallVector<Value> seeds;
    if (auto list = training.getAs<ArrayAttr>("seeds"))
      for (auto name : list.getAsValueRange<StringAttr>())
        if (Value seed = names.lookup(name))
          seeds.push_back(seed);
    if (auto list = training.getAs<ArrayAttr>("parameters"))
      for (auto name : list.getAsValueRange<StringAttr>())
        parameters.insert(name);
    seedLinearity.emplace(func.getBody().front(), seeds);
  }
  linearity = seedLinearity ? &*seedLinearity : nullptr;

  std::vector<Gemm> gemms;
  func.walk([&](onnxg::NodeOp node) {
    if (!isGemmType(node))
      return;
    std::string why;
    FailureOr<Gemm> gemm = match(node, why);
    if (failed(gemm)) {
      if (emitRemarks)
        node.emitRemark() << "amp-fp8: not eligible: " << why;
      return;
    }
    gemms.push_back(*gemm);
  });

  // Costs, quantizations and the cut.
  PrecisionCut cut;
  FloatType f32 = Float32Type::get(&getContext());
  for (auto [gemmIndex, gemm] : llvm::enumerate(gemms)) {
    auto op = cast<PrecisionOpInterface>(gemm.node.getOperation());
    model.getSizes().resetGuesses();
    gemm.fp32Us = model.getOpTimeUs(op, f32);
    gemm.flops = op.estimateFlops(model.getSizes());
    gemm.baseUs = model.getOpTimeUs(op, gemm.baseType);
    gemm.fp8Us = model.getFP8GemmTimeUs(
        op, cast<FloatType>(getElementTypeOrSelf(gemm.node.getResult(0))));
    gemm.choice = policy.classifyFP8(gemm.node);
    auto roleOf = [&](Value value) {
      if (linearity && linearity->dependsOnSeed(value))
        return OperandRole::Gradient;
      return derivesFromParameter(value, parameters) ? OperandRole::Weight
                                                     : OperandRole::Activation;
    };
    // Quantize what an amp.cast converts, not its copy: one cast less.
    auto source = [](Value value) {
      auto castOp = value.getDefiningOp<CastOp>();
      return castOp ? castOp.getInput() : value;
    };
    gemm.quantA = quantize(source(gemm.a), roleOf(gemm.a), !gemm.transposeA);
    gemm.quantB = quantize(source(gemm.b), roleOf(gemm.b), gemm.transposeB);
    quantizations[gemm.quantA].readers.push_back(gemmIndex);
    if (gemm.quantB != gemm.quantA)
      quantizations[gemm.quantB].readers.push_back(gemmIndex);
    PrecisionCut::Pin pin = PrecisionCut::Pin::None;
    bool allowed = gemm.choice == FP8Choice::Always || mode == "always" ||
                   !gemm.batchedActivations;
    if (gemm.choice == FP8Choice::Never || mode == "never" || !allowed ||
        gemm.fp8Us <= 0)
      pin = PrecisionCut::Pin::FP32;
    else if (gemm.choice == FP8Choice::Always || mode == "always")
      pin = PrecisionCut::Pin::Low;
    cut.addOp(gemm.baseUs, gemm.fp8Us, pin);
  }
  for (Quantization &quant : quantizations) {
    quant.us = model.getQuantizeTimeUs(quant.value, recipe == "current",
                                       /*fused=*/quant.value.getDefiningOp() !=
                                           nullptr);
    cut.addInput(quant.readers, /*otherReaders=*/false, quant.us,
                 /*foldable=*/false);
  }
  // An amp.cast that only GEMMs read goes away when all of them are FP8
  // (quantizations read around it): it costs only while one stays in the
  // base precision. A producer pinned FP8 that costs nothing carries it.
  llvm::MapVector<Operation *, SmallVector<unsigned>> castReaders;
  for (auto [index, gemm] : llvm::enumerate(gemms))
    for (Value operand : {gemm.a, gemm.b})
      if (auto castOp = operand.getDefiningOp<CastOp>())
        castReaders[castOp].push_back(index);
  for (auto &entry : castReaders) {
    Operation *castOp = entry.first;
    ArrayRef<unsigned> readers = entry.second;
    if (!llvm::all_of(castOp->getUsers(), [&](Operation *user) {
          return llvm::any_of(readers, [&](unsigned index) {
            return gemms[index].node.getOperation() == user;
          });
        }))
      continue;
    unsigned carrier = cut.addOp(0, 0, PrecisionCut::Pin::Low);
    cut.addResult(carrier, readers, /*otherReaders=*/false,
                  model.getCastTimeUs(cast<CastOp>(castOp).getInput(),
                                      cast<FloatType>(getElementTypeOrSelf(
                                          castOp->getResult(0)))),
                  /*downUs=*/0);
  }
  SmallVector<bool> fp8 = cut.solve();
  for (Quantization &quant : quantizations) {
    auto fp8Readers = llvm::count_if(
        quant.readers, [&](unsigned reader) { return fp8[reader]; });
    for (unsigned reader : quant.readers)
      if (fp8[reader])
        gemms[reader].quantizeUs += quant.us / fp8Readers;
  }
  SmallVector<Gemm *> chosen;
  for (auto [index, gemm] : llvm::enumerate(gemms)) {
    if (emitRemarks) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "amp-fp8: ";
      if (fp8[index])
        os << "FP8";
      else
        os << "stays " << gemm.baseType;
      double quantizeUs = quantizations[gemm.quantA].us;
      if (gemm.quantB != gemm.quantA)
        quantizeUs += quantizations[gemm.quantB].us;
      os << ": " << llvm::format("%.2f", gemm.baseUs) << " us in "
         << gemm.baseType << ", " << llvm::format("%.2f", gemm.fp8Us)
         << " us in FP8 plus " << llvm::format("%.2f", quantizeUs)
         << " us quantizing its operands";
      if (gemm.choice != FP8Choice::Default)
        os << " (policy "
           << (gemm.choice == FP8Choice::Always ? "always" : "never") << ")";
      else if (gemm.batchedActivations && mode != "always")
        os << " (batched activations, as attention)";
      gemm.node.emitRemark() << text;
    }
    if (fp8[index])
      chosen.push_back(&gemm);
  }
  converted += chosen.size();
  if (!chosen.empty())
    rewrite(func, chosen, states);
}

void FP8Pass::runOnOperation() {
  ModuleOp module = getOperation();
  if (mode != "auto" && mode != "always" && mode != "never") {
    emitError(module.getLoc())
        << "amp-fp8: bad fp8 '" << mode << "'; expected auto, always or never";
    return signalPassFailure();
  }
  if (recipe != "delayed" && recipe != "current" && recipe != "block") {
    emitError(module.getLoc()) << "amp-fp8: bad recipe '" << recipe
                               << "'; expected delayed, current or block";
    return signalPassFailure();
  }
  if (format != "auto" && format != "hybrid" && format != "e4m3") {
    emitError(module.getLoc())
        << "amp-fp8: bad format '" << format
        << "'; expected auto, hybrid or e4m3 (E5M2 everywhere "
           "is not a training recipe)";
    return signalPassFailure();
  }
  // TE's defaults: HYBRID for the per-tensor recipes, E4M3 for block
  // scaling, whose per-block scales need less range.
  formatName = format != "auto"    ? format.getValue()
               : recipe == "block" ? "e4m3"
                                   : "hybrid";
  if (!fp8::parseAmaxAlgo(amaxAlgo)) {
    emitError(module.getLoc()) << "amp-fp8: bad amax-algo '" << amaxAlgo
                               << "'; expected max or most_recent";
    return signalPassFailure();
  }
  if (amaxHistory < 1 || margin < 0 || margin > 64) {
    emitError(module.getLoc()) << "amp-fp8: amax-history must be positive and "
                                  "margin in [0, 64]";
    return signalPassFailure();
  }
  std::optional<CostModel> model = CostModel::create(
      device, casts, defaultDimSize, dimSizes, module, "amp-fp8");
  if (!model)
    return signalPassFailure();
  PrecisionPolicy policy;
  if ((!policyFile.empty() &&
       failed(policy.addFile(policyFile, module.getLoc()))) ||
      failed(policy.addFP8Overrides(fp8OpTypes, fp8Nodes, module.getLoc())))
    return signalPassFailure();
  if (mode != "never" && !model->supports(Float8E4M3FNType::get(&getContext())))
    emitWarning(module.getLoc())
        << "amp-fp8: device '" << device
        << "' has no FP8 tensor cores; no GEMM goes FP8";
  llvm::json::Array states;
  int64_t converted = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    llvm::json::Array funcStates;
    int64_t funcConverted = 0;
    convert(func, *model, policy, funcStates, funcConverted);
    Builder builder(&getContext());
    func->setAttr(
        kFP8AttrName,
        builder.getDictionaryAttr(
            {builder.getNamedAttr("recipe", builder.getStringAttr(recipe)),
             builder.getNamedAttr("format", builder.getStringAttr(formatName)),
             builder.getNamedAttr("gemms",
                                  builder.getI64IntegerAttr(funcConverted)),
             builder.getNamedAttr(
                 "states", builder.getI64IntegerAttr(funcStates.size()))}));
    converted += funcConverted;
    for (llvm::json::Value &state : funcStates)
      states.push_back(std::move(state));
  }
  llvm::json::Object settings{{"recipe", std::string(recipe)},
                              {"format", formatName},
                              {"gemms", converted},
                              {"states", std::move(states)}};
  if (recipe == "delayed") {
    settings["amax_history"] = int64_t(amaxHistory);
    settings["amax_algo"] = std::string(amaxAlgo);
    settings["margin"] = int64_t(margin);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(settings));
  onnxg::setMetadataProp(module, "amp_opt.fp8", text);
}
