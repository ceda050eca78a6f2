//===- amp-translate.cpp - ONNX <-> MLIR translation tool -------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// mlir-translate for ONNX: --import-onnx and --export-onnx.
//
//===----------------------------------------------------------------------===//

#include "amp/Target/ONNX/Export.h"
#include "amp/Target/ONNX/Import.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::onnxg::registerImportOnnxTranslation();
  mlir::onnxg::registerExportOnnxTranslation();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "amp-translate: ONNX <-> MLIR translation"));
}
