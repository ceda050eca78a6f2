//===- TrainingDataflow.cpp - A training step from its dataflow ----------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Seed linearity, constant splats, update names and the forms of the
// backward seed, for amp-analyze-training (docs/TrainingGraphs.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/TrainingDataflow.h"
#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/IR/OpTable.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::amp;
using onnxg::NodeOp;

//===----------------------------------------------------------------------===//
// Seed linearity
//===----------------------------------------------------------------------===//

/// The dependence of the results of an op with linear columns `product` and
/// `sum` whose operands depend on the seed as `deps` (not all independent).
static SeedDependence combine(ValueRange operands,
                              ArrayRef<SeedDependence> deps,
                              onnxg::SlotMask product, onnxg::SlotMask sum) {
  using onnxg::containsSlot;
  bool hasProduct = false, sumLinear = false, sumAffine = false;
  int productLinear = 0;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    if (isa<NoneType>(operand.getType()))
      continue;
    SeedDependence dep = deps[i];
    if (dep == SeedDependence::Nonlinear)
      return SeedDependence::Nonlinear;
    if (containsSlot(product, i)) {
      hasProduct = true;
      productLinear += dep == SeedDependence::Linear;
    } else if (containsSlot(sum, i)) {
      if (dep == SeedDependence::Linear)
        sumLinear = true;
      else if (!isConstantZero(operand))
        sumAffine = true;
    } else if (dep != SeedDependence::Independent) {
      return SeedDependence::Nonlinear;
    }
  }
  // One linear factor, and every added term linear (`p - lr * g` is not).
  bool linear =
      hasProduct ? productLinear == 1 && !sumAffine : sumLinear && !sumAffine;
  return linear ? SeedDependence::Linear : SeedDependence::Nonlinear;
}

/// The linear columns of `op`, or none when it is linear in nothing.
static std::optional<std::pair<onnxg::SlotMask, onnxg::SlotMask>>
getLinearSlots(Operation *op) {
  if (isa<CastOp, ScaleLossOp>(op))
    return std::make_pair(onnxg::slots(0), onnxg::kNone);
  auto node = dyn_cast<NodeOp>(op);
  if (!node)
    return std::nullopt;
  // ATen nodes (ORTModule's): linear in their first input for the
  // operators onnxg-expand-aten expands to linear ops.
  StringRef overload;
  StringRef aten = onnxg::getATenOperator(node, &overload);
  if (!aten.empty())
    return (overload.empty() || overload == "vec") &&
                   llvm::is_contained(
                       {"embedding",
                        "embedding_backward",
                        "avg_pool2d",
                        "avg_pool2d_backward",
                        "_adaptive_avg_pool2d",
                        "_adaptive_avg_pool2d_backward",
                        "max_pool2d_with_indices_backward",
                        "numpy_T",
                        "value_selecting_reduction_backward",
                        "upsample_nearest1d",
                        "upsample_nearest2d",
                        "upsample_nearest3d",
                        "upsample_nearest1d_backward",
                        "upsample_nearest2d_backward",
                        "upsample_nearest3d_backward",
                        "native_group_norm_backward",
                        "binary_cross_entropy_with_logits_backward",
                        "diagonal",
                        "diagonal_backward",
                        "unfold",
                        "unfold_backward"},
                       aten)
               ? std::optional(std::make_pair(onnxg::slots(0), onnxg::kNone))
               : std::nullopt;
  const onnxg::OpInfo *info =
      onnxg::lookupOp(node.getDomain(), node.getOpType());
  if (!info ||
      (info->linearProduct == onnxg::kNone && info->linearSum == onnxg::kNone))
    return std::nullopt;
  return std::make_pair(info->linearProduct, info->linearSum);
}

SeedLinearity::SeedLinearity(Block &body, ArrayRef<Value> seeds) : body(body) {
  llvm::DenseSet<Value> seedSet(seeds.begin(), seeds.end());
  for (Value seed : seeds)
    dependence[seed] = SeedDependence::Linear;
  // Only the ops downstream of the seeds can depend on them: visit those,
  // in block order.
  llvm::SetVector<Operation *> reached;
  SmallVector<Value> work(seeds.begin(), seeds.end());
  while (!work.empty())
    for (Operation *user : work.pop_back_val().getUsers()) {
      Operation *owner = body.findAncestorOpInBlock(*user);
      if (owner && !owner->hasTrait<OpTrait::IsTerminator>() &&
          reached.insert(owner))
        llvm::append_range(work, owner->getResults());
    }
  SmallVector<Operation *> ops = reached.takeVector();
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *opPtr : ops) {
    Operation &op = *opPtr;
    SmallVector<SeedDependence> deps;
    bool any = false;
    for (Value operand : op.getOperands()) {
      deps.push_back(lookup(operand));
      any |= deps.back() != SeedDependence::Independent;
    }
    if (op.getNumRegions() != 0) {
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(op.getRegions(), captured);
      any |= llvm::any_of(captured, [&](Value v) { return dependsOnSeed(v); });
    }
    SeedDependence result = SeedDependence::Independent;
    if (!any || isa<UnscaleOp>(op)) {
      result = SeedDependence::Independent;
    } else if (auto node = dyn_cast<NodeOp>(op);
               node && onnxg::isDefaultDomain(node.getDomain()) &&
               (node.getOpType() == "Shape" || node.getOpType() == "Size")) {
      result = SeedDependence::Independent;
    } else if (auto slots = getLinearSlots(&op);
               slots && op.getNumRegions() == 0) {
      result = combine(op.getOperands(), deps, slots->first, slots->second);
    } else {
      result = SeedDependence::Nonlinear;
    }
    for (Value value : op.getResults()) {
      if (seedSet.contains(value))
        continue;
      SeedDependence dep = result;
      // An untyped result (a contrib op's) may be float.
      if (dep == SeedDependence::Linear && isa<TensorType>(value.getType()) &&
          !isFloatTensor(value.getType()))
        dep = SeedDependence::Nonlinear;
      if (dep != SeedDependence::Independent)
        dependence[value] = dep;
    }
  }
}

SmallVector<Value> SeedLinearity::getFrontier() const {
  llvm::SetVector<Value> frontier;
  auto visit = [&](Value value) {
    if (!isLinear(value))
      return;
    for (Operation *user : value.getUsers()) {
      Operation *owner = body.findAncestorOpInBlock(*user);
      if (!owner)
        continue;
      bool readsLinearly = !owner->hasTrait<OpTrait::IsTerminator>() &&
                           owner->getNumResults() != 0 &&
                           llvm::all_of(owner->getResults(), [&](Value result) {
                             return isLinear(result);
                           });
      if (!readsLinearly)
        frontier.insert(value);
    }
  };
  for (BlockArgument arg : body.getArguments())
    visit(arg);
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults())
      visit(result);
  return frontier.takeVector();
}

SmallVector<Operation *> SeedLinearity::getNonlinearOps() const {
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getResults(), [&](Value value) {
          return lookup(value) == SeedDependence::Nonlinear;
        }))
      ops.push_back(&op);
  return ops;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// The common value of the elements of `attr`, when they are all equal
/// (floats, or integers held in a dense attribute).
static std::optional<double> getSplatValue(Attribute attr) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  if (!elements)
    return std::nullopt;
  auto type = cast<ShapedType>(elements.getType());
  if (type.getNumElements() == 0)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(elements);
  if (dense && isa<IntegerType>(type.getElementType())) {
    auto values = dense.getValues<APInt>();
    APInt first = *values.begin();
    if (!dense.isSplat() &&
        llvm::any_of(values, [&](const APInt &v) { return v != first; }))
      return std::nullopt;
    return double(first.getSExtValue());
  }
  auto floatType = dyn_cast<FloatType>(type.getElementType());
  if (!floatType)
    return std::nullopt;
  if (dense) {
    if (dense.isSplat())
      return dense.getSplatValue<APFloat>().convertToDouble();
    auto values = dense.getValues<APFloat>();
    APFloat first = *values.begin();
    for (APFloat value : values)
      if (value.bitwiseIsEqual(first) == false)
        return std::nullopt;
    return first.convertToDouble();
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(elements);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  unsigned bits = floatType.getWidth(), bytes = bits / 8;
  if (bits % 8 != 0 || bits > 64 ||
      data.size() != size_t(type.getNumElements()) * bytes)
    return std::nullopt;
  // Every element equals the first when the bytes repeat with its period.
  if (std::memcmp(data.data(), data.data() + bytes, data.size() - bytes) != 0)
    return std::nullopt;
  uint64_t raw = 0;
  std::memcpy(&raw, data.data(), bytes);
  return APFloat(floatType.getFloatSemantics(), APInt(bits, raw))
      .convertToDouble();
}

std::optional<double> mlir::amp::getSplatConstant(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto init = dyn_cast<onnxg::InitializerOp>(op))
      return getSplatValue(init.getValue());
    auto node = dyn_cast<NodeOp>(op);
    if (!node || !onnxg::isDefaultDomain(node.getDomain()))
      return std::nullopt;
    StringRef type = node.getOpType();
    DictionaryAttr attrs = node.getOnnxAttrsOrEmpty();
    if (type == "Constant") {
      if (auto scalar = attrs.getAs<FloatAttr>("value_float"))
        return scalar.getValueAsDouble();
      return getSplatValue(attrs.get("value"));
    }
    if (type == "ConstantOfShape")
      return attrs.get("value") ? getSplatValue(attrs.get("value"))
                                : std::optional<double>(0.0);
    // Ops that only move or reshape the elements.
    bool reshapes = type == "Expand" || type == "Reshape" ||
                    type == "Squeeze" || type == "Unsqueeze" ||
                    type == "Identity" || type == "Flatten";
    bool castsFloat =
        type == "Cast" && isFloatTensor(node.getOutputs()[0].getType());
    if ((!reshapes && !castsFloat) || node.getInputs().empty())
      return std::nullopt;
    value = node.getInputs()[0];
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Update names
//===----------------------------------------------------------------------===//

bool mlir::amp::isUpdateName(StringRef output, StringRef input) {
  static constexpr StringLiteral kPrefixes[] = {
      "new_", "new.", "next_", "next.", "updated_", "updated."};
  static constexpr StringLiteral kSuffixes[] = {"_new",  ".new",     "_next",
                                                ".next", "_updated", ".updated",
                                                "_out",  ".out",     "'"};
  for (StringRef prefix : kPrefixes)
    if (output.size() == prefix.size() + input.size() &&
        output.starts_with(prefix) && output.ends_with(input))
      return true;
  for (StringRef suffix : kSuffixes)
    if (output.size() == input.size() + suffix.size() &&
        output.starts_with(input) && output.ends_with(suffix))
      return true;
  return false;
}

SmallVector<std::pair<BlockArgument, unsigned>>
mlir::amp::getAffineUpdateSources(Value output) {
  static constexpr unsigned kMaxDepth = 4;
  // (value, whether an addition or selection lies between it and `output`)
  SmallVector<std::pair<Value, bool>> level = {{output, false}};
  llvm::DenseSet<Value> seen[2] = {{output}, {}};
  SmallVector<std::pair<BlockArgument, unsigned>> found;
  for (unsigned depth = 0; depth <= kMaxDepth && !level.empty(); ++depth) {
    SmallVector<std::pair<Value, bool>> next;
    auto visit = [&](Value operand, bool added) {
      if (seen[added].insert(operand).second)
        next.push_back({operand, added});
    };
    for (auto [value, added] : level) {
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (added && arg.getType() == output.getType() &&
            llvm::none_of(found, [&](auto pair) { return pair.first == arg; }))
          found.push_back({arg, depth});
        continue;
      }
      auto node = value.getDefiningOp<NodeOp>();
      if (!node || !onnxg::isDefaultDomain(node.getDomain()))
        continue;
      StringRef type = node.getOpType();
      auto inputs = node.getInputs();
      if (llvm::is_contained({"Add", "Sub", "Sum", "Max", "Min"}, type)) {
        for (Value operand : inputs)
          visit(operand, true);
      } else if (type == "Where" && inputs.size() == 3) {
        visit(inputs[1], true);
        visit(inputs[2], true);
      } else if ((type == "Mul" || type == "Div") && inputs.size() == 2) {
        // Scaled by a one-element factor (lr, beta, 1 - lr * wd).
        if (hasOneElement(inputs[1]))
          visit(inputs[0], added);
        if (type == "Mul" && hasOneElement(inputs[0]))
          visit(inputs[1], added);
      } else if ((type == "Neg" || type == "Identity" || type == "Cast") &&
                 inputs.size() == 1) {
        visit(inputs[0], added);
      } else if (type == "Reshape" && !inputs.empty() &&
                 inputs[0].getType() == value.getType()) {
        visit(inputs[0], added); // to its own shape
      }
    }
    level = std::move(next);
  }
  return found;
}

SmallVector<std::pair<StringRef, StringRef>>
mlir::amp::getNamePairSplits(StringRef spec,
                             function_ref<bool(StringRef, StringRef)> isPair) {
  SmallVector<std::pair<StringRef, StringRef>> splits;
  for (size_t colon = spec.find(':'); colon != StringRef::npos;
       colon = spec.find(':', colon + 1)) {
    StringRef first = spec.take_front(colon),
              second = spec.drop_front(colon + 1);
    if (isPair(first, second))
      splits.push_back({first, second});
  }
  return splits;
}

StringRef mlir::amp::stripRolePrefix(StringRef name) {
  static constexpr StringLiteral kRoles[] = {
      "param.",  "params.", "parameter.", "parameters.", "state.",
      "states.", "buffer.", "buffers.",   "opt_state.",  "optimizer."};
  for (StringRef role : kRoles)
    if (name.size() > role.size() && name.starts_with(role))
      return name.drop_front(role.size());
  return name;
}

//===----------------------------------------------------------------------===//
// Seeds
//===----------------------------------------------------------------------===//

/// The default-domain op type of `value`'s producer, or "".
static StringRef getProducerType(Value value) {
  auto node = value.getDefiningOp<NodeOp>();
  return node && onnxg::isDefaultDomain(node.getDomain()) ? node.getOpType()
                                                          : StringRef();
}

/// The loss and the values it is a reshape or copy of: `Shape` of any of
/// them is the loss's shape.
static SmallVector<Value> getLossAliases(Value loss) {
  SmallVector<Value> aliases = {loss};
  for (Value value = loss;;) {
    StringRef type = getProducerType(value);
    if (type != "Reshape" && type != "Identity" && type != "Squeeze" &&
        type != "Unsqueeze" && type != "Flatten" && type != "Cast")
      return aliases;
    value = value.getDefiningOp<NodeOp>().getInputs()[0];
    aliases.push_back(value);
  }
}

/// Whether `value` is ones_like(loss): ConstantOfShape of 1 or Expand of 1
/// to the Shape of the loss or of one of its `aliases`, then moved or cast
/// (an integer 1 cast to float).
static bool isOnesLike(Value value, ArrayRef<Value> aliases) {
  auto isShapeOfLoss = [&](Value shape) {
    auto node = shape.getDefiningOp<NodeOp>();
    return getProducerType(shape) == "Shape" &&
           llvm::is_contained(aliases, node.getInputs()[0]);
  };
  for (;;) {
    auto node = value.getDefiningOp<NodeOp>();
    StringRef type = getProducerType(value);
    if (type == "ConstantOfShape")
      return node.getInputs().size() == 1 &&
             isShapeOfLoss(node.getInputs()[0]) &&
             getSplatValue(node.getOnnxAttrsOrEmpty().get("value")) == 1.0;
    if (type == "Expand" && node.getInputs().size() == 2 &&
        isShapeOfLoss(node.getInputs()[1]))
      return getSplatConstant(node.getInputs()[0]) == 1.0;
    if ((type != "Cast" && type != "Identity" && type != "Reshape" &&
         type != "Squeeze" && type != "Unsqueeze" && type != "Flatten" &&
         type != "Expand") ||
        node.getInputs().empty())
      return false;
    value = node.getInputs()[0];
  }
}

/// The number of elements of `value`'s static type, or -1.
static int64_t getNumElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : -1;
}

bool mlir::amp::hasOneElement(Value value) {
  return getNumElements(value) == 1;
}

namespace {
/// What the seed search knows about a function body.
struct SeedSearch {
  SeedSearch(Block &body, const llvm::DenseSet<Operation *> &forward,
             ArrayRef<Value> updatedInputs)
      : body(body), forward(forward) {
    // What the forward computes from the graph's inputs, and the data it
    // reads (inputs that no output updates).
    llvm::DenseSet<Value> fromInputs(body.getArguments().begin(),
                                     body.getArguments().end());
    for (Operation &op : body.without_terminator()) {
      if (!forward.contains(&op))
        continue;
      for (Value operand : op.getOperands())
        if (isa<BlockArgument>(operand) &&
            !llvm::is_contained(updatedInputs, operand))
          activations.insert(operand);
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return fromInputs.contains(v); }))
        for (Value result : op.getResults()) {
          fromInputs.insert(result);
          activations.insert(result);
        }
    }
  }

  /// Whether some op reads `value` and no forward op does.
  bool readOnlyByBackward(Value value) const {
    bool any = false;
    for (Operation *user : value.getUsers()) {
      Operation *owner = body.findAncestorOpInBlock(*user);
      if (!owner || forward.contains(owner))
        return false;
      any = true;
    }
    return any;
  }

  bool readsActivation(Operation &op) const {
    return llvm::any_of(op.getOperands(),
                        [&](Value v) { return activations.contains(v); });
  }

  /// Backward evidence: an op linear in `seeds` also reads an activation or
  /// data (`dY * X`; the optimizer's `lr * g` reads neither); with `strict`, no
  /// op that depends on them non-linearly does (the backward is linear all the
  /// way to the gradients).
  bool isBackwardOf(ArrayRef<Value> seeds, bool strict) const {
    SeedLinearity linearity(body, seeds);
    bool evidence = false;
    for (Operation &op : body.without_terminator()) {
      if (!readsActivation(op) || op.getNumResults() == 0)
        continue;
      SeedDependence dep = linearity.lookup(op.getResult(0));
      evidence |= dep == SeedDependence::Linear;
      if (strict && dep == SeedDependence::Nonlinear)
        return false;
    }
    return evidence;
  }

  Block &body;
  const llvm::DenseSet<Operation *> &forward;
  llvm::DenseSet<Value> activations;
};
} // namespace

/// `seeds` without those computed from another (Expand(1, Shape(loss)) of a
/// constant 1 that is a seed too): scaling both would scale twice.
static SmallVector<Value> withoutDerived(Block &body, ArrayRef<Value> seeds) {
  SmallVector<Value> kept;
  for (Value seed : seeds)
    if (llvm::none_of(seeds, [&](Value other) {
          return other != seed &&
                 SeedLinearity(body, other).dependsOnSeed(seed);
        }))
      kept.push_back(seed);
  return kept;
}

SmallVector<Value>
mlir::amp::findSeeds(Block &body, Value loss,
                     const llvm::DenseSet<Operation *> &forward,
                     ArrayRef<Value> updatedInputs, std::string &why) {
  SeedSearch search(body, forward, updatedInputs);
  SmallVector<Value> aliases = getLossAliases(loss);
  int64_t lossElements = getNumElements(loss);
  auto func = dyn_cast<func::FuncOp>(body.getParentOp());

  // ones_like(loss) and the constants with the mean's 1/N folded in.
  SmallVector<Value> onesLike, folded;
  for (BlockArgument arg : body.getArguments()) {
    // A seed input: initial value 1, or named as one.
    if (!isFloatTensor(arg.getType()) || getNumElements(arg) != lossElements ||
        !search.readOnlyByBackward(arg) || !func)
      continue;
    auto init = func.getArgAttrOfType<ElementsAttr>(
        arg.getArgNumber(), onnxg::ONNXGraphDialect::kInitializerAttrName);
    std::string name = onnxg::getValueName(arg).lower();
    std::optional<double> value = getSplatValue(init);
    if ((value && *value == 1.0) ||
        (!init && (StringRef(name).contains("seed") ||
                   StringRef(name).ends_with("grad"))))
      onesLike.push_back(arg);
  }
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 1 || forward.contains(&op))
      continue;
    Value result = op.getResult(0);
    if (!isFloatTensor(result.getType()))
      continue;
    StringRef type = getProducerType(result);
    // ConstantOfShape(Shape(loss)) of 1, Expand(1, Shape(loss)).
    if (isOnesLike(result, aliases)) {
      onesLike.push_back(result);
      continue;
    }
    // A constant, read only by the backward.
    bool isConstant = isa<onnxg::InitializerOp>(op) || type == "Constant" ||
                      type == "ConstantOfShape";
    std::optional<double> splat =
        isConstant ? getSplatConstant(result) : std::nullopt;
    if (!splat || *splat == 0.0 || !search.readOnlyByBackward(result))
      continue;
    if (*splat == 1.0 && getNumElements(result) == lossElements)
      onesLike.push_back(result);
    else
      folded.push_back(result);
  }

  // Each candidate must start a backward: linear ops that read forward
  // values (a constant 1 of the optimizer's does not).
  SmallVector<Value> seeds;
  for (Value candidate : onesLike)
    if (search.isBackwardOf(candidate, /*strict=*/false))
      seeds.push_back(candidate);
  if (!seeds.empty())
    return withoutDerived(body, seeds);
  // A folded constant (GELU's 0.5 is one too) must make the whole backward
  // linear; several may share the seed (the sum of two means).
  for (Value candidate : folded)
    if (search.isBackwardOf(candidate, /*strict=*/true))
      seeds.push_back(candidate);
  if (seeds.empty()) {
    SmallVector<Value> starts;
    for (Value candidate : folded)
      if (search.isBackwardOf(candidate, /*strict=*/false))
        starts.push_back(candidate);
    if (!starts.empty() && search.isBackwardOf(starts, /*strict=*/true))
      seeds = starts;
  }
  seeds = withoutDerived(body, seeds);
  if (seeds.empty())
    why = "no ones_like('" + onnxg::getValueName(loss).str() +
          "') (ConstantOfShape or Expand of 1 to its Shape, a constant 1 of "
          "its shape or a seed input, read only by backward ops) and no "
          "constant with the mean's 1/N folded in starts a backward that is "
          "linear in it";
  return seeds;
}

/// Appends an input of `func` named `name` with initial value `value`.
Value mlir::amp::addStateInput(func::FuncOp func, StringRef name,
                               DenseElementsAttr value) {
  Builder builder(func.getContext());
  unsigned index = func.getNumArguments();
  NamedAttribute attr = builder.getNamedAttr(
      onnxg::ONNXGraphDialect::kInitializerAttrName, value);
  (void)func.insertArgument(index, value.getType(),
                            builder.getDictionaryAttr(attr),
                            NameLoc::get(builder.getStringAttr(name)));
  return func.getArgument(index);
}

/// Appends `value` to the results of `func` under the output name `name`.
void mlir::amp::addStateOutput(func::FuncOp func, StringRef name, Value value) {
  Builder builder(func.getContext());
  unsigned index = func.getNumResults();
  NamedAttribute attr = builder.getNamedAttr(
      onnxg::ONNXGraphDialect::kNameAttrName, builder.getStringAttr(name));
  (void)func.insertResult(index, value.getType(),
                          builder.getDictionaryAttr(attr));
  Operation *ret = func.getBody().front().getTerminator();
  ret->insertOperands(ret->getNumOperands(), value);
}
