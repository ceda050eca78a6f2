//===- UpgradeOpset.cpp - Raise the default-domain ONNX opset ---*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Rewrites the default domain's nodes for a newer opset. Only the changes
// that alter a node's meaning need a rewrite; the rest of opsets 14 to 19
// adds types, ops and attributes whose default is the old behaviour.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::onnxg {
#define GEN_PASS_DEF_ONNXGRAPHUPGRADEOPSET
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"
} // namespace mlir::onnxg

using namespace mlir;
using namespace mlir::onnxg;

/// The oldest opset whose changes up to 19 this pass knows; older models
/// go through ONNX's version converter first.
static constexpr int64_t kOldestOpset = 13;
/// The newest opset this pass upgrades to.
static constexpr int64_t kNewestOpset = 19;

/// The reductions whose `axes` became an input in opset 18 (ReduceSum's did
/// in 13).
static const llvm::StringSet<> kAxesInputAt18 = {
    "ReduceMax",    "ReduceMin",       "ReduceMean",
    "ReduceProd",   "ReduceL1",        "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

/// True when upgrading `node` from its opset to `target` crosses `version`.
static bool crosses(NodeOp node, int64_t target, int64_t version) {
  return int64_t(node.getOpset()) < version && version <= target;
}

/// Opset 18: the `axes` attribute of a reduction becomes an int64 Constant
/// input. Returns true when the node had one.
static bool moveAxesToInput(NodeOp node) {
  auto axes = dyn_cast_or_null<DenseI64ArrayAttr>(
      node.getOnnxAttrsOrEmpty().get("axes"));
  if (!axes)
    return false;
  OpBuilder builder(node);
  std::string name = node.getNodeName().str() + "/axes";
  node->insertOperands(
      1,
      createI64Constant(builder, axes.asArrayRef(), name, name)->getResult(0));
  NamedAttrList attrs(node.getOnnxAttrsOrEmpty());
  attrs.erase("axes");
  node.setOnnxAttrsAttr(attrs.getDictionary(node.getContext()));
  return true;
}

/// Whether `node` can be upgraded to `target`; emits the reason when not.
/// Below kOldestOpset, only ops whose schema did not change on the way.
static LogicalResult checkUpgradable(NodeOp node, int64_t target) {
  if (int64_t(node.getOpset()) < kOldestOpset &&
      !isSchemaUnchangedUpTo(node, kOldestOpset))
    return node.emitError("cannot upgrade ")
           << node.describe() << " from opset " << node.getOpset()
           << ": the op changed before opset " << kOldestOpset
           << ", where this pass starts; upgrade the model to opset 17 "
              "first with onnx.version_converter.convert_version";
  if (node.getOpType() == "BatchNormalization" && crosses(node, target, 14) &&
      node.getNumResults() > 3)
    return node.emitError("cannot upgrade ")
           << node.describe()
           << " to opset 14 or later: its saved mean and variance outputs "
              "no longer exist there";
  return success();
}

/// Rewrites `node` for `target`; counts the reductions given an axes input.
static void upgradeNode(NodeOp node, int64_t target, unsigned &axesMoved) {
  StringRef opType = node.getOpType();
  MLIRContext *ctx = node.getContext();
  // Running-statistics outputs meant training mode before opset 14.
  if (opType == "BatchNormalization" && crosses(node, target, 14) &&
      node.getNumResults() > 1)
    node.setOnnxAttr("training_mode",
                     IntegerAttr::get(IntegerType::get(ctx, 64), 1));
  if (opType == "RoiAlign" && crosses(node, target, 16) &&
      !node.getOnnxAttrsOrEmpty().get("coordinate_transformation_mode"))
    node.setOnnxAttr("coordinate_transformation_mode",
                     StringAttr::get(ctx, "output_half_pixel"));
  if (kAxesInputAt18.contains(opType) && crosses(node, target, 18))
    axesMoved += moveAxesToInput(node);
  node.setOpset(target);
}

/// The IR version that ONNX's versioning table pairs with `opset` of the
/// default domain: the lowest a model importing it may declare.
static int64_t getMinimumIRVersion(int64_t opset) {
  static constexpr std::pair<int64_t, int64_t> kFirstOpsets[] = {
      {23, 11}, {21, 10}, {19, 9}, {15, 8}, {12, 7},
      {11, 6},  {10, 5},  {9, 4},  {1, 3}};
  for (auto [firstOpset, irVersion] : kFirstOpsets)
    if (opset >= firstOpset)
      return irVersion;
  return 3;
}

/// Sets the module's import of the default domain to `target`, and raises
/// its IR version to the one `target` needs (FP8 types need IR version 9).
static void setDefaultOpsetImport(ModuleOp module, int64_t target) {
  Builder builder(module.getContext());
  SmallVector<Attribute> imports;
  bool found = false;
  if (auto old = module->getAttrOfType<ArrayAttr>("onnxg.opset_imports")) {
    for (Attribute entry : old) {
      auto pair = dyn_cast<ArrayAttr>(entry);
      if (pair && pair.size() == 2 && isa<StringAttr>(pair[0]) &&
          isDefaultDomain(cast<StringAttr>(pair[0]).getValue())) {
        entry =
            builder.getArrayAttr({pair[0], builder.getI64IntegerAttr(target)});
        found = true;
      }
      imports.push_back(entry);
    }
  }
  if (!found)
    imports.push_back(builder.getArrayAttr(
        {builder.getStringAttr(""), builder.getI64IntegerAttr(target)}));
  module->setAttr("onnxg.opset_imports", builder.getArrayAttr(imports));
  auto irVersion = module->getAttrOfType<IntegerAttr>("onnxg.ir_version");
  int64_t needed = getMinimumIRVersion(target);
  if (!irVersion || irVersion.getInt() < needed)
    module->setAttr("onnxg.ir_version", builder.getI64IntegerAttr(needed));
}

namespace {
struct UpgradeOpsetPass
    : onnxg::impl::ONNXGraphUpgradeOpsetBase<UpgradeOpsetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (opset <= kOldestOpset || opset > kNewestOpset) {
      emitError(module.getLoc(), "onnxg-upgrade-opset: opset=")
          << int64_t(opset) << " is out of range: this pass upgrades to opsets "
          << kOldestOpset + 1 << " to " << kNewestOpset;
      return signalPassFailure();
    }
    int64_t from = getOpsetImport(module, "", 0);
    if (from >= opset)
      return;
    // Every node is checked before any is changed: an error leaves the
    // module as it was.
    SmallVector<NodeOp> nodes;
    module.walk([&](NodeOp node) {
      if (isDefaultDomain(node.getDomain()) && int64_t(node.getOpset()) < opset)
        nodes.push_back(node);
    });
    bool failed = false;
    for (NodeOp node : nodes)
      failed |= mlir::failed(checkUpgradable(node, opset));
    if (failed)
      return signalPassFailure();
    // The module's import first: the Constant nodes created take it.
    setDefaultOpsetImport(module, opset);
    unsigned axesMoved = 0;
    for (NodeOp node : nodes)
      upgradeNode(node, opset, axesMoved);
    InFlightDiagnostic remark = emitRemark(
        module.getLoc(), "upgraded the default ONNX domain to opset ");
    remark << int64_t(opset) << " (the model imported ";
    if (from)
      remark << "opset " << from;
    else
      remark << "none";
    remark << "): " << nodes.size() << " nodes, " << axesMoved
           << " reductions given their axes as an input";
  }
};
} // namespace
