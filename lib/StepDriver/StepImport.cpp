//===- StepImport.cpp - Reading a training step ---------------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/StepDriver/StepGraph.h"

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "amp/Target/MLIRText.h"
#include "amp/Target/ONNX/Import.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace amprun;

/// Whether libonnx has a schema for `node`'s op type in its domain, and so
/// ONNX shape inference types its outputs (not ONNX Runtime's contrib ops,
/// nor its MaxPoolGrad and AveragePoolGrad in the default domain).
static bool hasOnnxSchema(const onnx::NodeProto &node) {
  return onnx::OpSchemaRegistry::Schema(node.op_type(),
                                        onnxg::isDefaultDomain(node.domain())
                                            ? ""
                                            : node.domain()) != nullptr;
}

/// Gives the symbolic dimensions of the model's inputs the sizes --dim
/// names and drops the value_info that ONNX shape inference recomputes, so
/// that it propagates static shapes. Returns the new bytes.
static std::string specializeDims(StringRef path, StringRef bytes,
                                  ArrayRef<std::string> dims) {
  llvm::StringMap<int64_t> sizes;
  for (StringRef spec : dims) {
    auto [name, text] = spec.split('=');
    int64_t size = 0;
    if (text.getAsInteger(10, size) || size < 1)
      fail("--dim expects name=N with N >= 1, got '" + spec + "'");
    sizes[name] = size;
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    fail(path + " is not a valid ONNX model");
  std::vector<std::string> missing;
  for (onnx::ValueInfoProto &input : *model.mutable_graph()->mutable_input()) {
    if (!input.type().has_tensor_type())
      continue;
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int i = 0; i < shape->dim_size(); ++i) {
      onnx::TensorShapeProto_Dimension *dim = shape->mutable_dim(i);
      if (dim->has_dim_value())
        continue;
      auto it = sizes.find(dim->dim_param());
      if (it == sizes.end()) {
        missing.push_back(
            "'" + input.name() + "' dimension " + std::to_string(i) +
            (dim->dim_param().empty() ? std::string(" (unnamed)")
                                      : " ('" + dim->dim_param() + "')"));
        continue;
      }
      dim->set_dim_value(it->second);
    }
  }
  if (!missing.empty())
    fail(Twine(toolName) + " needs static shapes; give the size of input " +
         llvm::join(missing, ", ") + " with --dim name=N");
  // ONNX shape inference types what ONNX's own ops compute again from the
  // static inputs; what ops without an ONNX schema compute (ONNX Runtime's
  // contrib and training ops) only the file types, so that value_info
  // stays.
  llvm::StringSet<> contribValues;
  for (const onnx::NodeProto &node : model.graph().node())
    if (!hasOnnxSchema(node))
      contribValues.insert(node.output().begin(), node.output().end());
  auto *valueInfo = model.mutable_graph()->mutable_value_info();
  valueInfo->erase(std::remove_if(valueInfo->begin(), valueInfo->end(),
                                  [&](const onnx::ValueInfoProto &info) {
                                    return !contribValues.contains(info.name());
                                  }),
                   valueInfo->end());
  auto specialize = [&](onnx::ValueInfoProto &value) {
    // A value without a shape has an unknown rank: mutable_shape() would
    // make it a scalar.
    if (!value.type().has_tensor_type() ||
        !value.type().tensor_type().has_shape())
      return;
    auto *shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (onnx::TensorShapeProto_Dimension &dim : *shape->mutable_dim()) {
      auto it = sizes.find(dim.dim_param());
      if (!dim.has_dim_value() && it != sizes.end())
        dim.set_dim_value(it->second);
    }
  };
  for (onnx::ValueInfoProto &info : *valueInfo)
    specialize(info);
  for (onnx::ValueInfoProto &output : *model.mutable_graph()->mutable_output())
    specialize(output);
  std::string result;
  model.SerializeToString(&result);
  return result;
}

OwningOpRef<ModuleOp> amprun::importStep(StringRef path,
                                         ArrayRef<std::string> dims,
                                         MLIRContext &context,
                                         llvm::SourceMgr &sourceMgr) {
  std::string errorMessage;
  auto input = openInputFile(path, &errorMessage);
  if (!input)
    fail(errorMessage);
  OwningOpRef<ModuleOp> module;
  if (onnxg::isOnnxInput(path, input->getBuffer())) {
    onnxg::ImportOptions options;
    std::string bytes = specializeDims(path, input->getBuffer(), dims);
    module = onnxg::importOnnxModel(bytes, path, &context, options);
  } else {
    if (succeeded(amp::checkParsableText(*input))) {
      sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
      module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    }
  }
  if (!module)
    fail("cannot read " + path);
  return module;
}

/// The one graph of `module`.
func::FuncOp amprun::getGraph(ModuleOp module, StringRef path) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1 || funcs[0].isExternal())
    fail(path + " must hold exactly one graph");
  return funcs[0];
}
