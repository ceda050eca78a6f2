//===- InlineFunctions.h - Inline an ONNX model's local functions -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_INLINEFUNCTIONS_H
#define AMP_LIB_TARGET_ONNX_INLINEFUNCTIONS_H

#include "onnx/onnx_pb.h"

#include <string>

namespace mlir::onnxg {

/// Replaces every call of one of `model`'s local functions
/// (ModelProto.functions: torch.onnx's export_modules_as_functions,
/// onnxscript) by the function's nodes, recursively, and drops the
/// functions. Values inside a call are renamed `<call>/<name>` (made
/// unique); attributes referenced by `ref_attr_name` take the call's
/// values. Returns "" on success, else why the model cannot be inlined.
std::string inlineLocalFunctions(onnx::ModelProto &model);

} // namespace mlir::onnxg

#endif // AMP_LIB_TARGET_ONNX_INLINEFUNCTIONS_H
