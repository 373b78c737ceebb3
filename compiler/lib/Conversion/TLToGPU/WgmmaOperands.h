//===- WgmmaOperands.h - wgmma's shared-memory operand layout --------------===//
//
// wgmma (sm_90a) reads A and B from shared memory through 64-bit matrix
// descriptors, which describe the canonical layouts of the PTX ISA ("Shared
// Memory Matrix Layout"): 8-row core groups of one swizzle atom each. The
// lowering stores every wgmma operand tile [R, C] of 16-bit elements so:
//   - in column blocks of `atom` bytes per row: 128 where a row spans whole
//     128-byte lines, else the row itself (64 or 32 bytes); block b holds
//     columns [b * atom/2, (b + 1) * atom/2) of all R rows, R * atom bytes;
//   - within a block, row r at r * atom bytes, its 16-byte chunks permuted by
//     the atom's swizzle (chunk ^= (address >> 7) & (atom / 16 - 1)), which
//     wgmma and TMA apply to the address bits: the tile starts 1024-byte
//     aligned (tl-plan-shared-memory) so that address bits and row agree.
// One layout serves both majors: a K-major operand (A, or B transposed)
// steps k inside a block and 8-row groups by SBO = 8 * atom; an MN-major one
// (B, or A transposed) steps 8-row k groups by SBO and MN blocks by
// LBO = R * atom (CUTLASS's make_gmma_desc names the same strides).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>

namespace tl::gpu_lowering {

/// Bytes of one swizzle atom row for a wgmma operand tile (see above): 128,
/// 64 or 32.
inline int64_t wgmmaAtomBytes(mlir::MemRefType type) {
  int64_t rowBytes = type.getDimSize(1) * type.getElementTypeBitWidth() / 8;
  return rowBytes % 128 == 0 ? 128 : rowBytes;
}

/// Whether a shared tile takes this layout: a gemm with a wgmma accumulator
/// (tl-infer-layouts) reads it, or a TMA copy moves it or TMA reduce-add
/// boxes read it (tl-plan-tma-copies).
/// tl-plan-shared-memory aligns such tiles at 1024 bytes; the lowering
/// places their elements so (wgmmaElement).
inline bool takesAtomLayout(AllocSharedOp tile) {
  return llvm::any_of(tile->getUsers(), [&](mlir::Operation *user) {
    if (llvm::isa<CopyOp>(user) && tlDialect(user).getTmaCopyAttrHelper().isAttrPresent(user))
      return true;
    if (auto add = llvm::dyn_cast<AtomicAddTileOp>(user);
        add && add.getSrc() == tile.getResult() &&
        tlDialect(user).getTmaCopyAttrHelper().isAttrPresent(user))
      return true;
    auto gemm = llvm::dyn_cast<GemmOp>(user);
    if (!gemm || (gemm.getA() != tile.getResult() && gemm.getB() != tile.getResult()))
      return false;
    auto accumulator = gemm.getC().getDefiningOp<AllocFragmentOp>();
    return accumulator && llvm::isa_and_nonnull<WgmmaLayoutAttr>(
                              tlDialect(gemm).getLayoutAttrHelper().getAttr(accumulator));
  });
}

/// The byte offset of element (row, col) of a wgmma operand tile with `rows`
/// rows, where row is a multiple of 8 and col of 8 (a core matrix's corner:
/// the swizzle leaves it in place). Descriptors start there.
inline int64_t wgmmaCornerOffset(int64_t rows, int64_t atomBytes, int64_t row, int64_t col) {
  int64_t perRow = atomBytes / 2; // 16-bit elements
  return (col / perRow) * rows * atomBytes + row * atomBytes + (col % perRow) * 2;
}

/// The descriptor's layout field (bits 62-63) for an atom: 1 = 128-byte
/// swizzle, 2 = 64-byte, 3 = 32-byte.
inline uint64_t wgmmaSwizzleMode(int64_t atomBytes) {
  return atomBytes == 128 ? 1 : atomBytes == 64 ? 2 : 3;
}

/// The constant part of a descriptor (all but the start address): leading
/// and stride byte offsets (16-byte units, bits 16-29 and 32-45) and the
/// swizzle mode.
inline uint64_t wgmmaDescriptorBits(int64_t leadingBytes, int64_t strideBytes, int64_t atomBytes) {
  return ((static_cast<uint64_t>(leadingBytes >> 4) & 0x3FFF) << 16) |
         ((static_cast<uint64_t>(strideBytes >> 4) & 0x3FFF) << 32) |
         (wgmmaSwizzleMode(atomBytes) << 62);
}

} // namespace tl::gpu_lowering
