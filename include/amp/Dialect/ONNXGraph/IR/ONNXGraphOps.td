//===- ONNXGraphOps.td - ONNX graph dialect ops and types --*- tablegen -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The `onnxg` dialect: one generic op per ONNX node, as torch-mlir imports
// ONNX. Meaning lives in the op table (OpTable.h), not in one op per type.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_ONNXGRAPH_IR_ONNXGRAPHOPS_TD
#define AMP_DIALECT_ONNXGRAPH_IR_ONNXGRAPHOPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "amp/Interfaces/CastFusionOpInterface.td"
include "amp/Interfaces/PrecisionOpInterface.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def ONNXGraph_Dialect : Dialect {
  let name = "onnxg";
  let cppNamespace = "::mlir::onnxg";
  let summary = "ONNX graphs as generic nodes";
  let description = [{
    The ONNX graph dialect holds an imported ONNX model losslessly. Every
    ONNX node becomes one `onnxg.node` carrying its domain, op type, opset and
    attributes; subgraph attributes (If, Loop, Scan, BeamSearch) become
    regions. Initializers are `onnxg.initializer` ops (or `onnxg.initializer`
    argument attributes when the initializer is also a graph input) holding
    `dense_resource` blobs. Missing optional inputs and outputs have type
    `none`. The name differs from onnx-mlir's `onnx` dialect so that both can
    live in one tool.
  }];
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Argument/result attribute holding the ONNX value name of a graph output.
    static constexpr llvm::StringLiteral kNameAttrName = "onnxg.name";
    /// Argument attribute holding the initializer of a graph input.
    static constexpr llvm::StringLiteral kInitializerAttrName =
        "onnxg.initializer";
    /// Argument/result/op attribute holding symbolic dimension names.
    static constexpr llvm::StringLiteral kDimsAttrName = "onnxg.dims";
    /// `onnxg.yield` attribute: symbolic dimension names of subgraph inputs.
    static constexpr llvm::StringLiteral kArgDimsAttrName = "onnxg.arg_dims";
    /// Name and doc string of a graph, on `func.func` for the main graph and
    /// on `onnxg.yield` for subgraphs.
    static constexpr llvm::StringLiteral kGraphNameAttrName = "onnxg.graph_name";
    static constexpr llvm::StringLiteral kDocStringAttrName = "onnxg.doc_string";
    /// Module attribute holding the model's metadata_props as [key, value]
    /// string pairs.
    static constexpr llvm::StringLiteral kMetadataPropsAttrName =
        "onnxg.metadata_props";
    /// Metadata of the fused location that lists a node's output names.
    static constexpr llvm::StringLiteral kOutputsLocTag = "onnx.outputs";
  }];
}

class ONNXGraph_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<ONNXGraph_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class ONNXGraph_Op<string mnemonic, list<Trait> traits = []>
    : Op<ONNXGraph_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def ONNXGraph_StringType : ONNXGraph_Type<"String", "string"> {
  let summary = "ONNX STRING tensor element type";
}

def ONNXGraph_UnknownType : ONNXGraph_Type<"Unknown", "unknown"> {
  let summary = "A value whose ONNX type is not known";
  let description = [{
    Given to values that have no type in the model and whose type ONNX shape
    inference could not find (custom-domain ops, subgraph inputs). The
    exporter writes no value_info for them.
  }];
}

def ONNXGraph_SequenceType : ONNXGraph_Type<"Sequence", "seq"> {
  let summary = "ONNX sequence type";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def ONNXGraph_OptionalType : ONNXGraph_Type<"Optional", "opt"> {
  let summary = "ONNX optional type";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def ONNXGraph_MapType : ONNXGraph_Type<"Map", "map"> {
  let summary = "ONNX map type";
  let parameters = (ins "::mlir::Type":$keyType, "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $keyType `,` $valueType `>`";
}

//===----------------------------------------------------------------------===//
// NodeOp
//===----------------------------------------------------------------------===//

def ONNXGraph_NodeOp : ONNXGraph_Op<"node", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<AMP_PrecisionOpInterface,
                              ["hasUnknownDataType", "supportsDataType",
                               "adaptToDataType", "getRecomputeKind",
                               "isElementwiseProduct", "estimateFlops",
                               "estimateBytes"]>,
    DeclareOpInterfaceMethods<AMP_CastFusionOpInterface,
                              ["canWriteResultAs", "writeResultAs",
                               "canReadOperandAs", "isConversionOf",
                               "hasValuesOutOfRange", "getLargestMagnitude"]>,
    RecursiveMemoryEffects]> {
  let summary = "One ONNX node";
  let description = [{
    A generic ONNX node. `op_type`, `domain` (as spelled in the model; `""`
    is the default domain) and `opset` (the model's opset import for the
    domain) identify the operator; `attributes` holds the ONNX attributes:
    INT as `i64`, FLOAT as `f32`, STRING as a string, INTS as
    `array<i64: ...>`, FLOATS as `array<f32: ...>`, STRINGS as an array of
    strings, TENSOR as an elements attribute, TENSORS as an array of them,
    TYPE_PROTO as a type, and GRAPH as an `index` naming one of the op's
    regions. A missing optional input is a value of type `none`
    (`onnxg.none`); a missing optional output has type `none`.

    The location is `fused<"onnx.outputs">[NodeName, OutputName...]`, so
    that node and value names survive; result names are also used as SSA
    names when printing.

    ```mlir
    %y = onnxg.node "Gemm"(%x, %w, %b) opset 13
           attributes {transB = 1 : i64}
           : (tensor<8x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    ```

    The verifier checks arity, required attributes and attribute types
    against ONNX's schema registry when the node's (domain, op type, opset)
    has a schema there; other nodes are kept as they are.
  }];
  let arguments = (ins Variadic<AnyType>:$inputs,
                       StrAttr:$op_type,
                       DefaultValuedStrAttr<StrAttr, "">:$domain,
                       I64Attr:$opset,
                       OptionalAttr<DictionaryAttr>:$onnx_attrs,
                       OptionalAttr<StrAttr>:$doc_string);
  let results = (outs Variadic<AnyType>:$outputs);
  let regions = (region VariadicRegion<AnyRegion>:$subgraphs);
  let assemblyFormat = [{
    $op_type `(` $inputs `)` (`domain` $domain^)? `opset` $opset
    (`attributes` $onnx_attrs^)? (`doc` $doc_string^)?
    (`subgraphs` $subgraphs^)? attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ONNX attributes, empty when the node has none.
    ::mlir::DictionaryAttr getOnnxAttrsOrEmpty();
    /// Sets the ONNX attribute `name`, replacing any previous value.
    void setOnnxAttr(::llvm::StringRef name, ::mlir::Attribute value);
    /// The node's name from its location ("" when unnamed).
    ::llvm::StringRef getNodeName();
    /// "'name' (OpType)" for diagnostics.
    std::string describe();
    /// An error at the node, its text starting with `describe()` and ": ".
    ::mlir::InFlightDiagnostic emitNodeError();
    /// Operand `index`, or null when the node has fewer operands or the
    /// optional input is omitted (an `onnxg.none`).
    ::mlir::Value getOptionalOperand(unsigned index);
  }];
}

//===----------------------------------------------------------------------===//
// NoneOp
//===----------------------------------------------------------------------===//

def ONNXGraph_NoneOp : ONNXGraph_Op<"none", [Pure]> {
  let summary = "The missing value of an omitted optional input";
  let description = [{
    Stands for an omitted optional input (an empty input name in ONNX).
  }];
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// InitializerOp
//===----------------------------------------------------------------------===//

def ONNXGraph_InitializerOp : ONNXGraph_Op<"initializer", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<AMP_CastFusionOpInterface,
                              ["canWriteResultAs", "writeResultAs",
                               "hasValuesOutOfRange", "getLargestMagnitude"]>,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A graph initializer (a named constant tensor)";
  let description = [{
    An ONNX initializer that is not a graph input. `name` is its ONNX name.
    The op has no side effects declared on purpose: two initializers with
    equal contents are still two ONNX values, so CSE must not merge them.

    ```mlir
    %w = onnxg.initializer "fc.weight" dense_resource<fc.weight> : tensor<3x4xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, ElementsAttr:$value);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$name $value attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

def ONNXGraph_YieldOp : ONNXGraph_Op<"yield", [
    Terminator, ParentOneOf<["NodeOp"]>, Pure]> {
  let summary = "Outputs of a subgraph";
  let description = [{
    Ends a subgraph region; `names` are the ONNX names of the subgraph
    outputs, in order. The subgraph's own name and doc string, when it has
    them, are the discardable attributes `onnxg.graph_name` and
    `onnxg.doc_string`; symbolic dimension names of its inputs and outputs
    are `onnxg.arg_dims` and `onnxg.dims` (one array per value).
  }];
  let arguments = (ins Variadic<AnyType>:$values, StrArrayAttr:$names);
  let assemblyFormat = "$names ($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

#endif // AMP_DIALECT_ONNXGRAPH_IR_ONNXGRAPHOPS_TD
