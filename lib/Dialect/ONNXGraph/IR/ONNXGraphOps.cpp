//===- ONNXGraphOps.cpp - ONNX graph dialect ops ----------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, folders and helpers of the `onnxg` ops, and the mapping between
// ONNX attribute kinds and MLIR attributes.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/Einsum.h"
#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/IR/OpTable.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cstring>

using namespace mlir;
using namespace mlir::onnxg;

#define GET_OP_CLASSES
#include "amp/Dialect/ONNXGraph/IR/ONNXGraphOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Attribute kinds and names
//===----------------------------------------------------------------------===//

std::optional<OnnxAttrKind> mlir::onnxg::getOnnxAttrKind(Attribute attr) {
  if (auto intAttr = dyn_cast<IntegerAttr>(attr)) {
    if (intAttr.getType().isIndex())
      return OnnxAttrKind::Graph;
    if (intAttr.getType().isSignlessInteger(64))
      return OnnxAttrKind::Int;
    return std::nullopt;
  }
  if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    return floatAttr.getType().isF32() ? std::optional(OnnxAttrKind::Float)
                                       : std::nullopt;
  if (isa<StringAttr>(attr))
    return OnnxAttrKind::String;
  if (isa<ElementsAttr>(attr))
    return OnnxAttrKind::Tensor;
  if (isa<TypeAttr>(attr))
    return OnnxAttrKind::TypeProto;
  if (isa<DenseI64ArrayAttr>(attr))
    return OnnxAttrKind::Ints;
  if (isa<DenseF32ArrayAttr>(attr))
    return OnnxAttrKind::Floats;
  auto array = dyn_cast<ArrayAttr>(attr);
  if (!array)
    return std::nullopt;
  if (array.empty() || llvm::all_of(array, llvm::IsaPred<StringAttr>))
    return OnnxAttrKind::Strings;
  if (llvm::all_of(array, llvm::IsaPred<ElementsAttr>))
    return OnnxAttrKind::Tensors;
  if (llvm::all_of(array, llvm::IsaPred<TypeAttr>))
    return OnnxAttrKind::TypeProtos;
  return std::nullopt;
}

llvm::StringRef mlir::onnxg::stringifyOnnxAttrKind(OnnxAttrKind kind) {
  switch (kind) {
  case OnnxAttrKind::Float:
    return "FLOAT";
  case OnnxAttrKind::Int:
    return "INT";
  case OnnxAttrKind::String:
    return "STRING";
  case OnnxAttrKind::Tensor:
    return "TENSOR";
  case OnnxAttrKind::Graph:
    return "GRAPH";
  case OnnxAttrKind::Floats:
    return "FLOATS";
  case OnnxAttrKind::Ints:
    return "INTS";
  case OnnxAttrKind::Strings:
    return "STRINGS";
  case OnnxAttrKind::Tensors:
    return "TENSORS";
  case OnnxAttrKind::Graphs:
    return "GRAPHS";
  case OnnxAttrKind::SparseTensor:
    return "SPARSE_TENSOR";
  case OnnxAttrKind::SparseTensors:
    return "SPARSE_TENSORS";
  case OnnxAttrKind::TypeProto:
    return "TYPE_PROTO";
  case OnnxAttrKind::TypeProtos:
    return "TYPE_PROTOS";
  }
  llvm_unreachable("unknown ONNX attribute kind");
}

bool mlir::onnxg::getOnnxNames(Location loc, StringRef &nodeName,
                               llvm::SmallVectorImpl<StringRef> &outputNames) {
  auto fused = dyn_cast<FusedLoc>(loc);
  auto tag =
      fused ? dyn_cast_or_null<StringAttr>(fused.getMetadata()) : StringAttr();
  if (!tag || tag.getValue() != ONNXGraphDialect::kOutputsLocTag ||
      fused.getLocations().empty())
    return false;
  auto nodeLoc = dyn_cast<NameLoc>(fused.getLocations().front());
  if (!nodeLoc)
    return false;
  nodeName = nodeLoc.getName().getValue();
  outputNames.clear();
  for (Location output : fused.getLocations().drop_front())
    if (auto name = dyn_cast<NameLoc>(output))
      outputNames.push_back(name.getName().getValue());
  return true;
}

bool mlir::onnxg::isConstantNode(Operation *op) {
  auto node = dyn_cast<NodeOp>(op);
  return node && node.getOpType() == "Constant" &&
         isDefaultDomain(node.getDomain());
}

bool mlir::onnxg::isATenNode(NodeOp node) {
  return node.getDomain() == "org.pytorch.aten" && node.getOpType() == "ATen";
}

StringRef mlir::onnxg::getATenOperator(NodeOp node, StringRef *overload) {
  if (!isATenNode(node))
    return "";
  DictionaryAttr attrs = node.getOnnxAttrsOrEmpty();
  auto name = dyn_cast_or_null<StringAttr>(attrs.get("operator"));
  if (overload) {
    auto overloadName =
        dyn_cast_or_null<StringAttr>(attrs.get("overload_name"));
    *overload = overloadName ? overloadName.getValue() : "";
  }
  StringRef op = name ? name.getValue() : "";
  op.consume_front("aten::");
  return op;
}

ElementsAttr mlir::onnxg::getConstantValue(Value value) {
  if (auto init = value.getDefiningOp<InitializerOp>())
    return init.getValue();
  Operation *op = value.getDefiningOp();
  if (!op || !isConstantNode(op))
    return {};
  return cast<NodeOp>(op).getOnnxAttrsOrEmpty().getAs<ElementsAttr>("value");
}

TypedAttr mlir::onnxg::getUniformElement(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  if (type.getNumElements() == 0)
    return {};
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.isSplat() ? dense.getSplatValue<TypedAttr>() : TypedAttr();
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  Type elementType = type.getElementType();
  if (!resource || !resource.getRawHandle().getBlob() ||
      !elementType.isIntOrFloat())
    return {};
  unsigned bits = elementType.getIntOrFloatBitWidth();
  if (bits % 8 && bits != 1)
    return {};
  ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
  size_t bytes = bits == 1 ? 1 : bits / 8;
  if (data.empty() || data.size() != bytes * type.getNumElements())
    return {};
  for (size_t i = bytes; i < data.size(); i += bytes)
    if (std::memcmp(data.data(), data.data() + i, bytes))
      return {};
  if (bits == 1)
    return IntegerAttr::get(elementType, data.front() != 0);
  auto scalar = RankedTensorType::get({}, elementType);
  return DenseElementsAttr::getFromRawBuffer(scalar, data.take_front(bytes))
      .getSplatValue<TypedAttr>();
}

Location mlir::onnxg::makeNodeLoc(MLIRContext *ctx, StringRef nodeName,
                                  ArrayRef<std::string> outputNames,
                                  Location fileLoc) {
  SmallVector<Location> locs;
  locs.reserve(outputNames.size() + 1);
  locs.push_back(NameLoc::get(StringAttr::get(ctx, nodeName), fileLoc));
  for (const std::string &name : outputNames)
    locs.push_back(NameLoc::get(StringAttr::get(ctx, name)));
  return FusedLoc::get(
      locs, StringAttr::get(ctx, ONNXGraphDialect::kOutputsLocTag), ctx);
}

int64_t mlir::onnxg::getOpsetImport(Operation *op, StringRef domain,
                                    int64_t fallback) {
  auto module = op ? op->getParentOfType<ModuleOp>() : ModuleOp();
  if (!module && op)
    module = dyn_cast<ModuleOp>(op);
  auto imports = module
                     ? module->getAttrOfType<ArrayAttr>("onnxg.opset_imports")
                     : ArrayAttr();
  if (!imports)
    return fallback;
  for (auto entry : imports.getAsRange<ArrayAttr>()) {
    auto name = entry.size() == 2 ? dyn_cast<StringAttr>(entry[0]) : nullptr;
    auto version =
        entry.size() == 2 ? dyn_cast<IntegerAttr>(entry[1]) : nullptr;
    if (name && version &&
        (name.getValue() == domain ||
         (isDefaultDomain(name.getValue()) && isDefaultDomain(domain))))
      return version.getInt();
  }
  return fallback;
}

NodeOp mlir::onnxg::createNode(OpBuilder &builder, StringRef opType,
                               Type resultType, ValueRange inputs,
                               StringRef nodeName, StringRef outputName,
                               ArrayRef<NamedAttribute> attrs, StringRef domain,
                               int64_t minOpset) {
  return createNode(builder, opType, TypeRange(resultType), inputs, nodeName,
                    {outputName.str()}, attrs, domain, minOpset);
}

NodeOp mlir::onnxg::createNode(OpBuilder &builder, StringRef opType,
                               TypeRange resultTypes, ValueRange inputs,
                               StringRef nodeName,
                               ArrayRef<std::string> outputNames,
                               ArrayRef<NamedAttribute> attrs, StringRef domain,
                               int64_t minOpset) {
  MLIRContext *ctx = builder.getContext();
  int64_t opset =
      std::max(minOpset, getOpsetImport(builder.getBlock()->getParentOp(),
                                        domain, minOpset));
  OperationState state(
      makeNodeLoc(ctx, nodeName, outputNames, UnknownLoc::get(ctx)),
      NodeOp::getOperationName());
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  state.addAttribute("op_type", builder.getStringAttr(opType));
  if (!domain.empty())
    state.addAttribute("domain", builder.getStringAttr(domain));
  state.addAttribute("opset", builder.getI64IntegerAttr(opset));
  if (!attrs.empty())
    state.addAttribute("onnx_attrs", builder.getDictionaryAttr(attrs));
  return cast<NodeOp>(builder.create(state));
}

NodeOp mlir::onnxg::createI64Constant(OpBuilder &builder,
                                      ArrayRef<int64_t> values,
                                      StringRef nodeName,
                                      StringRef outputName) {
  auto type =
      RankedTensorType::get({int64_t(values.size())}, builder.getI64Type());
  return createNode(
      builder, "Constant", type, {}, nodeName, outputName,
      builder.getNamedAttr("value", DenseElementsAttr::get(type, values)));
}

StringRef mlir::onnxg::getDimName(Value value, unsigned dim) {
  // Function arguments carry their names as argument attributes, op results
  // in one array per result on the op.
  ArrayAttr names;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto function =
        dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (function && arg.getOwner()->isEntryBlock())
      names = function.getArgAttrOfType<ArrayAttr>(
          arg.getArgNumber(), ONNXGraphDialect::kDimsAttrName);
  } else {
    auto result = cast<OpResult>(value);
    Operation *owner = result.getOwner();
    auto lists =
        owner->getAttrOfType<ArrayAttr>(ONNXGraphDialect::kDimsAttrName);
    // An op shaped like its operands (a cast) keeps their dimensions' names.
    if (!lists && owner->getNumOperands() &&
        owner->hasTrait<OpTrait::SameOperandsAndResultShape>())
      return getDimName(owner->getOperand(0), dim);
    if (lists && result.getResultNumber() < lists.size())
      names = dyn_cast<ArrayAttr>(lists[result.getResultNumber()]);
  }
  auto name = names && dim < names.size() ? dyn_cast<StringAttr>(names[dim])
                                          : StringAttr();
  return name ? name.getValue() : StringRef();
}

StringRef mlir::onnxg::getValueName(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto name = dyn_cast<NameLoc>(arg.getLoc());
    return name ? name.getName().getValue() : StringRef();
  }
  Operation *op = value.getDefiningOp();
  if (auto init = dyn_cast<InitializerOp>(op))
    return init.getName();
  // An absent output ("" in ONNX, none-typed) has no name.
  if (isa<NoneType>(value.getType()))
    return "";
  StringRef nodeName;
  SmallVector<StringRef> outputs;
  if (!getOnnxNames(op->getLoc(), nodeName, outputs))
    return "";
  // Outputs are named in order, skipping the absent (none-typed) ones.
  unsigned index = 0;
  for (Value result : op->getResults()) {
    if (result == value)
      return index < outputs.size() ? outputs[index] : StringRef();
    if (!isa<NoneType>(result.getType()))
      ++index;
  }
  return "";
}

/// The [key, value] pair of a metadata_props entry, or nullopt when `prop`
/// is not one.
static std::optional<std::pair<StringRef, StringRef>>
getMetadataEntry(Attribute prop) {
  auto pair = dyn_cast<ArrayAttr>(prop);
  if (!pair || pair.size() != 2 || !isa<StringAttr>(pair[0]) ||
      !isa<StringAttr>(pair[1]))
    return std::nullopt;
  return std::make_pair(cast<StringAttr>(pair[0]).getValue(),
                        cast<StringAttr>(pair[1]).getValue());
}

StringRef mlir::onnxg::getMetadataProp(ModuleOp module, StringRef key) {
  auto props = module->getAttrOfType<ArrayAttr>(
      ONNXGraphDialect::kMetadataPropsAttrName);
  for (Attribute prop : props ? props.getValue() : ArrayRef<Attribute>())
    if (auto entry = getMetadataEntry(prop); entry && entry->first == key)
      return entry->second;
  return "";
}

void mlir::onnxg::setMetadataProp(ModuleOp module, StringRef key,
                                  StringRef value) {
  Builder builder(module.getContext());
  SmallVector<Attribute> props;
  if (auto old = module->getAttrOfType<ArrayAttr>(
          ONNXGraphDialect::kMetadataPropsAttrName))
    for (Attribute prop : old)
      if (auto entry = getMetadataEntry(prop); !entry || entry->first != key)
        props.push_back(prop);
  props.push_back(builder.getStrArrayAttr({key, value}));
  module->setAttr(ONNXGraphDialect::kMetadataPropsAttrName,
                  builder.getArrayAttr(props));
}

ValueNames::ValueNames(FunctionOpInterface func) {
  Block &body = func.getFunctionBody().front();
  auto add = [&](Value value) {
    StringRef name = getValueName(value);
    if (!name.empty())
      values.try_emplace(name, value);
  };
  for (BlockArgument arg : body.getArguments())
    add(arg);
  for (Operation &op : body)
    for (Value result : op.getResults())
      add(result);
  for (auto [index, value] :
       llvm::enumerate(body.getTerminator()->getOperands()))
    if (auto name = func.getResultAttrOfType<StringAttr>(
            index, ONNXGraphDialect::kNameAttrName))
      outputs[name.getValue()] = value;
}

Value ValueNames::lookup(StringRef name) const {
  if (Value output = outputs.lookup(name))
    return output;
  return values.lookup(name);
}

//===----------------------------------------------------------------------===//
// NodeOp
//===----------------------------------------------------------------------===//

DictionaryAttr NodeOp::getOnnxAttrsOrEmpty() {
  if (DictionaryAttr attrs = getOnnxAttrsAttr())
    return attrs;
  return DictionaryAttr::get(getContext());
}

void NodeOp::setOnnxAttr(StringRef name, Attribute value) {
  NamedAttrList attrs(getOnnxAttrsOrEmpty());
  attrs.set(name, value);
  setOnnxAttrsAttr(attrs.getDictionary(getContext()));
}

StringRef NodeOp::getNodeName() {
  StringRef nodeName;
  SmallVector<StringRef> outputs;
  if (getOnnxNames(getLoc(), nodeName, outputs))
    return nodeName;
  return "";
}

std::string NodeOp::describe() {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "node ";
  if (!getNodeName().empty())
    os << "'" << getNodeName() << "' ";
  os << "(" << getOpType() << ")";
  return text;
}

InFlightDiagnostic NodeOp::emitNodeError() {
  return mlir::emitError(getLoc()) << describe() << ": ";
}

Value NodeOp::getOptionalOperand(unsigned index) {
  if (index >= getNumOperands() || isa<NoneType>(getOperand(index).getType()))
    return {};
  return getOperand(index);
}

void NodeOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  StringRef nodeName;
  SmallVector<StringRef> outputs;
  if (!getOnnxNames(getLoc(), nodeName, outputs))
    return;
  auto names = ArrayRef<StringRef>(outputs).begin();
  for (Value result : getResults()) {
    if (isa<NoneType>(result.getType()))
      continue;
    if (names == outputs.end())
      return;
    if (!names->empty())
      setNameFn(result, *names);
    ++names;
  }
}

LogicalResult NodeOp::verify() {
  unsigned numRegions = getNumRegions();
  llvm::SmallBitVector used(numRegions);
  for (NamedAttribute named : getOnnxAttrsOrEmpty()) {
    std::optional<OnnxAttrKind> kind = getOnnxAttrKind(named.getValue());
    if (!kind)
      return emitOpError() << describe() << ": attribute '"
                           << named.getName().getValue()
                           << "' has no ONNX attribute kind: "
                           << named.getValue();
    if (*kind != OnnxAttrKind::Graph)
      continue;
    uint64_t index = cast<IntegerAttr>(named.getValue()).getInt();
    if (index >= numRegions || used.test(index))
      return emitOpError() << describe() << ": graph attribute '"
                           << named.getName().getValue()
                           << "' must name a distinct region below "
                           << numRegions;
    used.set(index);
  }
  if (!used.all())
    return emitOpError() << describe()
                         << ": every region must be named by a graph "
                            "attribute";
  for (Region &region : getSubgraphs())
    if (!region.hasOneBlock())
      return emitOpError() << describe()
                           << ": a subgraph region must have one block";
  return verifyAgainstOnnxSchema(*this);
}

//===----------------------------------------------------------------------===//
// InitializerOp
//===----------------------------------------------------------------------===//

void InitializerOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

LogicalResult InitializerOp::verify() {
  if (getName().empty())
    return emitOpError("requires a non-empty name");
  return success();
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  if (getNames().size() != getValues().size())
    return emitOpError("has ") << getValues().size() << " values but "
                               << getNames().size() << " names";
  return success();
}

//===----------------------------------------------------------------------===//
// PrecisionOpInterface
//===----------------------------------------------------------------------===//

amp::PrecisionClass NodeOp::getPrecisionClass() {
  const OpInfo *info = lookupOp(getDomain(), getOpType());
  if (!info)
    return amp::PrecisionClass::NeverTouch;
  // A scatter that adds or multiplies accumulates: FP32, as every anchor
  // keeps it (duplicate indices lose precision in FP16).
  if (info->family == OpFamily::DataMovement &&
      getOpType().starts_with("Scatter")) {
    auto reduction = getOnnxAttrsOrEmpty().getAs<StringAttr>("reduction");
    if (reduction && reduction.getValue() != "none")
      return amp::PrecisionClass::KeepFP32;
  }
  // A value times itself is a square: keep-fp32 as Pow (FP16 overflows
  // beyond 256), as autocast computes a norm's variance (a decomposed
  // BatchNorm's or RMSNorm's x * x) in FP32.
  if (isDefaultDomain(getDomain()) && getOpType() == "Mul" &&
      getNumOperands() == 2 && getOperand(0) == getOperand(1))
    return amp::PrecisionClass::KeepFP32;
  return info->precision;
}

bool NodeOp::isElementwiseProduct() {
  return isDefaultDomain(getDomain()) && getOpType() == "Mul";
}

amp::RecomputeKind NodeOp::getRecomputeKind() {
  const OpInfo *info = lookupOp(getDomain(), getOpType());
  if (!info || getNumRegions() != 0)
    return amp::RecomputeKind::Never;
  switch (info->family) {
  case OpFamily::Random:
    return amp::RecomputeKind::Random;
  case OpFamily::Contraction:
  case OpFamily::Convolution:
    return amp::RecomputeKind::ComputeIntensive;
  case OpFamily::Optimizer:
  case OpFamily::Runtime:
  case OpFamily::Sequence:
  case OpFamily::Custom:
    return amp::RecomputeKind::Never;
  default:
    return amp::RecomputeKind::Cheap;
  }
}

/// Whether `pred(isInput, index)` holds for a data slot of `node` in the
/// table.
static bool
anyDataSlot(NodeOp node, const OpInfo &info,
            llvm::function_ref<bool(bool isInput, unsigned index)> pred) {
  for (unsigned i = 0, e = node.getNumOperands(); i != e; ++i)
    if (containsSlot(info.dataOperands, i) && pred(/*isInput=*/true, i))
      return true;
  for (unsigned i = 0, e = node.getNumResults(); i != e; ++i)
    if (containsSlot(info.dataResults, i) && pred(/*isInput=*/false, i))
      return true;
  return false;
}

/// Whether the ONNX schema of `node` gives input or output `index` the same
/// type parameter as a data slot of the table, so that the two must change
/// type together (BatchNormalization before opset 15 types its statistics
/// like its input).
static bool isTiedToDataSlot(NodeOp node, const OpInfo &info, bool isInput,
                             unsigned index) {
  SmallVector<std::string> inputs, outputs;
  if (!getSchemaTypeParameters(node, inputs, outputs))
    return false;
  const std::string &param = (isInput ? inputs : outputs)[index];
  return !param.empty() && anyDataSlot(node, info, [&](bool in, unsigned i) {
    return (in ? inputs : outputs)[i] == param;
  });
}

bool NodeOp::isPrecisionDataOperand(unsigned index) {
  const OpInfo *info = lookupOp(getDomain(), getOpType());
  return info && index < getNumOperands() &&
         amp::isFloatTensor(getOperand(index).getType()) &&
         (containsSlot(info->dataOperands, index) ||
          isTiedToDataSlot(*this, *info, /*isInput=*/true, index));
}

bool NodeOp::isPrecisionDataResult(unsigned index) {
  const OpInfo *info = lookupOp(getDomain(), getOpType());
  return info && index < getNumResults() &&
         amp::isFloatTensor(getResult(index).getType()) &&
         (containsSlot(info->dataResults, index) ||
          isTiedToDataSlot(*this, *info, /*isInput=*/false, index));
}

bool NodeOp::hasUnknownDataType() {
  const OpInfo *info = lookupOp(getDomain(), getOpType());
  return info && anyDataSlot(*this, *info, [&](bool isInput, unsigned i) {
           Value value = isInput ? getOperand(i) : getResult(i);
           return isa<UnknownType>(value.getType());
         });
}

bool NodeOp::supportsDataType(FloatType type) {
  const OpInfo *info = lookupOp(getDomain(), getOpType());
  std::optional<int32_t> onnxType = getOnnxDataType(type);
  SmallVector<std::string> inputs, outputs;
  if (!info || !onnxType || !getSchemaTypeParameters(*this, inputs, outputs))
    return true;
  return !anyDataSlot(*this, *info, [&](bool isInput, unsigned i) {
    return !schemaAllowsElementType(*this, (isInput ? inputs : outputs)[i],
                                    *onnxType);
  });
}

/// The size of dimension `dim` of `value`'s type (1 when it has none).
static double getDimSize(Value value, int64_t dim, amp::DimSizes &sizes) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || dim < 0 || dim >= type.getRank())
    return 1;
  return sizes.getSize(value, dim);
}

double NodeOp::estimateFlops(amp::DimSizes &sizes) {
  StringRef type = getOpType();
  Value out = getNumResults() ? getResult(0) : Value();
  if (type == "MatMul" || type == "FusedMatMul") {
    // Every output element is a dot product over A's last dimension.
    auto a = dyn_cast<RankedTensorType>(getOperand(0).getType());
    double k = a ? getDimSize(getOperand(0), a.getRank() - 1, sizes) : 1;
    return 2 * sizes.getNumElements(out) * k;
  }
  if (type == "Gemm") {
    bool transA = false;
    if (auto attr = getOnnxAttrsOrEmpty().getAs<IntegerAttr>("transA"))
      transA = attr.getInt() != 0;
    double k = getDimSize(getOperand(0), transA ? 0 : 1, sizes);
    return 2 * sizes.getNumElements(out) * k;
  }
  if (type == "Einsum") {
    // A multiply-add per point of the loops over every label.
    SmallVector<int64_t> ranks;
    for (Value operand : getOperands()) {
      auto operandType = dyn_cast<RankedTensorType>(operand.getType());
      if (!operandType)
        return amp::detail::estimateElementwiseFlops(getOperation(), sizes);
      ranks.push_back(operandType.getRank());
    }
    auto text = getOnnxAttrsOrEmpty().getAs<StringAttr>("equation");
    std::string error;
    std::optional<EinsumEquation> equation =
        text ? EinsumEquation::parse(text.getValue(), ranks, error)
             : std::nullopt;
    if (!equation)
      return amp::detail::estimateElementwiseFlops(getOperation(), sizes);
    SmallVector<double> labelSizes(equation->numLabels, 1);
    for (auto [operand, labels] :
         llvm::zip_equal(getOperands(), equation->operands))
      for (auto [dim, label] : llvm::enumerate(labels))
        labelSizes[label] =
            std::max(labelSizes[label], getDimSize(operand, dim, sizes));
    double points = 1;
    for (double size : labelSizes)
      points *= size;
    return 2 * points;
  }
  if (llvm::is_contained(
          {"Conv", "ConvTranspose", "ConvGrad", "ConvTransposeGrad"}, type)) {
    // Per output (Conv) or input (ConvTranspose) element: one multiply-add
    // per weight element of a group's filter, W's dims 1 and up. The
    // gradients (dY, X, W) compute dX and dW, each as many.
    bool gradient = type.ends_with("Grad");
    unsigned weightIndex = gradient ? 2 : 1;
    auto weight = dyn_cast<RankedTensorType>(getOperand(weightIndex).getType());
    double filter = 1;
    if (weight)
      for (int64_t dim = 1; dim < weight.getRank(); ++dim)
        filter *= getDimSize(getOperand(weightIndex), dim, sizes);
    // Conv's output, ConvGrad's dY; ConvTranspose's input, ConvTransposeGrad's
    // X.
    Value counted =
        type == "Conv" ? out : getOperand(type == "ConvTransposeGrad" ? 1 : 0);
    return (gradient ? 4 : 2) * sizes.getNumElements(counted) * filter;
  }
  if (llvm::is_contained({"LSTM", "GRU", "RNN", "LSTMTraining", "GRUTraining",
                          "LSTMGrad", "GRUGrad"},
                         type)) {
    // Every time step multiplies the batch by W and R (all gates, both
    // directions): X is [seq, batch, input] (layout 0). The gradients
    // multiply by both again and by their transposes.
    double batchSteps = getDimSize(getOperand(0), 0, sizes) *
                        getDimSize(getOperand(0), 1, sizes);
    double forward = 2 * batchSteps *
                     (sizes.getNumElements(getOperand(1)) +
                      sizes.getNumElements(getOperand(2)));
    return type.ends_with("Grad") ? 2 * forward : forward;
  }
  if (type == "DFT" || type == "STFT") {
    // A multiply-add per output value and (complex) input sample of one
    // transform: the samples along DFT's axis, STFT's window (or about
    // twice its onesided bins).
    auto input = dyn_cast<RankedTensorType>(getOperand(0).getType());
    auto output = out ? dyn_cast<RankedTensorType>(out.getType()) : nullptr;
    if (!input || !output || input.getRank() < 2 || output.getRank() < 2)
      return amp::detail::estimateElementwiseFlops(getOperation(), sizes);
    int64_t rank = input.getRank();
    double channels = getDimSize(getOperand(0), rank - 1, sizes), samples;
    if (type == "DFT") {
      int64_t axis = getOpset() >= 20 ? -2 : 1;
      if (auto attr = getOnnxAttrsOrEmpty().getAs<IntegerAttr>("axis"))
        axis = attr.getInt();
      axis = std::clamp<int64_t>(axis < 0 ? axis + rank : axis, 0, rank - 2);
      samples = getDimSize(getOperand(0), axis, sizes);
    } else if (getNumOperands() > 2 &&
               isa<RankedTensorType>(getOperand(2).getType())) {
      samples = getDimSize(getOperand(2), 0, sizes);
    } else {
      samples = 2 * getDimSize(out, output.getRank() - 2, sizes);
    }
    return 2 * sizes.getNumElements(out) * samples * channels;
  }
  if (type == "Attention") {
    // Q·Kᵀ and the weights times V: two GEMMs over the key length, the
    // second to last dimension of K (3-D or 4-D).
    auto key = dyn_cast<RankedTensorType>(getOperand(1).getType());
    double keyLength =
        key ? getDimSize(getOperand(1), key.getRank() - 2, sizes) : 1;
    return 4 * sizes.getNumElements(getOperand(0)) * keyLength;
  }
  return amp::detail::estimateElementwiseFlops(getOperation(), sizes);
}

double NodeOp::estimateBytes(amp::DimSizes &sizes, unsigned dataBits) {
  double bytes = amp::detail::estimateAllBytes(
      cast<amp::PrecisionOpInterface>(getOperation()), sizes, dataBits);
  StringRef type = getOpType();
  if (type == "Gather" || type == "GatherElements") {
    // A gather reads only the rows it returns, not its whole table.
    Value table = getOperand(0);
    unsigned bits = isPrecisionDataOperand(0) ? dataBits : 0;
    bytes -= sizes.getBytes(table, bits);
    bytes += sizes.getBytes(getResult(0), bits);
  }
  return bytes;
}

//===----------------------------------------------------------------------===//
// CastFusionOpInterface
//===----------------------------------------------------------------------===//

/// Whether `node` is the default-domain op `opType`.
static bool isDefaultDomainOp(NodeOp node, StringRef opType) {
  return node.getDomain().empty() && node.getOpType() == opType;
}

/// The float `value` of a default-domain Constant or ConstantOfShape node
/// whose data is at hand, or null.
static ElementsAttr getFloatConstantValue(NodeOp node) {
  if (!isDefaultDomainOp(node, "Constant") &&
      !isDefaultDomainOp(node, "ConstantOfShape"))
    return {};
  auto value = node.getOnnxAttrsOrEmpty().getAs<ElementsAttr>("value");
  return value && amp::hasFloatData(value) ? value : ElementsAttr();
}

/// The element type of `value`'s tensor type, or null.
static Type getTensorElementType(Value value) {
  auto type = dyn_cast<TensorType>(value.getType());
  return type ? type.getElementType() : Type();
}

bool NodeOp::canWriteResultAs(unsigned index, FloatType type) {
  if (index != 0 || getNumResults() != 1 || !getOnnxDataType(type))
    return false;
  // A constant in a type its schema allows at its opset (ConstantOfShape
  // holds bfloat16 from opset 20 on).
  if (getFloatConstantValue(*this))
    return supportsDataType(type);
  if (!isDefaultDomainOp(*this, "Cast"))
    return false;
  Type from = getTensorElementType(getOperand(0));
  auto via = dyn_cast_or_null<FloatType>(getTensorElementType(getResult(0)));
  // A Cast of opset 6 to 12 cannot write bfloat16.
  SmallVector<std::string> inputs, outputs;
  if (getSchemaTypeParameters(*this, inputs, outputs) && !outputs.empty() &&
      !schemaAllowsElementType(*this, outputs[0], *getOnnxDataType(type)))
    return false;
  return from && via && amp::castsCompose(from, via, type);
}

/// Sets the ONNX attribute `name` of `node` to `value`.

void NodeOp::writeResultAs(unsigned index, FloatType type) {
  // A constant converts its value, a Cast its target type.
  if (getFloatConstantValue(*this))
    adaptToDataType(type);
  else
    setOnnxAttr("to", IntegerAttr::get(IntegerType::get(getContext(), 64),
                                       *getOnnxDataType(type)));
  Value result = getResult(index);
  result.setType(cast<TensorType>(result.getType()).clone(type));
}

void NodeOp::adaptToDataType(FloatType type) {
  // A Constant or ConstantOfShape decided low holds its value in that type.
  if (ElementsAttr value = getFloatConstantValue(*this))
    setOnnxAttr("value", amp::convertFloatElements(value, type));
}

bool NodeOp::canReadOperandAs(unsigned index, FloatType type) {
  // A Cast gives the same result for a value in any type that holds it.
  Type to = getTensorElementType(getResult(0));
  return isDefaultDomainOp(*this, "Cast") && index == 0 && to &&
         !isa<StringType>(to);
}

bool NodeOp::isConversionOf(unsigned index, unsigned operand) {
  // ONNX's Cast rounds to nearest even between float types, like amp.cast.
  Type from = getTensorElementType(getOperand(0));
  Type to = getTensorElementType(getResult(0));
  return isDefaultDomainOp(*this, "Cast") && index == 0 && operand == 0 &&
         from && to && isa<FloatType>(from) && isa<FloatType>(to);
}

bool NodeOp::hasValuesOutOfRange(unsigned index, FloatType type) {
  ElementsAttr value = getFloatConstantValue(*this);
  return index == 0 && value && amp::hasValuesOutOfRange(value, type);
}

std::optional<double> NodeOp::getLargestMagnitude(unsigned index) {
  ElementsAttr value = getFloatConstantValue(*this);
  if (index != 0 || !value)
    return std::nullopt;
  return amp::getLargestMagnitude(value);
}

bool InitializerOp::canWriteResultAs(unsigned index, FloatType type) {
  return index == 0 && getOnnxDataType(type) && amp::hasFloatData(getValue());
}

void InitializerOp::writeResultAs(unsigned index, FloatType type) {
  setValueAttr(amp::convertFloatElements(getValue(), type));
  getResult().setType(cast<TensorType>(getResult().getType()).clone(type));
}

bool InitializerOp::hasValuesOutOfRange(unsigned index, FloatType type) {
  return index == 0 && amp::hasFloatData(getValue()) &&
         amp::hasValuesOutOfRange(getValue(), type);
}

std::optional<double> InitializerOp::getLargestMagnitude(unsigned index) {
  if (index != 0)
    return std::nullopt;
  return amp::getLargestMagnitude(getValue());
}
