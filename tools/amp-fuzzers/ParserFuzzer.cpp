//===- ParserFuzzer.cpp - libFuzzer target for the dialects' syntax -------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// amp-parser-fuzzer: parses mutated MLIR text in the onnxg, amp and func
// dialects. What parses and verifies must print, and what prints must parse
// again: a module that does not is a bug in a parser, printer or verifier.
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"

#include "amp/Target/MLIRText.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  amp::fuzz::QuietContext context(amp::fuzz::getGraphRegistry());
  // MLIR's lexer stops at a NUL byte after the buffer, as files have.
  std::string text(reinterpret_cast<const char *>(data), size);
  // MLIR 22's parser crashes on a dense array of `index` elements (an
  // upstream bug, not one of the dialects', that a mutation of
  // `array<i64` reaches within seconds); the tools reject such text.
  if (!mlir::amp::findIndexDenseArray(text).empty())
    return 0;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return 0;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  if (!mlir::parseSourceString<mlir::ModuleOp>(printed, &context)) {
    llvm::errs() << "amp-parser-fuzzer: the printed module does not parse:\n"
                 << printed << "\n";
    __builtin_trap();
  }
  return 0;
}
