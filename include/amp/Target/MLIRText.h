//===- MLIRText.h - MLIR text that the upstream parser cannot read -*- C++ -*-//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// A check that amp-opt, amp-run and amp-compile run on MLIR text before
// parsing it: text on which MLIR's own parser crashes is an error instead.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TARGET_MLIRTEXT_H
#define AMP_TARGET_MLIRTEXT_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::amp {

/// The first dense array of `index` elements in `text` (`array<index:
/// 1>`), on which MLIR 22's parser dereferences a null FloatType (an
/// upstream bug); an empty StringRef when there is none.
inline llvm::StringRef findIndexDenseArray(llvm::StringRef text) {
  static const llvm::Regex pattern("array[[:space:]]*<[[:space:]]*index");
  SmallVector<llvm::StringRef, 1> matches;
  if (!pattern.match(text, &matches))
    return {};
  return matches.front();
}

/// Fails with an error at its place in `buffer` when it is MLIR text that
/// MLIR's parser would crash on.
inline LogicalResult checkParsableText(const llvm::MemoryBuffer &buffer) {
  // Bytecode (its magic number) has no text to check.
  if (buffer.getBuffer().starts_with("ML\xefR"))
    return success();
  llvm::StringRef found = findIndexDenseArray(buffer.getBuffer());
  if (found.empty())
    return success();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(found.data()),
                         llvm::SourceMgr::DK_Error,
                         "dense arrays of 'index' elements are not supported "
                         "(MLIR 22's parser crashes on them): use i64");
  return failure();
}

} // namespace mlir::amp

#endif // AMP_TARGET_MLIRTEXT_H
