//===- NewerSchemas.h - Shape inference for ops newer than libonnx -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_ONNX_NEWERSCHEMAS_H
#define AMP_LIB_TARGET_ONNX_NEWERSCHEMAS_H

namespace mlir::onnxg {

/// Registers with libonnx the schemas (types, shape inference) of the
/// default-domain ops newer than it knows that amp-opt lowers: opset 23's
/// Attention, RotaryEmbedding and RMSNormalization; then
/// fixShapeInference(). For the shape-inference child only: the importer's
/// checks stay those of the installed ONNX.
void registerNewerSchemas();

/// Replaces the shape inference of the schemas libonnx 1.12 gets wrong
/// with the spec's: STFT-17's frame count (ONNX fixed it later),
/// AveragePool-19's dilations (AveragePool-11 ignores them) and Slice-1's
/// negative bounds (it types no dimension at one). For the
/// shape-inference and checker children.
void fixShapeInference();

} // namespace mlir::onnxg

#endif // AMP_LIB_TARGET_ONNX_NEWERSCHEMAS_H
