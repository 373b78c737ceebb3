//===- TLDialect.h - the tl dialect, its attributes and ops ---------------===//
//
// Include this (and only the compiler library includes it): it pulls in MLIR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tl/Dialect/TL/TLDialect.h.inc"
#include "tl/Dialect/TL/TLEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "tl/Dialect/TL/TLAttrs.h.inc"
#define GET_OP_CLASSES
#include "tl/Dialect/TL/TLOps.h.inc"

namespace tl {

/// The scope of a buffer: its memref memory space, or global when it has none.
MemoryScope getMemoryScope(mlir::MemRefType type);
inline MemoryScope getMemoryScope(mlir::Value buffer) {
  return getMemoryScope(llvm::cast<mlir::MemRefType>(buffer.getType()));
}

/// The memref type of a buffer of `shape` x `elementType` in `scope`.
mlir::MemRefType getBufferType(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                               MemoryScope scope);

/// A region's extents other than 1: what two regions of a copy must agree
/// on, and the loop nest that walks one.
llvm::SmallVector<int64_t> nonUnitExtents(llvm::ArrayRef<int64_t> sizes);

/// The loaded tl dialect of `context`: the helpers of the discardable
/// attributes TLDialect.td declares (getLayoutAttrHelper(), ...).
TLDialect &tlDialect(mlir::MLIRContext *context);
inline TLDialect &tlDialect(mlir::Operation *op) { return tlDialect(op->getContext()); }

/// Registers the tl dialect and every upstream dialect tl programs use (and
/// the crash report's naming of the running pass, tl/Compiler/CrashHandler.h).
void registerTLDialects(mlir::DialectRegistry &registry);

} // namespace tl
