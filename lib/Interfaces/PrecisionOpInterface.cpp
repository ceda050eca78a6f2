//===- PrecisionOpInterface.cpp - What AMP passes ask an op ---------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Interfaces/PrecisionOpInterface.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Interfaces/PrecisionClass.cpp.inc"
#include "amp/Interfaces/PrecisionOpInterface.cpp.inc"
