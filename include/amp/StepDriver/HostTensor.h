//===- HostTensor.h - Host buffers amp-run feeds a step ---------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// A dense, row-major host tensor of any element type the lowering handles,
// its memref descriptor for the JIT-compiled step, element access as
// double, seeded random filling, and .npy files.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_STEPDRIVER_HOSTTENSOR_H
#define AMP_STEPDRIVER_HOSTTENSOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace amprun {

/// What `value` prints as.
template <typename T>
std::string printToString(const T &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  return text;
}

/// A dense host tensor with the layout of a statically shaped memref.
class HostTensor {
public:
  explicit HostTensor(mlir::RankedTensorType type);

  mlir::RankedTensorType getType() const { return type; }
  int64_t getNumElements() const { return type.getNumElements(); }
  /// Bytes per element (i1 takes one byte, as in a memref).
  unsigned getElementBytes() const { return elementBytes; }
  char *data() { return bytes.data(); }
  const char *data() const { return bytes.data(); }
  size_t size() const { return bytes.size(); }

  /// Element `i` as a double (floats of any width, integers, i1).
  double get(int64_t i) const;
  /// Sets element `i`, rounding to the element type.
  void set(int64_t i, double value);

  /// Copies an elements attribute (dense or resource blob) of this type.
  llvm::Error assign(mlir::ElementsAttr value);
  /// Copies another tensor of the same type.
  llvm::Error assign(const HostTensor &other);

  /// The memref descriptor (allocated, aligned, offset, sizes, strides)
  /// that a `_mlir_ciface_` function takes a pointer to: of this tensor's
  /// bytes, or of a copy of them at `copy` (a device buffer).
  void *getDescriptor(void *copy = nullptr);

  /// Writes the tensor as a .npy file.
  llvm::Error writeNpy(llvm::StringRef path) const;
  /// Reads a .npy file of this tensor's shape and element type.
  llvm::Error readNpy(llvm::StringRef path);
  /// Reads the contents of a .npy file; `what` names it in errors.
  llvm::Error parseNpy(llvm::StringRef contents, llvm::StringRef what);

private:
  mlir::RankedTensorType type;
  unsigned elementBytes;
  std::vector<char> bytes;
  std::vector<int64_t> descriptor;
};

/// The arrays of an .npz archive (numpy.savez: an uncompressed zip of .npy
/// files), by name without ".npy", as .npy file contents.
llvm::Expected<std::vector<std::pair<std::string, std::string>>>
readNpz(llvm::StringRef path);

} // namespace amprun

#endif // AMP_STEPDRIVER_HOSTTENSOR_H
