//===- InlineFunctions.cpp - Inline an ONNX model's local functions -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Exporters that keep a model's structure write model-local functions
// (FunctionProto in ModelProto.functions) and call them as nodes of their
// domain. The importer sees one flat graph: each call is replaced by the
// function's nodes with its formal inputs and outputs bound to the call's
// values and its other values given fresh names.
//
//===----------------------------------------------------------------------===//

#include "InlineFunctions.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

using namespace mlir;

namespace {
using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

/// The default domain has two spellings.
std::string normalizeDomain(const std::string &domain) {
  return domain == "ai.onnx" ? "" : domain;
}

std::string getKey(const std::string &domain, const std::string &name) {
  return normalizeDomain(domain) + "::" + name;
}

class Inliner {
public:
  explicit Inliner(onnx::ModelProto &model) : model(model) {
    for (const onnx::FunctionProto &function : model.functions())
      functions[getKey(function.domain(), function.name())] = &function;
    collectNames(model.graph());
  }

  std::string run() {
    for (const onnx::FunctionProto &function : model.functions())
      if (std::string why = mergeOpsets(function); !why.empty())
        return why;
    NodeList expanded;
    if (std::string why = expand(model.graph().node(), expanded); !why.empty())
      return why;
    model.mutable_graph()->mutable_node()->Swap(&expanded);
    model.clear_functions();
    return "";
  }

private:
  /// Every name the graph uses, so that fresh names do not collide.
  void collectNames(const onnx::GraphProto &graph) {
    for (const auto &value : graph.input())
      names.insert(value.name());
    for (const auto &value : graph.output())
      names.insert(value.name());
    for (const auto &tensor : graph.initializer())
      names.insert(tensor.name());
    for (const onnx::NodeProto &node : graph.node()) {
      names.insert(node.name());
      for (const std::string &output : node.output())
        names.insert(output);
    }
  }

  /// `base`, or `base` with the first suffix _1, _2, ... that is unused.
  std::string getFreshName(const std::string &base) {
    std::string name = base;
    for (unsigned i = 1; names.contains(name); ++i)
      name = base + "_" + std::to_string(i);
    names.insert(name);
    return name;
  }

  /// Adds the function's opset imports to the model's; a version other than
  /// the model's would change what its nodes mean.
  std::string mergeOpsets(const onnx::FunctionProto &function) {
    for (const onnx::OperatorSetIdProto &opset : function.opset_import()) {
      std::string domain = normalizeDomain(opset.domain());
      bool found = false;
      for (const onnx::OperatorSetIdProto &own : model.opset_import()) {
        if (normalizeDomain(own.domain()) != domain)
          continue;
        found = true;
        if (own.version() != opset.version())
          return "local function '" + function.name() + "' imports opset " +
                 std::to_string(opset.version()) + " of domain '" + domain +
                 "', the model opset " + std::to_string(own.version()) +
                 ": its nodes would change meaning when inlined";
      }
      if (!found)
        *model.add_opset_import() = opset;
    }
    return "";
  }

  /// Appends `nodes` to `out`, each call of a local function replaced by
  /// the function's nodes (expanded in turn).
  std::string expand(const NodeList &nodes, NodeList &out) {
    for (const onnx::NodeProto &node : nodes) {
      auto it = functions.find(getKey(node.domain(), node.op_type()));
      if (it == functions.end()) {
        *out.Add() = node;
        continue;
      }
      if (std::string why = inlineCall(node, *it->second, out); !why.empty())
        return why;
    }
    return "";
  }

  std::string inlineCall(const onnx::NodeProto &call,
                         const onnx::FunctionProto &function, NodeList &out) {
    if (!active.insert(&function).second)
      return "local function '" + function.name() +
             "' calls itself: recursion cannot be inlined";
    if (call.input_size() > function.input_size() ||
        call.output_size() > function.output_size())
      return "node '" + call.name() + "' calls local function '" +
             function.name() + "' with " + std::to_string(call.input_size()) +
             " inputs and " + std::to_string(call.output_size()) +
             " outputs; it has " + std::to_string(function.input_size()) +
             " and " + std::to_string(function.output_size());
    std::string prefix =
        (call.name().empty() ? function.name() : call.name()) + "/";
    // Formal inputs and outputs take the call's values ("" for missing
    // optional ones); the function's other values get fresh names.
    llvm::StringMap<std::string> renamed;
    for (int i = 0; i < function.input_size(); ++i)
      renamed[function.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int i = 0; i < function.output_size(); ++i)
      renamed[function.output(i)] =
          i < call.output_size() ? call.output(i)
                                 : getFreshName(prefix + function.output(i));
    llvm::StringMap<const onnx::AttributeProto *> callAttributes;
    for (const onnx::AttributeProto &attribute : call.attribute())
      callAttributes[attribute.name()] = &attribute;

    NodeList body;
    for (const onnx::NodeProto &node : function.node()) {
      onnx::NodeProto &copy = *body.Add();
      copy = node;
      if (!node.name().empty())
        copy.set_name(getFreshName(prefix + node.name()));
      for (std::string &input : *copy.mutable_input()) {
        auto found = renamed.find(input);
        if (found != renamed.end())
          input = found->second;
      }
      for (std::string &output : *copy.mutable_output()) {
        if (output.empty())
          continue;
        auto found = renamed.find(output);
        if (found == renamed.end())
          found = renamed.insert({output, getFreshName(prefix + output)}).first;
        output = found->second;
      }
      // Attributes that refer to the call's (dropped when it has none: the
      // op's default applies).
      google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
      for (const onnx::AttributeProto &attribute : copy.attribute()) {
        if (attribute.ref_attr_name().empty()) {
          *attributes.Add() = attribute;
          renameInSubgraphs(*attributes.Mutable(attributes.size() - 1),
                            renamed);
          continue;
        }
        auto value = callAttributes.find(attribute.ref_attr_name());
        if (value == callAttributes.end())
          continue;
        onnx::AttributeProto &bound = *attributes.Add();
        bound = *value->second;
        bound.set_name(attribute.name());
      }
      copy.mutable_attribute()->Swap(&attributes);
    }
    std::string why = expand(body, out);
    active.erase(&function);
    return why;
  }

  /// Renames, in the subgraphs of `attribute` (If and Loop bodies), the
  /// references to the function's values.
  static void renameInSubgraphs(onnx::AttributeProto &attribute,
                                const llvm::StringMap<std::string> &renamed) {
    std::function<void(onnx::GraphProto &)> renameGraph =
        [&](onnx::GraphProto &graph) {
          for (onnx::NodeProto &node : *graph.mutable_node()) {
            for (std::string &input : *node.mutable_input()) {
              auto found = renamed.find(input);
              if (found != renamed.end())
                input = found->second;
            }
            for (onnx::AttributeProto &nested : *node.mutable_attribute())
              renameInSubgraphs(nested, renamed);
          }
        };
    if (attribute.has_g())
      renameGraph(*attribute.mutable_g());
    for (onnx::GraphProto &graph : *attribute.mutable_graphs())
      renameGraph(graph);
  }

  onnx::ModelProto &model;
  llvm::StringMap<const onnx::FunctionProto *> functions;
  llvm::StringSet<> names;
  llvm::SmallPtrSet<const onnx::FunctionProto *, 8> active;
};
} // namespace

std::string mlir::onnxg::inlineLocalFunctions(onnx::ModelProto &model) {
  return Inliner(model).run();
}
