//===- PipelinePlan.h - which copies of a pipelined loop go asynchronous --===//
//
// T.Pipelined(n, num_stages=s) with s >= 1 asks for the loop's global ->
// shared copies to be issued s iterations ahead, as cp.async groups into s+1
// rotating copies of each destination tile, so that loads overlap the math of
// the iterations before them. planPipelines decides, per pipelined loop, which
// copies can go that way; tl-plan-pipelines (PlanPipelines.cpp) records that
// in the IR, and the GPU lowering reads it back and emits them.
//
// A copy qualifies when:
//   - it sits directly in the loop body and moves a global tensor into a
//     shared tile of the same element type, with no index-map layout on
//     either side;
//   - its last dimension moves in whole 4-, 8- or 16-byte pieces, aligned on
//     both sides (offsets proven multiples by knownDivisor), each wholly inside
//     the tensor or wholly past its end (those are zero-filled, as the
//     synchronous copy does);
//   - it fills the whole tile (a partial fill would leave another
//     iteration's data in the rest of a rotating copy);
//   - the tile is written by nothing else, and read only inside the loop body
//     after the copy (so the iteration's own data is what each read sees);
//   - nothing in the loop body writes the source tensor (a copy issued
//     iterations early would miss the write; kernel arguments are assumed
//     not to alias);
//   - its source offsets are computed in the body from the induction variable
//     and values from outside by pure ops only (they are recomputed for a
//     later iteration).
// A loop with no qualifying copy runs as a plain loop.
//
// On the wgmma path (sm_90a) a loop may also leave each iteration's wgmma
// batch in flight while the next iteration waits for its tiles and issues its
// loads: the gemm waits with wgmma.wait_group 1 (the previous batch done), not
// 0, and the loop ends with wait_group 0. That holds when num_stages >= 2, every
// gemm in the loop sits directly in its body, reads only tiles of planned
// copies, and nothing else in the loop touches its accumulator. A rotating
// copy is then read until the end of the next iteration, so loads are issued
// num_stages - 1 iterations ahead instead of num_stages (the same s+1 copies:
// one read by the batch in flight, one by this iteration's, s-1 loading).
//
// On the wgmma path the planned copies of a loop go by TMA instead of cp.async
// when every one of them can (tmaCapable in PipelinePlan.cpp): it loads a
// wgmma operand tile (whose layout is TMA's swizzle) of at most 256 rows from
// a row-major tensor of at most 5 dimensions whose strides are multiples of 16
// bytes, the region's non-unit extents being the tile's rows and columns; or,
// in a kernel that asks for a producer warpgroup (use_producer_warpgroup), a
// vector tile of whole 128-byte lines (the backward's rows of lse and Delta)
// from such a tensor, in one box without swizzle (tmaVectorBoxable). Without
// that request such a loop keeps cp.async, as before vectors could go by TMA.
// One thread issues an iteration's boxes (one per swizzle-atom column block)
// on the mbarrier of its rotating copy, expecting their bytes; every thread
// waits on that mbarrier's phase where the first copy stood. Boxes past the
// tensor's end read zeros, as cp.async's do.
//
// Such a loop, when it also keeps its wgmma batches in flight, is the only
// one so in its kernel, stands directly in the kernel body, has bounds and
// load offsets computable at the kernel's start (pure ops on block indices
// and constants), follows every use of the kernel's shared tiles, and whose
// kernel takes more than half of sm_90a's shared memory (else two blocks
// could share an SM, and the producer's registers would cost one), is
// warp-specialised: the kernel gets one more warpgroup, the producer, which
// issues every iteration's boxes as soon as an `empty` mbarrier says the
// consumers have finished with the rotating copy; the consumers (the
// kernel's own threads) wait on the `full` mbarrier of each iteration and
// release the previous iteration's copy after its wgmma batch completes, with
// no block-wide barrier in the loop. The kernel's other barriers become named
// barriers of the consumer threads.
//
// The global -> shared copies that stand before a planned loop in the same
// block (a forward's Q tile, a backward's K and V) go asynchronous too, one
// cp.async group each, waited for after the loop's prologue: their loads then
// overlap the first iterations' instead of preceding them. Such an entry copy
// fills its whole tile in 4-, 8- or 16-byte pieces, no index-map layout on
// either side, and no op between it and the loop touches the tile or writes
// the source.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../LoweringHelpers.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace tl::gpu_lowering {

struct PipelinePlan {
  int64_t stages = 0;                    // num_stages: copies in flight ahead
  llvm::SmallVector<CopyOp> copies;      // in body order
  llvm::SmallVector<int64_t> pieceBytes; // per copy: 4, 8 or 16
  bool afterEntryCopies = false;         // entry copies to wait for after the prologue
  bool wgmmaInFlight = false;            // each iteration's wgmma batch outlives it
  bool tmaLoads = false;                 // the copies go by TMA, on mbarriers
  bool warpSpecialized = false;          // a producer warpgroup issues them
  /// Iterations ahead that the loads are issued.
  int64_t lookahead() const { return wgmmaInFlight ? stages - 1 : stages; }
  /// Rotating copies of each planned tile.
  int64_t rotatingCopies() const { return stages + 1; }
};

struct PipelinePlans {
  llvm::DenseMap<mlir::Operation *, PipelinePlan> loops; // PipelinedOp -> plan
  /// The shared tiles of the planned copies and how many rotating copies
  /// (stages + 1) each needs.
  llvm::DenseMap<mlir::Value, int64_t> buffers;
  /// Entry copies (before a planned loop) -> bytes per piece.
  llvm::DenseMap<mlir::Operation *, int64_t> entryCopies;
};

/// The plans of `kernel`'s pipelined loops (`layouts`: its tensors'
/// index-map layouts, lowering::indexMapLayouts; `tma`: whether loops on the
/// wgmma path may load by TMA; `warpSpecialize`: whether one may get a
/// producer warpgroup).
PipelinePlans planPipelines(KernelOp kernel, const lowering::LayoutMap &layouts, bool tma = true,
                            bool warpSpecialize = true);

/// The plans tl-plan-pipelines recorded in the IR under `root` (its
/// attributes: tl.async_copy, tl.async_entry_copy, tl.rotating_copies,
/// tl.waits_entry_copies, tl.wgmma_in_flight, tl.tma_loads,
/// tl.warp_specialized), as planPipelines made them.
PipelinePlans readPipelinePlans(mlir::Operation *root);

/// Whether TMA boxes can move a whole shared `tile` to or from a region of
/// `sizes` of the global `tensor` of the same element type: a 2-D tile of
/// 16-bit elements (or 32-bit with `wideElements`: the reduce-add boxes of
/// tl.atomic_add_tile; loads and stores keep to the 16-bit ones measured) of
/// at most 256 rows whose row is 32, 64 or a multiple of 128 bytes (a
/// swizzle atom, WgmmaOperands.h), a row-major tensor of at most 5
/// dimensions whose strides are multiples of 16 bytes, the region's non-unit
/// extents being the tile's rows and columns, columns innermost. A row of
/// several 128-byte atoms needs a multiple of 8 rows: the copy engine
/// swizzles by the shared address (bits 7-9), so each column block's box must
/// start on 1024 bytes as the tile does.
bool tmaBoxable(mlir::MemRefType tensor, llvm::ArrayRef<int64_t> sizes, mlir::MemRefType tile,
                bool wideElements = false);

/// Whether one TMA box without swizzle can load the region of extents
/// `sizes` of the global `tensor` into the 1-D shared `tile` (a pipelined
/// loop's vector, PipelinePlan.h): f16, bf16, f32 or i32 elements (those the
/// runtime's tensor maps take), at most 256 of them
/// in whole 128-byte lines (so that every rotating copy starts on 128 bytes,
/// as a tensor copy's destination must), the region's one non-unit extent
/// innermost; the tensor as for tmaBoxable.
bool tmaVectorBoxable(mlir::MemRefType tensor, llvm::ArrayRef<int64_t> sizes,
                      mlir::MemRefType tile);

/// Whether a producer warpgroup can compute `offsets`, used in the body of
/// `loop` (a loop directly in `kernel`'s body): pure ops in the body on its
/// index and values computable at the kernel's start.
bool offsetsAtKernelStart(KernelOp kernel, PipelinedOp loop, mlir::ValueRange offsets);

/// The largest power of two (up to 2^20) known to divide an index value built
/// from constants, +, * and the ops that keep divisibility.
int64_t knownDivisor(mlir::Value value);

} // namespace tl::gpu_lowering
