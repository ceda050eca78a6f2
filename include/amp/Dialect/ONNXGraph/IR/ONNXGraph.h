//===- ONNXGraph.h - ONNX graph dialect, types and ops ----------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The `onnxg` dialect, its types and ops, and how ONNX attribute kinds map to
// MLIR attributes.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_ONNXGRAPH_IR_ONNXGRAPH_H
#define AMP_DIALECT_ONNXGRAPH_IR_ONNXGRAPH_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringMap.h"

#include "amp/Interfaces/CastFusionOpInterface.h"
#include "amp/Interfaces/PrecisionOpInterface.h"

#include "amp/Dialect/ONNXGraph/IR/ONNXGraphOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "amp/Dialect/ONNXGraph/IR/ONNXGraphOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "amp/Dialect/ONNXGraph/IR/ONNXGraphOps.h.inc"

namespace mlir::onnxg {

/// ONNX AttributeProto kinds, numbered as in onnx.proto.
enum class OnnxAttrKind {
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
  SparseTensor = 11,
  SparseTensors = 12,
  TypeProto = 13,
  TypeProtos = 14,
};

/// The ONNX kind an MLIR attribute stands for, or nullopt when it stands for
/// none. An empty ArrayAttr reads as STRINGS.
std::optional<OnnxAttrKind> getOnnxAttrKind(Attribute attr);

/// The ONNX spelling of a kind ("INT", "FLOATS", ...).
llvm::StringRef stringifyOnnxAttrKind(OnnxAttrKind kind);

/// True for the default domain, spelled "" or "ai.onnx".
inline bool isDefaultDomain(llvm::StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// Whether `node` is PyTorch's `org.pytorch.aten` ATen node.
bool isATenNode(NodeOp node);

/// The PyTorch operator an `org.pytorch.aten` ATen node calls (its
/// `operator` without the `aten::` prefix), or "" for other nodes; its
/// `overload_name`, when non-empty, goes to `overload`.
llvm::StringRef getATenOperator(NodeOp node,
                                llvm::StringRef *overload = nullptr);

/// Whether `op` is an ONNX Constant node (default domain): runtimes keep its
/// value as an initializer, so it launches no kernel and costs no memory
/// beyond the model's.
bool isConstantNode(Operation *op);

/// The data of `value` when an initializer or a default-domain Constant
/// node defines it; null otherwise.
ElementsAttr getConstantValue(Value value);

/// The value of every element of `value` when they are all equal (a splat,
/// or a resource blob of equal elements, booleans one byte each: the zeros
/// an exporter writes out in full, zeroed moments); null when they differ.
TypedAttr getUniformElement(ElementsAttr value);

/// The node and output names recorded in an op's location by the importer:
/// `fused<"onnx.outputs">[NodeName, Output...]`. Returns false when `loc` has
/// no such record.
bool getOnnxNames(Location loc, llvm::StringRef &nodeName,
                  llvm::SmallVectorImpl<llvm::StringRef> &outputNames);

/// Builds the location the importer gives a node: the node name (wrapping
/// `fileLoc`) followed by its output names.
Location makeNodeLoc(MLIRContext *ctx, llvm::StringRef nodeName,
                     llvm::ArrayRef<std::string> outputNames, Location fileLoc);

/// The opset the model imports for `domain` ("" and "ai.onnx" are one),
/// from the `onnxg.opset_imports` of the module around `op`; `fallback` when
/// it imports none.
int64_t getOpsetImport(Operation *op, llvm::StringRef domain, int64_t fallback);

/// Creates a node of `domain` at the builder's insertion point, at the
/// opset the model imports for it (at least `minOpset`), named `nodeName`
/// with one output named `outputName`.
NodeOp createNode(OpBuilder &builder, llvm::StringRef opType, Type resultType,
                  ValueRange inputs, llvm::StringRef nodeName,
                  llvm::StringRef outputName,
                  llvm::ArrayRef<NamedAttribute> attrs = {},
                  llvm::StringRef domain = "", int64_t minOpset = 1);
/// The same with a result per type of `resultTypes`, named `outputNames`.
NodeOp createNode(OpBuilder &builder, llvm::StringRef opType,
                  TypeRange resultTypes, ValueRange inputs,
                  llvm::StringRef nodeName,
                  llvm::ArrayRef<std::string> outputNames,
                  llvm::ArrayRef<NamedAttribute> attrs = {},
                  llvm::StringRef domain = "", int64_t minOpset = 1);

/// Creates, like createNode, an ONNX Constant node holding the 1-D int64
/// tensor `values` (axes, shapes).
NodeOp createI64Constant(OpBuilder &builder, llvm::ArrayRef<int64_t> values,
                         llvm::StringRef nodeName, llvm::StringRef outputName);

/// The symbolic name (ONNX `dim_param`) the importer recorded for dimension
/// `dim` of `value` in `onnxg.dims`, or "" when it has none.
llvm::StringRef getDimName(Value value, unsigned dim);

/// The ONNX name of `value`: a function argument's name location, an
/// initializer's name, or the output name the importer recorded in its
/// op's location; "" when it has none.
llvm::StringRef getValueName(Value value);

/// The value of the model's metadata_props entry `key` (kept on `module`),
/// or "" when there is none.
llvm::StringRef getMetadataProp(ModuleOp module, llvm::StringRef key);

/// Sets the model's metadata_props entry `key` to `value`, replacing the
/// entry with that key or appending one.
void setMetadataProp(ModuleOp module, llvm::StringRef key,
                     llvm::StringRef value);

/// Every value of a function body by its ONNX name, and the values it returns
/// by their output names (`onnxg.name`): how passes find tensors that
/// metadata or options name.
class ValueNames {
public:
  explicit ValueNames(FunctionOpInterface func);
  /// The output named `name`, else the value named `name`, else null.
  Value lookup(llvm::StringRef name) const;
  /// The outputs by name.
  const llvm::StringMap<Value> &getOutputs() const { return outputs; }

private:
  llvm::StringMap<Value> values, outputs;
};

/// Checks `node` against ONNX's schema registry (arity, required attributes,
/// attribute kinds) when a schema exists for its domain, type and opset.
LogicalResult verifyAgainstOnnxSchema(NodeOp node);

/// The ONNX schema's type parameter ("T", "T1", ...) of each input and
/// output of `node` ("" where the schema has none); false, with nothing
/// appended, when libonnx has no schema for it.
bool getSchemaTypeParameters(NodeOp node,
                             llvm::SmallVectorImpl<std::string> &inputs,
                             llvm::SmallVectorImpl<std::string> &outputs);

/// Whether the schema of `node` lets its type parameter `typeParameter` (as
/// getSchemaTypeParameters names it) be a tensor of ONNX data type
/// `onnxDataType`; true when libonnx has no schema for the node.
bool schemaAllowsElementType(NodeOp node, llvm::StringRef typeParameter,
                             int32_t onnxDataType);

/// The element type the ONNX schema fixes for result `index` of `node`: the
/// one type its type parameter allows, or the element type of a ranked
/// operand with the same parameter; null when the schema leaves it open.
Type getSchemaResultElementType(NodeOp node, unsigned index);

/// Whether libonnx's schema of `node`'s op type is the same at `opset` as
/// at the node's own opset (no version of the op between the two); false
/// when libonnx has no schema for either.
bool isSchemaUnchangedUpTo(NodeOp node, int64_t opset);

} // namespace mlir::onnxg

#endif // AMP_DIALECT_ONNXGRAPH_IR_ONNXGRAPH_H
