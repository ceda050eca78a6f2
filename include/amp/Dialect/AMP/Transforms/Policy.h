//===- Policy.h - Which precision class each op gets ------------*- C++ -*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// The precision policy: the op table's classes (PrecisionOpInterface),
// overridden by op type and by node name from a JSON policy file and from
// pass options. docs/PrecisionPolicy.md has the file's schema.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_POLICY_H
#define AMP_DIALECT_AMP_TRANSFORMS_POLICY_H

#include "amp/Interfaces/PrecisionOpInterface.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::amp {

/// Where an op's class came from, for remarks and the report.
enum class PolicySource { Table, OpType, NodeName, Unknown };

/// What a policy says of FP8 for an op (amp-fp8): nothing (the cost model
/// decides), always or never.
enum class FP8Choice { Default, Always, Never };

llvm::StringRef stringifyPolicySource(PolicySource source);

class PrecisionPolicy {
public:
  /// Adds the overrides of a JSON policy file. Returns failure after emitting
  /// an error at `loc` (a file that does not parse, an unknown class, an op
  /// type or node in two lists).
  LogicalResult addFile(llvm::StringRef path, Location loc);
  /// Adds overrides written `name:class`, for op types (`MatMul`,
  /// `com.microsoft::FusedMatMul`) or node names; they replace overrides of
  /// the file.
  LogicalResult addOpTypeOverrides(llvm::ArrayRef<std::string> entries,
                                   Location loc);
  LogicalResult addNodeOverrides(llvm::ArrayRef<std::string> entries,
                                 Location loc);
  /// FP8 overrides written `name:always` or `name:never`, for op types and
  /// node names; they replace the file's `fp8` section.
  LogicalResult addFP8Overrides(llvm::ArrayRef<std::string> opTypeEntries,
                                llvm::ArrayRef<std::string> nodeEntries,
                                Location loc);
  /// All three, as the passes' options give them: the file (none when
  /// empty), then the op-type and the node overrides.
  LogicalResult addSources(llvm::StringRef file,
                           llvm::ArrayRef<std::string> opTypeEntries,
                           llvm::ArrayRef<std::string> nodeEntries,
                           Location loc);

  /// The class of `op`: a node-name override, else an op-type override, else
  /// the op's own (PrecisionOpInterface); never-touch for other ops.
  PrecisionClass classify(Operation *op, PolicySource *source = nullptr) const;

  /// The FP8 choice for `op`: a node-name override, else an op-type one.
  FP8Choice classifyFP8(Operation *op) const;

  /// The op type that overrides match: `Type` for the default ONNX domain,
  /// `domain::Type` for others, the op name for non-ONNX ops.
  static std::string getOpTypeKey(Operation *op);
  /// The ONNX node name of `op` (its location), or "".
  static llvm::StringRef getNodeName(Operation *op);
  /// `op`'s op type key, with " at node '<name>'" when it has a node name.
  static std::string describe(Operation *op);

private:
  /// A precision class, or an FP8Choice in the fp8 maps.
  struct Override {
    unsigned choice;
    std::string origin; ///< "policy file 'p.json'" or "pass option"
  };
  /// The spelling of a choice in one kind of map.
  using ChoiceName = llvm::StringRef (*)(unsigned);
  /// Parses a choice's spelling; failure after an error naming `where`.
  using ChoiceParser = FailureOr<unsigned> (*)(llvm::StringRef name,
                                               llvm::StringRef where,
                                               Location loc);
  LogicalResult add(llvm::StringMap<Override> &overrides, llvm::StringRef kind,
                    llvm::StringRef name, unsigned choice, ChoiceName nameOf,
                    llvm::StringRef origin, bool replace, Location loc);
  LogicalResult addEntries(llvm::StringMap<Override> &overrides,
                           llvm::StringRef kind,
                           llvm::ArrayRef<std::string> entries,
                           ChoiceParser parse, ChoiceName nameOf, Location loc);
  /// One section of a policy file: {choice: [name, ...]} for op types or
  /// nodes.
  LogicalResult addFileSection(const llvm::json::Object &choices,
                               llvm::StringMap<Override> &overrides,
                               llvm::StringRef kind, llvm::StringRef where,
                               llvm::StringRef origin, ChoiceParser parse,
                               ChoiceName nameOf, Location loc);

  llvm::StringMap<Override> opTypes;
  llvm::StringMap<Override> nodes;
  llvm::StringMap<Override> fp8OpTypes;
  llvm::StringMap<Override> fp8Nodes;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_POLICY_H
