//===- PrecisionOpInterface.cpp - What AMP passes ask an op ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Interfaces/PrecisionOpInterface.cpp.inc"

StringRef mlir::amp::stringifyPrecisionClass(PrecisionClass precisionClass) {
  switch (precisionClass) {
  case PrecisionClass::Always:
    return "always";
  case PrecisionClass::Follow:
    return "follow";
  case PrecisionClass::Infer:
    return "infer";
  case PrecisionClass::KeepFP32:
    return "keep-fp32";
  case PrecisionClass::NeverTouch:
    return "never-touch";
  }
  llvm_unreachable("unknown precision class");
}

std::optional<PrecisionClass>
mlir::amp::symbolizePrecisionClass(StringRef name) {
  return llvm::StringSwitch<std::optional<PrecisionClass>>(name)
      .Case("always", PrecisionClass::Always)
      .Case("follow", PrecisionClass::Follow)
      .Case("infer", PrecisionClass::Infer)
      .Case("keep-fp32", PrecisionClass::KeepFP32)
      .Case("never-touch", PrecisionClass::NeverTouch)
      .Default(std::nullopt);
}
