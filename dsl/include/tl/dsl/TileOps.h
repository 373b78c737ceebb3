// Tile operators, used inside a kernel body (TileLang's T.* vocabulary).
// Light header: no MLIR.
#pragma once

#include "tl/dsl/Body.h"
#include "tl/dsl/Buffer.h"
#include "tl/dsl/Layout.h"

#include <vector>

namespace tl::dsl {

Buffer alloc_shared(std::vector<std::int64_t> shape, DType dtype,
                    SourceLoc loc = SourceLoc::current());
Buffer alloc_fragment(std::vector<std::int64_t> shape, DType dtype,
                      SourceLoc loc = SourceLoc::current());
Buffer alloc_local(std::vector<std::int64_t> shape, DType dtype,
                   SourceLoc loc = SourceLoc::current());

void annotate_layout(const Buffer &buffer, const Layout &layout,
                     SourceLoc loc = SourceLoc::current());

/// T.use_swizzle: on the GPU, consecutive blocks walk down a panel of
/// `panel_size` block rows (grid y) before moving along x, so that the blocks
/// running together share their rows' and columns' tiles in L2. A 2-D or 3-D
/// grid; the blocks' work is unchanged (the CPU backend ignores it).
void use_swizzle(int panel_size, SourceLoc loc = SourceLoc::current());

/// On sm_90a, a pipelined loop of this kernel whose copies go by TMA gets a
/// producer warpgroup (warp specialisation): one more warpgroup issues every
/// iteration's tiles while the kernel's own threads compute, meeting them only
/// on mbarriers. Without it the compiler does so only for loops it judges
/// worth it (wgmma kept in flight, tiles over half the shared memory); a
/// request for a loop that cannot take one (no TMA loads, another target,
/// the CPU backend) changes nothing.
void use_producer_warpgroup(SourceLoc loc = SourceLoc::current());

/// Copies src to dst (either may be a whole buffer or a subscripted region);
/// converts between float types.
void copy(const Region &src, const Region &dst, SourceLoc loc = SourceLoc::current());
void fill(const Buffer &buffer, const Expr &value, SourceLoc loc = SourceLoc::current());
void clear(const Buffer &buffer, SourceLoc loc = SourceLoc::current());

enum class GemmWarpPolicy : std::uint8_t { Square, FullRow, FullCol };
struct GemmOptions {
  bool transpose_A = false;
  bool transpose_B = false;
  GemmWarpPolicy policy = GemmWarpPolicy::Square;
  bool clear_accum = false;
  /// On sm_90a, a kernel whose every gemm reads shared tiles runs them as
  /// wgmma; false keeps this gemm, and so its kernel, on mma.sync.
  bool allow_wgmma = true;
  /// TileLang's wg_wait: 0, the gemm completes here; -1, as wgmma it stays in
  /// flight until a later wait_wgmma in the same block, so that register work
  /// on other fragments overlaps it (C must not be touched before the wait,
  /// nor shared memory written). Elsewhere the gemm completes at once.
  int wg_wait = 0;
};
/// C += op(A) * op(B).
void gemm(const Buffer &A, const Buffer &B, const Buffer &C, GemmOptions options = {},
          SourceLoc loc = SourceLoc::current());
/// Waits until at most `pending` of the gemms left in flight (wg_wait = -1)
/// still run (T.wait_wgmma); the others' accumulators then hold their results.
void wait_wgmma(int pending = 0, SourceLoc loc = SourceLoc::current());

/// dst = reduction of src over `dim` (-1: the last). Without `clear` the old
/// contents of dst take part.
void reduce_max(const Buffer &src, const Buffer &dst, int dim = -1, bool clear = true,
                SourceLoc loc = SourceLoc::current());
void reduce_min(const Buffer &src, const Buffer &dst, int dim = -1, bool clear = true,
                SourceLoc loc = SourceLoc::current());
void reduce_sum(const Buffer &src, const Buffer &dst, int dim = -1, bool clear = true,
                SourceLoc loc = SourceLoc::current());
void reduce_abssum(const Buffer &src, const Buffer &dst, int dim = -1, bool clear = true,
                   SourceLoc loc = SourceLoc::current());

/// dst[indices] += value, atomically.
void atomic_add(const Access &dst, const Expr &value, SourceLoc loc = SourceLoc::current());
/// dst += src over a region of a global tensor (T.atomic_add with a tile):
/// each element's addition atomic, as blocks may add into the same elements.
/// src is a shared tile or a fragment (or a region of one) of dst's float type;
/// elements of dst's region past the tensor's end are left alone. On sm_90a
/// a whole shared tile goes as TMA reduce-add boxes (the copy engine adds in
/// L2, and the threads go on).
void atomic_add(const Region &dst, const Region &src, SourceLoc loc = SourceLoc::current());

namespace detail {
void parallel(std::vector<std::int64_t> extents, int arity, const Body &body, SourceLoc loc);
void pipelined(const Expr &start, const Expr &end, std::int64_t numStages, int arity,
               const Body &body, SourceLoc loc);
void serial(const Expr &start, const Expr &end, int arity, const Body &body, SourceLoc loc);
void ifThen(const Expr &cond, int arity, const Body &body, SourceLoc loc);
void inTurn(const Access &counter, const Expr &turn, const Expr &next, int arity, const Body &body,
            SourceLoc loc);
void lastToArrive(const Access &counter, const Expr &arrivals, int arity, const Body &body,
                  SourceLoc loc);
void pingpong(int arity, const Body &body, SourceLoc loc);
} // namespace detail

/// Element-wise loop nest over `extents` (T.Parallel); the body takes one
/// index per extent.
template <typename F>
void parallel(std::vector<std::int64_t> extents, F &&body, SourceLoc loc = SourceLoc::current()) {
  detail::parallel(std::move(extents), detail::bodyArity<F>(), detail::makeBody(body), loc);
}

/// for k in T.Pipelined(start, end, num_stages=...)
template <typename F>
void pipelined(const Expr &start, const Expr &end, std::int64_t numStages, F &&body,
               SourceLoc loc = SourceLoc::current()) {
  detail::pipelined(start, end, numStages, detail::bodyArity<F>(), detail::makeBody(body), loc);
}
/// for k in T.Pipelined(end, num_stages=...)
template <typename F>
void pipelined(const Expr &end, std::int64_t numStages, F &&body,
               SourceLoc loc = SourceLoc::current()) {
  pipelined(Expr(0), end, numStages, body, loc);
}

/// A plain device loop (Python's `for k in range(n)` inside a kernel).
template <typename F> void serial(const Expr &end, F &&body, SourceLoc loc = SourceLoc::current()) {
  detail::serial(Expr(0), end, detail::bodyArity<F>(), detail::makeBody(body), loc);
}

/// `if cond:` on the device.
template <typename F> void if_(const Expr &cond, F &&then, SourceLoc loc = SourceLoc::current()) {
  detail::ifThen(cond, detail::bodyArity<F>(), detail::makeBody(then), loc);
}

/// Runs `body` in turns: the block waits until `counter` (one element of an
/// i32 global tensor) equals `turn`, runs the body, then sets the element to
/// `next` (turn + 1 by default; 0 from the element's last turn leaves it ready
/// for the next launch), the body's global writes visible to whoever sees
/// it. Blocks that share an element run their bodies one after another in
/// the order of their turns, so atomic_add in the body sums in a fixed order:
/// the same bits on every run (deterministic accumulation, as
/// FlashAttention-3 orders its dQ). Each element's turns must start at its
/// value before the launch and be taken in the grid's launch order (x
/// fastest, then y, then z), the order in which the GPU starts blocks; a turn
/// that never comes would hang: after about ten seconds the GPU ends the wait
/// with a trap and the CPU backend with an error from the launch. The body
/// takes no arguments.
template <typename F>
void in_turn(const Access &counter, const Expr &turn, F &&body,
             SourceLoc loc = SourceLoc::current()) {
  detail::inTurn(counter, turn, Expr(), detail::bodyArity<F>(), detail::makeBody(body), loc);
}
template <typename F>
void in_turn(const Access &counter, const Expr &turn, const Expr &next, F &&body,
             SourceLoc loc = SourceLoc::current()) {
  detail::inTurn(counter, turn, next, detail::bodyArity<F>(), detail::makeBody(body), loc);
}

/// FlashAttention-3's pingpong: the block's warpgroups issue the gemms of
/// `body` one warpgroup at a time, round robin (warpgroup 0 first, each
/// letting the next go once its gemms are issued). Left in flight
/// (wg_wait = -1) and waited for after the body, one warpgroup's gemms then
/// take the tensor cores while the others run their softmax, instead of all
/// warpgroups issuing at once and then all leaving the tensor cores idle.
/// The body holds gemms only (anything else is an error at its line). Where
/// the kernel has fewer than two whole warpgroups (or on the CPU backend)
/// the body runs where it stands. The body takes no arguments.
template <typename F> void pingpong(F &&body, SourceLoc loc = SourceLoc::current()) {
  detail::pingpong(detail::bodyArity<F>(), detail::makeBody(body), loc);
}

/// Runs `body` in the block that arrives last: each block that reaches it
/// adds one to `counter` (one element of an i32 global tensor) after all of
/// its earlier global writes, and the block whose addition brings the
/// element to `arrivals` runs the body, seeing everything the other arriving
/// blocks wrote before they arrived, then sets the element back to 0 for the
/// next launch. Blocks that each add a part of a result so leave its
/// completion to whichever finishes last, with no kernel launch after them
/// (the backward's dQ rows, converted to f16 once every key block has added
/// into them). Exactly `arrivals` blocks must arrive at an element in a
/// launch, from 0: fewer never run the body, more run it again. The body
/// takes no arguments. On sm_90a a kernel that waits on mbarriers (TMA
/// loads, a producer warpgroup) cannot take it (a compile error at its line:
/// tl-check-sync does not model its barrier with a reduction).
template <typename F>
void last_to_arrive(const Access &counter, const Expr &arrivals, F &&body,
                    SourceLoc loc = SourceLoc::current()) {
  detail::lastToArrive(counter, arrivals, detail::bodyArity<F>(), detail::makeBody(body), loc);
}

} // namespace tl::dsl
