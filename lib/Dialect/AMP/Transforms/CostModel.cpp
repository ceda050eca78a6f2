//===- CostModel.cpp - Roofline time of ops per precision -----------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/CostModel.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::amp;

// Vendor data sheets, dense rates (SXM parts): NVIDIA H100 (2022), A100
// (2020), V100 (2017). Launch costs are typical measured CUDA launch
// overheads.
static const DeviceProfile kDeviceProfiles[] = {
    {"h100", 67e12, 134e12, 989e12, 989e12, 1979e12, 3.35e12, 3.0},
    {"a100", 19.5e12, 78e12, 312e12, 312e12, 0, 2.039e12, 3.0},
    {"v100", 15.7e12, 31.4e12, 125e12, 0, 0, 0.9e12, 4.0},
};

ArrayRef<DeviceProfile> mlir::amp::getDeviceProfiles() {
  return kDeviceProfiles;
}

const DeviceProfile *mlir::amp::lookupDeviceProfile(StringRef name) {
  const auto *it = llvm::find_if(kDeviceProfiles, [&](const auto &profile) {
    return profile.name == name;
  });
  return it == std::end(kDeviceProfiles) ? nullptr : it;
}

const DeviceProfile *
mlir::amp::lookupDeviceProfile(StringRef name, Operation *op, StringRef who) {
  const DeviceProfile *profile = lookupDeviceProfile(name);
  if (!profile)
    emitError(op->getLoc()) << who << ": unknown device '" << name
                            << "'; expected h100, a100 or v100";
  return profile;
}

/// Dimension sizes from `default-dim-size` and `dim` entries; null after an
/// error at `op` naming `who` and the bad entry.
static std::optional<DimSizes> parseDimSizes(int64_t defaultSize,
                                             ArrayRef<std::string> named,
                                             Operation *op, StringRef who) {
  if (defaultSize < 1) {
    emitError(op->getLoc())
        << who << ": default-dim-size must be positive, not " << defaultSize;
    return std::nullopt;
  }
  llvm::StringMap<int64_t> sizes;
  for (StringRef entry : named) {
    auto [name, size] = entry.rsplit(':');
    int64_t value = 0;
    if (name.empty() || size.getAsInteger(10, value) || value < 1) {
      emitError(op->getLoc())
          << who << ": bad dim '" << entry
          << "'; expected <name>:<size> with a positive size";
      return std::nullopt;
    }
    sizes[name] = value;
  }
  return DimSizes(defaultSize, std::move(sizes), onnxg::getDimName);
}

std::optional<CostModel> CostModel::create(StringRef device, StringRef casts,
                                           int64_t defaultDimSize,
                                           ArrayRef<std::string> dims,
                                           Operation *op, StringRef who) {
  const DeviceProfile *profile = lookupDeviceProfile(device, op, who);
  if (!profile)
    return std::nullopt;
  if (casts != "fused" && casts != "kernels") {
    emitError(op->getLoc()) << who << ": unknown casts '" << casts
                            << "'; expected fused or kernels";
    return std::nullopt;
  }
  std::optional<DimSizes> sizes = parseDimSizes(defaultDimSize, dims, op, who);
  if (!sizes)
    return std::nullopt;
  return CostModel(*profile, std::move(*sizes),
                   casts == "fused" ? CastKernels::Fused
                                    : CastKernels::Separate);
}

FloatType mlir::amp::parseLowPrecision(MLIRContext *context, StringRef name) {
  if (name == "fp16")
    return Float16Type::get(context);
  if (name == "bf16")
    return BFloat16Type::get(context);
  return {};
}

bool CostModel::supports(FloatType type) const {
  if (type.isBF16())
    return device.bf16TensorFlops > 0;
  if (type.getWidth() == 8)
    return device.fp8TensorFlops > 0;
  return true;
}

double CostModel::getPeakFlops(PrecisionOpInterface op, FloatType type) const {
  if (type.isF32() || type.isF64())
    return device.fp32Flops;
  if (op.getPrecisionClass() != PrecisionClass::Always)
    return device.vectorFlops;
  if (type.isBF16())
    return device.bf16TensorFlops;
  if (type.getWidth() == 8)
    return device.fp8TensorFlops;
  return device.fp16TensorFlops;
}

double CostModel::getOpTimeUs(PrecisionOpInterface op, FloatType type) {
  // An ONNX Constant launches no kernel: runtimes keep it as an initializer.
  if (onnxg::isConstantNode(op))
    return 0;
  double flops = op.estimateFlops(sizes);
  double bytes = op.estimateBytes(sizes, type.getWidth());
  double peak = getPeakFlops(op, type);
  double computeUs = peak > 0 ? flops / peak * 1e6 : 0;
  double memoryUs = bytes / device.bytesPerSecond * 1e6;
  return std::max(computeUs, memoryUs) + device.launchUs;
}

double CostModel::getOtherOpTimeUs(Operation *op, double flops, bool fp8) {
  double bytes = 0;
  for (Value operand : op->getOperands())
    bytes += sizes.getBytes(operand);
  for (Value result : op->getResults())
    bytes += sizes.getBytes(result);
  double peak = fp8 ? device.fp8TensorFlops : device.fp32Flops;
  double computeUs = peak > 0 ? flops / peak * 1e6 : 0;
  return std::max(computeUs, bytes / device.bytesPerSecond * 1e6) +
         device.launchUs;
}

double CostModel::getCastTimeUs(Value value, FloatType type) {
  return getCastTimeUs(
      value, cast<FloatType>(getElementTypeOrSelf(value.getType())), type);
}

double CostModel::getCastTimeUs(Value value, FloatType from, FloatType to) {
  double bytes = sizes.getBytes(value, from.getWidth()) +
                 sizes.getBytes(value, to.getWidth());
  double us = bytes / device.bytesPerSecond * 1e6;
  return hasFusedCasts() ? us : us + device.launchUs;
}

double CostModel::getFP8GemmTimeUs(PrecisionOpInterface op,
                                   FloatType outputType) {
  if (device.fp8TensorFlops <= 0)
    return 0;
  double flops = op.estimateFlops(sizes);
  // Data slots at one byte, the result at its own width.
  double bytes = op.estimateBytes(sizes, 8);
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    if (op.isPrecisionDataResult(index))
      bytes += sizes.getBytes(result, outputType.getWidth()) -
               sizes.getBytes(result, 8);
  double computeUs = flops / device.fp8TensorFlops * 1e6;
  double memoryUs = bytes / device.bytesPerSecond * 1e6;
  return std::max(computeUs, memoryUs) + device.launchUs;
}

double CostModel::getQuantizeTimeUs(Value value, bool amaxPass, bool fused) {
  auto type = cast<FloatType>(getElementTypeOrSelf(value.getType()));
  double read = sizes.getBytes(value, type.getWidth());
  double bytes = read + sizes.getBytes(value, 8);
  double us = bytes / device.bytesPerSecond * 1e6;
  if (amaxPass)
    return us + read / device.bytesPerSecond * 1e6 + 2 * device.launchUs;
  // With casts=fused, a graph input's quantization runs with the step's
  // other independent casts.
  return fused || hasFusedCasts() ? us : us + device.launchUs;
}

CostModel::Comparison
CostModel::compare(PrecisionOpInterface op, FloatType low,
                   llvm::function_ref<bool(Value)> isLow,
                   llvm::function_ref<bool(Value)> readInFP32) {
  Comparison result{getOpTimeUs(op, Float32Type::get(op->getContext())),
                    getOpTimeUs(op, low), 0};
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    if (!op.isPrecisionDataOperand(index))
      continue;
    auto type = cast<FloatType>(getElementTypeOrSelf(operand.getType()));
    bool alreadyLow = isLow ? isLow(operand) : type == low;
    if (!alreadyLow)
      result.lowCastUs += getCastTimeUs(operand, low);
    else
      result.fp32Us +=
          getCastTimeUs(operand, Float32Type::get(op->getContext()));
  }
  if (readInFP32)
    for (auto [index, value] : llvm::enumerate(op->getResults()))
      if (op.isPrecisionDataResult(index) && readInFP32(value))
        result.lowCastUs += getCastTimeUs(value, low);
  return result;
}
