//===- ControlFlow.cpp - Lower If, Loop and Scan nodes --------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// If, Loop and Scan carry their bodies as regions whose nodes read the
// outer graph's values directly. An If whose condition is a constant (shape
// tests, once shapes are static) becomes the nodes of its branch; another
// lowers both branches in place and moves them into an scf.if. A Loop whose
// trip count and condition are constants is unrolled: its body is lowered
// once per iteration with the iteration number a constant, so what the body
// slices or gathers by it folds, and its scan outputs are the iterations'
// values concatenated. Another Loop (a trip count or condition computed at
// run time, or more than 256 iterations) becomes an scf.while. A Scan
// unrolls up to 256 elements, reading each element of its scan inputs by
// a slice; a longer one becomes an scf.for. The CUDA backend takes only
// the unrolled and inlined forms: its host code cannot read a condition
// from device memory.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::amp::lowering;

/// A Loop unrolls into at most this many copies of its body.
static constexpr int64_t kMaxUnrolledIterations = 256;

bool mlir::amp::lowering::isControlFlow(onnxg::NodeOp node) {
  return (node.getDomain().empty() || node.getDomain() == "ai.onnx") &&
         llvm::is_contained({"If", "Loop", "Scan"}, node.getOpType());
}

/// The body block of the GRAPH attribute `name`, or null.
static Block *getSubgraph(NodeLowering &node, StringRef name) {
  auto index = dyn_cast_or_null<IntegerAttr>(node.getAttr(name));
  onnxg::NodeOp op = node.getNode();
  if (!index || index.getInt() < 0 ||
      index.getInt() >= int64_t(op->getNumRegions()) ||
      op->getRegion(index.getInt()).empty())
    return nullptr;
  return &op->getRegion(index.getInt()).front();
}

/// The value of a one-element boolean constant, or nullopt.
static std::optional<bool> getConstantFlag(Value value) {
  DenseElementsAttr attr;
  if (!value || !matchPattern(getMostStaticValue(value), m_Constant(&attr)) ||
      attr.getNumElements() != 1 || !attr.getElementType().isInteger(1))
    return std::nullopt;
  return *attr.getValues<bool>().begin();
}

/// Checks that `value` is a boolean tensor of one element (a condition).
static LogicalResult checkCondition(NodeLowering &node, Value value,
                                    StringRef what) {
  auto type = getRankedType(value);
  if (!type || !type.hasStaticShape() || type.getNumElements() != 1 ||
      !type.getElementType().isInteger(1))
    return node.emitError() << what << " must be a boolean of one element";
  return success();
}

/// The element of a one-element tensor.
static Value extractElement(OpBuilder &b, Location loc, Value tensor) {
  SmallVector<Value> zeros(getRankedType(tensor).getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, tensor, zeros);
}

/// The yield ending `body`, whose nodes have been lowered.
static onnxg::YieldOp getYield(Block &body) {
  return cast<onnxg::YieldOp>(body.getTerminator());
}

/// The values the yield ending `body` yields, lowered: with the most static
/// types known.
static SmallVector<Value> getYieldedValues(Block &body) {
  return llvm::map_to_vector(getYield(body).getValues(), getMostStaticValue);
}

/// Lowers the nodes of `body` where they are.
static LogicalResult lowerInPlace(Block &body, OpRangeLowering lowerOps) {
  return lowerOps(body.begin(), Block::iterator(body.getTerminator()));
}

/// Moves the ops of `body` but its terminator before `before`.
static void spliceBefore(Block &body, Block *block, Block::iterator before) {
  block->getOperations().splice(before, body.getOperations(), body.begin(),
                                Block::iterator(body.getTerminator()));
}

/// Moves the ops of a loop's `body` but its terminator to the end of
/// `block`, once the body's arguments are replaced by the loop's, and
/// returns the values the body yields: read after the replacement, since
/// a body may yield its arguments themselves.
static SmallVector<Value> moveLoopBody(Block &body, Block *block) {
  spliceBefore(body, block, block->end());
  return getYieldedValues(body);
}

static LoweringResult lowerIf(NodeLowering &node, OpRangeLowering lowerOps,
                              bool hostBranches) {
  Block *thenBody = getSubgraph(node, "then_branch");
  Block *elseBody = getSubgraph(node, "else_branch");
  if (!thenBody || !elseBody)
    return node.emitError() << "then_branch and else_branch must be subgraphs";
  if (getYield(*thenBody).getValues().size() != node.getNumResults() ||
      getYield(*elseBody).getValues().size() != node.getNumResults())
    return node.emitError() << "each branch must yield the If's "
                            << node.getNumResults() << " outputs";
  Value condition = node.operand(0);
  if (failed(checkCondition(node, condition, "the condition")))
    return failure();
  onnxg::NodeOp op = node.getNode();
  OpBuilder &b = node.getBuilder();

  // A known condition: the branch's nodes replace the If.
  if (std::optional<bool> known = getConstantFlag(condition)) {
    Block &body = *known ? *thenBody : *elseBody;
    if (failed(lowerInPlace(body, lowerOps)))
      return failure();
    SmallVector<Value> results = getYieldedValues(body);
    spliceBefore(body, op->getBlock(), Block::iterator(op));
    b.setInsertionPoint(op);
    return results;
  }

  // Otherwise both branches run under an scf.if, whose results need one
  // static type per output.
  if (!hostBranches)
    return node.emitError()
           << "the condition is computed at run time, and the host would "
              "read it from device memory: an If lowers for CUDA only when "
              "its condition is a constant";
  if (failed(lowerInPlace(*thenBody, lowerOps)) ||
      failed(lowerInPlace(*elseBody, lowerOps)))
    return failure();
  SmallVector<Value> thenValues = getYieldedValues(*thenBody);
  SmallVector<Value> elseValues = getYieldedValues(*elseBody);
  SmallVector<Type> types;
  for (unsigned i = 0; i < node.getNumResults(); ++i) {
    RankedTensorType declared = node.resultType(i);
    auto thenType = getRankedType(thenValues[i]);
    auto elseType = getRankedType(elseValues[i]);
    if (declared && declared.hasStaticShape())
      types.push_back(declared);
    else if (thenType && thenType == elseType && thenType.hasStaticShape())
      types.push_back(thenType);
    else
      return node.emitError()
             << "output #" << i << " is " << thenValues[i].getType()
             << " in then_branch and " << elseValues[i].getType()
             << " in else_branch: an If whose condition is computed at run "
                "time needs one static type per output";
  }
  b.setInsertionPoint(op);
  Value flag = extractElement(b, op.getLoc(), condition);
  auto ifOp = scf::IfOp::create(b, op.getLoc(), types, flag,
                                /*withElseRegion=*/true);
  for (auto [body, values, region] :
       {std::tuple(thenBody, ArrayRef<Value>(thenValues),
                   &ifOp.getThenRegion()),
        std::tuple(elseBody, ArrayRef<Value>(elseValues),
                   &ifOp.getElseRegion())}) {
    Block &block = region->front();
    spliceBefore(*body, &block, block.end());
    b.setInsertionPointToEnd(&block);
    SmallVector<Value> yielded;
    for (auto [value, type] : llvm::zip_equal(values, types))
      yielded.push_back(castToType(b, op.getLoc(), value, type));
    scf::YieldOp::create(b, op.getLoc(), yielded);
  }
  b.setInsertionPoint(op);
  return SmallVector<Value>(ifOp.getResults());
}

/// The type of a Loop body's iteration number or condition: its declared
/// type when that is a static tensor of one `element`, else a 0-d tensor.
static RankedTensorType getCounterType(Type declared, Type element) {
  auto ranked = dyn_cast<RankedTensorType>(declared);
  if (!ranked || !ranked.hasStaticShape() || ranked.getNumElements() != 1 ||
      ranked.getElementType() != element)
    return RankedTensorType::get({}, element);
  return ranked;
}

/// A constant of getCounterType(type, element) holding `value`.
static Value createCounter(OpBuilder &b, Location loc, Type type, Type element,
                           int64_t value) {
  unsigned width = element.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(getCounterType(type, element),
                             APInt(width, width == 1 ? value != 0 : value)));
}

/// Checks that a carried value keeps its shape and type: `after` (the
/// body's) against `before` (the loop's).
static LogicalResult checkCarried(NodeLowering &node, unsigned i, Value before,
                                  Value after) {
  auto beforeType = getRankedType(before);
  auto afterType = getRankedType(after);
  if (beforeType && afterType &&
      beforeType.getShape() == afterType.getShape() &&
      beforeType.getElementType() == afterType.getElementType())
    return success();
  return node.emitError() << "carried value #" << i << " changes from "
                          << before.getType() << " to " << after.getType();
}

namespace {
/// A Loop node's parts: its body, trip count M and condition (null when
/// omitted) and its carried values and scan outputs.
struct LoopParts {
  Block *body;
  Value tripCount, condition;
  unsigned numCarried, numScans;
};
} // namespace

/// Erases the ops from `first` up to `end` of one block, last first.
static void eraseRange(Operation *first, Operation *end) {
  SmallVector<Operation *> ops;
  for (Operation *op = first; op != end; op = op->getNextNode())
    ops.push_back(op);
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

/// Copies the nodes of `body` before `op` with `mapping` (the body's
/// arguments to this iteration's values), lowers the copies, and returns
/// the values the copy yields.
static FailureOr<SmallVector<Value>> lowerBodyCopy(Block &body,
                                                   IRMapping &mapping,
                                                   Operation *op, OpBuilder &b,
                                                   OpRangeLowering lowerOps) {
  b.setInsertionPoint(op);
  Operation *first = nullptr;
  for (Operation &bodyOp : body) {
    Operation *copy = b.clone(bodyOp, mapping);
    if (!first)
      first = copy;
  }
  auto yield = cast<onnxg::YieldOp>(op->getPrevNode());
  if (failed(lowerOps(Block::iterator(first), Block::iterator(yield))))
    return failure();
  SmallVector<Value> yielded =
      llvm::map_to_vector(yield.getValues(), getMostStaticValue);
  yield.erase();
  return yielded;
}

/// The type of scan output #`scan`'s element `element` and the axis along
/// which the iterations stack it (`axis` counts from the back when
/// negative, as from opset 11); fails, after an error, unless the element
/// has a static shape and the stacked output has the axis.
static FailureOr<std::pair<RankedTensorType, int64_t>>
getScanOutputLayout(NodeLowering &node, unsigned scan, Value element,
                    int64_t axis) {
  auto type = getRankedType(element);
  if (!type || !type.hasStaticShape())
    return node.emitError()
           << "scan output #" << scan << " is " << element.getType()
           << " in an iteration: it needs a static shape";
  std::optional<int64_t> normalized = normalizeAxis(axis, type.getRank() + 1);
  if (!normalized)
    return node.emitError()
           << "scan output #" << scan << " has axis " << axis << ", outside ["
           << -(type.getRank() + 1) << ", " << type.getRank() << "]";
  return std::pair(type, *normalized);
}

/// Scan output #`scan` (result `result` of `node`): the iterations'
/// `values` stacked along a new axis `axis`, last iteration first when
/// `reversed`.
static FailureOr<Value> stackScanOutput(NodeLowering &node, unsigned result,
                                        unsigned scan, ArrayRef<Value> values,
                                        int64_t axis, bool reversed) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  if (values.empty()) {
    RankedTensorType declared = node.resultType(result);
    if (!declared || !declared.hasStaticShape() ||
        declared.getNumElements() != 0)
      return node.emitError() << "scan output #" << scan
                              << " of no iterations needs a static type of "
                                 "no elements";
    return Value(arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(declared, ArrayRef<Attribute>{})));
  }
  FailureOr<std::pair<RankedTensorType, int64_t>> layout =
      getScanOutputLayout(node, scan, values.front(), axis);
  if (failed(layout))
    return failure();
  RankedTensorType type = layout->first;
  axis = layout->second;
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + axis, 1);
  auto rowType = RankedTensorType::get(shape, type.getElementType());
  SmallVector<Value> rows;
  for (Value value : values) {
    if (getRankedType(value) != type)
      return node.emitError() << "scan output #" << scan
                              << " changes its type between iterations, from "
                              << type << " to " << value.getType();
    rows.push_back(reshapeTo(b, loc, value, rowType));
  }
  if (reversed)
    std::reverse(rows.begin(), rows.end());
  return concatTensors(b, loc, rows, axis);
}

/// Whether the condition a Loop's `body` yields is computed from the
/// iteration number or a carried value (through the body's nodes and
/// their subgraphs), so that it may turn false in a later iteration.
static bool conditionMayChange(Block &body) {
  Value condition = getYield(body).getValues().front();
  SmallVector<Value> worklist{condition};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto argument = dyn_cast<BlockArgument>(value))
      if (argument.getOwner() == &body && argument.getArgNumber() != 1)
        return true;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != &body)
      continue;
    def->walk([&](Operation *nested) {
      llvm::append_range(worklist, nested->getOperands());
    });
  }
  return false;
}

/// Unrolls a Loop whose trip count (at most kMaxUnrolledIterations) and
/// condition are known (`tripCount` nullopt: none, ended by the condition).
/// Nullopt, with nothing emitted, when a condition the body yields is
/// computed at run time: it then needs an scf.while.
static FailureOr<std::optional<SmallVector<Value>>>
unrollLoop(NodeLowering &node, const LoopParts &loop,
           std::optional<int64_t> tripCount, bool running,
           OpRangeLowering lowerOps) {
  onnxg::NodeOp op = node.getNode();
  OpBuilder &b = node.getBuilder();
  Location loc = op.getLoc();
  Block *body = loop.body;
  Operation *before = op->getPrevNode();
  auto giveUp = [&]() -> std::optional<SmallVector<Value>> {
    eraseRange(before ? before->getNextNode() : &op->getBlock()->front(), op);
    return std::nullopt;
  };
  SmallVector<Value> carried;
  for (unsigned i = 0; i < loop.numCarried; ++i)
    carried.push_back(node.operand(2 + i));
  SmallVector<SmallVector<Value>> scans(loop.numScans);
  for (int64_t iteration = 0; running && (!tripCount || iteration < *tripCount);
       ++iteration) {
    // Only a loop without a trip count runs this far: an scf.while when
    // its condition may change, else it never ends.
    if (iteration == kMaxUnrolledIterations) {
      if (conditionMayChange(*body))
        return giveUp();
      return node.emitError()
             << "never ends: it has no trip count, and its condition stays "
                "true for "
             << kMaxUnrolledIterations
             << " iterations and reads neither the iteration number nor a "
                "carried value";
    }
    // One copy of the body, with the iteration number and condition as
    // constants and the carried values of the previous iteration; the
    // copy's yield follows the values as their nodes lower.
    IRMapping mapping;
    b.setInsertionPoint(op);
    mapping.map(body->getArgument(0),
                createCounter(b, loc, body->getArgument(0).getType(),
                              b.getI64Type(), iteration));
    mapping.map(body->getArgument(1),
                createCounter(b, loc, body->getArgument(1).getType(),
                              b.getI1Type(), 1));
    for (unsigned i = 0; i < loop.numCarried; ++i)
      mapping.map(body->getArgument(2 + i), carried[i]);
    FailureOr<SmallVector<Value>> copy =
        lowerBodyCopy(*body, mapping, op, b, lowerOps);
    if (failed(copy))
      return failure();
    SmallVector<Value> &yielded = *copy;
    // The body's condition decides the next iteration, with a condition
    // input or without (as in ONNX Runtime and ONNX's reference).
    std::optional<bool> next = getConstantFlag(yielded[0]);
    if (!next)
      return giveUp();
    running = *next;
    for (unsigned i = 0; i < loop.numCarried; ++i) {
      if (failed(checkCarried(node, i, carried[i], yielded[1 + i])))
        return failure();
      carried[i] = yielded[1 + i];
    }
    for (unsigned i = 0; i < loop.numScans; ++i)
      scans[i].push_back(yielded[1 + loop.numCarried + i]);
  }

  // Scan outputs stack the iterations' values along a new first axis.
  b.setInsertionPoint(op);
  SmallVector<Value> results(carried);
  for (unsigned i = 0; i < loop.numScans; ++i) {
    FailureOr<Value> stacked =
        stackScanOutput(node, loop.numCarried + i, i, scans[i], /*axis=*/0,
                        /*reversed=*/false);
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  return std::optional<SmallVector<Value>>(std::move(results));
}

/// Lowers the nodes of `body`, a loop body that runs once per iteration
/// where it is, with its random ops drawing by `iteration` too (a
/// one-element i64 tensor that holds the iteration number at run time).
static LogicalResult lowerLoopBody(NodeLowering &node, Block &body,
                                   Value iteration, OpRangeLowering lowerOps) {
  RandomSource *random = node.getRandomSource();
  if (random)
    random->pushIteration(iteration);
  LogicalResult lowered = lowerInPlace(body, lowerOps);
  if (random)
    random->popIteration();
  return lowered;
}

/// A Loop whose trip count or condition is computed at run time: an
/// scf.while over (iteration number, condition, carried values) whose
/// "after" region holds the lowered body.
static LoweringResult lowerWhileLoop(NodeLowering &node, const LoopParts &loop,
                                     OpRangeLowering lowerOps,
                                     bool hostBranches) {
  if (!hostBranches)
    return node.emitError()
           << "the trip count or condition is computed at run time, and the "
              "host would read it from device memory: a Loop lowers for "
              "CUDA only when they are constants";
  if (loop.numScans)
    return node.emitError()
           << "has scan outputs, which need the loop unrolled: a constant "
              "trip count and condition, and at most "
           << kMaxUnrolledIterations << " iterations";
  onnxg::NodeOp op = node.getNode();
  OpBuilder &b = node.getBuilder();
  Location loc = op.getLoc();
  Block *body = loop.body;

  // The body lowers where it is, its arguments typed as the loop's state.
  BlockArgument iterationArg = body->getArgument(0);
  BlockArgument conditionArg = body->getArgument(1);
  iterationArg.setType(getCounterType(iterationArg.getType(), b.getI64Type()));
  conditionArg.setType(getCounterType(conditionArg.getType(), b.getI1Type()));
  SmallVector<Value> inits;
  for (unsigned i = 0; i < loop.numCarried; ++i) {
    inits.push_back(node.operand(2 + i));
    body->getArgument(2 + i).setType(inits.back().getType());
  }
  if (failed(lowerLoopBody(node, *body, iterationArg, lowerOps)))
    return failure();
  SmallVector<Value> yielded = getYieldedValues(*body);
  for (unsigned i = 0; i < loop.numCarried; ++i)
    if (failed(checkCarried(node, i, inits[i], yielded[1 + i])))
      return failure();
  if (failed(checkCondition(node, yielded[0], "the condition the body yields")))
    return failure();

  b.setInsertionPoint(op);
  Value limit =
      loop.tripCount ? extractElement(b, loc, loop.tripCount) : Value();
  Value flag = loop.condition ? extractElement(b, loc, loop.condition)
                              : arith::ConstantIntOp::create(b, loc, 1, 1);
  SmallVector<Value> state{arith::ConstantIntOp::create(b, loc, 0, 64), flag};
  llvm::append_range(state, inits);
  auto whileOp = scf::WhileOp::create(
      b, loc, TypeRange(ValueRange(state)), state,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value keep = args[1];
        if (limit)
          keep = arith::AndIOp::create(
              nested, nestedLoc, keep,
              arith::CmpIOp::create(nested, nestedLoc,
                                    arith::CmpIPredicate::slt, args[0], limit));
        scf::ConditionOp::create(nested, nestedLoc, keep, args);
      },
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        iterationArg.replaceAllUsesWith(tensor::FromElementsOp::create(
            nested, nestedLoc, iterationArg.getType(), args[0]));
        conditionArg.replaceAllUsesWith(tensor::FromElementsOp::create(
            nested, nestedLoc, conditionArg.getType(), args[1]));
        for (unsigned i = 0; i < loop.numCarried; ++i)
          body->getArgument(2 + i).replaceAllUsesWith(args[2 + i]);
        yielded = moveLoopBody(*body, nested.getInsertionBlock());
        nested.setInsertionPointToEnd(nested.getInsertionBlock());
        SmallVector<Value> next{
            arith::AddIOp::create(
                nested, nestedLoc, args[0],
                arith::ConstantIntOp::create(nested, nestedLoc, 1, 64)),
            extractElement(nested, nestedLoc, yielded[0])};
        for (unsigned i = 0; i < loop.numCarried; ++i)
          next.push_back(castToType(nested, nestedLoc, yielded[1 + i],
                                    inits[i].getType()));
        scf::YieldOp::create(nested, nestedLoc, next);
      });
  b.setInsertionPoint(op);
  return SmallVector<Value>(whileOp.getResults().drop_front(2));
}

static LoweringResult lowerLoop(NodeLowering &node, OpRangeLowering lowerOps,
                                bool hostBranches) {
  LoopParts loop{getSubgraph(node, "body"), node.operand(0), node.operand(1),
                 node.getNumOperands() - 2, 0};
  if (!loop.body)
    return node.emitError() << "body must be a subgraph";
  loop.numScans = node.getNumResults() - loop.numCarried;
  if (loop.body->getNumArguments() != loop.numCarried + 2 ||
      getYield(*loop.body).getValues().size() !=
          loop.numCarried + 1 + loop.numScans)
    return node.emitError()
           << "the body must take the iteration number, the condition and "
           << loop.numCarried
           << " carried values, and yield the condition, the "
           << loop.numCarried << " carried values and the scan outputs";
  if (loop.condition &&
      failed(checkCondition(node, loop.condition, "the condition")))
    return failure();

  // Known trip count and condition: unroll, unless the body's condition
  // turns out to depend on run-time values.
  std::optional<int64_t> tripCount;
  bool known = true;
  if (loop.tripCount) {
    std::optional<SmallVector<int64_t>> values = node.getConstantInts(0);
    if (values && values->size() == 1)
      tripCount = values->front();
    else
      known = false;
  }
  std::optional<bool> running =
      loop.condition ? getConstantFlag(loop.condition) : true;
  if (known && running &&
      (!tripCount || *tripCount <= kMaxUnrolledIterations)) {
    FailureOr<std::optional<SmallVector<Value>>> unrolled =
        unrollLoop(node, loop, tripCount, *running, lowerOps);
    if (failed(unrolled))
      return failure();
    if (*unrolled)
      return **unrolled;
  }
  return lowerWhileLoop(node, loop, lowerOps, hostBranches);
}

namespace {
/// A Scan node's parts: its body, the counts of its state variables and
/// scan inputs and outputs, each scan input's and output's axis and
/// direction (true: last element first), and the number of iterations.
struct ScanParts {
  Block *body;
  unsigned numState, numInputs, numOutputs;
  SmallVector<int64_t> inputAxes, outputAxes;
  SmallVector<bool> inputReversed, outputReversed;
  int64_t length;
};
} // namespace

/// Reads one of Scan's per-scan-value INTS attributes: `count` entries,
/// `defaultValue` each when the attribute is absent.
static FailureOr<SmallVector<int64_t>> getScanInts(NodeLowering &node,
                                                   StringRef name,
                                                   unsigned count,
                                                   int64_t defaultValue) {
  std::optional<SmallVector<int64_t>> values = node.getInts(name);
  if (!values)
    return SmallVector<int64_t>(count, defaultValue);
  if (values->size() != count)
    return node.emitError() << name << " has " << values->size()
                            << " entries, for " << count << " scan values";
  return *values;
}

/// Reads and checks a Scan node's body, attributes and scan inputs.
static FailureOr<ScanParts> getScanParts(NodeLowering &node) {
  ScanParts scan;
  scan.body = getSubgraph(node, "body");
  if (!scan.body)
    return node.emitError() << "body must be a subgraph";
  if (node.getNode().getOpset() < 9)
    return node.emitError()
           << "is a Scan of opset " << node.getNode().getOpset()
           << " (a batch axis and sequence_lens), which does not lower: "
              "opset 9 and later do";
  int64_t numInputs = node.getInt("num_scan_inputs", 0);
  if (numInputs < 1 || numInputs > int64_t(node.getNumOperands()))
    return node.emitError() << "num_scan_inputs is " << numInputs
                            << ", outside [1, " << node.getNumOperands() << "]";
  scan.numInputs = numInputs;
  scan.numState = node.getNumOperands() - numInputs;
  if (node.getNumResults() < scan.numState)
    return node.emitError() << "has fewer outputs than its " << scan.numState
                            << " state variables";
  scan.numOutputs = node.getNumResults() - scan.numState;
  if (scan.body->getNumArguments() != node.getNumOperands() ||
      getYield(*scan.body).getValues().size() != node.getNumResults())
    return node.emitError()
           << "the body must take the " << scan.numState
           << " state variables and one element of each of the "
           << scan.numInputs << " scan inputs, and yield the state variables "
           << "and the " << scan.numOutputs << " scan outputs' elements";
  FailureOr<SmallVector<int64_t>> inputAxes =
      getScanInts(node, "scan_input_axes", scan.numInputs, 0);
  FailureOr<SmallVector<int64_t>> inputDirections =
      getScanInts(node, "scan_input_directions", scan.numInputs, 0);
  FailureOr<SmallVector<int64_t>> outputAxes =
      getScanInts(node, "scan_output_axes", scan.numOutputs, 0);
  FailureOr<SmallVector<int64_t>> outputDirections =
      getScanInts(node, "scan_output_directions", scan.numOutputs, 0);
  if (failed(inputAxes) || failed(inputDirections) || failed(outputAxes) ||
      failed(outputDirections))
    return failure();
  scan.outputAxes = *outputAxes;
  for (int64_t direction : *inputDirections)
    scan.inputReversed.push_back(direction != 0);
  for (int64_t direction : *outputDirections)
    scan.outputReversed.push_back(direction != 0);

  // Each scan input's axis, and their common length: the iterations.
  scan.length = ShapedType::kDynamic;
  for (unsigned i = 0; i < scan.numInputs; ++i) {
    Value input = node.operand(scan.numState + i);
    auto type = getRankedType(input);
    std::optional<int64_t> axis =
        type ? normalizeAxis((*inputAxes)[i], type.getRank()) : std::nullopt;
    if (!type || !axis)
      return node.emitError()
             << "scan input #" << i << " is "
             << (input ? input.getType() : Type())
             << ": it needs a rank that has axis " << (*inputAxes)[i];
    scan.inputAxes.push_back(*axis);
    int64_t length = type.getDimSize(*axis);
    if (ShapedType::isDynamic(length))
      return node.emitError() << "scan input #" << i << " is " << type
                              << ": the scanned axis needs a static size";
    if (!ShapedType::isDynamic(scan.length) && length != scan.length)
      return node.emitError()
             << "scan input #" << i << " has " << length
             << " elements along its axis, the first " << scan.length;
    scan.length = length;
  }
  return scan;
}

namespace {
/// The slice of a tensor one element thick at an index along an axis.
struct UnitSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
} // namespace

/// The slice of `tensor` at `index` along `axis`, one element thick.
static UnitSlice getUnitSlice(OpBuilder &b, Location loc, Value tensor,
                              int64_t axis, OpFoldResult index) {
  int64_t rank = getRankedType(tensor).getRank();
  UnitSlice slice{SmallVector<OpFoldResult>(rank, b.getIndexAttr(0)),
                  getSizes(b, loc, tensor),
                  SmallVector<OpFoldResult>(rank, b.getIndexAttr(1))};
  slice.offsets[axis] = index;
  slice.sizes[axis] = b.getIndexAttr(1);
  return slice;
}

/// The type of one element of a scan input of `type` along `axis`.
static RankedTensorType getScanElementType(RankedTensorType type,
                                           int64_t axis) {
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  return RankedTensorType::get(shape, type.getElementType());
}

/// Element `index` of scan input `input` along `axis`, one rank less.
static Value extractScanElement(OpBuilder &b, Location loc, Value input,
                                int64_t axis, OpFoldResult index) {
  UnitSlice slice = getUnitSlice(b, loc, input, axis, index);
  return tensor::ExtractSliceOp::create(
      b, loc, getScanElementType(getRankedType(input), axis), input,
      slice.offsets, slice.sizes, slice.strides);
}

/// Unrolls a Scan of at most kMaxUnrolledIterations iterations: one copy
/// of the body per element, its outputs stacked.
static LoweringResult unrollScan(NodeLowering &node, const ScanParts &scan,
                                 OpRangeLowering lowerOps) {
  onnxg::NodeOp op = node.getNode();
  OpBuilder &b = node.getBuilder();
  Location loc = op.getLoc();
  Block *body = scan.body;
  SmallVector<Value> state;
  for (unsigned i = 0; i < scan.numState; ++i)
    state.push_back(node.operand(i));
  SmallVector<SmallVector<Value>> outputs(scan.numOutputs);
  for (int64_t iteration = 0; iteration < scan.length; ++iteration) {
    IRMapping mapping;
    b.setInsertionPoint(op);
    for (unsigned i = 0; i < scan.numState; ++i)
      mapping.map(body->getArgument(i), state[i]);
    for (unsigned i = 0; i < scan.numInputs; ++i) {
      int64_t index =
          scan.inputReversed[i] ? scan.length - 1 - iteration : iteration;
      mapping.map(body->getArgument(scan.numState + i),
                  extractScanElement(b, loc, node.operand(scan.numState + i),
                                     scan.inputAxes[i], b.getIndexAttr(index)));
    }
    FailureOr<SmallVector<Value>> copy =
        lowerBodyCopy(*body, mapping, op, b, lowerOps);
    if (failed(copy))
      return failure();
    SmallVector<Value> &yielded = *copy;
    for (unsigned i = 0; i < scan.numState; ++i) {
      if (failed(checkCarried(node, i, state[i], yielded[i])))
        return failure();
      state[i] = yielded[i];
    }
    for (unsigned i = 0; i < scan.numOutputs; ++i)
      outputs[i].push_back(yielded[scan.numState + i]);
  }
  b.setInsertionPoint(op);
  SmallVector<Value> results(state);
  for (unsigned i = 0; i < scan.numOutputs; ++i) {
    FailureOr<Value> stacked =
        stackScanOutput(node, scan.numState + i, i, outputs[i],
                        scan.outputAxes[i], scan.outputReversed[i]);
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  return results;
}

/// A Scan of more iterations: an scf.for over the elements, carrying the
/// state variables and the scan outputs, into which each iteration's
/// elements are inserted.
static LoweringResult lowerScanLoop(NodeLowering &node, const ScanParts &scan,
                                    OpRangeLowering lowerOps,
                                    bool hostBranches) {
  if (!hostBranches)
    return node.emitError()
           << "scans " << scan.length << " elements: a Scan lowers for CUDA "
           << "only when it unrolls, at most " << kMaxUnrolledIterations;
  onnxg::NodeOp op = node.getNode();
  OpBuilder &b = node.getBuilder();
  Location loc = op.getLoc();
  Block *body = scan.body;

  // The body lowers where it is, its arguments typed as the loop's.
  SmallVector<Value> inits;
  for (unsigned i = 0; i < scan.numState; ++i) {
    inits.push_back(node.operand(i));
    body->getArgument(i).setType(inits.back().getType());
  }
  for (unsigned i = 0; i < scan.numInputs; ++i)
    body->getArgument(scan.numState + i)
        .setType(getScanElementType(
            getRankedType(node.operand(scan.numState + i)), scan.inputAxes[i]));
  // The iteration number, for the body's random ops: a placeholder until
  // the loop exists.
  BlockArgument iterationArg =
      body->addArgument(RankedTensorType::get({}, b.getI64Type()), loc);
  if (failed(lowerLoopBody(node, *body, iterationArg, lowerOps)))
    return failure();
  SmallVector<Value> yielded = getYieldedValues(*body);
  for (unsigned i = 0; i < scan.numState; ++i)
    if (failed(checkCarried(node, i, inits[i], yielded[i])))
      return failure();

  // Each scan output is the iterations' elements inserted along its axis.
  b.setInsertionPoint(op);
  SmallVector<Value> accumulators;
  SmallVector<int64_t> outputAxes;
  for (unsigned i = 0; i < scan.numOutputs; ++i) {
    FailureOr<std::pair<RankedTensorType, int64_t>> layout =
        getScanOutputLayout(node, i, yielded[scan.numState + i],
                            scan.outputAxes[i]);
    if (failed(layout))
      return failure();
    auto [type, axis] = *layout;
    outputAxes.push_back(axis);
    SmallVector<int64_t> shape(type.getShape());
    shape.insert(shape.begin() + axis, scan.length);
    accumulators.push_back(
        tensor::EmptyOp::create(b, loc, shape, type.getElementType()));
  }
  SmallVector<Value> iterArgs(inits);
  llvm::append_range(iterArgs, accumulators);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value last = arith::ConstantIndexOp::create(b, loc, scan.length - 1);
  auto forOp = scf::ForOp::create(
      b, loc, zero, arith::ConstantIndexOp::create(b, loc, scan.length), one,
      iterArgs,
      [&](OpBuilder &nested, Location nestedLoc, Value iteration,
          ValueRange args) {
        Value reversed =
            arith::SubIOp::create(nested, nestedLoc, last, iteration);
        iterationArg.replaceAllUsesWith(tensor::FromElementsOp::create(
            nested, nestedLoc, iterationArg.getType(),
            ValueRange{arith::IndexCastOp::create(
                nested, nestedLoc, nested.getI64Type(), iteration)}));
        for (unsigned i = 0; i < scan.numState; ++i)
          body->getArgument(i).replaceAllUsesWith(args[i]);
        for (unsigned i = 0; i < scan.numInputs; ++i)
          body->getArgument(scan.numState + i)
              .replaceAllUsesWith(extractScanElement(
                  nested, nestedLoc, node.operand(scan.numState + i),
                  scan.inputAxes[i],
                  scan.inputReversed[i] ? reversed : iteration));
        yielded = moveLoopBody(*body, nested.getInsertionBlock());
        nested.setInsertionPointToEnd(nested.getInsertionBlock());
        SmallVector<Value> next;
        for (unsigned i = 0; i < scan.numState; ++i)
          next.push_back(
              castToType(nested, nestedLoc, yielded[i], inits[i].getType()));
        for (unsigned i = 0; i < scan.numOutputs; ++i) {
          Value accumulator = args[scan.numState + i];
          UnitSlice slice =
              getUnitSlice(nested, nestedLoc, accumulator, outputAxes[i],
                           scan.outputReversed[i] ? reversed : iteration);
          next.push_back(tensor::InsertSliceOp::create(
              nested, nestedLoc, yielded[scan.numState + i], accumulator,
              slice.offsets, slice.sizes, slice.strides));
        }
        scf::YieldOp::create(nested, nestedLoc, next);
      });
  body->eraseArgument(iterationArg.getArgNumber());
  b.setInsertionPoint(op);
  return SmallVector<Value>(forOp.getResults());
}

static LoweringResult lowerScan(NodeLowering &node, OpRangeLowering lowerOps,
                                bool hostBranches) {
  FailureOr<ScanParts> scan = getScanParts(node);
  if (failed(scan))
    return failure();
  if (scan->length <= kMaxUnrolledIterations)
    return unrollScan(node, *scan, lowerOps);
  return lowerScanLoop(node, *scan, lowerOps, hostBranches);
}

LoweringResult mlir::amp::lowering::lowerControlFlow(NodeLowering &node,
                                                     OpRangeLowering lowerOps,
                                                     bool hostBranches) {
  StringRef opType = node.getNode().getOpType();
  if (opType == "If")
    return lowerIf(node, lowerOps, hostBranches);
  if (opType == "Loop")
    return lowerLoop(node, lowerOps, hostBranches);
  return lowerScan(node, lowerOps, hostBranches);
}
