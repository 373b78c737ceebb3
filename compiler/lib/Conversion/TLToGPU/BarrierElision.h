//===- BarrierElision.h - drop the barriers that order nothing ------------===//
//
// The GPU lowering fences shared memory with a barrier before and after every
// shared write it emits, each tile op on its own. Side by side, many of those
// barriers order nothing: a barrier before the writes of P^T that follows,
// with only reads of other tiles between, the barrier that published the
// iteration's loads; the barrier after dV's shared copy, right before the one
// preceding dK's. With one block of eight warps per SM, each barrier stalls
// the whole SM until its slowest warp arrives.
//
// elideRedundantBarriers removes a barrier B when the last barrier P before it
// (in the same block, or the enclosing block's for an scf.if branch, or the
// kernel's start) already orders everything B would: nothing since P touched
// memory, or B is followed in its block by another barrier N and no access
// between P and B conflicts with one between B and N (same bytes, one of them
// a write). Each shared tile's bytes are known from its view (the attribute
// `tl.shared_range`, [first, end) bytes of dynamic shared memory; a rotating
// tile's view names all its copies). Conservative where it cannot see:
//   - a cp.async wait counts as a write of all shared memory (a barrier after
//     it publishes the other threads' copies);
//   - a cp.async issue counts as a write of its tile and a read of its
//     source after B (B keeps other threads' earlier reads of the tile and
//     writes of the source before the copy starts), and as nothing before
//     B (no barrier after the issue orders the copy, only its wait does);
//   - accesses of global memory conflict per kernel argument (arguments are
//     assumed not to alias, as PipelinePlan.h does);
//   - an access whose tile it cannot trace, or an op with unknown effects,
//     conflicts with everything; a loop body starts with no P.
//
// With `async-proxy` (GPUPipelineOptions::elideAsyncBarriers, off by default:
// its tests and sanitizers ran clean on an H100 in session 33, where it timed
// level with the default, results/2026-12-05-session33.md) it also sees
// through the wgmma path's synchronisation, which it otherwise counts as
// touching all memory:
//   - `nvvm.barrier id = 1` (the consumers' barrier of a warp-specialised
//     kernel) is a barrier: it orders the consumers as gpu.barrier orders the
//     block (the producer meets them on mbarriers only). A barrier is removed
//     only where P and the next barrier order at least its threads (a
//     block-wide one never for a consumers' one). Other named barriers
//     (pingpong's turns, ids 2 and up; bar.red) stay unknown;
//   - a proxy fence to the async proxy of shared memory (`async`,
//     `async.shared::cta`; other kinds stay unknown) publishes the thread's
//     shared writes since its previous fence (all of shared memory where
//     that is not known: at the start of a block other than the kernel's)
//     to the async proxy: before a barrier it counts as a write of those
//     bytes, after one as nothing (a barrier between the writes and the
//     fence orders nothing the barrier after the fence does not);
//   - `wgmma.mma_async` reads the tiles its descriptors are computed from
//     (through the lowering's opaque moves); `wgmma.wait_group` reads all
//     shared memory (what it completes may read any tile until then);
//     `wgmma.fence` and the commit touch no memory.
// In the staged wgmma backward's loop that removes the barrier right after
// P's and dS's stores (the fence-and-barrier before the dV gemm orders them)
// and the one before the dK gemm (nothing written since the dV gemm's):
// five consumer barriers an iteration become three (lit
// elide-async-barriers.mlir).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace tl::gpu_lowering {

/// Removes the barriers of `func` that order no pair of conflicting accesses;
/// returns how many it removed. `asyncProxy`: see through the wgmma path's
/// synchronisation too (above).
int64_t elideRedundantBarriers(mlir::gpu::GPUFuncOp func, bool asyncProxy = false);

} // namespace tl::gpu_lowering
