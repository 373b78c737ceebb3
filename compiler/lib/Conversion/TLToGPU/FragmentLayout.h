//===- FragmentLayout.h - which thread holds which fragment element -------===//
//
// A fragment is a tile spread over the registers of a block's threads. Two
// layouts exist:
//   Row: thread t holds rows t, t+T, ... (any program; a per-thread array).
//        With a split s > 1 (kernels without gemms, see rowSplit), s
//        consecutive threads share each row: thread t holds rows t/s,
//        t/s + T/s, ..., columns (t%s)*C/s .. +C/s of each; a 1-D fragment's
//        elements are held by all s threads of their row.
//   Mma: the m16n8 accumulator layout of mma.sync, warps tiled over the
//        fragment by the gemm's warp policy; lane l of a 16x8 tile holds
//        rows l/4 and l/4+8, columns 2(l%4) and 2(l%4)+1.
//   MmaRow: a row vector of an Mma fragment (row max, row sum), held by the
//        four lanes that share each row.
//   Either Mma kind with `warpgroup` set is the wgmma accumulator (sm_90a):
//        the same 16x8 pattern, but tile t of warp row w covers rows
//        (t * warpsM + w) * 16 .. + 15, so the four warps of a warpgroup hold
//        one contiguous 64-row block (wgmma m64nNk16's accumulator). Usually
//        every warp stacks along M (warpsN = 1); where the rows are too few
//        for that (a 64-row accumulator in two warpgroups), warpgroups also
//        split the columns: warpsN = warpgroups along N, warpsM = 4 x
//        warpgroups along M, and warpgroup g = warp / 4 holds warp row
//        (g / warpsN) * 4 + warp % 4, column block g % warpsN.
// As attributes (TLAttrs.td): #tl.row<split = s>, #tl.mma<warps = [m, n]>,
// #tl.mma_row<warps = [m, n]>, #tl.wgmma<...>, #tl.wgmma_row<...>; tl-infer-layouts
// (InferLayouts.cpp) attaches one to every tl.alloc_fragment and the lowering reads them back.
//
// inferFragmentLayouts starts from the gemms (their accumulators and A
// operands are Mma) and propagates through copies, row reductions and
// parallel loops; any conflict or pattern the Mma lowering does not handle
// sends the whole kernel back to Row, which handles everything.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/MapVector.h"

#include <string>

namespace tl::gpu_lowering {

struct FragmentLayout {
  enum class Kind { Row, Mma, MmaRow };
  Kind kind = Kind::Row;
  int64_t rows = 0, cols = 0;     // the fragment's shape (cols 0: a 1-D fragment)
  int64_t warpsM = 1, warpsN = 1; // warp grid over the (parent) Mma tile
  int64_t split = 1;              // Row: threads sharing each row
  bool warpgroup = false;         // Mma, MmaRow: wgmma's interleaved row tiles

  /// Row: threads holding different rows (T / split), and columns per thread.
  int64_t rowGroups(int64_t threads) const { return threads / split; }
  int64_t colsPerThread() const { return cols / split; }

  int64_t tilesM() const { return rows / warpsM / 16; }
  int64_t tilesN() const { return cols / warpsN / 8; }
  /// Rows between a warp's consecutive 16-row tiles, and between the first
  /// rows of neighbouring warps (Mma, MmaRow).
  int64_t tileRowStep() const { return warpgroup ? warpsM * 16 : 16; }
  int64_t warpRowStep() const { return warpgroup ? 16 : rows / warpsM; }
  /// Elements each thread holds (Mma, MmaRow).
  int64_t count() const { return kind == Kind::Mma ? tilesM() * tilesN() * 4 : tilesM() * 2; }
  /// For Mma element l: the MmaRow element holding its row.
  int64_t rowSlot(int64_t l) const { return (l / 4 / tilesN()) * 2 + (l % 4) / 2; }
  bool operator==(const FragmentLayout &o) const {
    return kind == o.kind && rows == o.rows && cols == o.cols && warpsM == o.warpsM &&
           warpsN == o.warpsN && split == o.split && warpgroup == o.warpgroup;
  }
  /// The layout of a row vector of this Mma layout (any Mma fragment with the
  /// same rows and warps has the same one).
  FragmentLayout rowVector() const {
    FragmentLayout r = *this;
    r.kind = Kind::MmaRow;
    r.cols = 0;
    return r;
  }
};

using FragmentLayouts = llvm::MapVector<mlir::Value, FragmentLayout>;

/// Layouts of the kernel's fragments (alloc_fragment results). `why` says
/// why a kernel fell back to Row. With `wgmma` (sm_90a), a kernel whose every
/// gemm wgmmaEligible gets warpgroup (wgmma) accumulators.
FragmentLayouts inferFragmentLayouts(KernelOp kernel, std::string &why, bool wgmma = false);

/// A gemm wgmma can run: B a 16-bit shared tile with descriptor-friendly
/// rows, A one too or a fragment of C's rows (A from registers, RS wgmma), an
/// f32 accumulator fragment that wgmmaWarpgroups splits, N % 8 and K % 16.
bool wgmmaEligible(GemmOp gemm, int64_t warps);

/// How `warps` / 4 warpgroups split a wgmma gemm's [M, N] accumulator: the
/// warpgroups along M and along N. All along M where each gets whole 64-row
/// blocks; else as many along M as the rows allow and the rest along N, each
/// taking an equal column block of a multiple of 8 (of B's swizzle atom where
/// B is MN-major: a descriptor starts at an atom column) and A from shared
/// memory (a register A belongs to one warpgroup). None where no split fits.
std::optional<std::pair<int64_t, int64_t>> wgmmaWarpgroups(GemmOp gemm, int64_t warps);

/// The attribute that records `layout` (#tl.row, #tl.mma, #tl.mma_row), and
/// back: the layout a tl.alloc_fragment's `tl.layout` attribute gives its
/// fragment, or failure (reported at the op) when it has none or the
/// attribute does not fit the fragment's shape.
mlir::Attribute layoutAttr(mlir::MLIRContext *context, const FragmentLayout &layout);
mlir::FailureOr<FragmentLayout> attachedLayout(AllocFragmentOp alloc, int64_t threads);

} // namespace tl::gpu_lowering
