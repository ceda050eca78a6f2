//===- HostTensor.cpp - Host buffers amp-run feeds a step -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/StepDriver/HostTensor.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <optional>

using namespace mlir;
using namespace amprun;

HostTensor::HostTensor(RankedTensorType type) : type(type) {
  unsigned bits = type.getElementTypeBitWidth();
  elementBytes = bits < 8 ? 1 : bits / 8;
  bytes.assign(size_t(type.getNumElements()) * elementBytes, 0);
}

double HostTensor::get(int64_t i) const {
  const char *at = bytes.data() + i * elementBytes;
  Type element = type.getElementType();
  if (element.isF32()) { // the common case (parameters), without APFloat
    float value;
    std::memcpy(&value, at, sizeof(value));
    return value;
  }
  uint64_t raw = 0;
  std::memcpy(&raw, at, elementBytes);
  if (auto floatType = dyn_cast<FloatType>(element)) {
    APFloat value(floatType.getFloatSemantics(),
                  APInt(floatType.getWidth(), raw));
    bool lost = false;
    value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return value.convertToDouble();
  }
  unsigned width = element.getIntOrFloatBitWidth();
  if (width == 1)
    return raw & 1;
  if (element.isUnsignedInteger())
    return double(raw);
  return double(APInt(elementBytes * 8, raw).getSExtValue());
}

void HostTensor::set(int64_t i, double value) {
  char *at = bytes.data() + i * elementBytes;
  Type element = type.getElementType();
  if (element.isF32()) { // rounds to nearest even, as APFloat would
    float rounded = float(value);
    std::memcpy(at, &rounded, sizeof(rounded));
    return;
  }
  uint64_t raw = 0;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    APFloat converted(value);
    bool lost = false;
    converted.convert(floatType.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &lost);
    raw = converted.bitcastToAPInt().getZExtValue();
  } else if (element.getIntOrFloatBitWidth() == 1) {
    raw = value != 0;
  } else {
    raw = uint64_t(int64_t(value));
  }
  std::memcpy(at, &raw, elementBytes);
}

llvm::Error HostTensor::assign(ElementsAttr value) {
  if (value.getType() != type)
    return llvm::createStringError(
        "initial value of type " + printToString(value.getType()) +
        " for a tensor of type " + printToString(type));
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != bytes.size())
      return llvm::createStringError("resource blob of the wrong size");
    std::memcpy(bytes.data(), blob->getData().data(), bytes.size());
    return llvm::Error::success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return llvm::createStringError("unsupported initial value");
  int64_t i = 0;
  if (isa<FloatType>(type.getElementType())) {
    for (const APFloat &element : dense.getValues<APFloat>()) {
      uint64_t raw = element.bitcastToAPInt().getZExtValue();
      std::memcpy(bytes.data() + i++ * elementBytes, &raw, elementBytes);
    }
  } else {
    for (const APInt &element : dense.getValues<APInt>()) {
      uint64_t raw = element.getZExtValue();
      std::memcpy(bytes.data() + i++ * elementBytes, &raw, elementBytes);
    }
  }
  return llvm::Error::success();
}

llvm::Error HostTensor::assign(const HostTensor &other) {
  if (other.type != type)
    return llvm::createStringError("cannot copy " + printToString(other.type) +
                                   " into " + printToString(type));
  std::memcpy(bytes.data(), other.bytes.data(), bytes.size());
  return llvm::Error::success();
}

void *HostTensor::getDescriptor(void *copy) {
  int64_t rank = type.getRank();
  descriptor.assign(3 + 2 * rank, 0);
  auto pointer = reinterpret_cast<int64_t>(copy ? copy : bytes.data());
  descriptor[0] = pointer;
  descriptor[1] = pointer;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    descriptor[3 + i] = type.getDimSize(i);
    descriptor[3 + rank + i] = stride;
    stride *= type.getDimSize(i);
  }
  return descriptor.data();
}

/// numpy's name for an element type, or "" when it has none.
static std::string getNpyDescr(Type element) {
  if (element.isF32())
    return "<f4";
  if (element.isF16())
    return "<f2";
  if (element.isF64())
    return "<f8";
  if (element.isInteger(1))
    return "|b1";
  if (auto intType = dyn_cast<IntegerType>(element)) {
    std::string kind = intType.isUnsigned() ? "u" : "i";
    unsigned bytes = intType.getWidth() / 8;
    return (bytes == 1 ? "|" : "<") + kind + std::to_string(bytes);
  }
  return "";
}

/// numpy's spelling of the shape of `type`: "(2, 4)", "(8,)" or "()".
static std::string formatNpyShape(RankedTensorType type) {
  std::string shape = "(";
  for (int64_t size : type.getShape())
    shape += std::to_string(size) + ", ";
  if (type.getRank() == 1)
    shape.pop_back();
  else if (type.getRank() > 1)
    shape.resize(shape.size() - 2);
  return shape + ")";
}

llvm::Error HostTensor::writeNpy(llvm::StringRef path) const {
  std::string descr = getNpyDescr(type.getElementType());
  if (descr.empty()) // bf16 and FP8 have no numpy type: widen to f32.
    descr = "<f4";
  std::string shape = formatNpyShape(type);
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return llvm::createStringError(error, "cannot write " + path);
  os << "\x93NUMPY" << char(1) << char(0);
  uint16_t length = header.size();
  os.write(reinterpret_cast<const char *>(&length), 2);
  os << header;
  if (getNpyDescr(type.getElementType()).empty()) {
    for (int64_t i = 0; i < getNumElements(); ++i) {
      float value = get(i);
      os.write(reinterpret_cast<const char *>(&value), 4);
    }
  } else {
    os.write(bytes.data(), bytes.size());
  }
  return llvm::Error::success();
}

llvm::Error HostTensor::readNpy(llvm::StringRef path) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return llvm::createStringError(file.getError(), "cannot read " + path);
  return parseNpy((*file)->getBuffer(), path);
}

llvm::Error HostTensor::parseNpy(llvm::StringRef contents,
                                 llvm::StringRef path) {
  if (!contents.starts_with("\x93NUMPY") || contents.size() < 10)
    return llvm::createStringError(path + " is not a .npy file");
  unsigned major = contents[6];
  size_t lengthBytes = major == 1 ? 2 : 4;
  uint32_t length = 0;
  std::memcpy(&length, contents.data() + 8, lengthBytes);
  size_t start = 8 + lengthBytes + length;
  if (start > contents.size())
    return llvm::createStringError(path + ": truncated header");
  llvm::StringRef header = contents.slice(8 + lengthBytes, start);
  // bf16 and FP8 have no numpy type: read f32, as writeNpy writes them.
  bool widened = getNpyDescr(type.getElementType()).empty();
  std::string descr = widened ? "<f4" : getNpyDescr(type.getElementType());
  if (!header.contains("'descr': '" + descr + "'"))
    return llvm::createStringError(path + ": expected element type " + descr +
                                   " (" + printToString(type) + ")");
  size_t shapeAt = header.find("'shape': ");
  if (shapeAt != llvm::StringRef::npos) {
    llvm::StringRef shape = header.drop_front(shapeAt + 9);
    shape = shape.take_until([](char c) { return c == ')'; });
    std::string expected = formatNpyShape(type);
    if ((shape + ")").str() != expected)
      return llvm::createStringError(path + ": has shape " + shape + "), '" +
                                     printToString(type) + "' needs " +
                                     expected);
  }
  if (header.contains("'fortran_order': True"))
    return llvm::createStringError(path + ": Fortran order is not supported");
  size_t dataBytes = widened ? getNumElements() * sizeof(float) : bytes.size();
  if (contents.size() - start != dataBytes)
    return llvm::createStringError(path + ": holds " +
                                   std::to_string(contents.size() - start) +
                                   " bytes of data, " + printToString(type) +
                                   " needs " + std::to_string(dataBytes));
  if (!widened) {
    std::memcpy(bytes.data(), contents.data() + start, bytes.size());
    return llvm::Error::success();
  }
  for (int64_t i = 0; i < getNumElements(); ++i) {
    float value;
    std::memcpy(&value, contents.data() + start + i * sizeof(float),
                sizeof(float));
    set(i, value);
  }
  return llvm::Error::success();
}

/// The little-endian integer of `size` bytes at `offset`, or nullopt past
/// the end.
static std::optional<uint64_t> readLittleEndian(llvm::StringRef bytes,
                                                size_t offset, size_t size) {
  if (offset + size > bytes.size())
    return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |= uint64_t(uint8_t(bytes[offset + i])) << (8 * i);
  return value;
}

llvm::Expected<std::vector<std::pair<std::string, std::string>>>
amprun::readNpz(llvm::StringRef path) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return llvm::createStringError(file.getError(), "cannot read " + path);
  llvm::StringRef zip = (*file)->getBuffer();
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError(path + ": " + why);
  };
  // The end-of-central-directory record: the last "PK\5\6".
  size_t end = zip.rfind(llvm::StringRef("PK\x05\x06", 4));
  if (end == llvm::StringRef::npos)
    return bad("not an .npz file (no zip directory)");
  auto entries = readLittleEndian(zip, end + 10, 2);
  auto directory = readLittleEndian(zip, end + 16, 4);
  if (!entries || !directory)
    return bad("truncated zip directory");
  if (*directory == 0xFFFFFFFF)
    return bad("zip64 archives (over 4 GiB) are not supported");
  std::vector<std::pair<std::string, std::string>> arrays;
  size_t at = *directory;
  for (uint64_t i = 0; i < *entries; ++i) {
    if (zip.substr(at, 4) != llvm::StringRef("PK\x01\x02", 4))
      return bad("corrupt zip directory");
    auto method = readLittleEndian(zip, at + 10, 2);
    auto size = readLittleEndian(zip, at + 24, 4);
    auto nameLength = readLittleEndian(zip, at + 28, 2);
    auto extraLength = readLittleEndian(zip, at + 30, 2);
    auto commentLength = readLittleEndian(zip, at + 32, 2);
    auto local = readLittleEndian(zip, at + 42, 4);
    if (!method || !size || !nameLength || !extraLength || !commentLength ||
        !local)
      return bad("truncated zip directory");
    std::string name = zip.substr(at + 46, *nameLength).str();
    if (*method != 0)
      return bad("'" + name +
                 "' is compressed (numpy.savez_compressed); write the "
                 "parameters with numpy.savez");
    // Sizes that do not fit 32 bits are in the zip64 extra field (0x0001):
    // uncompressed size, then the local header offset.
    llvm::StringRef extra = zip.substr(at + 46 + *nameLength, *extraLength);
    for (size_t e = 0; e + 4 <= extra.size();) {
      uint64_t id = *readLittleEndian(extra, e, 2);
      uint64_t length = *readLittleEndian(extra, e + 2, 2);
      if (id == 1) {
        size_t field = e + 4;
        if (*size == 0xFFFFFFFF) {
          size = readLittleEndian(extra, field, 8);
          field += 16; // the compressed size follows: the same when stored
        }
        if (*local == 0xFFFFFFFF)
          local = readLittleEndian(extra, field, 8);
      }
      e += 4 + length;
    }
    auto localName = readLittleEndian(zip, *local + 26, 2);
    auto localExtra = readLittleEndian(zip, *local + 28, 2);
    if (!size || !local || !localName || !localExtra)
      return bad("corrupt zip entry '" + name + "'");
    size_t data = *local + 30 + *localName + *localExtra;
    if (data + *size > zip.size())
      return bad("truncated entry '" + name + "'");
    llvm::StringRef stem = name;
    if (!stem.consume_back(".npy"))
      return bad("'" + name + "' is not an .npy array");
    arrays.emplace_back(stem.str(), zip.substr(data, *size).str());
    at += 46 + *nameLength + *extraLength + *commentLength;
  }
  return arrays;
}
