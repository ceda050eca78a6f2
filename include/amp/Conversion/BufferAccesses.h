//===- BufferAccesses.h - Who writes and reads a buffer, in order -*- C++
//-*-===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//
//
// After bufferization an operand of a library call is a buffer that some
// earlier op of the block wrote: the passes that replace an op and its
// producer (an im2col gather, an FP8 dequantization) by one call find the
// producer as the last writer before the reader, check that nothing
// rewrites its inputs in between, and erase it once nothing reads what it
// wrote.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_BUFFERACCESSES_H
#define AMP_CONVERSION_BUFFERACCESSES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::amp {

/// Whether `op` calls one of the runtime's library entry points (a GEMM,
/// amp_gemm_*, or a convolution, amp_conv_*): it reads its record (operand
/// 0) on the host and its operands on the step's stream, and writes only
/// its result (operand 3; and a bias gradient, operand 4).
bool isLibraryCall(Operation *op);

/// A memref that an op reads or writes, and whether it writes (or frees)
/// it.
using MemrefUse = std::pair<Value, bool>;

/// The memrefs that `op` and the ops nested in it read, write or free, from
/// their memory effects; nullopt when one of them may touch memory that it
/// does not name.
std::optional<SmallVector<MemrefUse>> getMemrefUses(Operation *op);

/// Whether `op` or an op nested in it may write `buffer`'s memory (a
/// library call: only its result).
bool mayWrite(Operation *op, Value buffer);

/// Whether `op` or an op nested in it may read `buffer`'s memory.
bool mayRead(Operation *op, Value buffer);

/// Whether an op after `from` and before `to` may write `buffer`'s memory.
bool isWrittenBetween(Operation *from, Operation *to, Value buffer);

/// Whether `value` is defined before `op` (or outside its block).
bool isDefinedBefore(Value value, Operation *op);

/// Whether a library call in place of `op` can write `buffer`: the buffer
/// is defined before it, or is a new one whose allocation can move there
/// (moveDefinitionBefore).
bool canWriteBefore(Value buffer, Operation *op);

/// Moves the definition of `buffer` before `op` when it follows it.
void moveDefinitionBefore(Value buffer, Operation *op);

/// The last op before `op` in its block that may write `buffer`, or null.
Operation *getLastWriterBefore(Operation *op, Value buffer);

/// The ops that use `buffer` or a view of it, other than the views
/// themselves and deallocations.
SmallVector<Operation *> getAccesses(Value buffer);

/// The ops of `block` that hold an access of `buffer` (getAccesses), or
/// nullopt when an access lies outside `block`.
std::optional<SmallVector<Operation *>> getAccessingOps(Value buffer,
                                                        Block &block);

/// The first op after `op` in its block that holds an access of `buffer`
/// (getAccessingOps), or null when there is none or an access lies
/// outside the block.
Operation *getNextAccess(Operation *op, Value buffer);
/// Whether an op after `writer` (in its block) may read what `writer`
/// wrote into `buffer` before something writes it again; true when an
/// access lies outside the block, or when nothing does and the buffer is a
/// function argument (its caller reads it).
bool isReadAfter(Operation *writer, Value buffer);

/// Erases `buffer`'s allocation, its views and deallocations when nothing
/// else accesses it.
void eraseIfUnaccessed(Value buffer);

/// Erases `writer`, an op whose only effect is writing `buffer` (a gather,
/// a dequantization whose readers became library calls), when nothing
/// reads what it wrote, then `buffer` when nothing accesses it. Returns
/// whether it erased `writer`.
bool eraseWriterIfUnread(Operation *writer, Value buffer);

} // namespace mlir::amp

#endif // AMP_CONVERSION_BUFFERACCESSES_H
