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

#include "mlir/IR/Builders.h"

namespace mlir::onnxg {

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
};

} // namespace mlir::onnxg

#endif // AMP_LIB_DIALECT_ONNXGRAPH_TRANSFORMS_NODEEMITTER_H
