//===- ModelMutator.cpp - Structure-aware mutations of ONNX models -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// One mutation per call, picked at random among the parts of a model that
// the importer and the passes read. Compiled without coverage
// instrumentation: the mutator's branches are not the code under test.
//
//===----------------------------------------------------------------------===//

#include "ModelMutator.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

using Random = std::minstd_rand;

/// Op types a mutated node may take: the ones training graphs use
/// (../shared/corpus/OP-COVERAGE.md) and a few with subgraphs or odd arity.
constexpr const char *kOpTypes[] = {"Add",
                                    "Sub",
                                    "Mul",
                                    "Div",
                                    "MatMul",
                                    "Gemm",
                                    "Conv",
                                    "ConvTranspose",
                                    "Relu",
                                    "Gelu",
                                    "Sigmoid",
                                    "Tanh",
                                    "Softmax",
                                    "LogSoftmax",
                                    "ReduceSum",
                                    "ReduceMean",
                                    "Transpose",
                                    "Reshape",
                                    "Expand",
                                    "Gather",
                                    "Concat",
                                    "Split",
                                    "Slice",
                                    "Cast",
                                    "Constant",
                                    "Where",
                                    "Equal",
                                    "Sqrt",
                                    "Pow",
                                    "LayerNormalization",
                                    "BatchNormalization",
                                    "MaxPool",
                                    "AveragePool",
                                    "If",
                                    "Loop",
                                    "Identity",
                                    "SoftmaxCrossEntropyLoss",
                                    "Dropout",
                                    "Shape",
                                    "Unsqueeze",
                                    "Squeeze",
                                    "Einsum",
                                    "Adam",
                                    "Gradient",
                                    "Momentum"};

/// Integers at the edges of what shapes and attributes hold.
constexpr int64_t kEdgeIntegers[] = {0,
                                     1,
                                     -1,
                                     2,
                                     3,
                                     7,
                                     16,
                                     255,
                                     256,
                                     65535,
                                     -65536,
                                     int64_t{1} << 31,
                                     int64_t{1} << 32,
                                     INT64_MAX,
                                     INT64_MIN};

template <typename T>
size_t pick(Random &random, const T &container) {
  return std::uniform_int_distribution<size_t>(0, container.size() - 1)(random);
}

int64_t pickInteger(Random &random, int64_t old) {
  // Wrapping arithmetic: the edges are the point.
  uint64_t bits = static_cast<uint64_t>(old);
  switch (random() % 4) {
  case 0:
    return kEdgeIntegers[random() % std::size(kEdgeIntegers)];
  case 1:
    return static_cast<int64_t>(bits + 1);
  case 2:
    return static_cast<int64_t>(bits - 1);
  default:
    return static_cast<int64_t>(bits * 2);
  }
}

/// Every graph of the model: the main one and the bodies of If, Loop and
/// Scan nodes, however deep.
void collectGraphs(onnx::GraphProto &graph,
                   std::vector<onnx::GraphProto *> &graphs) {
  graphs.push_back(&graph);
  for (onnx::NodeProto &node : *graph.mutable_node())
    for (onnx::AttributeProto &attribute : *node.mutable_attribute()) {
      if (attribute.has_g())
        collectGraphs(*attribute.mutable_g(), graphs);
      for (onnx::GraphProto &body : *attribute.mutable_graphs())
        collectGraphs(body, graphs);
    }
}

/// The value names a node of `graph` may read.
std::vector<std::string> collectNames(const onnx::GraphProto &graph) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto &input : graph.input())
    names.push_back(input.name());
  for (const onnx::TensorProto &initializer : graph.initializer())
    names.push_back(initializer.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      names.push_back(output);
  names.push_back("");
  names.push_back("fuzz_undefined");
  return names;
}

void mutateTensor(Random &random, onnx::TensorProto &tensor) {
  switch (random() % 5) {
  case 0:
    if (tensor.dims_size())
      tensor.set_dims(pick(random, tensor.dims()),
                      pickInteger(random, tensor.dims(0)));
    else
      tensor.add_dims(pickInteger(random, 1));
    break;
  case 1:
    tensor.set_data_type(static_cast<int32_t>(random() % 24));
    break;
  case 2:
    if (tensor.dims_size())
      tensor.mutable_dims()->RemoveLast();
    else
      tensor.add_dims(0);
    break;
  case 3: {
    std::string &raw = *tensor.mutable_raw_data();
    if (raw.empty())
      raw.assign(1 + random() % 16, '\x7f');
    else
      raw.resize(random() % (raw.size() * 2 + 1));
    break;
  }
  default: {
    std::string &raw = *tensor.mutable_raw_data();
    if (!raw.empty())
      raw[random() % raw.size()] ^= static_cast<char>(1u << (random() % 8));
    else if (tensor.float_data_size())
      tensor.set_float_data(pick(random, tensor.float_data()),
                            std::numeric_limits<float>::infinity());
    else
      tensor.add_int64_data(pickInteger(random, 0));
    break;
  }
  }
}

void mutateType(Random &random, onnx::TypeProto &type) {
  if (!type.has_tensor_type()) {
    type.mutable_tensor_type()->set_elem_type(1);
    return;
  }
  onnx::TypeProto::Tensor &tensor = *type.mutable_tensor_type();
  onnx::TensorShapeProto &shape = *tensor.mutable_shape();
  switch (random() % 4) {
  case 0:
    tensor.set_elem_type(static_cast<int32_t>(random() % 24));
    break;
  case 1:
    if (shape.dim_size()) {
      onnx::TensorShapeProto::Dimension &dim =
          *shape.mutable_dim(pick(random, shape.dim()));
      if (random() % 3 == 0)
        dim.set_dim_param("fuzz_dim");
      else
        dim.set_dim_value(pickInteger(random, dim.dim_value()));
    } else {
      shape.add_dim()->set_dim_value(pickInteger(random, 1));
    }
    break;
  case 2:
    if (shape.dim_size())
      shape.mutable_dim()->RemoveLast();
    else
      tensor.clear_shape();
    break;
  default:
    shape.add_dim()->set_dim_value(pickInteger(random, 1));
    break;
  }
}

void mutateAttribute(Random &random, onnx::AttributeProto &attribute) {
  switch (random() % 6) {
  case 0:
    attribute.set_i(pickInteger(random, attribute.i()));
    break;
  case 1:
    if (attribute.ints_size())
      attribute.set_ints(pick(random, attribute.ints()),
                         pickInteger(random, attribute.ints(0)));
    else
      attribute.add_ints(pickInteger(random, 0));
    break;
  case 2:
    if (attribute.ints_size() && random() % 2)
      attribute.mutable_ints()->RemoveLast();
    else
      attribute.add_ints(pickInteger(random, 1));
    break;
  case 3:
    attribute.set_f(random() % 2 ? -attribute.f()
                                 : std::numeric_limits<float>::quiet_NaN());
    break;
  case 4:
    attribute.set_type(
        static_cast<onnx::AttributeProto::AttributeType>(random() % 15));
    break;
  default:
    if (attribute.has_t())
      mutateTensor(random, *attribute.mutable_t());
    else
      attribute.set_s(attribute.s() + "x");
    break;
  }
}

void mutateNode(Random &random, onnx::NodeProto &node,
                const std::vector<std::string> &names) {
  switch (random() % 8) {
  case 0:
    node.set_op_type(kOpTypes[random() % std::size(kOpTypes)]);
    break;
  case 1:
    if (node.input_size())
      node.set_input(pick(random, node.input()), names[pick(random, names)]);
    else
      node.add_input(names[pick(random, names)]);
    break;
  case 2:
    if (node.input_size() && random() % 2)
      node.mutable_input()->RemoveLast();
    else
      node.add_input(names[pick(random, names)]);
    break;
  case 3:
    if (node.output_size() && random() % 2)
      node.set_output(pick(random, node.output()), names[pick(random, names)]);
    else if (node.output_size())
      node.mutable_output()->RemoveLast();
    else
      node.add_output("fuzz_output");
    break;
  case 4:
    if (node.attribute_size())
      mutateAttribute(random,
                      *node.mutable_attribute(pick(random, node.attribute())));
    else
      node.add_attribute()->set_name("axis");
    break;
  case 5:
    if (node.attribute_size() && random() % 2)
      node.mutable_attribute()->DeleteSubrange(pick(random, node.attribute()),
                                               1);
    else if (node.attribute_size())
      node.mutable_attribute(pick(random, node.attribute()))
          ->mutable_name()
          ->append("_");
    break;
  case 6:
    node.set_domain(random() % 2 ? "com.microsoft"
                                 : "ai.onnx.preview.training");
    break;
  default:
    node.set_domain("");
    break;
  }
}

void mutateGraph(Random &random, onnx::GraphProto &graph) {
  std::vector<std::string> names = collectNames(graph);
  switch (random() % 10) {
  case 0:
  case 1:
  case 2:
    if (graph.node_size())
      mutateNode(random, *graph.mutable_node(pick(random, graph.node())),
                 names);
    break;
  case 3:
    if (graph.node_size())
      graph.mutable_node()->DeleteSubrange(pick(random, graph.node()), 1);
    break;
  case 4:
    if (graph.node_size()) {
      // A copy (same outputs: a redefinition) or a swap of two nodes.
      size_t i = pick(random, graph.node()), j = pick(random, graph.node());
      if (random() % 2)
        *graph.add_node() = graph.node(i);
      else
        graph.mutable_node()->SwapElements(static_cast<int>(i),
                                           static_cast<int>(j));
    }
    break;
  case 5:
    if (graph.initializer_size())
      mutateTensor(random, *graph.mutable_initializer(
                               pick(random, graph.initializer())));
    break;
  case 6: {
    auto *values =
        random() % 2 ? graph.mutable_input() : graph.mutable_output();
    if (!values->empty())
      mutateType(
          random,
          *(*values)[static_cast<int>(pick(random, *values))].mutable_type());
    break;
  }
  case 7:
    if (graph.output_size() && random() % 2)
      graph.mutable_output()->DeleteSubrange(pick(random, graph.output()), 1);
    else
      graph.add_output()->set_name(names[pick(random, names)]);
    break;
  case 8:
    if (graph.input_size() && random() % 2)
      graph.mutable_input()->DeleteSubrange(pick(random, graph.input()), 1);
    else if (graph.initializer_size())
      graph.mutable_initializer()->DeleteSubrange(
          pick(random, graph.initializer()), 1);
    break;
  default:
    if (graph.value_info_size())
      mutateType(random,
                 *graph.mutable_value_info(pick(random, graph.value_info()))
                      ->mutable_type());
    break;
  }
}

} // namespace

size_t amp::fuzz::mutateModel(uint8_t *data, size_t size, size_t maxSize,
                              unsigned seed) {
  Random random(seed);
  // One in eight mutations is libFuzzer's, on the bytes: protobuf's own
  // decoding has to meet damaged input too.
  onnx::ModelProto model;
  if (random() % 8 == 0 ||
      !model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph())
    return LLVMFuzzerMutate(data, size, maxSize);
  if (random() % 16 == 0 && model.opset_import_size()) {
    onnx::OperatorSetIdProto &opset =
        *model.mutable_opset_import(pick(random, model.opset_import()));
    opset.set_version(pickInteger(random, opset.version()));
  } else {
    std::vector<onnx::GraphProto *> graphs;
    collectGraphs(*model.mutable_graph(), graphs);
    mutateGraph(random, *graphs[pick(random, graphs)]);
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}
