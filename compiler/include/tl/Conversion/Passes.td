//===- Passes.td - tl conversion passes --------------------*- tablegen -*-===//
#ifndef TL_CONVERSION_PASSES_TD
#define TL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTLToCPU : Pass<"convert-tl-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lower tl programs to loops over memrefs that run on the host";
  let description = [{
    Each tile op becomes its loop nest over the whole tile (no thread
    partitioning): on-chip buffers become per-block stack allocations, gemm
    and reduce become scalar loop nests, parallel and pipelined loops become
    scf.for. Accesses to a global tensor with an index-map layout go through
    that map. The kernel's body becomes the function's body and its block
    indices trailing index arguments; the grid and thread count stay on the
    function as `tl.grid` and `tl.threads` for the host runtime, which runs
    the blocks on a thread pool. tl.in_turn waits in a call to the host
    runtime's tl_cpu_wait_turn, which gives up after ten seconds and marks
    the module's tl_turn_status (HostJIT.cpp).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def InferFragmentLayouts : Pass<"tl-infer-layouts", "::mlir::ModuleOp"> {
  let summary = "Choose every fragment's layout and record it in the IR";
  let description = [{
    Each tl.alloc_fragment gets a `tl.layout` attribute: #tl.mma<warps =
    [m, n]> (the mma.sync accumulator layout) or #tl.mma_row (a row vector of
    one) where the kernel's gemms allow and every fragment can follow them
    through copies, row reductions and parallel loops; otherwise every
    fragment takes #tl.row<split = s> (thread t owns rows t, t + T, ...;
    s threads share a row in kernels without gemms). The tl.kernel gets
    `tl.fragment_layout`: "mma", or "row: " and why not, with the source line
    that decided it. convert-tl-to-gpu follows these attributes.

    With `wgmma` (sm_90a), a kernel whose every gemm can run as wgmma from
    shared memory (see wgmmaEligible) gets #tl.wgmma / #tl.wgmma_row instead:
    the same 16x8 pattern with each warpgroup holding contiguous 64-row
    blocks. Its gemm operand tiles then take the wgmma shared layout.
  }];
  let options = [
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "choose wgmma accumulators where every gemm allows (sm_90a)">,
  ];
}

def MarkUnitRescales : Pass<"tl-mark-unit-rescales", "::mlir::ModuleOp"> {
  let summary = "Mark online softmax's rescales, which the GPU lowering skips when every factor is 1";
  let description = [{
    A tl.parallel that is `acc[i, j] = acc[i, j] * scale[i]`, with acc in an
    mma or wgmma accumulator layout and scale in the matching row layout (as
    tl-infer-layouts recorded them), gets `tl.unit_rescale`. convert-tl-to-gpu
    then runs its unrolled body only when some lane of the warp holds a factor
    other than 1 (vote.any): online softmax's rescale, once each row's maximum
    has settled, costs a vote instead of a multiply per accumulator element.
    Exact either way. Runs after tl-infer-layouts.
  }];
}

def PlanPipelines : Pass<"tl-plan-pipelines", "::mlir::ModuleOp"> {
  let summary = "Choose which copies of pipelined loops go asynchronous";
  let description = [{
    In a tl.pipelined loop with num_stages >= 1, the global -> shared copies
    that can be issued num_stages iterations ahead as cp.async groups get
    `tl.async_copy` (the bytes a thread moves a piece); their tiles get
    `tl.rotating_copies` (num_stages + 1); copies before the loop that can
    overlap its first iterations get `tl.async_entry_copy`, and the loop
    `tl.waits_entry_copies`. On the wgmma path a loop may keep its wgmma
    batches in flight (`tl.wgmma_in_flight`), with `tma` load its tiles by
    TMA on mbarriers (`tl.tma_loads`) and, with `warp-specialize`, have them
    issued by a producer warpgroup (`tl.warp_specialized`). The conditions are in
    PipelinePlan.h.
  }];
  let options = [
    Option<"tma", "tma", "bool", /*default=*/"true",
           "TMA loads for the loops whose copies allow them (the wgmma path)">,
    Option<"warpSpecialize", "warp-specialize", "bool", /*default=*/"true",
           "a producer warpgroup for the TMA loop that allows one">,
  ];
}

def PlanTmaCopies : Pass<"tl-plan-tma-copies", "::mlir::ModuleOp"> {
  let summary = "Choose the top-level tile copies that go by TMA (sm_90a)";
  let description = [{
    A tl.copy directly in a kernel's body that moves a whole 2-D shared tile
    of 16-bit elements from or to a region of a kernel tensor the TMA engine
    can address gets `tl.tma_copy`: the lowering loads it with
    cp.async.bulk.tensor boxes completing on an mbarrier, or stores it with
    bulk-group boxes (edges past the tensor's end are zero-filled on loads and
    clipped on stores). The tile takes the swizzle-atom layout of the wgmma
    operands (WgmmaOperands.h), which is the boxes' swizzle. Copies in loops
    (pipelined ones are tl-plan-pipelines' work), tiles a loop rotates, tiles
    an annotate_layout places, and tiles an mma.sync gemm reads stay as they
    are. A tl.atomic_add_tile of a whole shared tile into such a region gets
    `tl.tma_copy` too (TMA reduce-add boxes), and, as the only one in a loop
    with a producer warpgroup whose producer can compute its offsets,
    `tl.producer_reduce`: the producer issues it. Run only for a Hopper target.
  }];
}

def PlanSharedMemory : Pass<"tl-plan-shared-memory", "::mlir::ModuleOp"> {
  let summary = "Place every shared tile in dynamic shared memory";
  let description = [{
    Each tl.alloc_shared gets `tl.offset`, its byte offset in the kernel's
    dynamic shared memory: a tile is live from the first to the last op of
    the kernel body that uses it (a use inside a loop keeps it live for the
    whole loop), and tiles whose lives do not overlap share bytes (first fit,
    128-byte aligned, largest first; a rotating tile takes all its copies).
    Runs after tl-plan-pipelines.
  }];
}

def ApproximateMath : Pass<"tl-approximate-math", "::mlir::ModuleOp"> {
  let summary = "exp2/log2 as the PTX approximations, in GPU kernels";
  let description = [{
    In every gpu.func: math.exp2 and math.log2 (and exp, log through them)
    become llvm.nvvm.ex2.approx.ftz.f / lg2.approx.ftz.f, as the fastest
    attention kernels use them; abs, sqrt and rsqrt become LLVM intrinsics.
    Required on the GPU path: convert-gpu-to-nvvm would otherwise call
    libdevice, which tlc does not link.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def NarrowLoopIndices : Pass<"tl-narrow-loop-indices"> {
  let summary = "Count scf.for loops in 32 bits where their bounds fit";
  let description = [{
    An scf.for over `index`, inside no other scf.for, whose lower bound,
    upper bound and step integer range analysis proves to lie in
    [0, 2^31 - 1] (one step past the upper bound included) becomes an i32
    loop; its body reads the index as `arith.index_castui` of the i32 one.
    arith-int-range-narrowing, after it, then narrows the index math fed by
    the loop to 32 bits as it does the thread's, and LLVM keeps the loop
    counter and the values it hoists out of the loop (a causal mask's
    per-element column indices) in one register each instead of two. Loops
    inside loops (a Row fragment's per-thread element loops) keep `index`:
    LLVM unrolls i32 ones further, at a cost in registers.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def CheckSynchronisation : Pass<"tl-check-sync", "::mlir::ModuleOp"> {
  let summary = "Refuse lowered kernels whose Hopper synchronisation cannot work";
  let description = [{
    Checks, on every lowered gpu.func, what would otherwise hang the GPU or
    silently serialise it, and reports it as an error at the op's location:
    - an mbarrier armed for N transaction bytes whose TMA boxes, issued next
      in the same block on it, bring another number (a wait that never
      completes, or completes early);
    - a wgmma under a branch on the thread index that ptxas cannot prove
      uniform in each warpgroup (only an index broadcast by a shuffle is);
    - a wgmma accumulator read or written by anything but another wgmma
      before the next wgmma.wait_group;
    - an mbarrier wait that can hang or pass on more than one phase: every
      thread's barrier and mbarrier events (interpreted from the thread and
      loop indices) run against each other in every order, with several
      trip counts where a loop's is not a constant (MbarrierPhases.cpp).
  }];
}

def ElideBarriers : Pass<"tl-elide-barriers", "::mlir::ModuleOp"> {
  let summary = "Remove the barriers of GPU kernels that order nothing";
  let description = [{
    The lowering fences every shared write with barriers; this pass removes
    a gpu.barrier when no pair of conflicting accesses (same bytes, one a
    write) lies on its two sides between the neighbouring barriers. Shared
    accesses are told apart by the byte ranges their views carry
    (`tl.shared_range`), global ones by kernel argument. BarrierElision.h has
    the rules and what it assumes.
  }];
  let options = [
    Option<"asyncProxy", "async-proxy", "bool", /*default=*/"false",
           "also see through the wgmma path's synchronisation: the consumers' "
           "named barrier (id 1) as a barrier, a proxy fence as publishing the "
           "writes since the last one, wgmma as reading the tiles its "
           "descriptors name (off by default: it timed level with the default)">
  ];
}

def PassTensorMaps : Pass<"tl-pass-tensor-maps"> {
  let summary = "Make a lowered kernel's tensor-map parameters by-value grid constants";
  let description = [{
    After convert-gpu-to-nvvm: the trailing parameters of an nvvm.kernel
    llvm.func that lists tensor maps (`tl.tensor_maps`, one per parameter, in
    order) become 128-byte by-value, 64-byte aligned `nvvm.grid_constant`
    parameters, as TMA wants a CUtensorMap (`.param .align 64 .b8 [128]`,
    addressed in the parameter space). The gpu.func cannot carry them itself:
    the NVVM dialect allows grid constants on kernels only, and the
    conversion drops by-value attributes.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
}

def ConvertTLToGPU : Pass<"convert-tl-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower tl programs to per-thread code in a gpu.module";
  let description = [{
    Each kernel becomes a gpu.func in a gpu.module, lowered by one walker
    (KernelLowering) over its body in program order:

    - fragment layouts: the mma.sync layout (m16n8k16 warp tiles; row
      reductions by quad shuffles) where every fragment can take it, else the
      Row layout (thread t owns rows t, t + T, ...), which works for every
      program; the reason is kept in `tl.fragment_layout`;
    - pipelined loops: the copies that can go asynchronous are issued as
      cp.async groups `num_stages` iterations ahead into rotating copies of
      their tiles;
    - shared memory: tiles whose lives do not overlap share bytes (first fit,
      128-byte aligned), the total in `tl.shared_bytes`;
    - each tile op to per-thread code (ldmatrix + mma.sync, 16-byte vector
      copies, swizzled tiles, shuffles), with a barrier around every shared
      write; then element accesses through index maps, swizzled addresses,
      exp2/log2 as the PTX approximations, shared divisors, paired stores and
      the removal of barriers that order nothing.

    A kernel whose planned shared memory exceeds `shared-memory-limit` bytes
    (when it is set) is an error at the alloc_shared whose tile crosses the
    limit, naming the figure, the limit and `target`.
  }];
  let options = [
    Option<"sharedMemoryLimit", "shared-memory-limit", "int64_t", /*default=*/"0",
           "Dynamic shared memory a block may use, in bytes (0: no limit)">,
    Option<"sm90aPlans", "sm90a-plans", "bool", /*default=*/"true",
           "Plans that need sm_90a's instructions (wgmma fragment layouts, TMA "
           "copies and loads, producer warpgroups, wgmma kept in flight) may be "
           "lowered; false (another target) makes each an error at its op">,
    Option<"targetName", "target", "std::string", /*default=*/"\"the target\"",
           "The target (sm_90a, ...): named in resource-limit errors; sm_90 and "
           "sm_90a add accumulator tiles with vector reductions">,
    Option<"fastMath", "fast-math", "bool", /*default=*/"true",
           "Allow rewrites that may change results in the last bit: in unrolled "
           "parallel loops, divisions by one value become multiplications by "
           "its reciprocal, computed once (acc_o /= logsum)">,
    Option<"stmatrix", "stmatrix", "bool", /*default=*/"false",
           "An Mma fragment's stores to a 16-bit shared tile (copies, unrolled "
           "parallel loops) go as one stmatrix.x4 per 16x16 block (sm_90 and later: "
           "tl-gpu-lowering passes it on those targets only; the GPU compilers' default)">,
    Option<"lowWordDescriptors", "low-word-descriptors", "bool", /*default=*/"false",
           "wgmma descriptors' steps add 32 bits to their low word, the high word a "
           "constant (the GPU compilers' default)">,
    Option<"earlyTileHandBack", "early-tile-hand-back", "bool", /*default=*/"false",
           "In turns (tl.in_turn around a producer's reduce-add), the producer hands "
           "the tile back to the consumers once its boxes have read it, before the "
           "sums complete and the turn passes">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // TL_CONVERSION_PASSES_TD
