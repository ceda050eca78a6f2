//===- ModelMutator.h - Structure-aware mutations of ONNX models -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The custom mutator the ONNX fuzz targets share: it parses the input as a
// ModelProto and changes one thing a model is made of (a node's op type,
// inputs or attributes, a tensor's shape or bytes, a declared type, the
// graph's inputs and outputs, an opset), so that most mutants still parse
// and reach the importer's checks instead of dying in protobuf.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TOOLS_AMP_FUZZERS_MODELMUTATOR_H
#define AMP_TOOLS_AMP_FUZZERS_MODELMUTATOR_H

#include <cstddef>
#include <cstdint>

namespace amp::fuzz {

/// Mutates the serialized model in `data` (`size` bytes, room for
/// `maxSize`) in place and returns its new size. An input that is not a
/// model, or a mutant that would not fit, gets libFuzzer's byte mutations.
size_t mutateModel(uint8_t *data, size_t size, size_t maxSize, unsigned seed);

} // namespace amp::fuzz

#endif // AMP_TOOLS_AMP_FUZZERS_MODELMUTATOR_H
