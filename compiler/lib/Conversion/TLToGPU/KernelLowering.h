//===- KernelLowering.h - one kernel to per-thread GPU code ---------------===//
//
// It follows what the planning passes recorded on the tile program: the
// fragment layouts (tl-infer-layouts, FragmentLayout.h: the mma.sync layout
// where the kernel allows, else the Row layout, thread t owning rows t, t+T,
// ...), the copies of pipelined loops that go asynchronous (tl-plan-pipelines,
// PipelinePlan.h; lowerPipelined emits them as cp.async groups into rotating
// copies of their tiles) and the shared tiles' offsets (tl-plan-shared-memory).
// Tile ops on fragments iterate the elements a thread owns; tile ops without
// fragments spread their elements over all threads; shared memory is fenced
// by barriers around every write, and tl-elide-barriers removes the ones
// that end up ordering nothing (BarrierElision.h).
//
// The lowering walks each kernel body in program order: fragment accesses
// must be rewritten together with the loops that own them, which a set of
// independent rewrite patterns cannot see.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../LoweringHelpers.h"
#include "BarrierElision.h"
#include "FragmentLayout.h"
#include "PairedStores.h"
#include "PipelinePlan.h"
#include "WgmmaOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <array>
#include <limits>

namespace tl::gpu_lowering {
using namespace mlir;
using namespace tl::lowering;

inline int64_t product(ArrayRef<int64_t> values) {
  int64_t n = 1;
  for (int64_t v : values)
    n *= v;
  return n;
}

inline Value index(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

struct Fragment {
  Value storage; // per thread: Row memref<R x rest...>, Mma memref<count>
  FragmentLayout layout;
};

/// Which element of its driving fragment a thread is at, inside a loop over
/// the elements it owns: Row: local row `r`; Mma/MmaRow: element `slot`.
struct Owned {
  FragmentLayout layout;
  Value r;
  int64_t slot = 0;
};

/// What the target allows a block (0: unchecked), its name for errors, and
/// whether rewrites that change results in the last bit are allowed.
struct ResourceLimits {
  int64_t sharedBytes = 0;
  std::string target;
  bool fastMath = true;
  /// stmatrix for an Mma fragment's 16-bit shared stores (sm_90;
  /// LowerMatrixStores.cpp).
  bool stmatrix = false;
  /// wgmma descriptors advanced by 32-bit adds to their low word
  /// (lowerGemmWgmma).
  bool lowWordDescriptors = false;
  /// In turns, the producer hands a reduce-added tile back once read
  /// (issueProducerReduces).
  bool earlyTileHandBack = false;
};

/// Lowers one outlined kernel (a gpu.func still holding tl ops) in place.
class KernelLowering {
public:
  KernelLowering(gpu::GPUFuncOp func, int64_t threads, const LayoutMap &layouts,
                 ResourceLimits limits = {})
      : func(func), funcOp(func.getOperation()), rewriter(func.getContext()), threads(threads),
        layouts(layouts), limits(std::move(limits)) {}

  LogicalResult run();

private:
  bool isFragment(Value v) const { return fragments.count(v); }
  bool isShared(Value v) const { return shared.count(v); }
  bool isLocal(Value v) const { return locals.count(v); }
  bool isGlobal(Value v) const;

  void barrier(Location loc) { gpu::BarrierOp::create(rewriter, loc); }
  /// fence.proxy.async: this thread's generic shared writes (stores,
  /// completed cp.async) become visible to async-proxy readers (wgmma).
  void fenceProxyAsync(Location loc);
  /// `value` (f32, i32 or i64) through a mov LLVM cannot see into or move: it
  /// stays where it is issued (not hoisted out of a loop, not folded into a
  /// constant).
  Value opaqueMove(Location loc, Value value);

  /// Reads what the planning passes recorded (tl-infer-layouts,
  /// tl-plan-pipelines, tl-plan-shared-memory): fragment layouts, pipeline
  /// plans, shared tile offsets. Fails at an op they did not reach.
  LogicalResult readPlans();

  /// A view of dynamic shared memory for a tile, created at the kernel's
  /// entry: at its planned offset (tl-plan-shared-memory), or for a tile the lowering
  /// makes, at the next free bytes. A tile that a pipelined loop fills
  /// asynchronously has `copies` rotating copies back to back; the view is
  /// the first (stageView gives the others).
  Value allocateShared(Location loc, MemRefType type, bool swizzle = false, int64_t copies = 1,
                       std::optional<int64_t> planned = std::nullopt, int64_t wgmmaAtom = 0);

  /// Fails at the tile that takes the kernel's shared memory past the
  /// target's limit (the one ending last), naming both figures.
  LogicalResult checkSharedLimit();

  /// Swizzled 16-bit tiles whose rows span whole 128-byte lines are stored so:
  /// the 16-byte chunk c of row r lives at chunk c ^ (r % 8), so the 8 rows an
  /// ldmatrix reads hit 8 different bank groups.
  static bool swizzlable(MemRefType type);

  /// A shared tile of `type` at `byteOffset` of dynamic shared memory, within
  /// the bytes `range` (all copies of a rotating tile; see BarrierElision.h).
  Value sharedView(Location loc, MemRefType type, Value byteOffset, bool swizzle,
                   std::array<int64_t, 2> range, int64_t wgmmaAtom = 0);

  /// A wgmma operand tile [R, C] (WgmmaOperands.h) is stored in column blocks
  /// of `atom` bytes per row (128, or the whole row of 64 or 32 bytes), each
  /// block R rows of `atom` bytes, the 16-byte chunks of each row permuted by
  /// the swizzle wgmma and TMA apply to the address (bits 7.. into bits 4..).
  /// The element position of logical (row, col) in that order.
  Value wgmmaElement(OpBuilder &b, Location loc, Value tile, Value row, Value col);

  /// The rotating copy of `tile` that iteration `k` of its pipelined loop
  /// uses: (k - start) % copies (k >= start, whatever the sign of start).
  Value stageView(Location loc, Value tile, Value k, Value start);

  /// The stored column of logical (row, col) in a swizzled tile.
  Value swizzleColumn(OpBuilder &b, Location loc, Value row, Value col);

  /// Every access to a swizzled tile, generated as if it were plain, gets its
  /// column swizzled (ldmatrix addresses are swizzled where they are made);
  /// every access to a wgmma operand tile goes to its wgmmaElement.
  LogicalResult swizzleAccesses();
  /// The element accesses of a 2-D shared tile (loads, stores, vector ones)
  /// with the operand number of their row index; fails at any other use but
  /// its pointer (`what` names the tile in the error).
  FailureOr<SmallVector<std::pair<Operation *, unsigned>>> tileAccesses(Value tile, StringRef what);

  //===--------------------------------------------------------------------===//
  // Loops
  //===--------------------------------------------------------------------===//

  /// for r in [0, ceil(rows/G)): row = tid/split + r*G; if row < rows:
  /// body(r, row), with G = T/split row groups.
  void forOwnedRows(Location loc, int64_t rows,
                    function_ref<void(OpBuilder &, Location, Value, Value)> body,
                    int64_t split = 1);

  /// for flat in [tid, total) step T: body(coordinates of flat in `extents`).
  /// Unrolled when every thread takes the same few steps (the address math
  /// then folds into constants).
  void forSpread(Location loc, ArrayRef<int64_t> extents,
                 function_ref<void(OpBuilder &, Location, ValueRange)> body);

  /// The coordinates in `extents` of flat index `flat` (row-major).
  SmallVector<Value> spreadCoordinates(Location loc, ArrayRef<int64_t> extents, Value flat);

  /// forSpread that hands `body` several of the thread's steps at once (the
  /// coordinates of each): kBatchedSteps where every thread takes a multiple
  /// of kBatchedSteps steps, all of them where it takes at most
  /// kUnrolledSteps, else one. A copy then issues a batch's loads before its
  /// stores, so that they are in flight together (one at a time, each waits
  /// out the memory's latency before the next is issued).
  void
  forSpreadBatched(Location loc, ArrayRef<int64_t> extents,
                   function_ref<void(OpBuilder &, Location, ArrayRef<SmallVector<Value>>)> body);

  //===--------------------------------------------------------------------===//
  // Element access
  //===--------------------------------------------------------------------===//

  /// Storage indices of `fragment`'s element `indices` at the thread's
  /// current element `owned` (see Owned).
  SmallVector<Value> localIndices(OpBuilder &b, Location loc, Value fragment, ValueRange indices,
                                  const Owned &owned);

  /// Loads element `indices` of `buffer` (a fragment: the thread's own
  /// element; a global tensor: through its layout, zero past the end).
  Value load(OpBuilder &b, Location loc, Value buffer, ValueRange indices, const Owned *owned);

  void store(OpBuilder &b, Location loc, Value value, Value buffer, ValueRange indices,
             const Owned *owned);

  /// Atomically adds `value` to element `indices` of a global tensor (through
  /// its layout; nothing past its end).
  void atomicAddGlobal(OpBuilder &b, Location loc, Value value, Value buffer, ValueRange indices);

  /// A vector of `type` at `indices` of a shared or global buffer (no
  /// index-map layout) along its last dimension; of a global one, zeros
  /// where the vector's first element is past the end.
  Value loadVector(OpBuilder &b, Location loc, VectorType type, Value buffer, ValueRange indices,
                   llvm::MaybeAlign alignment);

  /// Stores `vector` likewise; to a global buffer only where its first
  /// element is inside.
  void storeVector(OpBuilder &b, Location loc, Value vector, Value buffer, ValueRange indices,
                   llvm::MaybeAlign alignment);

  /// Runs `body` for every element of a fragment of `layout` and `shape` that
  /// this thread owns, with the element's logical indices. Mma layouts unroll
  /// (constant storage indices keep fragments in registers).
  void forOwned(Location loc, const FragmentLayout &layout, ArrayRef<int64_t> shape,
                function_ref<void(OpBuilder &, Location, const Owned &, ValueRange)> body);

  Value add(Location loc, Value v, int64_t c);

  /// Where slot `slot` of an Mma accumulator lies from the thread's bases
  /// (mmaBases): slots 4t..4t+3 of m16n8 tile t are (r, c), (r, c+1),
  /// (r+8, c), (r+8, c+1).
  static std::pair<int64_t, int64_t> mmaSlotOffset(const FragmentLayout &layout, int64_t slot);

  /// Row of this thread's first element in an Mma tile, and its column.
  std::pair<Value, Value> mmaBases(Location loc, const FragmentLayout &layout);

  /// This warp's (row, column) in an Mma layout's warp grid (warpsM x
  /// warpsN); FragmentLayout.h says the wgmma order.
  std::pair<Value, Value> warpGrid(Location loc, const FragmentLayout &layout);

  /// The first column this thread holds of each row of a split Row fragment
  /// (null when the fragment has no column split).
  Value rowSegmentStart(OpBuilder &b, Location loc, const FragmentLayout &layout);

  /// i1: this thread is the one that writes out a replicated element (of an
  /// MmaRow fragment, or a 1-D split Row one); null where elements have one
  /// holder.
  Value rowWriter(Location loc, const FragmentLayout &layout);

  //===--------------------------------------------------------------------===//
  // Ops
  //===--------------------------------------------------------------------===//

  LogicalResult lowerBlock(Block &block);

  LogicalResult lowerOp(Operation *op);

  //===--------------------------------------------------------------------===//
  // Pipelined loops
  //===--------------------------------------------------------------------===//

  /// num_stages = s with planned copies: each planned copy of iteration k is
  /// issued in iteration k - s (the first s in a prologue) as its own
  /// cp.async group into rotating copy (k - start) % (s+1) of its tile; where
  /// the copy stood, the thread waits for that group and a barrier publishes
  /// the tile. Iteration k issues right after its first wait's barrier: every
  /// thread has then finished iteration k-1, the last reader of the rotating
  /// copies it overwrites (planned tiles are read only after their copy), so
  /// that barrier also guards the overwrite and the loop needs no other.
  LogicalResult lowerPipelined(PipelinedOp op);

  /// Moves `op`'s body into `loop` (erasing `op`) under a header of this
  /// iteration's rotating views, which replace the planned tiles in the body
  /// (the planned copies themselves keep them); returns the header's last op.
  Operation *rotateTiles(PipelinedOp op, scf::ForOp loop, const PipelinePlan &plan);

  /// `later` follows `earlier` in its block with nothing but pure ops between.
  static bool onlyPureOpsBetween(Operation *earlier, Operation *later);

  /// tl.in_turn: thread 0 waits for the block's turn on the counter
  /// (acquire), the body runs between two barriers, and thread 0 passes the
  /// turn on (release). LowerBlockCounters.cpp.
  LogicalResult lowerInTurn(InTurnOp op);
  /// tl.last_to_arrive: after a barrier thread 0 adds one to the counter
  /// (acquire and release); a barrier ORs whether it read the last count,
  /// and the block that did runs the body. LowerBlockCounters.cpp.
  LogicalResult lowerLastToArrive(LastToArriveOp op);
  /// tl.pingpong: the body's gemms issued between a bar.sync on the
  /// warpgroup's own barrier and a bar.arrive on the next one's, where they
  /// take wgmma and the kernel has two whole warpgroups or more; the body
  /// where it stands otherwise. LowerPingpong.cpp.
  LogicalResult lowerPingpong(PingpongOp op);
  /// The thread's warpgroup (tid / 128, an index). LowerPingpong.cpp.
  Value warpgroupIndex(Location loc);
  /// The named barrier of the warpgroup `offset` after the thread's own
  /// (mod the warpgroups), as an i32 id. LowerPingpong.cpp.
  Value pingpongBarrier(Location loc, int64_t offset);
  /// Starts the kernel's pingpong chain before the kernel-level op that
  /// holds `op` (the first pingpong) and ends it after the one that holds the
  /// last, once. LowerPingpong.cpp.
  void chainPingpongTurns(Operation *op);
  /// A block counter element's global address and whether its indices lie
  /// inside the counter (the address is then the counter's first element).
  std::pair<Value, Value> counterPointer(Location loc, Value counter, ValueRange indices);
  /// At the insertion point, in one thread: spin on an acquire load of the
  /// counter element at `pointer` until it holds `turn` (i32); trap after
  /// about ten seconds. LowerBlockCounters.cpp.
  void waitForTurn(Location loc, Value pointer, Value turn);
  /// At the insertion point, in one thread: store `next` (an index) to the
  /// counter element with release semantics. LowerBlockCounters.cpp.
  void passTurn(Location loc, Value pointer, Value next);
  /// Whether `op`'s body is the add the producer warpgroup issues (its tile
  /// is producerReduce's, as lowerAtomicAddTile tells): the producer then
  /// takes the turn (issueProducerReduces), and the consumers only hand the
  /// tile over. LowerBlockCounters.cpp.
  bool turnTakenByProducer(InTurnOp op) const;
  LogicalResult lowerBlockFrom(Block &block, Operation *first);

  /// Issues the planned copies of iteration `k` (when k < end), one cp.async
  /// group per copy; the groups are committed even when empty, so that every
  /// iteration commits the same number.
  void issueIteration(Location loc, const PipelinePlan &plan, Block &body, Value k, Value end,
                      Value start);

  //===--------------------------------------------------------------------===//
  // TMA loads and stores (LowerTma.cpp)
  //===--------------------------------------------------------------------===//

  /// The kernel's tensor-map parameter for boxes of `box` elements of the
  /// kernel tensor `tensor` with a `swizzle`-byte swizzle: a new trailing
  /// argument of the gpu.func (byval 128 bytes, align 64, grid_constant) the
  /// first time, listed in tensorMaps.
  Value tensorMapArgument(Location loc, Value tensor, ArrayRef<int64_t> box, int64_t swizzle);
  /// The boxes that move a whole swizzle-atom tile (at shared address `tile`,
  /// an index) from or to the region of `tensor` of `sizes` at `offsets`
  /// (outermost first): one box per atom column block. Loads complete on
  /// `mbarrier`; stores (no mbarrier) join the issuing thread's bulk group,
  /// as reduce-add boxes do (`reduceAdd`: the tile's elements are added to
  /// the region's in L2).
  void issueTileBoxes(Location loc, Value tensor, ValueRange offsets, ArrayRef<int64_t> sizes,
                      MemRefType tileType, Value tile, Value mbarrier, bool reduceAdd = false);
  /// A tl.atomic_add_tile planned `tl.tma_copy`: after a proxy fence and a
  /// barrier, thread 0 issues the tile's reduce-add boxes as a bulk group and
  /// goes on; inside tl.in_turn it waits for them to complete (the turn
  /// passes on with their sums in memory). A later write of the tile waits
  /// first for them to have read it (waitReduceReads), and so does the
  /// kernel's end.
  LogicalResult lowerTmaReduce(AtomicAddTileOp op);
  /// Before a write of `tile`: where it is the source of TMA reduce-add
  /// boxes, thread 0 waits for its bulk groups to have read their tiles (the
  /// write's barrier holds the other threads until then).
  void waitReduceReads(Location loc, Value tile);
  /// Source tiles (views) of TMA reduce-add boxes.
  llvm::DenseSet<Value> reduceSources;
  /// The kernel writes global memory by TMA (stores, reduce-adds), which
  /// thread 0 issues: a tl.last_to_arrive's arrival waits for them first.
  bool bulkWrites = false;
  /// A copy planned `tl.tma_copy` (tl-plan-tma-copies): a load is armed and
  /// issued by thread 0 on an mbarrier of its own that every thread waits
  /// for; a store is issued by thread 0 after a proxy fence and a barrier,
  /// which waits for its boxes to have read the tile.
  LogicalResult lowerTmaCopy(CopyOp op);
  /// Waits for the TMA loads issued but not yet waited for, unless `op` may
  /// run before they land: another such load into bytes none of them
  /// writes, an allocation, a fill of a fragment, or pure arithmetic (not a
  /// terminator: every load is waited for before its block ends). So a
  /// kernel's loads (a forward's Q and its first K tile) are in flight
  /// together.
  void waitTmaLoadsBefore(Operation *op);
  /// Arrays of `count` mbarriers in shared memory, one per entry of
  /// `arrivals` (its arrival count), initialised by thread 0 here; the
  /// caller's barrier publishes them.
  SmallVector<Value> initMbarriers(Location loc, int64_t count, ArrayRef<int64_t> arrivals);
  Value mbarrierAddress(Location loc, Value barriers, Value slot);
  /// The calling thread arrives on the mbarrier at `address` expecting
  /// `bytes` of transactions (mbarrier.arrive.expect_tx).
  void armMbarrier(Location loc, Value address, int64_t bytes);
  /// Thread 0 arms the mbarrier of iteration k's rotating copy with the
  /// iteration's bytes and issues its boxes (when k < end).
  void issueTmaIteration(Location loc, const PipelinePlan &plan, Block &body, Value k, Value end,
                         Value start, Value barriers);
  /// The same, unguarded: the calling thread arms and issues.
  void issueTmaBoxes(Location loc, const PipelinePlan &plan, Block &body, Value k, Value start,
                     Value barriers);
  /// Every thread waits for iteration k's boxes: the phase of its mbarrier.
  void waitTmaIteration(Location loc, Value k, Value start, int64_t copies, Value barriers);

  //===--------------------------------------------------------------------===//
  // Warp specialisation (LowerWarpSpecialized.cpp)
  //===--------------------------------------------------------------------===//

  /// A loop planned `tl.warp_specialized` (PipelinePlan.h): full and empty
  /// mbarriers per rotating copy, initialised at the kernel's start before a
  /// barrier of every thread; the producer's loop at the kernel's end (run by
  /// thread `threads`, the extra warpgroup's first); the consumers' loop in
  /// place.
  LogicalResult lowerWarpSpecialized(PipelinedOp op, const PipelinePlan &plan);
  /// Records the gemms of `op` whose shared operand tiles the loop itself
  /// makes visible to wgmma's async proxy, so that they need no proxy fence
  /// and block-wide barrier of their own (lowerGemmWgmma's); returns whether
  /// there are any, in which case the loop must fence and publish what was
  /// written before it. That holds for a loop whose copies go by TMA
  /// (async-proxy writes every thread has waited for on their mbarrier where
  /// the first copy stands) and a gemm after that point in its body whose
  /// operands are register fragments or shared tiles whose bytes nothing in
  /// the body writes but those loads (by tl.shared_range; where a write's
  /// bytes are not known, or an op declares no effects, none is recorded):
  /// written before the loop, or by its loads. A gemm reading a tile the body
  /// writes (the staged backward's P and dS) keeps its own fence.
  bool publishWgmmaOperands(PipelinedOp op, const PipelinePlan &plan);
  /// After the lowering: the kernel's work past that barrier, but for the
  /// pure ops both sides use and the register allocas, moves under `tid <
  /// threads`; its barriers become named barriers of those threads; the
  /// kernel launches with one more warpgroup, registers moved to the
  /// consumers (setmaxnreg).
  LogicalResult separateConsumers();

  /// `value` as iteration `k` computes it: the pure ops of `body` between the
  /// induction variable and `value` are cloned with k in its place.
  Value atIteration(Value value, Block &body, IRMapping &map);

  /// cp.async of iteration k's region of `copy` into its rotating copy:
  /// pieces of `bytes` spread over the threads; pieces past the tensor's end
  /// are zero-filled (source size 0).
  void issueCopy(CopyOp copy, int64_t bytes, Block &body, Value k, Value start);

  /// cp.async of `copy`'s source region at `srcOffsets` into the whole of
  /// `tile`, in pieces of `bytes` spread over the threads; pieces past the
  /// tensor's end are zero-filled (source size 0).
  void issuePieces(CopyOp copy, ValueRange srcOffsets, Value tile, int64_t bytes);

  LogicalResult lowerFill(FillOp op);

  /// Elements per 16-byte access when a copy between a split Row fragment and
  /// memory can move whole 16-byte pieces of each thread's row segment (see
  /// vectorWidth); 0 otherwise.
  int64_t rowVectorWidth(CopyOp op, Value fragment);

  /// The copy of rowVectorWidth: per owned row, the thread's segment in
  /// `width`-element vectors (a global piece past the tensor's end reads as
  /// zeros and is not written).
  void copyRowVectors(CopyOp op, Value fragment, int64_t width);

  /// A copy of an Mma accumulator to shared or global memory can store each
  /// thread's column pairs (slots 2i, 2i+1: adjacent columns of one row) as
  /// one access: the fragment's columns run along the destination's last,
  /// contiguous dimension, which has an even extent and an even offset (a
  /// pair is then wholly inside a ragged tensor or wholly past its end). A
  /// swizzled tile keeps pairs together (it moves 16-byte chunks).
  bool mmaPairs(CopyOp op, Value fragment);

  /// The copy of mmaPairs: one 2-element store per column pair (crossed
  /// where pairsConflict), or, into a matrixStoreReady tile at a column
  /// offset of a multiple of 8, a stmatrix.x4 per 16x16 block.
  void copyMmaPairs(CopyOp op, Value fragment);
  /// 8-byte column pairs stored into `tile` conflict: 32-bit elements in a
  /// 128-byte swizzle atom, whose XOR by row % 8 sends a half-warp's rows r
  /// and r ^ 1 to the same two 16-byte chunks (two wavefronts for one).
  bool pairsConflict(Value tile);
  /// Stores `pair` (columns c, c + 1 of row `at`) as two 32-bit stores, the
  /// odd rows' second element first: each store's lanes then fill the 32
  /// banks once (rows r and r ^ 1 take different words of a chunk).
  void storeCrossedPair(Location loc, Value pair, Value tile, ArrayRef<Value> at);
  /// For copyMmaPairs into the tile handed to the producer (a 32-bit tile in
  /// a 128-byte atom, written in a loop): the swizzled element of each slot
  /// pair's first and second store as a few per-thread bases plus a constant
  /// (CrossedPairBases::element). wgmmaElement's per-store XOR gave each
  /// thread as many loop-invariant addresses as it has pairs, which LLVM
  /// hoisted and kept live across the loop (they spilled); a base plus a
  /// constant folds into the store's address instead. Empty where the
  /// fragment or the copy does not have the shape the identity needs.
  struct CrossedPairBases {
    /// first[j], second[j]: the bases of pairs whose column offset % 32 is
    /// 8 j; element(slot) adds the slot's constant part.
    SmallVector<Value, 4> first, second;
    int64_t tileRows = 0;
  };
  std::optional<CrossedPairBases> crossedPairBases(Location loc, CopyOp op,
                                                   const FragmentLayout &layout);
  /// Whether `op` copies a whole Mma (or wgmma) fragment into another of the
  /// same shape and layout (attention's P = f16(S)): slot i to slot i.
  bool sameMmaFragments(CopyOp op);
  /// Its copy, in slot pairs: each pair converted as one vector (one
  /// cvt.rn.f16x2.f32 for f32 -> f16, where element by element it took two
  /// conversions and the shifts and ors that pack them for the gemm).
  void copySameMmaFragments(CopyOp op);

  /// A fragment side of a copy-like op (which `verb`s, "copies" or "adds")
  /// must be the whole fragment.
  LogicalResult checkWholeFragment(Operation *op, StringRef verb, Value buffer,
                                   OperandRange offsets, ArrayRef<int64_t> sizes);

  /// Elements per 16-byte access when a copy between global and shared
  /// buffers can move whole 16-byte pieces of its last dimension: same element
  /// type, no index-map layout, last dimension contiguous on both sides,
  /// 16-byte aligned and (for global tensors) inside the tensor. 0 otherwise.
  int64_t vectorWidth(CopyOp op);

  LogicalResult lowerCopy(CopyOp op);

  /// tl.atomic_add_tile: by TMA where planned (lowerTmaReduce), by one vector
  /// reduction per accumulator tile where mmaTileAdds, else every element by
  /// an atomic add: a fragment's by the threads that own them, a shared
  /// tile's spread over the threads after a barrier.
  LogicalResult lowerAtomicAddTile(AtomicAddTileOp op);

  /// The add of an f32 Mma (or wgmma) accumulator into a global f32 tensor
  /// laid out in accumulator tile order (isMmaTileOrder: each m16n8 tile's
  /// four elements of a thread at 16 consecutive bytes) can go as one
  /// red.global.add.v4.f32 per tile and thread: the target has vector
  /// reductions (sm_90, sm_90a), and the region's offsets keep every tile
  /// whole (row offset a multiple of 16, column offset of 8) and wholly
  /// inside the tensor or wholly past its end (extents multiples of 16 and 8).
  bool mmaTileAdds(AtomicAddTileOp op);
  /// The adds of mmaTileAdds: a quarter of the element adds' instructions,
  /// each warp's covering one 512-byte tile.
  void addMmaTiles(AtomicAddTileOp op);

  LogicalResult lowerGemm(GemmOp op);

  /// The A fragment of an Mma gemm holds, in each thread, the elements mma.sync
  /// wants from it: its layout is the accumulator's, over whole rows per warp.
  bool aFromRegisters(GemmOp op);

  /// A shared copy of a fragment for an op whose threads need elements other
  /// threads hold: each thread stores the elements it owns, and barriers
  /// order the copy after earlier readers of the tile and before the reads.
  Value stageThroughShared(Location loc, Value fragment);

  //===--------------------------------------------------------------------===//
  // Tensor cores
  //===--------------------------------------------------------------------===//

  /// Two f16/bf16 values packed into the i32 an mma.sync register holds.
  /// As a 2-element vector bitcast to i32: NVPTX makes it one mov (or one
  /// cvt.rn.f16x2.f32 with the conversion), not a shift-and-or per pair.
  Value pack(Location loc, Value lo, Value hi, Type half);

  /// A gemm on wgmma accumulators: wgmma.mma_async m64nNk16 per 64-row
  /// block, N chunk and k step, B (and A) through shared-memory descriptors,
  /// or A from the registers of a fragment in the wgmma layout (RS wgmma).
  /// Gemms the author left in flight (wg_wait = -1) on the wgmma path, oldest
  /// first, one commit group each: tl.wait_wgmma stores the results of those
  /// it waits for into their accumulators (LowerWgmma.cpp).
  struct InFlightGemm {
    Location loc;
    Block *block;                  // the wait must be in this block too
    SmallVector<Value, 3> touched; // the accumulator, and A from registers
    SmallVector<Value, 2> reads;   // the shared tiles the wgmma reads while it runs
    Value storage;                 // the accumulator's registers
    struct Result {
      int64_t firstSlot, width;
      Value value; // the wgmma's accumulator struct
    };
    SmallVector<Result> results;
  };
  LogicalResult lowerGemmWgmma(GemmOp op);
  /// wgmma.wait_group, then the results of the gemms it waited for.
  LogicalResult lowerWaitWgmma(WaitWgmmaOp op);
  void storeWgmmaResults(const InFlightGemm &gemm);
  /// While gemms are in flight, `op` may do register work on other fragments,
  /// write shared bytes no gemm in flight reads (element stores, a copy from
  /// a fragment), add a tile into global memory (in a turn too) and issue
  /// gemms, nothing else (an error says why, at the author's line).
  LogicalResult checkWhileInFlight(Operation *op);
  /// A store in `op` to shared bytes that a gemm in flight may read (or to
  /// bytes not known), or null.
  Operation *writeToSharedReadInFlight(Operation *op);
  /// A gemm in flight may read the bytes of the shared tile `buffer` (or
  /// they are not known).
  bool readInFlight(Value buffer);
  /// RS wgmma's A operand for this thread's 64-row block `block` and k step
  /// `kk`: four 32-bit registers of element pairs of the fragment `a`.
  SmallVector<Value, 4> wgmmaRegistersA(Location loc, const Fragment &a, int64_t block, int64_t kk);
  /// One wgmma.mma_async m64n`width`k16 with A in registers (inline PTX: the
  /// NVVM dialect has no such op): the accumulator struct in, the new one out.
  Value wgmmaRegistersAAsync(Location loc, Value accumulator, ArrayRef<Value> a, Value descB,
                             int64_t width, bool bf16, bool transB, bool scaleD);

  /// mma.sync m16n8k16 row.col with f32 accumulators (nvvm.mma.sync).
  SmallVector<Value> mma(Location loc, ArrayRef<Value> a, ArrayRef<Value> b, ArrayRef<Value> c,
                         bool bf16);

  /// Inline PTX without side effects (LLVM may move, merge or drop it, but
  /// cannot see through it).
  Value inlineAsm(Location loc, Type resultType, ValueRange operands, const std::string &text,
                  StringRef constraints);

  /// A global pointer (address space 1) `offset` bytes past `base`, a
  /// buffer's aligned pointer (memref.extract_aligned_pointer_as_index).
  static Value globalPointer(OpBuilder &b, Location loc, Value base, Value offset);

  /// The 32-bit shared-memory address of buffer[indices] (the last two
  /// indices swizzled where the tile is).
  Value sharedAddress(Location loc, Value buffer, ValueRange indices);
  /// The 32-bit shared-memory address of the buffer's element `linear`
  /// elements from its start (an offset already through any swizzle).
  Value sharedElementAddress(Location loc, Value buffer, Value linear);
  Value sharedAddress(Location loc, Value buffer, Value row, Value col);

  /// ldmatrix.x4: four 8x8 b16 matrices whose rows this lane's `address`
  /// names (lanes 8i..8i+7 give matrix i's rows); register i holds matrix i.
  /// Through the NVVM intrinsic, which reads shared memory only: it stays
  /// after the barrier that publishes the tile yet schedules freely.
  SmallVector<Value> ldmatrix(Location loc, Value address, bool transpose);

  /// The shared address of ldmatrix row (row + rowStep, col + colStep) of
  /// `buffer`, where row and col are this lane's (runtime) coordinates and
  /// the steps compile-time ones. In a swizzled tile the swizzle commutes with
  /// steps of 8 rows and of 16-element column pairs when the lane's column is
  /// its 8-element half (0 or 8) plus a warp offset that is a multiple of
  /// `warpStride` (0: none), a power of two, at least 16 and above every step: the step's bits
  /// are then disjoint from the lane's, and
  ///   address = (laneAddress ^ (step's bytes within the 128-byte line)) + constant.
  /// Every ldmatrix of an operand then shares a few lane addresses, instead of
  /// a register per (step, tile) that lives through the loop. (The tile and
  /// every row start 128-byte aligned, so the XOR only touches chunk bits.)
  Value ldmatrixAddress(Location loc, Value buffer, Value row, Value col, int64_t rowStep,
                        int64_t colStep, int64_t warpStride);
  /// The gemm being lowered's lane addresses, per (tile, row, column, xor).
  llvm::DenseMap<std::tuple<Value, Value, Value, int64_t>, Value> laneAddresses;

  /// ldmatrix can feed mma from this shared operand: 16-bit rows whose length
  /// keeps every 8-element row segment 16-byte aligned.
  bool ldmatrixReady(Value buffer);

  /// gemm with an Mma accumulator: per warp, per 16-deep K step, A and B
  /// fragments gathered from shared memory (or A from an Mma fragment, whose
  /// accumulator layout is mma's A layout) and one mma.sync per 16x8 tile.
  LogicalResult lowerGemmMma(GemmOp op);

  /// Row reduction of an Mma fragment: each thread combines the columns it
  /// holds, then the four lanes of a row combine by shuffles.
  /// Row reductions of an Mma fragment: each thread combines its elements of
  /// a row, the four lanes of a quad combine by shuffles; where several warps
  /// share the rows (warpsN > 1), each warp's partial goes through shared
  /// memory and every thread combines the warps' partials in warp order.
  LogicalResult lowerReduceMma(ReduceOp op);

  /// Row reduction of a split Row fragment into a (replicated) 1-D one: each
  /// thread combines its segment of the row, then the row's threads (adjacent
  /// lanes) combine by xor shuffles, so that each of them holds the result.
  LogicalResult lowerReduceSplitRows(ReduceOp op);

  LogicalResult lowerReduce(ReduceOp op);

  /// True when `op`'s body accesses a fragment / writes shared memory.
  bool bodyTouches(Operation *op, bool fragmentsNotShared);

  /// The fragment whose layout decides which thread runs which iteration of a
  /// parallel loop: one indexed by all the loop's indices if there is one.
  Value drivingFragment(ParallelOp op);

  /// For a rescale loop (tl.unit_rescale, unitRescaleFactor): a guard that skips the multiplies
  /// when every factor the warp holds is exactly 1 (x * 1 == x), decided by a
  /// warp vote so that the branch stays uniform. Returns the guard; the
  /// caller emits the loop in its then-block.
  scf::IfOp skipUnitScale(Location loc, Value scale);

  LogicalResult lowerParallel(ParallelOp op);

  /// In the straight-line code [begin, end) of an unrolled parallel loop,
  /// divisions by one value become multiplications by its reciprocal,
  /// computed once (`acc_o /= logsum` in attention: one division per row, not
  /// per element; the result may differ from the quotient in the last bit).
  /// f32 only: a 16-bit reciprocal overflows long before the quotient does.
  /// Repeated loads of one fragment slot are merged first, so that the
  /// elements of a row see one divisor.
  void shareDivisors(Operation *begin, Operation *end);

  /// With limits.stmatrix: the copies' stores that write whole 16x16 blocks
  /// of a matrixStoreReady tile at their own (row, column) become one
  /// stmatrix.x4 each, where the block's last store stood; taken out of
  /// `copies` (LowerMatrixStores.cpp).
  void storeMatrices(MutableArrayRef<UnrolledStores> copies, const FragmentLayout &layout);
  /// With limits.stmatrix, stmatrix can write `tile`: shared, unannotated,
  /// 16-bit, its 8-element row segments 16-byte aligned.
  bool matrixStoreReady(Value tile);
  /// This lane's row and column of the stmatrix.x4 that stores 16x16 block
  /// (tileRow, tileColumn .. tileColumn + 1) of an Mma fragment: its tiles'
  /// rows and columns, plus l % 16 and 8 (l / 16).
  std::pair<Value, Value> matrixLane(Location loc, const FragmentLayout &layout, int64_t tileRow,
                                     int64_t tileColumn);
  /// stmatrix.x4 at this lane's `address` of four 2-element vectors of a
  /// 16-bit type: the block's slot pairs in slot order (register i: slots
  /// 4t+2i, 4t+2i+1).
  void storeMatrix(Location loc, Value address, ArrayRef<Value> pairs);

  /// Rewrites the element-level ops of a parallel body: fragment accesses go
  /// to the thread's own element (they must use the loop's own indices),
  /// atomic_add becomes atomic_rmw.
  LogicalResult lowerElementOps(Operation *root, const Owned *owned, ValueRange ivs);

  gpu::GPUFuncOp func;
  Operation *funcOp;
  IRRewriter rewriter;
  int64_t threads;
  const LayoutMap &layouts;
  Value tid, sharedBase, lane, warpId;
  FragmentLayouts layouts_;
  ResourceLimits limits;
  int64_t sharedBytes = 0;
  /// Every shared tile placed (allocateShared), for checkSharedLimit.
  struct PlacedTile {
    Location loc;
    MemRefType type;
    int64_t offset, bytes, copies;
  };
  SmallVector<PlacedTile> placedTiles;
  llvm::MapVector<Value, Fragment> fragments;
  llvm::DenseSet<Value> shared, locals, swizzled, swizzleRequests, wgmmaRequests;
  /// wgmma operand views -> their atom width in bytes (wgmmaElement).
  llvm::DenseMap<Value, int64_t> wgmmaAtoms;
  /// Shared tiles with rotating copies for a pipelined loop (see PipelinePlan.h).
  struct Rotating {
    int64_t offset, bytes, copies;
    bool swizzle;
    int64_t wgmmaAtom;
  };
  llvm::DenseMap<Value, Rotating> rotating;
  /// A warp-specialised loop's producer branch and the barrier of every
  /// thread before it (separateConsumers).
  struct ProducerWarpgroup {
    Operation *branch, *allThreadsBarrier;
    Value role; // the warpgroup index, uniform (from lane 0)
  };
  /// Registers a producer warpgroup thread keeps (setmaxnreg.dec), and what
  /// that leaves each consumer thread (setmaxnreg.inc).
  static constexpr int32_t kProducerRegisters = 24;
  /// The first named barrier of tl.pingpong's turns, one per warpgroup
  /// after 0 (every thread) and 1 (the consumers of a producer warpgroup).
  static constexpr int32_t kPingpongBarriers = 2;
  /// Whether the kernel's pingpong chain is in place (chainPingpongTurns).
  bool pingpongChained = false;
  int32_t consumerRegisters() const;
  /// Whether the kernel moves registers so (more than 256 threads).
  bool movesRegisters() const;
  std::optional<ProducerWarpgroup> producer;
  /// A reduce-add the producer warpgroup issues for the consumers
  /// (tl.producer_reduce, LowerWarpSpecialized.cpp): its tile, the mbarriers
  /// it is handed over on (full: the consumers' writes are in; empty: the
  /// boxes have read it), and the consumers' loop index and start.
  struct ProducerReduce {
    Value tile, full, empty, k, start;
  };
  std::optional<ProducerReduce> producerReduce;
  /// Before a write of the tile the producer reduces from: the consumers
  /// wait until the producer's boxes of the iteration before have read it.
  void waitProducerReduceRead(Location loc, Value tile);
  /// The producer's loop issuing `add` (in the warp-specialised loop's
  /// `body`, or in a tl.in_turn there: the producer then takes the turn) for
  /// every iteration, in the producer's `branch`.
  void issueProducerReduces(AtomicAddTileOp add, Block &body, Value start, Value end,
                            scf::IfOp branch);
  /// The tensor maps the kernel takes after its own parameters, in order.
  SmallVector<Attribute> tensorMaps;
  /// Gemms of pipelined loops planned with their wgmma batches in flight.
  llvm::DenseSet<Operation *> wgmmaInFlight;
  /// Gemms whose operand tiles their pipelined loop has fenced and published
  /// (publishWgmmaOperands).
  llvm::DenseSet<Operation *> wgmmaOperandsPublished;
  /// Gemms the author left in flight (wg_wait = -1) on the wgmma path, oldest
  /// first (InFlightGemm).
  SmallVector<InFlightGemm> inFlightGemms;
  /// tl.tma_copy loads issued and not yet waited for: their mbarriers, and
  /// the shared bytes [first, end) they write (nullopt: not known).
  struct PendingTmaLoad {
    Value mbarrier;
    std::optional<std::array<int64_t, 2>> bytes;
  };
  SmallVector<PendingTmaLoad> pendingTmaLoads;
  /// The bytes of dynamic shared memory a tile's view covers (its
  /// tl.shared_range), when known.
  static std::optional<std::array<int64_t, 2>> sharedBytesOf(Value tile);
  llvm::DenseMap<Value, int64_t> plannedOffsets; // alloc_shared -> byte offset
  PipelinePlans pipelines;
  /// The ticks hint of mbarrier.try_wait.parity: how long one try may
  /// suspend the thread (ns) before the loop around it tries again.
  static constexpr int32_t kTryWaitTicks = 0x989680;
  /// Steps per thread up to which forSpread unrolls.
  static constexpr int64_t kUnrolledSteps = 4;
  /// Steps per batch of forSpreadBatched.
  static constexpr int64_t kBatchedSteps = 8;
};

} // namespace tl::gpu_lowering
