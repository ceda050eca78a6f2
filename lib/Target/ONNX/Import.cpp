//===- Import.cpp - ONNX to MLIR import -------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Turns an ONNX ModelProto into `func.func @main` over `onnxg` ops: one op per
// node in a topological order, initializers as `dense_resource` blobs that
// take over the protobuf's buffers, names as locations. docs/ImportRules.md
// lists every rule.
//
//===----------------------------------------------------------------------===//

#include "amp/Target/ONNX/Import.h"
#include "ChildProcess.h"
#include "ContribSchemas.h"
#include "InlineFunctions.h"
#include "NewerSchemas.h"
#include "amp/Dialect/AMP/IR/AMPDialect.h"
#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include "google/protobuf/io/coded_stream.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <queue>

using namespace mlir;
using namespace mlir::onnxg;

/// Tensors with at most this many elements become `dense<...>` attributes in
/// node attributes (readable, foldable); larger ones become blobs.
static constexpr int64_t kMaxInlineElements = 16;
/// Tensors with at least this many bytes of raw data give their buffer to the
/// IR; smaller ones are copied.
static constexpr size_t kMinTakenBytes = 64 * 1024;

static constexpr const char *kNoShapeInference =
    "ONNX shape inference failed on this model; values keep the types the "
    "model declares";

/// Resource keys must be identifiers; keep the name readable otherwise.
static std::string sanitizeResourceKey(StringRef name) {
  std::string key;
  for (char c : name)
    key.push_back(llvm::isAlnum(c) || c == '_' || c == '.' ? c : '_');
  if (key.empty() || llvm::isDigit(key.front()))
    key.insert(key.begin(), '_');
  return key;
}

namespace {
class ShapeInferenceChild;

/// Imports one model. Owns the scopes of ONNX names while it walks graphs.
class Importer {
public:
  Importer(MLIRContext *ctx, StringRef fileName, TimingScope &timing)
      : ctx(ctx), builder(ctx), fileName(fileName),
        fileLoc(FileLineColLoc::get(ctx, fileName, 0, 0)), timing(timing) {}

  OwningOpRef<ModuleOp> importModel(onnx::ModelProto &model,
                                    ShapeInferenceChild *shapeInference);

private:
  //===--- diagnostics ---===//
  InFlightDiagnostic error() { return emitError(fileLoc); }

  //===--- types and tensors ---===//
  FailureOr<Type> convertElementType(int32_t dataType, StringRef what);
  FailureOr<Type> convertType(const onnx::TypeProto &type, StringRef what);
  ArrayAttr getDimNames(const onnx::TypeProto &type);
  ArrayAttr getDimNameLists(
      const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &values);
  FailureOr<ElementsAttr> convertTensor(onnx::TensorProto &tensor,
                                        StringRef what, bool allowInline);
  FailureOr<std::unique_ptr<std::string>>
  takeTensorBytes(onnx::TensorProto &tensor, StringRef what, Type eltType,
                  int64_t numElements);
  FailureOr<std::unique_ptr<std::string>>
  readExternalData(const onnx::TensorProto &tensor, StringRef what);

  //===--- graphs ---===//
  LogicalResult importGraph(onnx::GraphProto &graph, Block *block,
                            SmallVectorImpl<Value> &outputs);
  LogicalResult importNode(onnx::NodeProto &node, unsigned graphIndex);
  LogicalResult typeGraphValues();
  LogicalResult
  typeNodeResults(Operation *op, const onnx::NodeProto &node,
                  const llvm::StringMap<const onnx::TypeProto *> &types);
  FailureOr<Attribute>
  convertAttribute(onnx::AttributeProto &attr, onnx::NodeProto &node,
                   SmallVectorImpl<onnx::GraphProto *> &subgraphs);
  FailureOr<SmallVector<unsigned>> sortNodes(onnx::GraphProto &graph);
  LogicalResult renameRedefinitions(onnx::GraphProto &graph);
  void setGraphAttrs(Operation *op, const onnx::GraphProto &graph);
  std::string describeNode(const onnx::NodeProto &node);
  /// The name `name` has in the file (renameRedefinitions may have renamed
  /// a second definition).
  StringRef getFileName(StringRef name) const;
  Value lookup(StringRef name);
  Value getNone();

  MLIRContext *ctx;
  OpBuilder builder;
  std::string fileName;
  Location fileLoc;
  TimingScope &timing;
  /// Directory of the model file, for external data.
  std::string modelDir;
  /// Opset per domain ("" for the default domain).
  llvm::StringMap<int64_t> opsets;
  /// Name scopes, innermost last: graph inputs, initializers, node outputs.
  SmallVector<llvm::StringMap<Value>> scopes;
  /// Each imported graph with its nodes, whose results are typed once shape
  /// inference is done (typeGraphValues).
  struct ImportedGraph {
    const onnx::GraphProto *graph;
    SmallVector<std::pair<Operation *, const onnx::NodeProto *>> nodes;
  };
  SmallVector<ImportedGraph> importedGraphs;
  /// Internal names given to second definitions of a value name, mapped to
  /// the name in the file and to the new name the value gets (its location,
  /// which an export writes: ONNX defines each name once).
  llvm::StringMap<std::string> originalNames;
  llvm::StringMap<std::string> newNames;
  /// Initializers of main-graph inputs, by argument number.
  SmallVector<std::pair<unsigned, ElementsAttr>> inputDefaults;
  /// The `onnxg.none` value of the block being filled.
  SmallVector<Value> noneValues;

  friend OwningOpRef<ModuleOp>
  mlir::onnxg::importOnnxModel(StringRef, StringRef, MLIRContext *,
                               const ImportOptions &);
};
} // namespace

//===----------------------------------------------------------------------===//
// Types and tensors
//===----------------------------------------------------------------------===//

FailureOr<Type> Importer::convertElementType(int32_t dataType, StringRef what) {
  if (Type type = getElementType(ctx, dataType))
    return type;
  return error() << what << " has unknown element type " << dataType;
}

FailureOr<Type> Importer::convertType(const onnx::TypeProto &type,
                                      StringRef what) {
  switch (type.value_case()) {
  case onnx::TypeProto::kTensorType: {
    const onnx::TypeProto::Tensor &tensor = type.tensor_type();
    if (tensor.elem_type() == 0)
      return Type(UnknownType::get(ctx));
    FailureOr<Type> elt = convertElementType(tensor.elem_type(), what);
    if (failed(elt))
      return failure();
    if (!tensor.has_shape())
      return Type(UnrankedTensorType::get(*elt));
    SmallVector<int64_t> shape;
    for (const onnx::TensorShapeProto::Dimension &dim : tensor.shape().dim()) {
      if (dim.has_dim_value() && dim.dim_value() < 0)
        return error() << what << " has negative dimension " << dim.dim_value();
      shape.push_back(dim.has_dim_value() ? dim.dim_value()
                                          : ShapedType::kDynamic);
    }
    return Type(RankedTensorType::get(shape, *elt));
  }
  case onnx::TypeProto::kSequenceType: {
    FailureOr<Type> elt = convertType(type.sequence_type().elem_type(), what);
    if (failed(elt))
      return failure();
    return Type(SequenceType::get(ctx, *elt));
  }
  case onnx::TypeProto::kOptionalType: {
    FailureOr<Type> elt = convertType(type.optional_type().elem_type(), what);
    if (failed(elt))
      return failure();
    return Type(OptionalType::get(ctx, *elt));
  }
  case onnx::TypeProto::kMapType: {
    FailureOr<Type> key = convertElementType(type.map_type().key_type(), what);
    FailureOr<Type> value = convertType(type.map_type().value_type(), what);
    if (failed(key) || failed(value))
      return failure();
    return Type(MapType::get(ctx, *key, *value));
  }
  case onnx::TypeProto::kSparseTensorType:
    return error() << what << " is a sparse tensor, which is not supported";
  case onnx::TypeProto::kOpaqueType:
    return error() << what << " has an opaque type, which is not supported";
  case onnx::TypeProto::VALUE_NOT_SET:
    return Type(UnknownType::get(ctx));
  }
  return error() << what << " has an unsupported type";
}

/// The symbolic dimension names of a tensor type ("" where a dimension has
/// none), or null when it has no symbolic dimension.
ArrayAttr Importer::getDimNames(const onnx::TypeProto &type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return {};
  const onnx::TensorShapeProto &shape = type.tensor_type().shape();
  if (llvm::none_of(shape.dim(),
                    [](const auto &dim) { return dim.has_dim_param(); }))
    return {};
  SmallVector<Attribute> names;
  for (const onnx::TensorShapeProto::Dimension &dim : shape.dim())
    names.push_back(builder.getStringAttr(dim.dim_param()));
  return builder.getArrayAttr(names);
}

/// getDimNames of each value ([] where it has none), or null when no value
/// has a symbolic dimension.
ArrayAttr Importer::getDimNameLists(
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &values) {
  SmallVector<Attribute> lists;
  bool any = false;
  for (const onnx::ValueInfoProto &value : values) {
    ArrayAttr names = getDimNames(value.type());
    any |= static_cast<bool>(names);
    lists.push_back(names ? names : builder.getArrayAttr({}));
  }
  return any ? builder.getArrayAttr(lists) : ArrayAttr();
}

FailureOr<std::unique_ptr<std::string>>
Importer::readExternalData(const onnx::TensorProto &tensor, StringRef what) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      uint64_t value;
      if (StringRef(entry.value()).getAsInteger(10, value))
        return error() << what << ": external data " << entry.key() << " '"
                       << entry.value() << "' is not a number";
      (entry.key() == "offset" ? offset : length.emplace()) = value;
    }
  }
  if (location.empty())
    return error() << what << ": external data has no location";
  if (llvm::sys::path::is_absolute(location) ||
      StringRef(location).contains(".."))
    return error() << what << ": external data location '" << location
                   << "' must be a relative path inside the model's folder";
  SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return error() << what << ": cannot read external data file '" << path
                   << "': " << file.getError().message();
  uint64_t size = (*file)->getBufferSize();
  uint64_t count = length.value_or(size > offset ? size - offset : 0);
  if (offset > size || count > size - offset)
    return error() << what << ": external data file '" << path << "' has "
                   << size << " bytes, too few for offset " << offset
                   << " and length " << count;
  return std::make_unique<std::string>((*file)->getBufferStart() + offset,
                                       count);
}

/// Appends the low `size` bytes of each value, little-endian.
template <typename Range>
static void appendLowBytes(std::string &out, const Range &values,
                           unsigned size) {
  for (auto value : values) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(value));
    for (unsigned i = 0; i < size; ++i)
      out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
}

FailureOr<std::unique_ptr<std::string>>
Importer::takeTensorBytes(onnx::TensorProto &tensor, StringRef what,
                          Type eltType, int64_t numElements) {
  unsigned eltSize = getRawElementSize(eltType);
  if (eltSize == 0)
    return error() << what << ": " << eltType
                   << " tensors are not supported yet";
  std::unique_ptr<std::string> bytes;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    FailureOr<std::unique_ptr<std::string>> external =
        readExternalData(tensor, what);
    if (failed(external))
      return failure();
    bytes = std::move(*external);
  } else if (tensor.has_raw_data()) {
    // Large buffers are taken over. Small ones are copied: writing to the
    // protobuf would copy its memory page, which the shape inference child
    // still shares, and that costs more.
    if (tensor.raw_data().size() >= kMinTakenBytes) {
      bytes = std::make_unique<std::string>();
      bytes->swap(*tensor.mutable_raw_data());
    } else {
      bytes = std::make_unique<std::string>(tensor.raw_data());
    }
  } else {
    bytes = std::make_unique<std::string>();
    bytes->reserve(numElements * eltSize);
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::COMPLEX64:
      appendLowBytes(*bytes, tensor.float_data(), 4);
      break;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX128:
      appendLowBytes(*bytes, tensor.double_data(), 8);
      break;
    case onnx::TensorProto::INT64:
      appendLowBytes(*bytes, tensor.int64_data(), 8);
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      appendLowBytes(*bytes, tensor.uint64_data(), eltSize);
      break;
    default:
      // INT32 and every narrower type keep one element per int32_data entry.
      appendLowBytes(*bytes, tensor.int32_data(), eltSize);
      break;
    }
  }
  uint64_t expected = static_cast<uint64_t>(numElements) * eltSize;
  if (bytes->size() != expected)
    return error() << what << ": has " << bytes->size()
                   << " bytes of data, expected " << expected << " for "
                   << numElements << " elements of " << eltType;
  return bytes;
}

FailureOr<ElementsAttr> Importer::convertTensor(onnx::TensorProto &tensor,
                                                StringRef what,
                                                bool allowInline) {
  if (tensor.data_type() == onnx::TensorProto::UNDEFINED)
    return error() << what << " has no data type";
  FailureOr<Type> eltType = convertElementType(tensor.data_type(), what);
  if (failed(eltType))
    return failure();
  SmallVector<int64_t> shape;
  int64_t numElements = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return error() << what << " has negative dimension " << dim;
    if (dim != 0 && numElements > std::numeric_limits<int32_t>::max() / dim)
      return error() << what << " has too many elements";
    numElements *= dim;
    shape.push_back(dim);
  }
  auto type = RankedTensorType::get(shape, *eltType);

  if (isa<StringType>(*eltType)) {
    if (tensor.string_data_size() != numElements)
      return error() << what << " has " << tensor.string_data_size()
                     << " strings, expected " << numElements;
    SmallVector<StringRef> strings(tensor.string_data().begin(),
                                   tensor.string_data().end());
    return cast<ElementsAttr>(DenseStringElementsAttr::get(type, strings));
  }

  FailureOr<std::unique_ptr<std::string>> bytes =
      takeTensorBytes(tensor, what, *eltType, numElements);
  if (failed(bytes))
    return failure();
  std::string &data = **bytes;

  // Small numeric tensors stay readable; i1 and complex are always blobs
  // since DenseElementsAttr stores them differently from ONNX.
  bool inlineable =
      isa<FloatType>(*eltType) ||
      (isa<IntegerType>(*eltType) && eltType->getIntOrFloatBitWidth() >= 8);
  if (allowInline && inlineable && numElements <= kMaxInlineElements) {
    bool isSplat = false;
    ArrayRef<char> raw(data.data(), data.size());
    if (DenseElementsAttr::isValidRawBuffer(type, raw, isSplat))
      return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, raw));
  }

  // The blob takes over the protobuf's buffer: no copy.
  size_t align = std::max<size_t>(1, getRawElementSize(*eltType));
  if (align > alignof(std::max_align_t) ||
      reinterpret_cast<uintptr_t>(data.data()) % align != 0) {
    auto copy = std::make_unique<std::string>(data);
    bytes = std::move(copy);
  }
  std::string *owned = bytes->release();
  AsmResourceBlob blob(
      ArrayRef<char>(owned->data(), owned->size()), align,
      [owned](void *, size_t, size_t) { delete owned; },
      /*dataIsMutable=*/true);
  std::string key =
      sanitizeResourceKey(tensor.name().empty() ? "tensor" : tensor.name());
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, key, std::move(blob)));
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// The kind of an attribute written before `type` was a required field.
static onnx::AttributeProto::AttributeType
inferAttributeType(const onnx::AttributeProto &attr) {
  if (attr.type() != onnx::AttributeProto::UNDEFINED)
    return attr.type();
  if (attr.has_f())
    return onnx::AttributeProto::FLOAT;
  if (attr.has_i())
    return onnx::AttributeProto::INT;
  if (attr.has_s())
    return onnx::AttributeProto::STRING;
  if (attr.has_t())
    return onnx::AttributeProto::TENSOR;
  if (attr.has_g())
    return onnx::AttributeProto::GRAPH;
  if (attr.floats_size())
    return onnx::AttributeProto::FLOATS;
  if (attr.ints_size())
    return onnx::AttributeProto::INTS;
  if (attr.strings_size())
    return onnx::AttributeProto::STRINGS;
  if (attr.tensors_size())
    return onnx::AttributeProto::TENSORS;
  return onnx::AttributeProto::UNDEFINED;
}

FailureOr<Attribute>
Importer::convertAttribute(onnx::AttributeProto &attr, onnx::NodeProto &node,
                           SmallVectorImpl<onnx::GraphProto *> &subgraphs) {
  std::string what = describeNode(node) + ": attribute '" + attr.name() + "'";
  if (!attr.ref_attr_name().empty())
    return error() << what
                   << " refers to a function attribute, which is only "
                      "valid inside model-local functions";
  switch (inferAttributeType(attr)) {
  case onnx::AttributeProto::FLOAT:
    return Attribute(builder.getF32FloatAttr(attr.f()));
  case onnx::AttributeProto::INT:
    return Attribute(builder.getI64IntegerAttr(attr.i()));
  case onnx::AttributeProto::STRING:
    return Attribute(builder.getStringAttr(attr.s()));
  case onnx::AttributeProto::TENSOR: {
    FailureOr<ElementsAttr> tensor =
        convertTensor(*attr.mutable_t(), what, /*allowInline=*/true);
    if (failed(tensor))
      return failure();
    return Attribute(*tensor);
  }
  case onnx::AttributeProto::GRAPH:
    subgraphs.push_back(attr.mutable_g());
    return Attribute(builder.getIndexAttr(subgraphs.size() - 1));
  case onnx::AttributeProto::FLOATS:
    return Attribute(builder.getDenseF32ArrayAttr(
        SmallVector<float>(attr.floats().begin(), attr.floats().end())));
  case onnx::AttributeProto::INTS:
    return Attribute(builder.getDenseI64ArrayAttr(
        SmallVector<int64_t>(attr.ints().begin(), attr.ints().end())));
  case onnx::AttributeProto::STRINGS: {
    SmallVector<Attribute> strings;
    for (const std::string &s : attr.strings())
      strings.push_back(builder.getStringAttr(s));
    return Attribute(builder.getArrayAttr(strings));
  }
  case onnx::AttributeProto::TENSORS: {
    SmallVector<Attribute> tensors;
    for (onnx::TensorProto &t : *attr.mutable_tensors()) {
      FailureOr<ElementsAttr> tensor =
          convertTensor(t, what, /*allowInline=*/true);
      if (failed(tensor))
        return failure();
      tensors.push_back(*tensor);
    }
    return Attribute(builder.getArrayAttr(tensors));
  }
  case onnx::AttributeProto::TYPE_PROTO: {
    FailureOr<Type> type = convertType(attr.tp(), what);
    if (failed(type))
      return failure();
    return Attribute(TypeAttr::get(*type));
  }
  case onnx::AttributeProto::TYPE_PROTOS: {
    SmallVector<Attribute> types;
    for (const onnx::TypeProto &tp : attr.type_protos()) {
      FailureOr<Type> type = convertType(tp, what);
      if (failed(type))
        return failure();
      types.push_back(TypeAttr::get(*type));
    }
    return Attribute(builder.getArrayAttr(types));
  }
  case onnx::AttributeProto::GRAPHS:
  case onnx::AttributeProto::SPARSE_TENSOR:
  case onnx::AttributeProto::SPARSE_TENSORS:
    return error() << what << " is of kind "
                   << onnx::AttributeProto::AttributeType_Name(attr.type())
                   << ", which is not supported";
  default:
    return error() << what << " has unknown attribute type " << attr.type();
  }
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

void Importer::setGraphAttrs(Operation *op, const onnx::GraphProto &graph) {
  if (!graph.name().empty())
    op->setAttr(ONNXGraphDialect::kGraphNameAttrName,
                builder.getStringAttr(graph.name()));
  if (!graph.doc_string().empty())
    op->setAttr(ONNXGraphDialect::kDocStringAttrName,
                builder.getStringAttr(graph.doc_string()));
}

std::string Importer::describeNode(const onnx::NodeProto &node) {
  std::string text = "node ";
  if (!node.name().empty())
    text += "'" + node.name() + "' ";
  return text + "(" + node.op_type() + ")";
}

StringRef Importer::getFileName(StringRef name) const {
  auto alias = originalNames.find(name);
  return alias == originalNames.end() ? name : StringRef(alias->second);
}

Value Importer::lookup(StringRef name) {
  for (auto &scope : llvm::reverse(scopes))
    if (Value value = scope.lookup(name))
      return value;
  return {};
}

Value Importer::getNone() {
  Value &none = noneValues.back();
  if (!none) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(builder.getInsertionBlock());
    none = NoneOp::create(builder, fileLoc, builder.getNoneType()).getResult();
  }
  return none;
}

/// Adds to `names` every value name `graph` reads that it does not define.
static void collectFreeNames(const onnx::GraphProto &graph,
                             llvm::StringSet<> &names);

/// Adds to `names` every value name `node` reads, including those its
/// subgraphs read from enclosing scopes.
static void collectNodeReads(const onnx::NodeProto &node,
                             llvm::StringSet<> &names) {
  for (const std::string &input : node.input())
    if (!input.empty())
      names.insert(input);
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (attr.has_g())
      collectFreeNames(attr.g(), names);
    for (const onnx::GraphProto &g : attr.graphs())
      collectFreeNames(g, names);
  }
}

static void collectFreeNames(const onnx::GraphProto &graph,
                             llvm::StringSet<> &names) {
  llvm::StringSet<> defined, reads;
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const onnx::TensorProto &init : graph.initializer())
    defined.insert(init.name());
  for (const onnx::NodeProto &node : graph.node()) {
    collectNodeReads(node, reads);
    for (const std::string &output : node.output())
      defined.insert(output);
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    reads.insert(output.name());
  for (const auto &name : reads)
    if (!defined.contains(name.getKey()))
      names.insert(name.getKey());
}

/// Real files (gpt2_past.onnx) define some names twice. A name that only
/// Constant nodes define is the last of them for every reader, as ONNX
/// Runtime reads it (it makes them initializers, the last one staying);
/// for any other, each reader binds to the latest definition before it in
/// the file, or to the first one when none precedes it (graph outputs: the
/// first). The other definitions get internal names so that SSA holds, and
/// new names (`<name>_<k>`, unused in the graph) in their locations, so
/// that an export defines each name once.
LogicalResult Importer::renameRedefinitions(onnx::GraphProto &graph) {
  llvm::StringMap<SmallVector<unsigned, 2>> producers;
  llvm::StringSet<> taken;
  for (const onnx::ValueInfoProto &input : graph.input())
    taken.insert(input.name());
  for (const onnx::TensorProto &init : graph.initializer())
    taken.insert(init.name());
  for (unsigned i = 0, e = graph.node_size(); i < e; ++i) {
    const onnx::NodeProto &node = graph.node(i);
    taken.insert(node.input().begin(), node.input().end());
    llvm::StringSet<> ownOutputs;
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      if (!ownOutputs.insert(output).second)
        return error() << describeNode(node) << " lists output '" << output
                       << "' twice";
      taken.insert(output);
      producers[output].push_back(i);
    }
  }
  auto isConstant = [&](unsigned i) {
    return graph.node(i).op_type() == "Constant" &&
           isDefaultDomain(graph.node(i).domain());
  };
  llvm::StringMap<std::string> current;
  unsigned numRenamed = 0;
  std::string example;
  for (unsigned i = 0, e = graph.node_size(); i < e; ++i) {
    onnx::NodeProto &node = *graph.mutable_node(i);
    for (std::string &input : *node.mutable_input()) {
      auto it = current.find(input);
      if (it != current.end())
        input = it->second;
    }
    for (std::string &output : *node.mutable_output()) {
      if (output.empty())
        continue;
      ArrayRef<unsigned> defs = producers[output];
      bool constants = llvm::all_of(defs, isConstant);
      // The definition that keeps the name: the last Constant, else the
      // first.
      if (defs.size() == 1 || i == (constants ? defs.back() : defs.front()))
        continue;
      std::string newName;
      for (unsigned k = 1; newName.empty() || taken.contains(newName); ++k)
        newName = output + "_" + std::to_string(k);
      taken.insert(newName);
      if (numRenamed++ == 0)
        example = "'" + output + "' by " + describeNode(graph.node(defs[0])) +
                  " and " + describeNode(graph.node(defs[1])) + ", the " +
                  (constants ? "earlier" : "later") + " written as '" +
                  newName + "'";
      std::string alias = output + "\x1f" + std::to_string(i);
      originalNames[alias] = output;
      newNames[alias] = newName;
      // Readers after a later definition read it; a Constant's readers all
      // read the last one.
      if (!constants)
        current[output] = alias;
      output = alias;
    }
  }
  if (numRenamed)
    emitWarning(fileLoc)
        << numRenamed << " value definition(s) reuse a name (first: " << example
        << "); a name that only Constant nodes define is the last of them "
           "for every reader (as ONNX Runtime reads it), any other the latest "
           "definition before each reader, and the other definitions get new "
           "names";
  return success();
}

FailureOr<SmallVector<unsigned>> Importer::sortNodes(onnx::GraphProto &graph) {
  unsigned numNodes = graph.node_size();
  llvm::StringMap<unsigned> producer;
  for (unsigned i = 0; i < numNodes; ++i) {
    for (const std::string &output : graph.node(i).output()) {
      if (output.empty())
        continue;
      producer.try_emplace(output, i);
      if (scopes.back().count(output))
        return error() << describeNode(graph.node(i)) << " produces '" << output
                       << "', which is already a graph input or initializer";
    }
  }

  // Kahn's algorithm, always taking the ready node that comes first in the
  // file, so that sorted graphs keep their order.
  SmallVector<SmallVector<unsigned>> users(numNodes);
  SmallVector<unsigned> pending(numNodes, 0);
  for (unsigned i = 0; i < numNodes; ++i) {
    llvm::StringSet<> reads;
    collectNodeReads(graph.node(i), reads);
    for (const auto &read : reads) {
      StringRef name = read.getKey();
      auto it = producer.find(name);
      if (it != producer.end()) {
        users[it->second].push_back(i);
        ++pending[i];
      } else if (!lookup(name)) {
        return error() << describeNode(graph.node(i))
                       << " reads undefined value '" << name << "'";
      }
    }
  }
  std::priority_queue<unsigned, std::vector<unsigned>, std::greater<>> ready;
  for (unsigned i = 0; i < numNodes; ++i)
    if (pending[i] == 0)
      ready.push(i);
  SmallVector<unsigned> order;
  order.reserve(numNodes);
  while (!ready.empty()) {
    unsigned i = ready.top();
    ready.pop();
    order.push_back(i);
    for (unsigned user : users[i])
      if (--pending[user] == 0)
        ready.push(user);
  }
  if (order.size() != numNodes) {
    for (unsigned i = 0; i < numNodes; ++i)
      if (pending[i] != 0)
        return error() << "the graph has a cycle through "
                       << describeNode(graph.node(i));
  }
  return order;
}

LogicalResult Importer::importNode(onnx::NodeProto &node, unsigned graphIndex) {
  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(getNone());
      continue;
    }
    Value value = lookup(name);
    if (!value)
      return error() << describeNode(node) << " reads undefined value '" << name
                     << "'";
    inputs.push_back(value);
  }

  // Results are typed later, when shape inference is done.
  SmallVector<Type> resultTypes;
  SmallVector<std::string> outputNames;
  for (const std::string &name : node.output()) {
    if (name.empty()) {
      resultTypes.push_back(builder.getNoneType());
      continue;
    }
    resultTypes.push_back(UnknownType::get(ctx));
    // A redefined name was renamed internally; its location has its new
    // name.
    auto renamed = newNames.find(name);
    outputNames.push_back(renamed == newNames.end() ? name : renamed->second);
  }

  SmallVector<onnx::GraphProto *> subgraphs;
  SmallVector<NamedAttribute> attrs;
  for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
    FailureOr<Attribute> value = convertAttribute(attr, node, subgraphs);
    if (failed(value))
      return failure();
    attrs.push_back(builder.getNamedAttr(attr.name(), *value));
  }

  StringRef domain = node.domain();
  int64_t opset = opsets.lookup(isDefaultDomain(domain) ? "" : domain);
  OperationState state(makeNodeLoc(ctx, node.name(), outputNames, fileLoc),
                       NodeOp::getOperationName());
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  state.addAttribute("op_type", builder.getStringAttr(node.op_type()));
  if (!domain.empty())
    state.addAttribute("domain", builder.getStringAttr(domain));
  state.addAttribute("opset", builder.getI64IntegerAttr(opset));
  if (!attrs.empty())
    state.addAttribute("onnx_attrs", builder.getDictionaryAttr(attrs));
  if (!node.doc_string().empty())
    state.addAttribute("doc_string", builder.getStringAttr(node.doc_string()));
  for (size_t i = 0; i < subgraphs.size(); ++i)
    state.addRegion();
  Operation *op = builder.create(state);
  importedGraphs[graphIndex].nodes.emplace_back(op, &node);

  for (auto [region, subgraph] : llvm::zip(op->getRegions(), subgraphs)) {
    Block *block = builder.createBlock(&region);
    SmallVector<Value> outputs;
    OpBuilder::InsertionGuard guard(builder);
    if (failed(importGraph(*subgraph, block, outputs)))
      return failure();
    SmallVector<Attribute> names;
    for (const onnx::ValueInfoProto &output : subgraph->output())
      names.push_back(builder.getStringAttr(output.name()));
    builder.setInsertionPointToEnd(block);
    auto yield =
        YieldOp::create(builder, fileLoc, outputs, builder.getArrayAttr(names));
    setGraphAttrs(yield, *subgraph);
    if (ArrayAttr dims = getDimNameLists(subgraph->input()))
      yield->setAttr(ONNXGraphDialect::kArgDimsAttrName, dims);
    if (ArrayAttr dims = getDimNameLists(subgraph->output()))
      yield->setAttr(ONNXGraphDialect::kDimsAttrName, dims);
  }
  builder.setInsertionPointAfter(op);

  for (auto [result, name] : llvm::zip(op->getResults(), node.output()))
    if (!isa<NoneType>(result.getType()))
      scopes.back()[name] = result;
  return success();
}

LogicalResult Importer::importGraph(onnx::GraphProto &graph, Block *block,
                                    SmallVectorImpl<Value> &outputs) {
  scopes.emplace_back();
  noneValues.emplace_back();
  llvm::scope_exit popScopes([&] {
    scopes.pop_back();
    noneValues.pop_back();
  });
  builder.setInsertionPointToEnd(block);
  unsigned graphIndex = importedGraphs.size();
  importedGraphs.push_back({&graph, {}});

  // Inputs come in as block arguments; the caller gives them their types.
  llvm::StringMap<onnx::TensorProto *> initializers;
  for (onnx::TensorProto &init : *graph.mutable_initializer()) {
    if (init.name().empty())
      return error() << "an initializer has no name";
    if (!initializers.try_emplace(init.name(), &init).second)
      return error() << "initializer '" << init.name() << "' is defined twice";
  }
  if (graph.sparse_initializer_size())
    return error() << "sparse initializers are not supported";

  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (scopes.back().count(input.name()))
      return error() << "graph input '" << input.name()
                     << "' is declared twice";
    FailureOr<Type> type =
        convertType(input.type(), "graph input '" + input.name() + "'");
    if (failed(type))
      return failure();
    Value arg = block->addArgument(
        *type, NameLoc::get(builder.getStringAttr(input.name())));
    scopes.back()[input.name()] = arg;
  }

  for (onnx::TensorProto &init : *graph.mutable_initializer()) {
    FailureOr<ElementsAttr> value = convertTensor(
        init, "initializer '" + init.name() + "'", /*allowInline=*/false);
    if (failed(value))
      return failure();
    if (Value input = scopes.back().lookup(init.name())) {
      // An initializer that is also a graph input: its default value. A
      // declared type without shape takes the initializer's.
      auto arg = cast<BlockArgument>(input);
      if (isa<UnknownType, UnrankedTensorType>(arg.getType()))
        arg.setType(value->getType());
      if (!isa<func::FuncOp>(block->getParentOp()))
        return error() << "initializer '" << init.name()
                       << "' of a subgraph is also one of its inputs, "
                          "which is not supported";
      inputDefaults.emplace_back(arg.getArgNumber(), *value);
      continue;
    }
    auto op = InitializerOp::create(
        builder, NameLoc::get(builder.getStringAttr(init.name())),
        value->getType(), init.name(), *value);
    scopes.back()[init.name()] = op.getResult();
  }

  if (failed(renameRedefinitions(graph)))
    return failure();
  FailureOr<SmallVector<unsigned>> order = sortNodes(graph);
  if (failed(order))
    return failure();
  for (unsigned index : *order)
    if (failed(importNode(*graph.mutable_node(index), graphIndex)))
      return failure();

  llvm::StringSet<> outputNames;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (!outputNames.insert(output.name()).second)
      return error() << "graph output '" << output.name()
                     << "' is listed twice";
    Value value = lookup(output.name());
    if (!value)
      return error() << "graph output '" << output.name()
                     << "' is not produced by any node, input or "
                        "initializer";
    outputs.push_back(value);
  }
  return success();
}

/// Gives each node result its type from value_info (the file's plus what
/// shape inference found) or its graph output declaration, and records its
/// symbolic dimension names.
LogicalResult Importer::typeGraphValues() {
  for (const ImportedGraph &imported : importedGraphs) {
    llvm::StringMap<const onnx::TypeProto *> types;
    for (const onnx::ValueInfoProto &info : imported.graph->value_info())
      types[info.name()] = &info.type();
    for (const onnx::ValueInfoProto &info : imported.graph->output())
      if (info.has_type())
        types[info.name()] = &info.type();
    for (auto [op, node] : imported.nodes)
      if (failed(typeNodeResults(op, *node, types)))
        return failure();
  }
  return success();
}

LogicalResult Importer::typeNodeResults(
    Operation *op, const onnx::NodeProto &node,
    const llvm::StringMap<const onnx::TypeProto *> &types) {
  SmallVector<Attribute> dims;
  bool anyDims = false;
  for (auto [result, name] : llvm::zip(op->getResults(), node.output())) {
    if (name.empty())
      continue;
    // A redefined name was renamed internally; the file's name types it.
    const onnx::TypeProto *typeProto = types.lookup(getFileName(name));
    if (!typeProto) {
      dims.push_back(builder.getArrayAttr({}));
      continue;
    }
    FailureOr<Type> type = convertType(*typeProto, "value '" + name + "'");
    if (failed(type))
      return failure();
    result.setType(*type);
    ArrayAttr names = getDimNames(*typeProto);
    anyDims |= static_cast<bool>(names);
    dims.push_back(names ? names : builder.getArrayAttr({}));
  }
  if (anyDims)
    op->setAttr(ONNXGraphDialect::kDimsAttrName, builder.getArrayAttr(dims));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape inference
//===----------------------------------------------------------------------===//

/// What shape inference found in `graph`: its value_info and output types,
/// and the same for every subgraph at the same node and attribute positions.
/// Weights stay out, so that the child process copies and sends little.
static void extractValueInfo(const onnx::GraphProto &graph,
                             onnx::GraphProto &skeleton) {
  *skeleton.mutable_value_info() = graph.value_info();
  // Shape inference merges what it finds into the graph outputs' types.
  *skeleton.mutable_output() = graph.output();
  bool hasSubgraphs = llvm::any_of(graph.node(), [](const auto &node) {
    return llvm::any_of(node.attribute(),
                        [](const auto &attr) { return attr.has_g(); });
  });
  if (!hasSubgraphs)
    return;
  for (const onnx::NodeProto &node : graph.node()) {
    onnx::NodeProto &skeletonNode = *skeleton.add_node();
    for (const onnx::AttributeProto &attr : node.attribute()) {
      onnx::AttributeProto &skeletonAttr = *skeletonNode.add_attribute();
      if (attr.has_g())
        extractValueInfo(attr.g(), *skeletonAttr.mutable_g());
    }
  }
}

/// Moves the value_info of `from` into `to`, subgraphs included; both have
/// the same nodes.
static void moveValueInfo(onnx::GraphProto &from, onnx::GraphProto &to) {
  to.mutable_value_info()->Swap(from.mutable_value_info());
  // A graph output declared without a shape takes the inferred one.
  for (int i = 0, e = std::min(from.output_size(), to.output_size()); i < e;
       ++i) {
    onnx::ValueInfoProto &declared = *to.mutable_output(i);
    const onnx::ValueInfoProto &inferred = from.output(i);
    if (declared.name() == inferred.name() &&
        declared.type().has_tensor_type() &&
        !declared.type().tensor_type().has_shape() &&
        inferred.type().tensor_type().has_shape())
      *declared.mutable_type() = inferred.type();
  }
  for (int i = 0, e = std::min(from.node_size(), to.node_size()); i < e; ++i) {
    onnx::NodeProto &fromNode = *from.mutable_node(i);
    onnx::NodeProto &toNode = *to.mutable_node(i);
    for (int j = 0,
             n = std::min(fromNode.attribute_size(), toNode.attribute_size());
         j < n; ++j)
      if (fromNode.attribute(j).has_g() && toNode.attribute(j).has_g())
        moveValueInfo(*fromNode.mutable_attribute(j)->mutable_g(),
                      *toNode.mutable_attribute(j)->mutable_g());
  }
}

namespace {
/// ONNX shape inference running in a child process (ChildProcess.h), while
/// the importer parses the model and builds the IR. The child parses the
/// model itself: forking before the parent holds the parsed model keeps
/// copy-on-write faults out of the parent.
class ShapeInferenceChild {
public:
  /// Forks the child, which parses `bytes` and infers the types.
  LogicalResult start(llvm::StringRef bytes);
  /// Waits for the child and merges the value_info it found into `model`,
  /// which must have the same nodes.
  LogicalResult finish(onnx::ModelProto &model);

private:
  ChildProcess child;
};
} // namespace

LogicalResult ShapeInferenceChild::start(StringRef bytes) {
  return child.start([&](std::string &found) {
    try {
      google::protobuf::Arena arena;
      auto &model =
          *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
      if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return 1;
      registerNewerSchemas();
      registerContribSchemas();
      onnx::ShapeInferenceOptions options{/*check_type=*/false,
                                          /*error_mode=*/0,
                                          /*enable_data_propagation=*/false};
      onnx::shape_inference::InferShapes(
          model, onnx::OpSchemaRegistry::Instance(), options);
      // ONNX Runtime's pooling gradients get X's sizes from their forward,
      // PyTorch's gradients theirs from the shapes they are computed from;
      // the values they feed then need inference again.
      bool typedPooling = typePoolingGradients(model);
      if (typeATenGradients(model) || typedPooling)
        onnx::shape_inference::InferShapes(
            model, onnx::OpSchemaRegistry::Instance(), options);
      onnx::GraphProto skeleton;
      extractValueInfo(model.graph(), skeleton);
      return skeleton.SerializeToString(&found) ? 0 : 1;
    } catch (const std::exception &) {
      return 1;
    }
  });
}

LogicalResult ShapeInferenceChild::finish(onnx::ModelProto &model) {
  FailureOr<std::string> bytes = child.finish();
  auto *inferred = google::protobuf::Arena::CreateMessage<onnx::GraphProto>(
      model.GetArena());
  if (failed(bytes) || !inferred->ParseFromString(*bytes))
    return failure();
  moveValueInfo(*inferred, *model.mutable_graph());
  return success();
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp>
Importer::importModel(onnx::ModelProto &model,
                      ShapeInferenceChild *shapeInference) {
  if (!model.has_graph())
    return error() << "not an ONNX model: it has no graph", nullptr;

  if (model.training_info_size())
    return error() << "the model has training_info, which is not supported",
           nullptr;

  SmallVector<Attribute> opsetImports;
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    std::string domain = isDefaultDomain(opset.domain()) ? "" : opset.domain();
    opsets[domain] = opset.version();
    opsetImports.push_back(
        builder.getArrayAttr({builder.getStringAttr(opset.domain()),
                              builder.getI64IntegerAttr(opset.version())}));
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  auto setModuleAttr = [&](StringRef name, Attribute value) {
    (*module)->setAttr(name, value);
  };
  setModuleAttr("onnxg.ir_version",
                builder.getI64IntegerAttr(model.ir_version()));
  setModuleAttr("onnxg.opset_imports", builder.getArrayAttr(opsetImports));
  setModuleAttr("onnxg.producer_name",
                builder.getStringAttr(model.producer_name()));
  if (!model.producer_version().empty())
    setModuleAttr("onnxg.producer_version",
                  builder.getStringAttr(model.producer_version()));
  if (!model.domain().empty())
    setModuleAttr("onnxg.domain", builder.getStringAttr(model.domain()));
  if (model.model_version())
    setModuleAttr("onnxg.model_version",
                  builder.getI64IntegerAttr(model.model_version()));
  if (!model.doc_string().empty())
    setModuleAttr("onnxg.doc_string",
                  builder.getStringAttr(model.doc_string()));
  if (model.metadata_props_size()) {
    SmallVector<Attribute> props;
    for (const onnx::StringStringEntryProto &prop : model.metadata_props())
      props.push_back(builder.getStrArrayAttr({prop.key(), prop.value()}));
    setModuleAttr(ONNXGraphDialect::kMetadataPropsAttrName,
                  builder.getArrayAttr(props));
  }

  TimingScope buildTiming = timing.nest("build MLIR");
  onnx::GraphProto &graph = *model.mutable_graph();
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, "main",
                                   builder.getFunctionType({}, {}));
  setGraphAttrs(func, graph);
  Block *body = func.addEntryBlock();
  SmallVector<Value> outputs;
  if (failed(importGraph(graph, body, outputs)))
    return nullptr;
  buildTiming.stop();

  // Values are typed once both the IR and shape inference are done.
  if (shapeInference) {
    TimingScope waitTiming = timing.nest("wait for ONNX shape inference");
    if (failed(shapeInference->finish(model)))
      emitWarning(fileLoc) << kNoShapeInference;
  }
  TimingScope typeTiming = timing.nest("type values");
  if (failed(typeGraphValues()))
    return nullptr;
  builder.setInsertionPointToEnd(body);
  func::ReturnOp::create(builder, fileLoc, outputs);
  func.setFunctionType(builder.getFunctionType(body->getArgumentTypes(),
                                               ValueRange(outputs).getTypes()));

  for (auto [i, value] : inputDefaults)
    func.setArgAttr(i, ONNXGraphDialect::kInitializerAttrName, value);
  for (auto [i, input] : llvm::enumerate(graph.input()))
    if (ArrayAttr dims = getDimNames(input.type()))
      func.setArgAttr(i, ONNXGraphDialect::kDimsAttrName, dims);
  for (auto [i, output] : llvm::enumerate(graph.output())) {
    func.setResultAttr(i, ONNXGraphDialect::kNameAttrName,
                       builder.getStringAttr(output.name()));
    if (ArrayAttr dims = getDimNames(output.type()))
      func.setResultAttr(i, ONNXGraphDialect::kDimsAttrName, dims);
  }

  typeTiming.stop();

  // A schema violation is an input error: name the node, not the op dump.
  TimingScope verifyTiming = timing.nest("verify");
  bool printOp = ctx->shouldPrintOpOnDiagnostic();
  ctx->printOpOnDiagnostic(false);
  LogicalResult verified = verify(*module);
  ctx->printOpOnDiagnostic(printOp);
  if (failed(verified))
    return nullptr;
  return module;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

/// Whether `bytes`, which protobuf's default recursion limit refuses, is a
/// model nested at most 1000 messages deep: a real model, too deep to read.
/// (Deeper input is not parsed: its recursion could overflow the stack.)
static bool isNestedTooDeeply(StringRef bytes) {
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()),
      static_cast<int>(bytes.size()));
  stream.SetRecursionLimit(1000);
  onnx::ModelProto model;
  return model.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

OwningOpRef<ModuleOp>
mlir::onnxg::importOnnxModel(StringRef bytes, StringRef fileName,
                             MLIRContext *context,
                             const ImportOptions &options) {
  context->loadDialect<ONNXGraphDialect, amp::AMPDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(context, fileName, 0, 0);
  if (bytes.empty())
    return emitError(fileLoc) << "not an ONNX model: the file is empty",
           nullptr;
  TimingScope noTiming;
  TimingScope &timing = options.timing ? *options.timing : noTiming;
  // Shape inference starts first, in parallel with the rest of the import.
  ShapeInferenceChild shapeInference;
  bool inferring = false;
  if (options.inferShapes) {
    inferring = succeeded(shapeInference.start(bytes));
    if (!inferring)
      emitWarning(fileLoc) << kNoShapeInference;
  }
  TimingScope parseTiming = timing.nest("parse protobuf");
  // An arena makes the many small messages cheap to build and to free.
  google::protobuf::Arena arena;
  auto &model =
      *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return emitError(fileLoc)
               << "not an ONNX model: the file has " << bytes.size()
               << " bytes, more than a protobuf can hold (2 GiB); models "
                  "this large keep their tensors in external data files",
           nullptr;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    if (isNestedTooDeeply(bytes))
      return emitError(fileLoc)
                 << "the model nests subgraphs deeper than protobuf reads ("
                 << google::protobuf::io::CodedInputStream::
                        GetDefaultRecursionLimit()
                 << " nested messages, about 30 levels of If, Loop or Scan "
                    "bodies)",
             nullptr;
    return emitError(fileLoc)
               << "not an ONNX model: the protobuf cannot be parsed (the "
                  "file is truncated, corrupt or not ONNX)",
           nullptr;
  }

  parseTiming.stop();

  // Local functions become their nodes; shape inference then runs again on
  // the inlined graph, whose values it must type.
  ShapeInferenceChild inlinedShapeInference;
  ShapeInferenceChild *inference = inferring ? &shapeInference : nullptr;
  if (model.functions_size()) {
    TimingScope inlineTiming = timing.nest("inline local functions");
    if (std::string why = inlineLocalFunctions(model); !why.empty())
      return emitError(fileLoc)
                 << "cannot inline the model's local functions: " << why,
             nullptr;
    std::string inlined;
    if (options.inferShapes && model.SerializeToString(&inlined) &&
        succeeded(inlinedShapeInference.start(inlined)))
      inference = &inlinedShapeInference;
    else
      inference = nullptr;
  }

  Importer importer(context, fileName, timing);
  importer.modelDir = llvm::sys::path::parent_path(fileName).str();
  return importer.importModel(model, inference);
}

bool mlir::onnxg::isOnnxInput(StringRef fileName, StringRef bytes) {
  if (fileName.ends_with(".onnx"))
    return true;
  if (fileName.ends_with(".mlir") || fileName.ends_with(".mlirbc"))
    return false;
  // MLIR bytecode starts with "ML\xefR"; MLIR text is printable.
  if (bytes.starts_with("ML\xef\x52"))
    return false;
  return llvm::any_of(bytes.take_front(64), [](char c) {
    return static_cast<unsigned char>(c) < 0x09;
  });
}

void mlir::onnxg::registerImportOnnxTranslation() {
  TranslateToMLIRRegistration registration(
      "import-onnx", "Import an ONNX model",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        return importOnnxModel(buffer->getBuffer(),
                               buffer->getBufferIdentifier(), context);
      },
      [](DialectRegistry &registry) {
        registry.insert<ONNXGraphDialect, amp::AMPDialect, func::FuncDialect>();
      });
}
