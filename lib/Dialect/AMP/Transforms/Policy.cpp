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

std::string PrecisionPolicy::describe(Operation *op) {
  std::string text = getOpTypeKey(op);
  StringRef name = getNodeName(op);
  if (!name.empty())
    text += " at node '" + name.str() + "'";
  return text;
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
      return report(PolicySource::NodeName),
             static_cast<PrecisionClass>(it->second.choice);
  }
  auto it = opTypes.find(getOpTypeKey(op));
  if (it != opTypes.end())
    return report(PolicySource::OpType),
           static_cast<PrecisionClass>(it->second.choice);
  if (auto precisionOp = dyn_cast<PrecisionOpInterface>(op))
    return report(PolicySource::Table), precisionOp.getPrecisionClass();
  return report(PolicySource::Unknown), PrecisionClass::NeverTouch;
}

FP8Choice PrecisionPolicy::classifyFP8(Operation *op) const {
  StringRef nodeName = getNodeName(op);
  if (!nodeName.empty()) {
    auto it = fp8Nodes.find(nodeName);
    if (it != fp8Nodes.end())
      return static_cast<FP8Choice>(it->second.choice);
  }
  auto it = fp8OpTypes.find(getOpTypeKey(op));
  if (it != fp8OpTypes.end())
    return static_cast<FP8Choice>(it->second.choice);
  return FP8Choice::Default;
}

LogicalResult PrecisionPolicy::add(llvm::StringMap<Override> &overrides,
                                   StringRef kind, StringRef name,
                                   unsigned choice, ChoiceName nameOf,
                                   StringRef origin, bool replace,
                                   Location loc) {
  auto [it, inserted] =
      overrides.try_emplace(name, Override{choice, origin.str()});
  if (inserted)
    return success();
  if (replace && it->second.origin != origin) {
    it->second = Override{choice, origin.str()};
    return success();
  }
  if (it->second.choice == choice)
    return success();
  return emitError(loc) << kind << " '" << name << "' is in two lists: '"
                        << nameOf(it->second.choice) << "' ("
                        << it->second.origin << ") and '" << nameOf(choice)
                        << "' (" << origin << ")";
}

static StringRef nameClass(unsigned choice) {
  return stringifyPrecisionClass(static_cast<PrecisionClass>(choice));
}

/// The class named `name`, or failure after an error listing the classes.
static FailureOr<unsigned> parseClass(StringRef name, StringRef where,
                                      Location loc) {
  if (std::optional<PrecisionClass> parsed = symbolizePrecisionClass(name))
    return static_cast<unsigned>(*parsed);
  return emitError(loc) << where << ": unknown precision class '" << name
                        << "'; expected always, follow, infer, keep-fp32 or "
                           "never-touch";
}

static StringRef nameFP8Choice(unsigned choice) {
  return static_cast<FP8Choice>(choice) == FP8Choice::Always ? "always"
                                                             : "never";
}

/// The FP8 choice named `name` (always, never), or failure after an error.
static FailureOr<unsigned> parseFP8Choice(StringRef name, StringRef where,
                                          Location loc) {
  if (name == "always")
    return static_cast<unsigned>(FP8Choice::Always);
  if (name == "never")
    return static_cast<unsigned>(FP8Choice::Never);
  return emitError(loc) << where << ": unknown FP8 choice '" << name
                        << "'; expected always or never";
}

LogicalResult PrecisionPolicy::addEntries(llvm::StringMap<Override> &overrides,
                                          StringRef kind,
                                          ArrayRef<std::string> entries,
                                          ChoiceParser parse, ChoiceName nameOf,
                                          Location loc) {
  for (StringRef entry : entries) {
    auto [name, choiceName] = entry.rsplit(':');
    if (name.empty() || choiceName.empty() || !entry.contains(':'))
      return emitError(loc)
             << "policy override '" << entry << "' must be written name:"
             << (parse == parseClass ? "class" : "choice");
    FailureOr<unsigned> parsed =
        parse(choiceName, "policy override '" + entry.str() + "'", loc);
    if (failed(parsed) ||
        failed(add(overrides, kind, name, *parsed, nameOf, "pass option",
                   /*replace=*/true, loc)))
      return failure();
  }
  return success();
}

LogicalResult PrecisionPolicy::addOpTypeOverrides(ArrayRef<std::string> entries,
                                                  Location loc) {
  return addEntries(opTypes, "op type", entries, parseClass, nameClass, loc);
}

LogicalResult PrecisionPolicy::addNodeOverrides(ArrayRef<std::string> entries,
                                                Location loc) {
  return addEntries(nodes, "node", entries, parseClass, nameClass, loc);
}

LogicalResult
PrecisionPolicy::addFP8Overrides(ArrayRef<std::string> opTypeEntries,
                                 ArrayRef<std::string> nodeEntries,
                                 Location loc) {
  return failure(failed(addEntries(fp8OpTypes, "FP8 op type", opTypeEntries,
                                   parseFP8Choice, nameFP8Choice, loc)) ||
                 failed(addEntries(fp8Nodes, "FP8 node", nodeEntries,
                                   parseFP8Choice, nameFP8Choice, loc)));
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
    if (section == "fp8") {
      // {"fp8": {"op_types": {"always"|"never": [...]}, "nodes": {...}}}
      auto *fp8 = value.getAsObject();
      if (!fp8)
        return emitError(loc)
               << origin << ": 'fp8' must hold op_types and nodes";
      for (const std::string &part : sortedKeys(*fp8)) {
        bool isOpTypes = part == "op_types";
        if (!isOpTypes && part != "nodes")
          return emitError(loc) << origin << ", fp8: unknown key '" << part
                                << "'; expected op_types or nodes";
        auto *choices = fp8->getObject(part);
        if (!choices)
          return emitError(loc) << origin << ", fp8." << part
                                << " must map always and never to lists";
        if (failed(addFileSection(*choices, isOpTypes ? fp8OpTypes : fp8Nodes,
                                  isOpTypes ? "FP8 op type" : "FP8 node",
                                  "fp8." + part, origin, parseFP8Choice,
                                  nameFP8Choice, loc)))
          return failure();
      }
      continue;
    }
    llvm::StringMap<Override> *overrides = section == "op_types" ? &opTypes
                                           : section == "nodes"  ? &nodes
                                                                 : nullptr;
    if (!overrides)
      return emitError(loc) << origin << ": unknown key '" << section
                            << "'; expected op_types, nodes or fp8";
    auto *classes = value.getAsObject();
    if (!classes)
      return emitError(loc) << origin << ": '" << section
                            << "' must map precision classes to lists";
    if (failed(addFileSection(*classes, *overrides,
                              section == "op_types" ? "op type" : "node",
                              section, origin, parseClass, nameClass, loc)))
      return failure();
  }
  return success();
}

LogicalResult PrecisionPolicy::addFileSection(
    const llvm::json::Object &choices, llvm::StringMap<Override> &overrides,
    StringRef kind, StringRef section, StringRef origin, ChoiceParser parse,
    ChoiceName nameOf, Location loc) {
  SmallVector<std::string> keys;
  for (const auto &entry : choices)
    keys.push_back(entry.first.str());
  llvm::sort(keys);
  for (const std::string &choiceName : keys) {
    std::string where = (origin + ", " + section).str();
    FailureOr<unsigned> parsed = parse(choiceName, where, loc);
    if (failed(parsed))
      return failure();
    const llvm::json::Array *names = choices.getArray(choiceName);
    if (!names)
      return emitError(loc)
             << where << "." << choiceName << " must be a list of strings";
    for (const llvm::json::Value &name : *names) {
      std::optional<StringRef> text = name.getAsString();
      if (!text)
        return emitError(loc)
               << where << "." << choiceName << " must be a list of strings";
      if (failed(add(overrides, kind, *text, *parsed, nameOf, origin,
                     /*replace=*/false, loc)))
        return failure();
    }
  }
  return success();
}
