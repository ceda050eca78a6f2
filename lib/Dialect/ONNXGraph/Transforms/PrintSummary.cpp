//===- PrintSummary.cpp - Summarize an imported ONNX graph ------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// Prints what a user checks first after an import: sizes, I/O and op counts.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"
#include "amp/Dialect/ONNXGraph/IR/OpTable.h"
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"

namespace mlir::onnxg {
#define GEN_PASS_DEF_ONNXGRAPHPRINTSUMMARY
#include "amp/Dialect/ONNXGraph/Transforms/Passes.h.inc"
} // namespace mlir::onnxg

using namespace mlir;
using namespace mlir::onnxg;

/// Bytes a tensor's data takes (0 when unknown).
static uint64_t getTensorBytes(ElementsAttr value) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      return blob->getData().size();
  auto type = cast<ShapedType>(value.getType());
  if (!type.getElementType().isIntOrFloat())
    return 0;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// "1.5 MiB"-style size.
static std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB"};
  double size = bytes;
  unsigned unit = 0;
  while (size >= 1024 && unit < 3) {
    size /= 1024;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format(unit ? "%.1f %s" : "%.0f %s", size, units[unit]);
  return text;
}

namespace {
struct PrintSummaryPass
    : onnxg::impl::ONNXGraphPrintSummaryBase<PrintSummaryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::raw_ostream &os = llvm::errs();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      auto graphName =
          func->getAttrOfType<StringAttr>(ONNXGraphDialect::kGraphNameAttrName);
      os << "graph '" << (graphName ? graphName.getValue() : func.getName())
         << "'";
      if (auto ir = module->getAttrOfType<IntegerAttr>("onnxg.ir_version"))
        os << ", IR version " << ir.getInt();
      if (auto opsets =
              module->getAttrOfType<ArrayAttr>("onnxg.opset_imports")) {
        os << ", opsets:";
        for (Attribute entry : opsets) {
          auto pair = cast<ArrayAttr>(entry);
          StringRef domain = cast<StringAttr>(pair[0]).getValue();
          os << " " << (domain.empty() ? "ai.onnx" : domain) << "="
             << cast<IntegerAttr>(pair[1]).getInt();
        }
      }
      os << "\n";

      unsigned numWithValue = 0;
      uint64_t inputBytes = 0;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        if (auto init = func.getArgAttrOfType<ElementsAttr>(
                i, ONNXGraphDialect::kInitializerAttrName)) {
          ++numWithValue;
          inputBytes += getTensorBytes(init);
        }
      }
      unsigned numInitializers = 0;
      uint64_t initBytes = 0;
      // Per op type: the count, and the precision class of its first op.
      llvm::MapVector<std::pair<StringRef, StringRef>,
                      std::pair<unsigned, StringRef>>
          counts;
      auto count = [&](std::pair<StringRef, StringRef> key, Operation *op) {
        auto &[number, precision] = counts[key];
        if (number++ == 0)
          if (auto precisionOp = dyn_cast<amp::PrecisionOpInterface>(op))
            precision =
                amp::stringifyPrecisionClass(precisionOp.getPrecisionClass());
      };
      unsigned numNodes = 0;
      func.getFunctionBody().walk([&](Operation *op) {
        if (auto init = dyn_cast<InitializerOp>(op)) {
          ++numInitializers;
          initBytes += getTensorBytes(init.getValue());
        } else if (auto node = dyn_cast<NodeOp>(op)) {
          ++numNodes;
          StringRef domain = node.getDomain();
          count({isDefaultDomain(domain) ? "" : domain, node.getOpType()}, op);
        } else if (!isa<NoneOp, YieldOp, func::ReturnOp>(op)) {
          ++numNodes;
          count({op->getName().getDialectNamespace(),
                 op->getName().stripDialect()},
                op);
        }
      });
      os << "  inputs: " << func.getNumArguments() << " (" << numWithValue
         << " with initial values, " << formatBytes(inputBytes) << ")\n";
      os << "  outputs: " << func.getNumResults() << "\n";
      os << "  initializers: " << numInitializers << " ("
         << formatBytes(initBytes) << ")\n";
      os << "  nodes: " << numNodes << " of " << counts.size() << " op types\n";
      auto sorted = counts.takeVector();
      llvm::sort(sorted, [](const auto &a, const auto &b) {
        return std::tie(b.second.first, a.first) <
               std::tie(a.second.first, b.first);
      });
      for (const auto &[key, entry] : sorted) {
        std::string name = (key.first.empty() ? "" : key.first + "::").str() +
                           key.second.str();
        const OpInfo *info = lookupOp(key.first, key.second);
        os << "    " << llvm::left_justify(name, 44)
           << llvm::format_decimal(entry.first, 6) << "  "
           << llvm::left_justify(
                  info ? stringifyOpFamily(info->family) : "unknown", 14)
           << (entry.second.empty() ? "-" : entry.second) << "\n";
      }
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
