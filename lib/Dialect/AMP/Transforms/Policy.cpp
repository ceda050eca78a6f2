//===- Policy.cpp - Which precision class each op gets --------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/AMP/Transforms/Policy.h"
#include "amp/Dialect/ONNXGraph/IR/ONNXGraph.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::amp;

StringRef mlir::amp::stringifyPolicySource(PolicySource source) {
  // In the order of PolicySource.
  static constexpr llvm::StringLiteral kNames[] = {"table", "policy-op-type",
                                                   "policy-node", "unknown-op"};
  return kNames[static_cast<unsigned>(source)];
}

std::string PrecisionPolicy::getOpTypeKey(Operation *op) {
  if (auto node = dyn_cast<onnxg::NodeOp>(op)) {
    StringRef domain = node.getDomain();
    if (onnxg::isDefaultDomain(domain))
      return node.getOpType().str();
    return (domain + "::" + node.getOpType()).str();
  }
  return op->getName().getStringRef().str();
}

StringRef PrecisionPolicy::getNodeName(Operation *op) {
  StringRef nodeName;
  SmallVector<StringRef> outputs;
  if (onnxg::getOnnxNames(op->getLoc(), nodeName, outputs))
    return nodeName;
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().getValue();
  return "";
}

PrecisionClass PrecisionPolicy::classify(Operation *op,
                                         PolicySource *source) const {
  auto report = [&](PolicySource from) {
    if (source)
      *source = from;
  };
  StringRef nodeName = getNodeName(op);
  if (!nodeName.empty()) {
    auto it = nodes.find(nodeName);
    if (it != nodes.end())
      return report(PolicySource::NodeName), it->second.precisionClass;
  }
  auto it = opTypes.find(getOpTypeKey(op));
  if (it != opTypes.end())
    return report(PolicySource::OpType), it->second.precisionClass;
  if (auto precisionOp = dyn_cast<PrecisionOpInterface>(op))
    return report(PolicySource::Table), precisionOp.getPrecisionClass();
  return report(PolicySource::Unknown), PrecisionClass::NeverTouch;
}

LogicalResult PrecisionPolicy::add(llvm::StringMap<Override> &overrides,
                                   StringRef kind, StringRef name,
                                   PrecisionClass precisionClass,
                                   StringRef origin, bool replace,
                                   Location loc) {
  auto [it, inserted] =
      overrides.try_emplace(name, Override{precisionClass, origin.str()});
  if (inserted)
    return success();
  if (replace && it->second.origin != origin) {
    it->second = Override{precisionClass, origin.str()};
    return success();
  }
  if (it->second.precisionClass == precisionClass)
    return success();
  return emitError(loc) << kind << " '" << name << "' is in two lists: '"
                        << stringifyPrecisionClass(it->second.precisionClass)
                        << "' (" << it->second.origin << ") and '"
                        << stringifyPrecisionClass(precisionClass) << "' ("
                        << origin << ")";
}

/// The class named `name`, or failure after an error listing the classes.
static FailureOr<PrecisionClass> parseClass(StringRef name, StringRef where,
                                            Location loc) {
  if (std::optional<PrecisionClass> parsed = symbolizePrecisionClass(name))
    return *parsed;
  return emitError(loc) << where << ": unknown precision class '" << name
                        << "'; expected always, follow, infer, keep-fp32 or "
                           "never-touch";
}

LogicalResult PrecisionPolicy::addEntries(llvm::StringMap<Override> &overrides,
                                          StringRef kind,
                                          ArrayRef<std::string> entries,
                                          Location loc) {
  for (StringRef entry : entries) {
    auto [name, className] = entry.rsplit(':');
    if (name.empty() || className.empty() || !entry.contains(':'))
      return emitError(loc)
             << "policy override '" << entry << "' must be written name:class";
    FailureOr<PrecisionClass> parsed =
        parseClass(className, "policy override '" + entry.str() + "'", loc);
    if (failed(parsed) || failed(add(overrides, kind, name, *parsed,
                                     "pass option", /*replace=*/true, loc)))
      return failure();
  }
  return success();
}

LogicalResult PrecisionPolicy::addOpTypeOverrides(ArrayRef<std::string> entries,
                                                  Location loc) {
  return addEntries(opTypes, "op type", entries, loc);
}

LogicalResult PrecisionPolicy::addNodeOverrides(ArrayRef<std::string> entries,
                                                Location loc) {
  return addEntries(nodes, "node", entries, loc);
}

LogicalResult PrecisionPolicy::addSources(StringRef file,
                                          ArrayRef<std::string> opTypeEntries,
                                          ArrayRef<std::string> nodeEntries,
                                          Location loc) {
  return failure((!file.empty() && failed(addFile(file, loc))) ||
                 failed(addOpTypeOverrides(opTypeEntries, loc)) ||
                 failed(addNodeOverrides(nodeEntries, loc)));
}

LogicalResult PrecisionPolicy::addFile(StringRef path, Location loc) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return emitError(loc) << "cannot read policy file '" << path
                          << "': " << buffer.getError().message();
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return emitError(loc) << "policy file '" << path << "' is not valid JSON: "
                          << llvm::toString(json.takeError());
  std::string origin = ("policy file '" + path + "'").str();
  auto *root = json->getAsObject();
  if (!root)
    return emitError(loc) << origin << " must hold a JSON object";
  // {"op_types": {class: [op type, ...]}, "nodes": {class: [name, ...]}}
  // JSON objects have no order; sorted keys keep the errors stable.
  auto sortedKeys = [](const llvm::json::Object &object) {
    SmallVector<std::string> keys;
    for (const auto &entry : object)
      keys.push_back(entry.first.str());
    llvm::sort(keys);
    return keys;
  };
  for (const std::string &section : sortedKeys(*root)) {
    const llvm::json::Value &value = *root->get(section);
    llvm::StringMap<Override> *overrides = section == "op_types" ? &opTypes
                                           : section == "nodes"  ? &nodes
                                                                 : nullptr;
    if (!overrides)
      return emitError(loc) << origin << ": unknown key '" << section
                            << "'; expected op_types or nodes";
    StringRef kind = section == "op_types" ? "op type" : "node";
    auto *classes = value.getAsObject();
    if (!classes)
      return emitError(loc) << origin << ": '" << section
                            << "' must map precision classes to lists";
    for (const std::string &className : sortedKeys(*classes)) {
      std::string where = origin + ", " + section;
      FailureOr<PrecisionClass> parsed = parseClass(className, where, loc);
      if (failed(parsed))
        return failure();
      const llvm::json::Array *names = classes->getArray(className);
      if (!names)
        return emitError(loc)
               << where << "." << className << " must be a list of strings";
      for (const llvm::json::Value &name : *names) {
        std::optional<StringRef> text = name.getAsString();
        if (!text)
          return emitError(loc)
                 << where << "." << className << " must be a list of strings";
        if (failed(add(*overrides, kind, *text, *parsed, origin,
                       /*replace=*/false, loc)))
          return failure();
      }
    }
  }
  return success();
}
