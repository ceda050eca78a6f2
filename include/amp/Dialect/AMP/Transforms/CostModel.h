//===- CostModel.h - Roofline time of ops per precision ---------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// A roofline cost model over device profiles (docs/CostModel.md): an op
// takes max(FLOPs / peak, bytes / bandwidth) plus a kernel launch; a cast
// costs its memory traffic, inside a neighbouring kernel (`casts=fused`) or
// as a kernel of its own (`casts=kernels`). An op goes low precision only
// when its time in low precision, with the casts its inputs need, is lower
// than in FP32.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_COSTMODEL_H
#define AMP_DIALECT_AMP_TRANSFORMS_COSTMODEL_H

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::amp {

/// Peak rates of one GPU (dense, no sparsity). A rate of 0: the precision is
/// not supported.
struct DeviceProfile {
  llvm::StringLiteral name;
  double fp32Flops;   ///< FP32 without tensor cores (no TF32).
  double vectorFlops; ///< FP16/BF16 without tensor cores.
  double fp16TensorFlops;
  double bf16TensorFlops;
  double fp8TensorFlops;
  double bytesPerSecond; ///< memory bandwidth
  double launchUs;       ///< cost of one kernel launch
};

llvm::ArrayRef<DeviceProfile> getDeviceProfiles();
/// The profile named `name` (h100, a100, v100), or null.
const DeviceProfile *lookupDeviceProfile(llvm::StringRef name);
/// The same, or null after an error at `op` that `who` (a pass name) does not
/// know the device.
const DeviceProfile *lookupDeviceProfile(llvm::StringRef name, Operation *op,
                                         llvm::StringRef who);

/// The type of a low-precision option value ("fp16", "bf16"), or null.
FloatType parseLowPrecision(MLIRContext *context, llvm::StringRef name);

/// How a cast runs: inside a neighbouring kernel (the producer's epilogue,
/// a reader's prologue, or with the step's other independent casts, as
/// amp-compile's CUDA backend fuses it) or as a kernel of its own (ONNX
/// Runtime runs each Cast node as one).
enum class CastKernels { Fused, Separate };

class CostModel {
public:
  CostModel(const DeviceProfile &device, DimSizes sizes,
            CastKernels casts = CastKernels::Fused)
      : device(device), sizes(std::move(sizes)), casts(casts) {}

  /// The cost model a pass's options describe: the profile named `device`,
  /// how casts run (`casts`: fused or kernels), and dimension sizes from
  /// `default-dim-size` and the `dim` entries `<name>:<size>` for ONNX
  /// symbolic dimensions. Null after an error at `op` naming `who` (a pass
  /// name) and the bad option.
  static std::optional<CostModel>
  create(llvm::StringRef device, llvm::StringRef casts, int64_t defaultDimSize,
         llvm::ArrayRef<std::string> dims, Operation *op, llvm::StringRef who);

  /// The dimension sizes estimates use; they record which were guessed.
  DimSizes &getSizes() { return sizes; }

  /// Whether the device computes in `type` at all (bf16 on V100: no).
  bool supports(FloatType type) const;

  /// Modeled microseconds of `op` with its float data in `type`. Always ops
  /// run on tensor cores in low precision; others on the vector units.
  double getOpTimeUs(PrecisionOpInterface op, FloatType type);
  /// Whether casts run inside neighbouring kernels (`casts=fused`).
  bool hasFusedCasts() const { return casts == CastKernels::Fused; }

  /// Microseconds of converting `value` to `type`: its memory traffic, plus
  /// a launch with `casts=kernels`.
  double getCastTimeUs(Value value, FloatType type);
  /// The same for `value` held in `from`, whatever its type is now.
  double getCastTimeUs(Value value, FloatType from, FloatType to);

  /// Microseconds of `op` (a GEMM) on FP8 operands on the FP8 tensor cores,
  /// writing its result in `outputType`; 0 when the device has no FP8.
  double getFP8GemmTimeUs(PrecisionOpInterface op, FloatType outputType);
  /// Microseconds of quantizing `value` to an 8-bit type: a pass that reads
  /// it, records its amax and writes one byte per element. `fused`: the
  /// pass is the epilogue of the value's producer (no launch of its own, as
  /// Transformer Engine fuses the cast into LayerNorm, GELU, ...; with
  /// `casts=fused` a graph input's too, with the other casts); with
  /// `amaxPass` (current scaling) a launched kernel reads the value for its
  /// amax first, and the cast cannot be fused.
  double getQuantizeTimeUs(Value value, bool amaxPass, bool fused);

  /// Microseconds of an op the interface does not describe: `flops` on the
  /// FP8 tensor cores (`fp8`) or at the FP32 rate, its operands and results
  /// read and written at their own width.
  double getOtherOpTimeUs(Operation *op, double flops, bool fp8);

  /// FP32 against low precision for one op. `isLow` says which inputs are
  /// already low precision (by their type when null); `readInFP32` which
  /// data results some user will read in FP32 (none when null).
  struct Comparison {
    double fp32Us;    ///< the op in FP32, with casts up of low inputs
    double lowUs;     ///< the op in low precision...
    double lowCastUs; ///< ...plus casts down of its FP32 data inputs and up
                      ///< of results read in FP32
    bool prefersLow() const { return lowUs + lowCastUs < fp32Us; }
  };
  Comparison compare(PrecisionOpInterface op, FloatType low,
                     llvm::function_ref<bool(Value)> isLow = nullptr,
                     llvm::function_ref<bool(Value)> readInFP32 = nullptr);

private:
  double getPeakFlops(PrecisionOpInterface op, FloatType type) const;

  const DeviceProfile &device;
  DimSizes sizes;
  CastKernels casts;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_COSTMODEL_H
