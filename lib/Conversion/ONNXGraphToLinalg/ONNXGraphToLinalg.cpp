//===- ONNXGraphToLinalg.cpp - Lower graph nodes to linalg ----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The convert-onnxg-to-linalg pass: checks that every node has a lowering,
// then rewrites the nodes of each function in order, dispatching on the op
// type through the lowering table the family files fill.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "amp/Conversion/Passes.h"
#include "amp/Dialect/AMP/IR/AMPDialect.h"
#include "amp/Dialect/ONNXGraph/IR/OpTable.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_CONVERTONNXGRAPHTOLINALG
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::lowering;

static const LoweringTable &getLoweringTable() {
  static const LoweringTable table = [] {
    LoweringTable table;
    populateElementwiseLowerings(table);
    populateContractionLowerings(table);
    populateConvolutionLowerings(table);
    populateReductionLowerings(table);
    populateNormalizationLowerings(table);
    populateDataMovementLowerings(table);
    populateTrainingLowerings(table);
    populateOptimizerLowerings(table);
    populateRandomLowerings(table);
    populateQuantizationLowerings(table);
    populateSequenceLowerings(table);
    populateSignalLowerings(table);
    return table;
  }();
  return table;
}

/// Why `node` cannot run, or "" when it has a lowering.
static std::string getUnsupportedReason(onnxg::NodeOp node) {
  if (isControlFlow(node) ||
      getLoweringTable().lookup(node.getDomain(), node.getOpType()))
    return "";
  const onnxg::OpInfo *info =
      onnxg::lookupOp(node.getDomain(), node.getOpType());
  if (info && info->family == onnxg::OpFamily::Runtime)
    return "is not executable: it only exists for ONNX Runtime's own "
           "scheduling";
  if (!info)
    return "has no lowering: the op type is not in amp-opt's op table "
           "(custom domain?)";
  if (node.getDomain() == "ai.onnx.preview.training" &&
      node.getOpType() == "Gradient")
    return "is differentiated by --onnxg-expand-gradients, which must run "
           "first (amp-lower-to-cpu runs it)";
  return "has no lowering yet";
}

Value RandomSource::getKey() {
  if (!key) {
    MLIRContext *ctx = func.getContext();
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(
            index, RankedTensorType::get({2}, IntegerType::get(ctx, 64)),
            DictionaryAttr::get(ctx),
            NameLoc::get(StringAttr::get(ctx, kRandomKeyName)))))
      llvm_unreachable("cannot append the random key argument");
    key = func.getArgument(index);
  }
  return key;
}

/// The first element type among the node's operands and results that has
/// no scalar lowering (strings, complex numbers), or null.
static Type getUnloweredElementType(onnxg::NodeOp node) {
  for (TypeRange types :
       {TypeRange(node->getOperandTypes()), TypeRange(node->getResultTypes())})
    for (Type type : types)
      if (auto tensor = dyn_cast<TensorType>(type)) {
        Type element = tensor.getElementType();
        if (!isa<FloatType, IntegerType, IndexType>(element))
          return element;
      }
  return {};
}

/// Empty constants for a node whose results all have no elements (a Split
/// into parts of size 0, the Shape of a scalar): nothing to compute, and
/// what reads them sees constants. Nullopt for other nodes.
static std::optional<SmallVector<Value>> getEmptyResults(onnxg::NodeOp node,
                                                         OpBuilder &builder) {
  if (node.getNumResults() == 0)
    return std::nullopt;
  SmallVector<Value> results;
  for (Type type : node.getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || tensor.getNumElements() != 0)
      return std::nullopt;
    results.push_back(arith::ConstantOp::create(
        builder, node.getLoc(),
        DenseElementsAttr::get(tensor, ArrayRef<Attribute>{})));
  }
  return results;
}

/// Lowers one node; emits an error and fails when it cannot. `lowerOps`
/// lowers the nodes of an If's or a Loop's subgraphs.
static LogicalResult lowerNode(onnxg::NodeOp node, OpBuilder &builder,
                               RandomSource &random, OpRangeLowering lowerOps,
                               bool hostBranches) {
  if (node.getNumRegions() && !isControlFlow(node)) {
    emitError(node.getLoc())
        << node.describe() << ": nodes with subgraphs do not lower yet";
    return failure();
  }
  if (Type element = getUnloweredElementType(node)) {
    emitError(node.getLoc()) << node.describe() << ": tensors of " << element
                             << " do not lower: only numbers and booleans do";
    return failure();
  }
  LoweringFn fn = getLoweringTable().lookup(node.getDomain(), node.getOpType());
  builder.setInsertionPoint(node);
  NodeLowering lowering(node, builder, &random);
  LoweringResult results = failure();
  if (std::optional<SmallVector<Value>> empty = getEmptyResults(node, builder))
    results = *empty;
  else if (isControlFlow(node))
    results = lowerControlFlow(lowering, lowerOps, hostBranches);
  else if (Value folded = foldConstantNode(lowering))
    results = SmallVector<Value>{folded};
  else
    results = fn(lowering);
  if (failed(results))
    return failure();
  for (auto [result, value] : llvm::zip_equal(node.getResults(), *results)) {
    if (result.use_empty())
      continue;
    if (!value)
      return lowering.emitError()
             << "output #" << result.getResultNumber()
             << " is used but its lowering does not compute it";
    // A type ONNX could not infer takes the lowered value's type, and a
    // sequence is its elements (buildSequence).
    if (!isa<RankedTensorType>(result.getType())) {
      result.replaceAllUsesWith(value);
      continue;
    }
    // A static size that differs from the declared one: the file's
    // value_info, or ONNX shape inference with an older schema of the op
    // (libonnx 1.12 reads AveragePool-19's dilations as AveragePool-11).
    if (!tensor::CastOp::areCastCompatible(value.getType(), result.getType()))
      return lowering.emitError()
             << "output #" << result.getResultNumber() << " is "
             << value.getType() << " but the graph declares "
             << result.getType()
             << " (its value_info, or ONNX shape inference of an opset "
                "newer than libonnx knows)";
    result.replaceAllUsesWith(
        castToType(builder, node.getLoc(), value, result.getType()));
  }
  node.erase();
  return success();
}

/// Lowers the nodes, initializers and AMP ops from `begin` up to `end` of
/// one block, in order (and those of the subgraphs of If, Loop and Scan nodes).
static LogicalResult lowerOps(Block::iterator begin, Block::iterator end,
                              OpBuilder &builder, RandomSource &random,
                              bool hostBranches) {
  auto lowerNested = [&](Block::iterator from, Block::iterator to) {
    return lowerOps(from, to, builder, random, hostBranches);
  };
  for (Operation &op :
       llvm::make_early_inc_range(llvm::make_range(begin, end))) {
    builder.setInsertionPoint(&op);
    if (auto node = dyn_cast<onnxg::NodeOp>(op)) {
      if (failed(lowerNode(node, builder, random, lowerNested, hostBranches)))
        return failure();
      continue;
    }
    if (auto initializer = dyn_cast<onnxg::InitializerOp>(op)) {
      Value constant =
          createConstant(builder, op.getLoc(), initializer.getValue());
      initializer.replaceAllUsesWith(constant);
      initializer.erase();
      continue;
    }
    if (isa<amp::AMPDialect>(op.getDialect()) &&
        failed(lowerAMPOp(&op, builder)))
      return failure();
  }
  return success();
}

/// Sequences lower to their elements, which only exist for sequences the
/// graph builds: a graph input or output that is a sequence is an error.
static LogicalResult checkSequenceBoundaries(ModuleOp module) {
  bool failed = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    auto report = [&](Type type, StringRef what, unsigned i, StringRef name) {
      if (!isa<onnxg::SequenceType>(type))
        return;
      emitError(func.getLoc())
          << "graph " << what << " #" << i << " '" << name
          << "' is a sequence: sequences lower only inside the graph, as the "
             "tensors that SequenceConstruct collects";
      failed = true;
    };
    for (BlockArgument arg : func.getArguments())
      report(arg.getType(), "input", arg.getArgNumber(),
             onnxg::getValueName(arg));
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(
          i, onnxg::ONNXGraphDialect::kNameAttrName);
      report(func.getResultTypes()[i], "output", i,
             name ? name.getValue() : "");
    }
  }
  return failure(failed);
}

namespace {
struct ConvertONNXGraphToLinalgPass
    : amp::impl::ConvertONNXGraphToLinalgBase<ConvertONNXGraphToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Report every op type that cannot lower before touching anything.
    llvm::MapVector<std::pair<StringRef, StringRef>,
                    std::pair<onnxg::NodeOp, unsigned>>
        unsupported;
    module.walk([&](onnxg::NodeOp node) {
      if (!getUnsupportedReason(node).empty()) {
        auto &entry = unsupported[{node.getDomain(), node.getOpType()}];
        if (!entry.first)
          entry.first = node;
        ++entry.second;
      }
    });
    for (auto &[key, entry] : unsupported) {
      InFlightDiagnostic diag = emitError(entry.first.getLoc())
                                << entry.first.describe() << " "
                                << getUnsupportedReason(entry.first);
      if (entry.second > 1)
        diag << " (and " << entry.second - 1 << " more "
             << entry.first.getOpType() << " nodes)";
    }
    if (!unsupported.empty())
      return signalPassFailure();
    if (failed(checkSequenceBoundaries(module)))
      return signalPassFailure();

    OpBuilder builder(&getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      RandomSource random(func);
      Block &entry = func.getBody().front();
      if (failed(lowerOps(entry.begin(), entry.end(), builder, random,
                          hostBranches)))
        return signalPassFailure();
      for (auto none :
           llvm::make_early_inc_range(func.getBody().getOps<onnxg::NoneOp>()))
        if (none.use_empty())
          none.erase();
      // Every reader of a sequence has taken its elements.
      for (auto sequence : llvm::make_early_inc_range(
               func.getBody().getOps<UnrealizedConversionCastOp>()))
        if (sequence.use_empty() && getSequenceElements(sequence.getResult(0)))
          sequence.erase();
      // Results whose type was unknown now have the lowered values' types.
      Operation *terminator = func.getBody().front().getTerminator();
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                     terminator->getOperandTypes()));
    }
  }
};
} // namespace
