//===- StepImport.cpp - Reading a training step ---------------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/StepDriver/StepGraph.h"

#include "amp/Target/ONNX/Import.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace amprun;

/// Gives the symbolic dimensions of the model's inputs the sizes --dim
/// names and drops the inferred value_info, so that the importer's ONNX
/// shape inference propagates static shapes. Returns the new bytes.
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
  model.mutable_graph()->clear_value_info();
  for (onnx::ValueInfoProto &output :
       *model.mutable_graph()->mutable_output()) {
    // An output without a shape has an unknown rank: mutable_shape() would
    // make it a scalar.
    if (!output.type().has_tensor_type() ||
        !output.type().tensor_type().has_shape())
      continue;
    auto *shape = output.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (onnx::TensorShapeProto_Dimension &dim : *shape->mutable_dim()) {
      auto it = sizes.find(dim.dim_param());
      if (!dim.has_dim_value() && it != sizes.end())
        dim.set_dim_value(it->second);
    }
  }
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
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
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
