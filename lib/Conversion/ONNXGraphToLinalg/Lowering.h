//===- Lowering.h - Shared pieces of the graph-to-linalg lowering -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// What each op family's lowering (Elementwise.cpp, Contraction.cpp, ...)
// sees of a node, the table that maps op types to lowerings, and the
// builders they share: ONNX broadcasting, reductions, reshapes, scalar
// conversions.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_ONNXGRAPHTOLINALG_LOWERING_H
#define AMP_LIB_CONVERSION_ONNXGRAPHTOLINALG_LOWERING_H

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace mlir::amp::lowering {

/// Where the random ops of one function draw from: the function's
/// kRandomKeyName argument, a tensor<2xi64> holding (seed, step counter)
/// that is appended on first use, and one stream number per random node.
/// A node in the body of a loop that is not unrolled (an scf.while or
/// scf.for, whose body lowers once) also draws by the iteration numbers of
/// the loops around it, innermost last: one-element i64 tensors.
class RandomSource {
public:
  explicit RandomSource(func::FuncOp func) : func(func) {}

  Value getKey();
  unsigned takeStream() { return streams++; }
  ArrayRef<Value> getIterations() const { return iterations; }
  void pushIteration(Value iteration) { iterations.push_back(iteration); }
  void popIteration() { iterations.pop_back(); }

private:
  func::FuncOp func;
  Value key;
  unsigned streams = 0;
  SmallVector<Value> iterations;
};

/// One node being lowered: its operands (already lowered), declared result
/// types and ONNX attributes, and the builder to emit with.
class NodeLowering {
public:
  NodeLowering(onnxg::NodeOp node, OpBuilder &builder,
               RandomSource *random = nullptr)
      : node(node), builder(builder), random(random) {}

  onnxg::NodeOp getNode() const { return node; }
  Location getLoc() const { return node.getLoc(); }
  OpBuilder &getBuilder() const { return builder; }

  unsigned getNumOperands() const { return node.getNumOperands(); }
  /// Operand `i` with the most static type known for it; null when the
  /// node has fewer operands or the optional operand is missing.
  Value operand(unsigned i) const;
  unsigned getNumResults() const { return node.getNumResults(); }
  /// The declared type of result `i`; null for a missing optional output
  /// and for a type ONNX shape inference could not find (outputs of
  /// contrib ops and what they feed).
  RankedTensorType resultType(unsigned i) const;
  /// The element type of result `i`, or `fallback` when it is not declared.
  Type resultElementType(unsigned i, Type fallback) const {
    RankedTensorType type = resultType(i);
    return type ? type.getElementType() : fallback;
  }
  bool isResultUsed(unsigned i) const { return !node.getResult(i).use_empty(); }

  Attribute getAttr(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t defaultValue) const;
  float getFloat(llvm::StringRef name, float defaultValue) const;
  llvm::StringRef getString(llvm::StringRef name,
                            llvm::StringRef defaultValue) const;
  /// An INTS attribute, or nullopt when the node has none.
  std::optional<llvm::SmallVector<int64_t>> getInts(llvm::StringRef name) const;
  /// The element tensors of operand `i`, a sequence built in this graph
  /// (buildSequence); nullopt, after an error naming the operand, for a
  /// missing operand or a sequence the graph takes as an input.
  std::optional<llvm::SmallVector<Value>> sequenceOperand(unsigned i) const;
  /// The values of operand `i` when it is a constant integer tensor.
  std::optional<llvm::SmallVector<int64_t>> getConstantInts(unsigned i) const;
  /// The values of operand `i` when it is a constant f32 tensor.
  std::optional<llvm::SmallVector<double>> getConstantFloats(unsigned i) const;
  /// Reads an integer list given as the attribute `name` (older opsets) or
  /// as constant operand `i` (newer ones); nullopt when neither is there.
  /// Sets `notConstant` when the operand exists but is not a constant.
  std::optional<llvm::SmallVector<int64_t>>
  getIntsFromAttrOrOperand(llvm::StringRef name, unsigned i,
                           bool &notConstant) const;

  /// Reports an error that names the node; the lowering then returns it.
  InFlightDiagnostic emitError() const;

  /// The function's random key (RandomSource), and the next stream number
  /// (one per random node: take it once).
  Value getRandomKey() const { return random->getKey(); }
  unsigned takeRandomStream() const { return random->takeStream(); }
  /// The function's random source; null where the caller gave none.
  RandomSource *getRandomSource() const { return random; }

private:
  mutable onnxg::NodeOp node;
  OpBuilder &builder;
  RandomSource *random;
};

/// What a lowering returns: one value per node result (null for results
/// that are missing or unused and not computed).
using LoweringResult = FailureOr<llvm::SmallVector<Value>>;
using LoweringFn = LoweringResult (*)(NodeLowering &);

/// Lowerings by (domain, op type); "" and "ai.onnx" are one domain.
class LoweringTable {
public:
  void add(llvm::StringRef domain, llvm::StringRef opType, LoweringFn fn);
  LoweringFn lookup(llvm::StringRef domain, llvm::StringRef opType) const;

private:
  llvm::StringMap<LoweringFn> lowerings;
};

void populateElementwiseLowerings(LoweringTable &table);
void populateContractionLowerings(LoweringTable &table);
void populateConvolutionLowerings(LoweringTable &table);
void populateReductionLowerings(LoweringTable &table);
void populateNormalizationLowerings(LoweringTable &table);
void populateDataMovementLowerings(LoweringTable &table);
void populateTrainingLowerings(LoweringTable &table);
void populateOptimizerLowerings(LoweringTable &table);
void populateRandomLowerings(LoweringTable &table);
void populateQuantizationLowerings(LoweringTable &table);
void populateSequenceLowerings(LoweringTable &table);
void populateSignalLowerings(LoweringTable &table);

/// A lowered ONNX sequence of `elements`: an unrealized_conversion_cast
/// from the element tensors to `sequenceType`, which the nodes reading the
/// sequence see through (NodeLowering::sequenceOperand) and which is erased
/// once they have lowered. A `sequenceType` that is not a sequence type
/// (not inferred) becomes one of unranked tensors.
Value buildSequence(OpBuilder &b, Location loc, Type sequenceType,
                    ValueRange elements);

/// The element tensors of `sequence` when buildSequence built it.
std::optional<llvm::SmallVector<Value>> getSequenceElements(Value sequence);

/// The value of a node computing a small integer or float tensor (shape
/// and size arithmetic) from constants, as an arith.constant; null when it
/// does not fold.
Value foldConstantNode(NodeLowering &node);

/// Lowers one `amp` dialect op; false when `op` is not one.
FailureOr<bool> lowerAMPOp(Operation *op, OpBuilder &builder);

//===----------------------------------------------------------------------===//
// Builders shared by the families
//===----------------------------------------------------------------------===//

/// `value` without the tensor.casts that only forgot static sizes or the
/// rank: the lowered value with the most static type known.
Value getMostStaticValue(Value value);

/// The ranked tensor type of `value`, or null (also for a null value).
inline RankedTensorType getRankedType(Value value) {
  return dyn_cast_or_null<RankedTensorType>(value ? value.getType() : Type());
}

/// The type arithmetic runs in for `elementType`: f32 for floats narrower
/// than 32 bits, the type itself otherwise.
Type getComputeType(Type elementType);

/// The type sums and products of `elementType` values accumulate in: f64
/// for f64, f32 for every other type.
Type getAccumulatorType(Type elementType);

/// `elementType`, an unsigned integer made signless of its width: arith's
/// integers are signless.
Type getSignlessType(Type elementType);

/// `value`, an integer, as `to`, an integer of its width and the other
/// signedness: a cast that the LLVM lowering folds away.
Value reinterpretInteger(OpBuilder &b, Location loc, Value value, Type to);

/// Converts a scalar between any two int, index or float types (ONNX Cast
/// semantics: floats to FP8 saturate, floats to ints truncate, i1 is 0/1).
/// Integers are signless: `fromUnsigned` and `toUnsigned` say which hold
/// unsigned values (zero-extended, converted as unsigned).
Value convertScalar(OpBuilder &b, Location loc, Value value, Type to,
                    bool fromUnsigned = false, bool toUnsigned = false);

/// A float or integer scalar constant of type `type`.
Value createScalar(OpBuilder &b, Location loc, Type type, double value);

/// The sizes of `value`, static ones as attributes.
llvm::SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc,
                                         Value value);

/// `tensor.empty` of `type`, taking dynamic sizes from `sizes`.
Value createEmpty(OpBuilder &b, Location loc,
                  llvm::ArrayRef<OpFoldResult> sizes, Type elementType);

/// A tensor of `sizes` filled with `value`.
Value createFilled(OpBuilder &b, Location loc,
                   llvm::ArrayRef<OpFoldResult> sizes, Value value);

/// The ONNX (numpy) broadcast of the shapes of `operands`, refined by the
/// static sizes of `declared`; null when the ranks or sizes disagree.
RankedTensorType getBroadcastType(ValueRange operands,
                                  RankedTensorType declared);
RankedTensorType getBroadcastType(llvm::ArrayRef<RankedTensorType> operandTypes,
                                  RankedTensorType declared);

/// `result = body(operands...)` element by element, broadcasting operands
/// ONNX-style to `resultType`. Float operands narrower than f32 reach the
/// body widened to f32 (getComputeType), and all float operands reach it as
/// f64 when one of them is f64; the body's value is converted to the
/// result's element type.
Value buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    ValueRange operands,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// A generic over the elements of `init` (no inputs, parallel) that yields
/// `body()`, which reads its position from linalg.index: gathers that
/// compute where to read (Slice backwards, Pad, Resize, GridSample, the
/// index tensors of a sort).
Value buildGenericOverIndices(
    OpBuilder &b, Location loc, Value init,
    llvm::function_ref<Value(OpBuilder &, Location)> body);

/// One operand of a contraction: its value and whether its last two
/// dimensions are transposed.
struct ContractionOperand {
  Value value;
  bool transposed;
};

/// sum_k op(A)[..., m, k] * op(B)[..., k, n] in f32 (f64 for f64 B), with
/// the batch dimensions broadcast; both operands have rank >= 2.
Value buildContraction(OpBuilder &b, Location loc, ContractionOperand a,
                       ContractionOperand bOperand);

/// acc + x * y in the accumulator's type, for contraction bodies (x and y
/// converted first).
Value multiplyAccumulate(OpBuilder &b, Location loc, Value x, Value y,
                         Value acc);

/// softmax (or log-softmax) of `input` over `axes`, max-shifted, in f32,
/// rounded to `elementType`.
Value buildSoftmax(OpBuilder &b, Location loc, Value input,
                   llvm::ArrayRef<int64_t> axes, bool log, Type elementType);

/// The loops of a reduction of `input` over `axes`: one per dimension,
/// reduction on `axes`, and the output's sizes and indexing map (the
/// other dimensions).
struct ReductionLoops {
  llvm::SmallVector<utils::IteratorType> iterators;
  llvm::SmallVector<OpFoldResult> outSizes;
  AffineMap outMap;
};
ReductionLoops getReductionLoops(OpBuilder &b, Location loc, Value input,
                                 llvm::ArrayRef<int64_t> axes);

/// Reduces `input` over `axes` (sorted, non-negative) with `combine`,
/// starting from `init`, in `accType`; the result drops the reduced
/// dimensions. `map` is applied to each element first.
Value buildReduction(
    OpBuilder &b, Location loc, Value input, llvm::ArrayRef<int64_t> axes,
    Type accType, Value init,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> combine,
    llvm::function_ref<Value(OpBuilder &, Location, Value)> map = nullptr);

/// How a reduction, a scan or a scatter folds a value into its accumulator.
enum class CombineKind { Add, Mul, Max, Min };

/// `acc` combined with `x` by `kind`, for floats or signed integers.
Value combineValues(OpBuilder &b, Location loc, CombineKind kind, Value acc,
                    Value x);

/// Scatters `updates` into `dest` in one sequential scf.for nest over the
/// elements of `updates`: `getTarget` gives the indices in `dest` of the
/// update at `ivs`, which (converted to dest's element type) replaces the
/// target or, with `kind`, is combined into it; duplicates apply in loop
/// order. O(updates), where a gather-style generic would cost
/// O(dest x updates).
Value buildScatter(OpBuilder &b, Location loc, Value dest, Value updates,
                   std::optional<CombineKind> kind,
                   llvm::function_ref<llvm::SmallVector<Value>(
                       OpBuilder &, Location, ValueRange)>
                       getTarget);

/// The reduction attribute of a scatter node: nullopt for "none", an error
/// for unknown names.
FailureOr<std::optional<CombineKind>> getScatterReduction(NodeLowering &node);

/// An index read from an indices tensor as an index value, wrapped (+size)
/// when negative.
Value normalizeIndex(OpBuilder &b, Location loc, Value index, Value size);

/// `value` summed over the dimensions along which `target`'s shape
/// broadcasts to it (ONNX rules), in the accumulator type, shaped like
/// `target`; failure when the shapes do not broadcast or are not static.
FailureOr<Value> sumToShape(OpBuilder &b, Location loc, Value value,
                            RankedTensorType target);

/// The sum (buildSum) or maximum (buildMax) of `input` over `axes`, in its
/// accumulator type; the result drops the reduced dimensions.
Value buildSum(OpBuilder &b, Location loc, Value input,
               llvm::ArrayRef<int64_t> axes);
Value buildMax(OpBuilder &b, Location loc, Value input,
               llvm::ArrayRef<int64_t> axes);

/// The number of elements of `input` over `axes`, as an index value.
Value getElementCount(OpBuilder &b, Location loc, Value input,
                      llvm::ArrayRef<int64_t> axes);

/// Reshapes `value` to `type` (same number of elements).
Value reshapeTo(OpBuilder &b, Location loc, Value value, RankedTensorType type);

/// `value` with the sizes of the reduced `axes` put back as 1s.
Value keepDims(OpBuilder &b, Location loc, Value value, Value input,
               llvm::ArrayRef<int64_t> axes);

/// Converts every element of `value` to `elementType`.
Value convertTensor(OpBuilder &b, Location loc, Value value, Type elementType);

/// An arith.constant of `value`. Small resource blobs become dense
/// attributes: upstream folders cannot read elements of a resource.
Value createConstant(OpBuilder &b, Location loc, ElementsAttr value);

/// An arith.constant of `type` (float or integer elements) holding `values`,
/// truncated toward zero for integers.
Value createNumberConstant(OpBuilder &b, Location loc, RankedTensorType type,
                           llvm::ArrayRef<double> values);

/// Casts `value` to `type` when they differ (a more or less static shape).
Value castToType(OpBuilder &b, Location loc, Value value, Type type);

/// Operand `i` of `node`, a tensor of one element (a learning rate, a step
/// count, a flag, a padding value), as a 0-d tensor; null after an error
/// naming it `what`.
Value getScalarOperand(NodeLowering &node, unsigned i, llvm::StringRef what);

/// Lowers the ops of one block from `begin` up to `end`, in order.
using OpRangeLowering = llvm::function_ref<LogicalResult(Block::iterator begin,
                                                         Block::iterator end)>;

/// Whether `node` is an If or a Loop, which lowerControlFlow lowers.
bool isControlFlow(onnxg::NodeOp node);

/// Lowers an If or Loop node (ControlFlow.cpp); `lowerOps` lowers the
/// nodes of its subgraphs. Without `hostBranches` an If or Loop whose
/// condition is computed at run time is an error.
LoweringResult lowerControlFlow(NodeLowering &node, OpRangeLowering lowerOps,
                                bool hostBranches);

/// `inputs` (ranked, of one rank) concatenated along `axis`.
Value concatTensors(OpBuilder &b, Location loc, ValueRange inputs,
                    int64_t axis);

/// The `axis` (default 0) along which a Split-like node splits its input,
/// operand 0: in range and of static size, or an error.
FailureOr<int64_t> getSplitAxis(NodeLowering &node);

/// The node's input, operand 0, split along `axis` (getSplitAxis) into
/// parts of `parts` elements from the start; an error when they do not add
/// up to the axis.
FailureOr<llvm::SmallVector<Value>> splitInput(NodeLowering &node, int64_t axis,
                                               llvm::ArrayRef<int64_t> parts);

/// `input` with its dimensions permuted: result dimension d is input
/// dimension perm[d].
Value transposeTensor(OpBuilder &b, Location loc, Value input,
                      llvm::ArrayRef<int64_t> perm);

/// `input` without the elements that negative pads in `low` and `high`
/// (one each per dimension) remove.
Value cropNegativePads(OpBuilder &b, Location loc, Value input,
                       llvm::ArrayRef<int64_t> low,
                       llvm::ArrayRef<int64_t> high);

/// `input` padded with the scalar `value` by `low` and `high` elements (one
/// each per dimension) on either side; negative pads crop.
Value padTensor(OpBuilder &b, Location loc, Value input,
                llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                Value value);

/// `axis` in [0, rank), or nullopt when it is outside [-rank, rank).
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// The largest finite value of a float type.
double getLargestFinite(FloatType type);

} // namespace mlir::amp::lowering

#endif // AMP_LIB_CONVERSION_ONNXGRAPHTOLINALG_LOWERING_H
