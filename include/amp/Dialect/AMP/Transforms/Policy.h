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

#include <string>

namespace mlir::amp {

/// Where an op's class came from, for remarks and the report.
enum class PolicySource { Table, OpType, NodeName, Unknown };

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
  /// All three, as the passes' options give them: the file (none when
  /// empty), then the op-type and the node overrides.
  LogicalResult addSources(llvm::StringRef file,
                           llvm::ArrayRef<std::string> opTypeEntries,
                           llvm::ArrayRef<std::string> nodeEntries,
                           Location loc);

  /// The class of `op`: a node-name override, else an op-type override, else
  /// the op's own (PrecisionOpInterface); never-touch for other ops.
  PrecisionClass classify(Operation *op, PolicySource *source = nullptr) const;

  /// The op type that overrides match: `Type` for the default ONNX domain,
  /// `domain::Type` for others, the op name for non-ONNX ops.
  static std::string getOpTypeKey(Operation *op);
  /// The ONNX node name of `op` (its location), or "".
  static llvm::StringRef getNodeName(Operation *op);

private:
  struct Override {
    PrecisionClass precisionClass;
    std::string origin; ///< "policy file 'p.json'" or "pass option"
  };
  LogicalResult add(llvm::StringMap<Override> &overrides, llvm::StringRef kind,
                    llvm::StringRef name, PrecisionClass precisionClass,
                    llvm::StringRef origin, bool replace, Location loc);
  LogicalResult addEntries(llvm::StringMap<Override> &overrides,
                           llvm::StringRef kind,
                           llvm::ArrayRef<std::string> entries, Location loc);

  llvm::StringMap<Override> opTypes;
  llvm::StringMap<Override> nodes;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_POLICY_H
