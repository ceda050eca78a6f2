//===- NodeEmitter.h - Build ONNX nodes that expand another -----*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The node builder that the expansion passes share: new default-domain nodes
// named after the node they stand for, and the constants they need.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_DIALECT_ONNXGRAPH_TRANSFORMS_NODEEMITTER_H
#define AMP_LIB_DIALECT_ONNXGRAPH_TRANSFORMS_NODEEMITTER_H

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>

namespace mlir::onnxg {

/// The domain of ONNX Runtime's contrib and gradient ops.
constexpr llvm::StringLiteral kMicrosoftDomain = "com.microsoft";

/// Runs `expand` on each node of `func`'s body that `matches` (collected
/// first, the builder at the node), then gives `func` the types of what it
/// returns: outputs ONNX could not type take the expansion's types. Fails
/// when an expansion does (it has reported why).
LogicalResult
expandNodes(func::FuncOp func, llvm::function_ref<bool(NodeOp)> matches,
            llvm::function_ref<LogicalResult(NodeOp, OpBuilder &)> expand);

/// The elements of `value` when it is an int64 initializer or Constant;
/// nullopt otherwise (and for a resource blob, which ElementsAttr does not
/// iterate).
std::optional<llvm::SmallVector<int64_t>> getConstantInts(Value value);

/// Creates the nodes that replace `origin`, each named
/// "<origin's name>/<OpType>_<n>" ("<fallback>/..." when it has none), at the
/// builder's insertion point and at the model's opset.
class NodeEmitter {
public:
  NodeEmitter(NodeOp origin, OpBuilder &builder, llvm::StringRef fallback)
      : origin(origin), builder(builder), fallback(fallback) {}

  OpBuilder &getBuilder() { return builder; }

  /// A new node with one result of `type`.
  Value create(llvm::StringRef opType, Type type, ValueRange inputs,
               llvm::ArrayRef<NamedAttribute> attrs = {}) {
    std::string name = nextName(opType);
    return createNode(builder, opType, type, inputs, name, name + "_output",
                      attrs)
        .getResult(0);
  }

  /// A new node of `domain` with a result per type of `types` (named
  /// "<node name>_output_<i>").
  NodeOp createWithResults(llvm::StringRef opType, TypeRange types,
                           ValueRange inputs,
                           llvm::ArrayRef<NamedAttribute> attrs = {},
                           llvm::StringRef domain = "") {
    std::string name = nextName(opType);
    SmallVector<std::string> outputs;
    for (size_t i = 0; i < types.size(); ++i)
      outputs.push_back(name + "_output_" + std::to_string(i));
    return createNode(builder, opType, types, inputs, name, outputs, attrs,
                      domain);
  }

  /// A Constant of `type` filled with `value` (a 0-d tensor of
  /// `elementType` when `type` is null).
  Value createSplat(Type elementType, double value,
                    RankedTensorType type = {}) {
    if (!type)
      type = RankedTensorType::get({}, elementType);
    TypedAttr scalar =
        isa<FloatType>(elementType)
            ? TypedAttr(builder.getFloatAttr(elementType, value))
            : TypedAttr(builder.getIntegerAttr(elementType, int64_t(value)));
    return create(
        "Constant", type, {},
        builder.getNamedAttr("value", DenseElementsAttr::get(type, scalar)));
  }

  /// A Constant of the 1-D int64 `values`.
  Value createI64s(llvm::ArrayRef<int64_t> values) {
    std::string name = nextName("Constant");
    return createI64Constant(builder, values, name, name + "_output")
        .getResult(0);
  }

  /// The opset the model imports for the default domain.
  int64_t getOpset() { return getOpsetImport(origin, "", 1); }

  /// A 0-d constant of `elementType`, made once per type and value.
  Value scalar(Type elementType, double value);
  /// A 0-d int64 constant, made once per value.
  Value index(int64_t value);

  /// `value` cast to `elementType` (itself when it has that type).
  Value castTo(Value value, Type elementType);
  /// Gathers `position` of `axis` (a 0-d index: the axis goes away).
  Value pick(Value value, int64_t position, int64_t axis = 0);
  /// Reshapes to `shape` (ONNX's Reshape shape: 0 copies, -1 infers), of
  /// type `resultShape`.
  Value reshape(Value value, llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<int64_t> resultShape);
  Value transpose(Value value, llvm::ArrayRef<int64_t> perm);
  /// Concatenates `values` on `axis` in one node; a single value is itself.
  Value concat(ValueRange values, int64_t axis);
  /// An elementwise node with ONNX broadcasting (comparisons give i1).
  Value binary(llvm::StringRef opType, Value lhs, Value rhs);
  Value unary(llvm::StringRef opType, Value value,
              llvm::ArrayRef<NamedAttribute> attrs = {});
  /// MatMul of [..., M, K] by [K, N].
  Value matmul(Value lhs, Value rhs);
  /// ReduceSum over `axes` into `resultType`, with the axes as an input
  /// from opset 13 and as an attribute before.
  Value reduceSum(Value value, llvm::ArrayRef<int64_t> axes, bool keepDims,
                  RankedTensorType resultType);
  /// A reduction `opType` (ReduceSum, ReduceMean, ReduceMax, ...) over
  /// `axes`, as an input or an attribute as the opset has it.
  Value reduce(llvm::StringRef opType, Value value,
               llvm::ArrayRef<int64_t> axes, bool keepDims,
               RankedTensorType resultType);

private:
  std::string nextName(llvm::StringRef opType) {
    llvm::StringRef prefix = origin.getNodeName();
    if (prefix.empty())
      prefix = fallback;
    return (prefix + "/" + opType + "_" + llvm::Twine(created++)).str();
  }

  NodeOp origin;
  OpBuilder &builder;
  llvm::StringRef fallback;
  unsigned created = 0;
  llvm::DenseMap<Type, std::map<double, Value>> scalars;
  llvm::DenseMap<int64_t, Value> indices;
};

} // namespace mlir::onnxg

#endif // AMP_LIB_DIALECT_ONNXGRAPH_TRANSFORMS_NODEEMITTER_H
