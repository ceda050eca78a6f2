//===- Export.cpp - MLIR to ONNX export -------------------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Writes `func.func @main` over `onnxg` ops (and the `amp` ops that have an
// ONNX form) as an ONNX ModelProto. Names come from the locations and
// attributes the importer left; values without one get fresh unique names.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"
#include "Exporter.h"

#include "amp/Dialect/AMP/IR/AMPOps.h"
#include "amp/Dialect/AMP/Transforms/Passes.h"
#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"
#include "amp/Target/ONNX/Export.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::onnxg;
using namespace mlir::onnxg::detail;

/// The graph name and doc string the importer kept on `op`.
static void setGraphFields(Operation *op, onnx::GraphProto &graph) {
  if (auto name =
          op->getAttrOfType<StringAttr>(ONNXGraphDialect::kGraphNameAttrName))
    graph.set_name(name.str());
  if (auto doc =
          op->getAttrOfType<StringAttr>(ONNXGraphDialect::kDocStringAttrName))
    graph.set_doc_string(doc.str());
}

bool Exporter::isNameUsed(StringRef name, bool innermostOnly) {
  if (innermostOnly)
    return nameScopes.back().contains(name);
  return llvm::any_of(nameScopes,
                      [&](const auto &scope) { return scope.contains(name); });
}

std::string Exporter::claimName(StringRef hint, bool mayShadow) {
  std::string name = hint.empty() ? "amp_value" : hint.str();
  for (unsigned i = 1; isNameUsed(name, mayShadow); ++i)
    name = (hint.empty() ? "amp_value" : hint.str()) + "_" + std::to_string(i);
  nameScopes.back().insert(name);
  return name;
}

void Exporter::noteDomain(StringRef domain, int64_t opset) {
  // Opset 0: the model never imported the domain; keep it that way.
  if (opset <= 0)
    return;
  int64_t &known = usedDomains[isDefaultDomain(domain) ? "" : domain];
  known = std::max(known, opset);
}

//===----------------------------------------------------------------------===//
// Types and tensors
//===----------------------------------------------------------------------===//

LogicalResult Exporter::exportType(Type type, ArrayAttr dims, Location loc,
                                   onnx::TypeProto &proto) {
  if (isa<UnknownType>(type))
    return success();
  if (auto seq = dyn_cast<SequenceType>(type))
    return exportType(seq.getElementType(), {}, loc,
                      *proto.mutable_sequence_type()->mutable_elem_type());
  if (auto opt = dyn_cast<OptionalType>(type))
    return exportType(opt.getElementType(), {}, loc,
                      *proto.mutable_optional_type()->mutable_elem_type());
  if (auto map = dyn_cast<MapType>(type)) {
    std::optional<int32_t> key = getOnnxDataType(map.getKeyType());
    if (!key)
      return emitError(loc) << "map key type " << map.getKeyType()
                            << " has no ONNX element type";
    proto.mutable_map_type()->set_key_type(*key);
    return exportType(map.getValueType(), {}, loc,
                      *proto.mutable_map_type()->mutable_value_type());
  }
  auto tensorType = dyn_cast<TensorType>(type);
  if (!tensorType)
    return emitError(loc) << "type " << type << " has no ONNX form";
  std::optional<int32_t> elt = getOnnxDataType(tensorType.getElementType());
  if (!elt)
    return emitError(loc) << "element type " << tensorType.getElementType()
                          << " has no ONNX form";
  onnx::TypeProto::Tensor &tensor = *proto.mutable_tensor_type();
  tensor.set_elem_type(*elt);
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return success();
  onnx::TensorShapeProto &shape = *tensor.mutable_shape();
  for (auto [i, size] : llvm::enumerate(ranked.getShape())) {
    onnx::TensorShapeProto::Dimension &dim = *shape.add_dim();
    StringRef param;
    if (dims && i < dims.size())
      if (auto name = dyn_cast<StringAttr>(dims[i]))
        param = name.getValue();
    if (!ShapedType::isDynamic(size))
      dim.set_dim_value(size);
    else if (!param.empty())
      dim.set_dim_param(param.str());
  }
  return success();
}

/// Appends the value's low `bytes` bytes, little-endian.
static void appendAPInt(std::string &out, const APInt &value, unsigned bytes) {
  APInt wide = value.zextOrTrunc(bytes * 8);
  for (unsigned i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>(wide.extractBitsAsZExtValue(8, 8 * i)));
}

LogicalResult Exporter::exportTensor(ElementsAttr value, StringRef name,
                                     Location loc, onnx::TensorProto &tensor) {
  auto type = cast<ShapedType>(value.getType());
  std::optional<int32_t> elt = getOnnxDataType(type.getElementType());
  if (!elt)
    return emitError(loc) << "tensor '" << name << "' has element type "
                          << type.getElementType() << ", which ONNX lacks";
  tensor.set_name(name.str());
  tensor.set_data_type(*elt);
  for (int64_t dim : type.getShape())
    tensor.add_dims(dim);

  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitError(loc) << "tensor '" << name << "' (resource '"
                            << resource.getRawHandle().getKey()
                            << "') has no data; was it elided?";
    ArrayRef<char> data = blob->getData();
    tensor.set_raw_data(data.data(), data.size());
    return success();
  }
  if (auto strings = dyn_cast<DenseStringElementsAttr>(value)) {
    for (StringRef s : strings.getRawStringData())
      tensor.add_string_data(s.str());
    if (strings.isSplat())
      for (int64_t i = 1; i < type.getNumElements(); ++i)
        tensor.add_string_data(strings.getRawStringData().front().str());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return emitError(loc) << "tensor '" << name
                          << "' is not a dense, dense_resource or string "
                             "elements attribute";
  unsigned eltSize = getRawElementSize(type.getElementType());
  std::string &raw = *tensor.mutable_raw_data();
  raw.reserve(type.getNumElements() * eltSize);
  if (isa<FloatType>(type.getElementType())) {
    for (const APFloat &f : dense.getValues<APFloat>())
      appendAPInt(raw, f.bitcastToAPInt(), eltSize);
  } else if (isa<IntegerType>(type.getElementType())) {
    for (const APInt &i : dense.getValues<APInt>())
      appendAPInt(raw, i, eltSize);
  } else {
    return emitError(loc) << "tensor '" << name << "' of "
                          << type.getElementType()
                          << " must be a dense_resource to be exported";
  }
  return success();
}

void Exporter::addValueInfo(Value value, ArrayAttr dims,
                            onnx::GraphProto &graph) {
  // Graph outputs carry their type in the graph's output list.
  if (isa<UnknownType, NoneType>(value.getType()) ||
      llvm::any_of(value.getUsers(), [](Operation *user) {
        return isa<func::ReturnOp, YieldOp>(user);
      }))
    return;
  onnx::ValueInfoProto info;
  info.set_name(names[value]);
  // A type with no ONNX form gets no value_info; nodes using it fail later.
  if (succeeded(exportType(value.getType(), dims, value.getLoc(),
                           *info.mutable_type())))
    *graph.add_value_info() = std::move(info);
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

void Exporter::nameResults(Operation *op) {
  StringRef nodeName;
  SmallVector<StringRef> outputNames;
  getOnnxNames(op->getLoc(), nodeName, outputNames);
  if (auto init = dyn_cast<InitializerOp>(op))
    outputNames.assign({init.getName()});
  auto hint = outputNames.begin();
  for (Value result : op->getResults()) {
    if (isa<NoneType>(result.getType()))
      continue;
    StringRef name = hint != outputNames.end() ? *hint++ : StringRef();
    if (names.count(result))
      continue;
    // A clash gets a fresh name: ONNX defines each name once.
    names[result] = claimName(name);
  }
}

LogicalResult Exporter::exportAttribute(NodeOp node, NamedAttribute named,
                                        onnx::AttributeProto &attr,
                                        onnx::GraphProto &graph) {
  attr.set_name(named.getName().str());
  Attribute value = named.getValue();
  std::optional<OnnxAttrKind> kind = getOnnxAttrKind(value);
  if (!kind)
    return node.emitError()
           << node.describe() << ": attribute '" << named.getName().getValue()
           << "' has no ONNX form";
  attr.set_type(static_cast<onnx::AttributeProto::AttributeType>(*kind));
  Location loc = node.getLoc();
  switch (*kind) {
  case OnnxAttrKind::Float:
    attr.set_f(cast<FloatAttr>(value).getValue().convertToFloat());
    return success();
  case OnnxAttrKind::Int:
    attr.set_i(cast<IntegerAttr>(value).getInt());
    return success();
  case OnnxAttrKind::String:
    attr.set_s(cast<StringAttr>(value).str());
    return success();
  case OnnxAttrKind::Tensor:
    return exportTensor(cast<ElementsAttr>(value), "", loc, *attr.mutable_t());
  case OnnxAttrKind::Graph: {
    Region &region = node.getSubgraphs()[cast<IntegerAttr>(value).getInt()];
    auto yield = cast<YieldOp>(region.front().getTerminator());
    SmallVector<std::string> outputNames;
    for (Attribute name : yield.getNames())
      outputNames.push_back(cast<StringAttr>(name).str());
    onnx::GraphProto &subgraph = *attr.mutable_g();
    setGraphFields(yield, subgraph);
    auto dimLists = [&](StringRef name) {
      SmallVector<ArrayAttr> lists;
      if (auto all = yield->getAttrOfType<ArrayAttr>(name))
        for (Attribute list : all)
          lists.push_back(dyn_cast<ArrayAttr>(list));
      return lists;
    };
    return exportGraph(region.front(), outputNames,
                       dimLists(ONNXGraphDialect::kArgDimsAttrName),
                       dimLists(ONNXGraphDialect::kDimsAttrName), subgraph);
  }
  case OnnxAttrKind::Floats:
    for (float f : cast<DenseF32ArrayAttr>(value).asArrayRef())
      attr.add_floats(f);
    return success();
  case OnnxAttrKind::Ints:
    for (int64_t i : cast<DenseI64ArrayAttr>(value).asArrayRef())
      attr.add_ints(i);
    return success();
  case OnnxAttrKind::Strings:
    for (Attribute s : cast<ArrayAttr>(value))
      attr.add_strings(cast<StringAttr>(s).str());
    return success();
  case OnnxAttrKind::Tensors:
    for (Attribute t : cast<ArrayAttr>(value))
      if (failed(exportTensor(cast<ElementsAttr>(t), "", loc,
                              *attr.add_tensors())))
        return failure();
    return success();
  case OnnxAttrKind::TypeProto:
    return exportType(cast<TypeAttr>(value).getValue(), {}, loc,
                      *attr.mutable_tp());
  case OnnxAttrKind::TypeProtos:
    for (Attribute t : cast<ArrayAttr>(value))
      if (failed(exportType(cast<TypeAttr>(t).getValue(), {}, loc,
                            *attr.add_type_protos())))
        return failure();
    return success();
  case OnnxAttrKind::Graphs:
  case OnnxAttrKind::SparseTensor:
  case OnnxAttrKind::SparseTensors:
    break;
  }
  return node.emitError() << node.describe() << ": attribute '"
                          << named.getName().getValue()
                          << "' cannot be exported";
}

LogicalResult Exporter::exportNode(NodeOp node, onnx::GraphProto &graph) {
  onnx::NodeProto &proto = *graph.add_node();
  proto.set_op_type(node.getOpType().str());
  proto.set_domain(node.getDomain().str());
  proto.set_name(node.getNodeName().str());
  if (std::optional<StringRef> doc = node.getDocString())
    proto.set_doc_string(doc->str());
  noteDomain(node.getDomain(), node.getOpset());
  for (Value input : node.getInputs())
    proto.add_input(isa<NoneType>(input.getType()) ? "" : names[input]);
  auto dims = node->getAttrOfType<ArrayAttr>(ONNXGraphDialect::kDimsAttrName);
  unsigned named = 0;
  for (Value result : node.getOutputs()) {
    if (isa<NoneType>(result.getType())) {
      proto.add_output("");
      continue;
    }
    proto.add_output(names[result]);
    ArrayAttr resultDims;
    if (dims && named < dims.size())
      resultDims = dyn_cast<ArrayAttr>(dims[named]);
    ++named;
    addValueInfo(result, resultDims, graph);
  }
  for (NamedAttribute attr : node.getOnnxAttrsOrEmpty())
    if (failed(exportAttribute(node, attr, *proto.add_attribute(), graph)))
      return failure();
  return success();
}

onnx::NodeProto &Exporter::addNode(StringRef opType,
                                   ArrayRef<std::string> inputs,
                                   const std::string &output,
                                   onnx::GraphProto &graph) {
  onnx::NodeProto &proto = *graph.add_node();
  proto.set_op_type(opType.str());
  std::string name = output;
  for (unsigned suffix = 1; !nodeNames.insert(name).second; ++suffix)
    name = output + "_" + std::to_string(suffix);
  proto.set_name(name);
  for (const std::string &input : inputs)
    proto.add_input(input);
  proto.add_output(output);
  noteDomain("", 1);
  return proto;
}

void Exporter::addCastNode(const std::string &input, const std::string &output,
                           int32_t to, onnx::GraphProto &graph) {
  onnx::AttributeProto &attr =
      *addNode("Cast", {input}, output, graph).add_attribute();
  attr.set_name("to");
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(to);
}

std::string Exporter::addHelperNode(StringRef opType,
                                    ArrayRef<std::string> inputs,
                                    StringRef hint, onnx::GraphProto &graph) {
  std::string name = claimName(hint, /*mayShadow=*/false);
  addNode(opType, inputs, name, graph);
  return name;
}

std::string Exporter::addScalar(float value, StringRef hint,
                                onnx::GraphProto &graph) {
  onnx::TensorProto &tensor = *graph.add_initializer();
  tensor.set_name(claimName(hint, /*mayShadow=*/false));
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_float_data(value);
  return tensor.name();
}

std::string Exporter::addScalar(int64_t value, StringRef hint,
                                onnx::GraphProto &graph) {
  onnx::TensorProto &tensor = *graph.add_initializer();
  tensor.set_name(claimName(hint, /*mayShadow=*/false));
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_int64_data(value);
  return tensor.name();
}

LogicalResult Exporter::exportOp(Operation *op, onnx::GraphProto &graph) {
  if (isa<NoneOp, func::ReturnOp, YieldOp>(op))
    return success();
  nameResults(op);
  if (auto node = dyn_cast<NodeOp>(op))
    return exportNode(node, graph);
  if (auto init = dyn_cast<InitializerOp>(op))
    return exportTensor(init.getValue(), names[init.getResult()], op->getLoc(),
                        *graph.add_initializer());
  if (auto cast = dyn_cast<amp::CastOp>(op))
    return exportCast(cast, graph);
  if (auto unscale = dyn_cast<amp::UnscaleOp>(op))
    return exportUnscale(unscale, graph);
  if (auto scaleLoss = dyn_cast<amp::ScaleLossOp>(op))
    return exportScaleLoss(scaleLoss, graph);
  if (auto allFinite = dyn_cast<amp::AllFiniteOp>(op))
    return exportAllFinite(allFinite, graph);
  if (auto update = dyn_cast<amp::UpdateScaleOp>(op))
    return exportUpdateScale(update, graph);
  if (isa<amp::QuantizeOp, amp::DequantizeOp, amp::AmaxOp, amp::ComputeScaleOp,
          amp::FP8UpdateOp, amp::ScaledMatMulOp>(op))
    return exportFP8Op(op, graph);
  if (auto select = dyn_cast<amp::UpdateIfFiniteOp>(op)) {
    addNode("Where",
            {names[select.getFinite()], names[select.getUpdated()],
             names[select.getPrevious()]},
            names[select.getResult()], graph);
    addValueInfo(select.getResult(), {}, graph);
    return success();
  }
  return op->emitError("'")
         << op->getName() << "' has no ONNX form and cannot be exported";
}

//===----------------------------------------------------------------------===//
// Graphs and the model
//===----------------------------------------------------------------------===//

LogicalResult Exporter::exportGraph(Block &block,
                                    ArrayRef<std::string> outputNames,
                                    ArrayRef<ArrayAttr> inputDims,
                                    ArrayRef<ArrayAttr> outputDims,
                                    onnx::GraphProto &graph) {
  nameScopes.emplace_back();
  llvm::scope_exit popScope([&] { nameScopes.pop_back(); });
  auto func = dyn_cast<func::FuncOp>(block.getParentOp());
  for (BlockArgument arg : block.getArguments()) {
    StringRef hint;
    if (auto loc = dyn_cast<NameLoc>(arg.getLoc()))
      hint = loc.getName().getValue();
    std::string fallback = "input_" + std::to_string(arg.getArgNumber());
    names[arg] = claimName(hint.empty() ? StringRef(fallback) : hint,
                           /*mayShadow=*/true);
    onnx::ValueInfoProto &input = *graph.add_input();
    input.set_name(names[arg]);
    unsigned index = arg.getArgNumber();
    ArrayAttr dims = index < inputDims.size() ? inputDims[index] : ArrayAttr();
    if (failed(exportType(arg.getType(), dims, arg.getLoc(),
                          *input.mutable_type())))
      return failure();
    if (!func)
      continue;
    if (auto init = func.getArgAttrOfType<ElementsAttr>(
            arg.getArgNumber(), ONNXGraphDialect::kInitializerAttrName))
      if (failed(exportTensor(init, names[arg], arg.getLoc(),
                              *graph.add_initializer())))
        return failure();
  }

  // Op results that are graph outputs take the output's name.
  Operation *terminator = block.getTerminator();
  SmallVector<bool> needsIdentity;
  for (auto [value, name] : llvm::zip(terminator->getOperands(), outputNames)) {
    auto it = names.find(value);
    if (it != names.end()) {
      needsIdentity.push_back(it->second != name);
      continue;
    }
    if (isNameUsed(name, false))
      return terminator->emitError("graph output '")
             << name << "' has the name of another value";
    names[value] = name;
    nameScopes.back().insert(name);
    needsIdentity.push_back(false);
  }

  for (Operation &op : block.without_terminator())
    if (failed(exportOp(&op, graph)))
      return failure();

  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    std::string name = outputNames[i];
    if (needsIdentity[i]) {
      if (isNameUsed(name, false))
        return terminator->emitError("graph output name '")
               << name << "' is used by another value";
      nameScopes.back().insert(name);
      onnx::NodeProto &identity = *graph.add_node();
      identity.set_op_type("Identity");
      identity.add_input(names[value]);
      identity.add_output(name);
      noteDomain("", 1);
    }
    onnx::ValueInfoProto &output = *graph.add_output();
    output.set_name(name);
    ArrayAttr dims = i < outputDims.size() ? outputDims[i] : ArrayAttr();
    if (failed(exportType(value.getType(), dims, terminator->getLoc(),
                          *output.mutable_type())))
      return failure();
  }
  return success();
}

LogicalResult Exporter::exportModel(onnx::ModelProto &model) {
  auto funcs = module.getOps<func::FuncOp>();
  auto mainIt = llvm::find_if(
      funcs, [](func::FuncOp f) { return f.getSymName() == "main"; });
  if (mainIt == funcs.end() || (*mainIt).isExternal())
    return emitError(module.getLoc(),
                     "the module has no 'func.func @main' with a "
                     "body to export");
  func::FuncOp main = *mainIt;
  if (auto beyond =
          module->getAttrOfType<StringAttr>(amp::kBeyondONNXTypesAttrName))
    return emitError(module.getLoc())
           << "the step was converted with onnx-types=false, and "
           << beyond.getValue()
           << " holds a low-precision type its ONNX schema does not allow at "
              "its opset: amp-compile and amp-run run such a step, an ONNX "
              "file cannot hold it";
  if (!main.getBody().hasOneBlock())
    return emitError(main.getLoc(),
                     "@main must have a single block to be exported");
  for (Operation &op : module.getBody()->getOperations())
    if (&op != main.getOperation())
      return emitError(op.getLoc(),
                       "only 'func.func @main' can be exported to ONNX");
  main.walk([&](NodeOp node) {
    if (!node.getNodeName().empty())
      nodeNames.insert(node.getNodeName());
  });

  auto strAttr = [&](StringRef name) {
    auto attr = module->getAttrOfType<StringAttr>(name);
    return attr ? attr.str() : std::string();
  };
  auto irVersion = module->getAttrOfType<IntegerAttr>("onnxg.ir_version");
  model.set_ir_version(irVersion ? irVersion.getInt() : 8);
  model.set_producer_name(module->hasAttr("onnxg.producer_name")
                              ? strAttr("onnxg.producer_name")
                              : std::string("amp-opt"));
  model.set_producer_version(strAttr("onnxg.producer_version"));
  model.set_domain(strAttr("onnxg.domain"));
  model.set_doc_string(strAttr("onnxg.doc_string"));
  if (auto version = module->getAttrOfType<IntegerAttr>("onnxg.model_version"))
    model.set_model_version(version.getInt());
  if (auto props = module->getAttrOfType<ArrayAttr>(
          ONNXGraphDialect::kMetadataPropsAttrName)) {
    for (Attribute prop : props) {
      auto pair = dyn_cast<ArrayAttr>(prop);
      if (!pair || pair.size() != 2 || !isa<StringAttr>(pair[0]) ||
          !isa<StringAttr>(pair[1]))
        return emitError(module.getLoc(),
                         "onnxg.metadata_props must hold [key, value] "
                         "string pairs");
      onnx::StringStringEntryProto &entry = *model.add_metadata_props();
      entry.set_key(cast<StringAttr>(pair[0]).str());
      entry.set_value(cast<StringAttr>(pair[1]).str());
    }
  }

  onnx::GraphProto &graph = *model.mutable_graph();
  setGraphFields(main, graph);
  if (!main->hasAttr(ONNXGraphDialect::kGraphNameAttrName))
    graph.set_name("main");
  SmallVector<std::string> outputNames;
  SmallVector<ArrayAttr> inputDims, outputDims;
  for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
    inputDims.push_back(
        main.getArgAttrOfType<ArrayAttr>(i, ONNXGraphDialect::kDimsAttrName));
  for (unsigned i = 0, e = main.getNumResults(); i < e; ++i) {
    auto name = main.getResultAttrOfType<StringAttr>(
        i, ONNXGraphDialect::kNameAttrName);
    outputNames.push_back(name ? name.str() : "output_" + std::to_string(i));
    outputDims.push_back(main.getResultAttrOfType<ArrayAttr>(
        i, ONNXGraphDialect::kDimsAttrName));
  }
  if (failed(exportGraph(main.getBody().front(), outputNames, inputDims,
                         outputDims, graph)))
    return failure();

  // The recorded opset imports, plus any domain a node uses without one.
  llvm::StringSet<> imported;
  if (auto opsets = module->getAttrOfType<ArrayAttr>("onnxg.opset_imports")) {
    for (Attribute entry : opsets) {
      auto pair = dyn_cast<ArrayAttr>(entry);
      if (!pair || pair.size() != 2 || !isa<StringAttr>(pair[0]) ||
          !isa<IntegerAttr>(pair[1]))
        return emitError(module.getLoc(),
                         "onnxg.opset_imports must hold [domain, "
                         "version] pairs");
      onnx::OperatorSetIdProto &opset = *model.add_opset_import();
      StringRef domain = cast<StringAttr>(pair[0]).getValue();
      opset.set_domain(domain.str());
      opset.set_version(cast<IntegerAttr>(pair[1]).getInt());
      imported.insert(isDefaultDomain(domain) ? "" : domain);
    }
  }
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    if (isDefaultDomain(opset.domain()) && opset.version() < requiredOpset)
      return emitError(module.getLoc(), "FP8 types need ONNX opset ")
             << requiredOpset << " or later; the model imports opset "
             << opset.version()
             << " (run --onnxg-upgrade-opset first, as "
                "--amp-pipeline=\"precision=fp8\" does)";
  if (requiredOpset)
    noteDomain("", requiredOpset);
  for (const auto &entry : usedDomains) {
    if (imported.contains(entry.getKey()))
      continue;
    onnx::OperatorSetIdProto &opset = *model.add_opset_import();
    opset.set_domain(entry.getKey().str());
    opset.set_version(entry.getValue() > 0 ? entry.getValue() : 1);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

/// The most bytes a protobuf holds.
static constexpr size_t kMaxProtobufBytes = std::numeric_limits<int>::max();
/// Tensors this large or larger go to the external data file.
static constexpr size_t kExternalDataThreshold = 1024;
/// Offsets in the external data file are multiples of this.
static constexpr uint64_t kExternalDataAlignment = 64;

/// Appends to `tensors` every tensor of `graph` and its subgraphs: the
/// initializers and the attributes' (Constant values).
static void collectTensors(onnx::GraphProto &graph,
                           SmallVectorImpl<onnx::TensorProto *> &tensors) {
  for (onnx::TensorProto &tensor : *graph.mutable_initializer())
    tensors.push_back(&tensor);
  for (onnx::NodeProto &node : *graph.mutable_node())
    for (onnx::AttributeProto &attribute : *node.mutable_attribute()) {
      if (attribute.has_t())
        tensors.push_back(attribute.mutable_t());
      for (onnx::TensorProto &tensor : *attribute.mutable_tensors())
        tensors.push_back(&tensor);
      if (attribute.has_g())
        collectTensors(*attribute.mutable_g(), tensors);
      for (onnx::GraphProto &body : *attribute.mutable_graphs())
        collectTensors(body, tensors);
    }
}

/// Moves the bytes of every tensor of `model` of kExternalDataThreshold
/// bytes or more to the file `dataPath`, which the tensors then name by its
/// file name (ONNX external data: location, offset, length).
static LogicalResult writeExternalData(onnx::ModelProto &model,
                                       StringRef dataPath, Location loc) {
  SmallVector<onnx::TensorProto *> tensors;
  collectTensors(*model.mutable_graph(), tensors);
  llvm::erase_if(tensors, [](onnx::TensorProto *tensor) {
    return tensor->raw_data().size() < kExternalDataThreshold;
  });
  std::string location = llvm::sys::path::filename(dataPath).str();
  llvm::Error error =
      llvm::writeToOutput(dataPath, [&](llvm::raw_ostream &os) -> llvm::Error {
        uint64_t offset = 0;
        for (onnx::TensorProto *tensor : tensors) {
          uint64_t aligned = llvm::alignTo(offset, kExternalDataAlignment);
          os.write_zeros(aligned - offset);
          const std::string &bytes = tensor->raw_data();
          os.write(bytes.data(), bytes.size());
          offset = aligned + bytes.size();
          auto addEntry = [&](StringRef key, std::string value) {
            onnx::StringStringEntryProto &entry = *tensor->add_external_data();
            entry.set_key(key.str());
            entry.set_value(std::move(value));
          };
          addEntry("location", location);
          addEntry("offset", std::to_string(aligned));
          addEntry("length", std::to_string(bytes.size()));
          tensor->set_data_location(onnx::TensorProto::EXTERNAL);
          tensor->clear_raw_data();
        }
        return llvm::Error::success();
      });
  if (error)
    return emitError(loc, "cannot write '")
           << dataPath << "': " << llvm::toString(std::move(error));
  return success();
}

/// The serialized model, or failure after emitting an error: the exporter's,
/// or the check's (OutputCheck) when `options` asks for it. With a `path`,
/// the model's large tensors may go to `<path>.data` (ExportOptions), which
/// is then written and named in `dataPathOut`, for the caller to remove if
/// the export fails after all.
static FailureOr<std::string>
serializeModel(ModuleOp module, TimingScope &timing,
               const ExportOptions &options, StringRef path = "",
               std::string *dataPathOut = nullptr) {
  google::protobuf::Arena arena;
  auto &model =
      *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  TimingScope buildTiming = timing.nest("build ONNX protobuf");
  if (failed(Exporter(module).exportModel(model)))
    return failure();
  buildTiming.stop();
  size_t size = model.ByteSizeLong();
  if (!path.empty() && (options.externalData || size > kMaxProtobufBytes)) {
    TimingScope dataTiming = timing.nest("write external data");
    std::string dataPath = (path + ".data").str();
    if (!options.externalData)
      emitRemark(module.getLoc(), "the model takes ")
          << size
          << " bytes, more than a protobuf can hold (2 GiB): its tensors of "
          << kExternalDataThreshold << " bytes or more go to '" << dataPath
          << "'";
    if (failed(writeExternalData(model, dataPath, module.getLoc())))
      return failure();
    *dataPathOut = dataPath;
    size = model.ByteSizeLong();
  }
  if (size > kMaxProtobufBytes)
    return emitError(module.getLoc(), "the model takes ")
           << size
           << " bytes, more than a protobuf can hold (2 GiB); write it to a "
              ".onnx file, whose tensors then go to an external data file";
  // The check runs in a child while this process serializes.
  OutputCheck check;
  bool checking =
      options.check &&
      succeeded(check.start(model, llvm::sys::path::parent_path(path),
                            options.input, options.inputDir));
  TimingScope serializeTiming = timing.nest("serialize protobuf");
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return emitError(module.getLoc(), "cannot serialize the ONNX model");
  serializeTiming.stop();
  if (options.check) {
    TimingScope checkTiming = timing.nest("wait for onnx.checker");
    if (!checking)
      emitWarning(module.getLoc())
          << "onnx.checker could not start; the ONNX output is written "
             "unchecked";
    else if (failed(check.finish(module.getLoc())))
      return failure();
  }
  return bytes;
}

LogicalResult mlir::onnxg::exportOnnxModel(ModuleOp module,
                                           llvm::raw_ostream &os,
                                           const ExportOptions &options) {
  TimingScope noTiming;
  FailureOr<std::string> bytes = serializeModel(module, noTiming, options);
  if (failed(bytes))
    return failure();
  os.write(bytes->data(), bytes->size());
  return success();
}

LogicalResult mlir::onnxg::exportOnnxFile(ModuleOp module, StringRef path,
                                          TimingScope &timing,
                                          const ExportOptions &options) {
  // A failure after the data file is written leaves no data file behind.
  std::string dataPath;
  llvm::scope_exit removeData([&] {
    if (!dataPath.empty())
      llvm::sys::fs::remove(dataPath);
  });
  FailureOr<std::string> bytes =
      serializeModel(module, timing, options, path, &dataPath);
  if (failed(bytes))
    return failure();
  TimingScope writeTiming = timing.nest("write file");
  llvm::Error error =
      llvm::writeToOutput(path, [&](llvm::raw_ostream &os) -> llvm::Error {
        os.write(bytes->data(), bytes->size());
        return llvm::Error::success();
      });
  if (error)
    return emitError(module.getLoc(), "cannot write '")
           << path << "': " << llvm::toString(std::move(error));
  removeData.release();
  return success();
}

void mlir::onnxg::registerExportOnnxTranslation() {
  TranslateFromMLIRRegistration registration(
      "export-onnx", "Export a module to an ONNX model",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module to export");
        return exportOnnxModel(module, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<ONNXGraphDialect, amp::AMPDialect, func::FuncDialect>();
      });
}
