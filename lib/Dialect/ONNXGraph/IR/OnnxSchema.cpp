//===- OnnxSchema.cpp - Check nodes against ONNX op schemas ----*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The part of the `onnxg.node` verifier that asks libonnx's schema registry:
// arity, required attributes and attribute kinds.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/ElementTypes.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "onnx/defs/data_type_utils.h"
#include "onnx/defs/schema.h"

using namespace mlir;
using namespace mlir::onnxg;

/// The registry's schema for `node`, or null when no schema exists. A node
/// newer than what this libonnx knows (1.12: opset 17) has none, unless
/// `newestKnown`: then the newest known version stands in. That is right
/// for type questions only: opsets 18 and 19 changed arities (the
/// reductions' axes input) but no floating-point type constraint besides
/// adding FP8.
static const onnx::OpSchema *findSchema(NodeOp node, bool newestKnown) {
  std::string domain = node.getDomain().str();
  auto opset = static_cast<int64_t>(node.getOpset());
  if (domain == "ai.onnx")
    domain = "";
  const auto &versions =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto range = versions.find(domain);
  if (range == versions.end() || opset < 1)
    return nullptr;
  if (opset > range->second.second) {
    if (!newestKnown)
      return nullptr;
    opset = range->second.second;
  }
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.getOpType().str(), static_cast<int>(opset), domain);
  if (!schema || schema->Deprecated())
    return nullptr;
  return schema;
}

bool mlir::onnxg::isSchemaUnchangedUpTo(NodeOp node, int64_t opset) {
  const onnx::OpSchema *own = findSchema(node, /*newestKnown=*/false);
  std::string domain = node.getDomain().str();
  if (domain == "ai.onnx")
    domain = "";
  const onnx::OpSchema *later = onnx::OpSchemaRegistry::Schema(
      node.getOpType().str(), static_cast<int>(opset), domain);
  return own && later && own->SinceVersion() == later->SinceVersion();
}

/// The type parameter of each of `count` actual arguments described by
/// `formals`; the last formal parameter may be variadic and cover the rest.
static void appendTypeParameters(
    const std::vector<onnx::OpSchema::FormalParameter> &formals, unsigned count,
    SmallVectorImpl<std::string> &params) {
  for (unsigned index = 0; index != count; ++index) {
    bool covered = index < formals.size() ||
                   (!formals.empty() &&
                    formals.back().GetOption() == onnx::OpSchema::Variadic);
    params.push_back(
        covered
            ? formals[std::min<size_t>(index, formals.size() - 1)].GetTypeStr()
            : std::string());
  }
}

bool mlir::onnxg::getSchemaTypeParameters(
    NodeOp node, SmallVectorImpl<std::string> &inputs,
    SmallVectorImpl<std::string> &outputs) {
  const onnx::OpSchema *schema = findSchema(node, /*newestKnown=*/true);
  if (!schema)
    return false;
  appendTypeParameters(schema->inputs(), node.getNumOperands(), inputs);
  appendTypeParameters(schema->outputs(), node.getNumResults(), outputs);
  return true;
}

bool mlir::onnxg::schemaAllowsElementType(NodeOp node, StringRef typeParameter,
                                          int32_t onnxDataType) {
  const onnx::OpSchema *schema = findSchema(node, /*newestKnown=*/true);
  if (!schema || typeParameter.empty())
    return true;
  std::string wanted =
      "tensor(" + onnx::Utils::DataTypeUtils::ToDataTypeString(onnxDataType) +
      ")";
  for (const auto &constraint : schema->typeConstraintParams())
    if (constraint.type_param_str == typeParameter)
      return llvm::is_contained(constraint.allowed_type_strs, wanted);
  // A formal with a fixed type, such as "tensor(float)".
  return typeParameter == wanted;
}

Type mlir::onnxg::getSchemaResultElementType(NodeOp node, unsigned index) {
  const onnx::OpSchema *schema = findSchema(node, /*newestKnown=*/true);
  SmallVector<std::string> inputs, outputs;
  if (!schema || !getSchemaTypeParameters(node, inputs, outputs) ||
      index >= outputs.size() || outputs[index].empty())
    return {};
  const std::string &param = outputs[index];
  std::vector<std::string> allowed = {param};
  for (const auto &constraint : schema->typeConstraintParams())
    if (constraint.type_param_str == param)
      allowed = constraint.allowed_type_strs;
  if (allowed.size() == 1 && StringRef(allowed[0]).starts_with("tensor(")) {
    onnx::TypeProto type = onnx::Utils::DataTypeUtils::ToTypeProto(
        onnx::Utils::DataTypeUtils::ToType(allowed[0]));
    return getElementType(node.getContext(), type.tensor_type().elem_type());
  }
  for (auto [operand, operandParam] : llvm::zip(node.getInputs(), inputs))
    if (operandParam == param)
      if (auto type = dyn_cast<RankedTensorType>(operand.getType()))
        return type.getElementType();
  return {};
}

/// Emits "expects N inputs" style errors for a count outside [min, max].
static LogicalResult checkArity(NodeOp node, StringRef what, size_t count,
                                int min, int max) {
  if (count >= static_cast<size_t>(min) && count <= static_cast<size_t>(max))
    return success();
  InFlightDiagnostic diag = node.emitOpError()
                            << node.describe() << ": expects ";
  if (max == std::numeric_limits<int>::max())
    diag << "at least " << min;
  else if (min == max)
    diag << min;
  else
    diag << min << " to " << max;
  return diag << " " << what << ", got " << count;
}

LogicalResult mlir::onnxg::verifyAgainstOnnxSchema(NodeOp node) {
  const onnx::OpSchema *schema = findSchema(node, /*newestKnown=*/false);
  if (!schema)
    return success();
  if (failed(checkArity(node, "inputs", node.getInputs().size(),
                        schema->min_input(), schema->max_input())) ||
      failed(checkArity(node, "outputs", node.getOutputs().size(),
                        schema->min_output(), schema->max_output())))
    return failure();

  DictionaryAttr attrs = node.getOnnxAttrsOrEmpty();
  const auto &expected = schema->attributes();
  for (NamedAttribute named : attrs) {
    StringRef name = named.getName().getValue();
    auto it = expected.find(name.str());
    if (it == expected.end())
      return node.emitOpError()
             << node.describe() << ": unknown attribute '" << name << "'";
    auto want = static_cast<OnnxAttrKind>(it->second.type);
    std::optional<OnnxAttrKind> got = getOnnxAttrKind(named.getValue());
    // An empty list has no element type to tell its kind by.
    bool emptyList = isa<ArrayAttr>(named.getValue()) &&
                     cast<ArrayAttr>(named.getValue()).empty();
    if (got == want || emptyList)
      continue;
    return node.emitOpError()
           << node.describe() << ": attribute '" << name << "' must be "
           << stringifyOnnxAttrKind(want) << ", got "
           << (got ? stringifyOnnxAttrKind(*got) : StringRef("no kind"));
  }
  for (const auto &[name, attr] : expected)
    if (attr.required && !attrs.contains(name))
      return node.emitOpError()
             << node.describe() << ": missing required attribute '" << name
             << "'";
  return success();
}
