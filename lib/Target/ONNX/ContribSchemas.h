//===- ContribSchemas.h - Types of ONNX Runtime's contrib ops ---*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_CONTRIBSCHEMAS_H
#define AMP_LIB_TARGET_ONNX_CONTRIBSCHEMAS_H

namespace onnx {
class ModelProto;
} // namespace onnx

namespace mlir::onnxg {

/// Registers with libonnx a schema per ONNX Runtime contrib op of the op
/// table (and ONNX Runtime's default-domain AveragePoolGrad and
/// MaxPoolGrad) that types its outputs as ONNX Runtime does, so that ONNX
/// shape inference types graphs written without value_info. The schemas
/// accept any inputs and attributes. For the shape-inference child only.
void registerContribSchemas();

/// Gives ONNX Runtime's pooling gradients (MaxPoolGrad, AveragePoolGrad)
/// whose dX shape inference left without sizes the type of their forward
/// pool's X: MaxPool's whose Indices the gradient reads, or the
/// AveragePool's with the gradient's attributes and dY's shape at its
/// output, when all such agree. Returns whether it typed one (then shape
/// inference should run again, for what dX feeds).
bool typePoolingGradients(onnx::ModelProto &model);

/// Gives PyTorch's gradients (ATen nodes) whose sizes are an input the
/// graph computes from static shapes (ORTModule's Shape, Gather and Slice)
/// those sizes: embedding_backward [num_weights, D],
/// value_selecting_reduction_backward and upsample_nearest*_backward their
/// input's. Returns whether it typed one.
bool typeATenGradients(onnx::ModelProto &model);

} // namespace mlir::onnxg

#endif // AMP_LIB_TARGET_ONNX_CONTRIBSCHEMAS_H
