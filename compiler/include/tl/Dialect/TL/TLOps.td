//===- TLOps.td - tile-level operators ---------------------*- tablegen -*-===//
#ifndef TL_OPS_TD
#define TL_OPS_TD

include "tl/Dialect/TL/TLDialect.td"
include "tl/Dialect/TL/TLAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Kernel and loops
//===----------------------------------------------------------------------===//

// The bodies of tl.kernel, tl.parallel and tl.pipelined print as `$body`
// would, and parse through parseBody (TLOps.cpp), which cleans up after a
// body that fails to parse.

def TL_KernelOp : TL_Op<"kernel", [SingleBlock, NoTerminator,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "a kernel launched over a grid of thread blocks";
  let description = [{
    `grid` has one to three extents (x, y, z); the body's block arguments are
    the block indices, one per grid dimension. `threads` is the block size.
    A kernel sits directly in a func.func, alone but for the return; the
    function's arguments are its global tensors, and the only values the body
    takes from outside the kernel.
  }];
  let arguments = (ins DenseI64ArrayAttr:$grid, I64Attr:$threads);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat =
      "`grid` $grid `threads` $threads attr-dict-with-keyword custom<Body>($body)";
  let hasVerifier = 1;
  // What the body uses from outside, checked once the body itself verified.
  let hasRegionVerifier = 1;
}

def TL_ParallelOp : TL_Op<"parallel", [SingleBlock, NoTerminator, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "element-wise loop nest over a tile (T.Parallel)";
  let description = [{
    Iterates the body over every point of `extents`; the body's block
    arguments are the loop indices. Iterations are independent.
  }];
  let arguments = (ins DenseI64ArrayAttr:$extents);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$extents attr-dict-with-keyword custom<Body>($body)";
  let hasVerifier = 1;
}

def TL_PipelinedOp : TL_Op<"pipelined", [SingleBlock, NoTerminator, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "serial loop whose copies may be software-pipelined (T.Pipelined)";
  let arguments = (ins Index:$start, Index:$end, I64Attr:$num_stages);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat =
      "$start `to` $end `stages` $num_stages attr-dict-with-keyword custom<Body>($body)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

class TL_AllocOp<string mnemonic, string scope> : TL_Op<mnemonic> {
  let summary = "allocate a " # scope # " buffer for the lifetime of a block";
  let results = (outs Res<AnyStaticShapeMemRef, "",
                          [MemAlloc<DefaultResource>]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    static constexpr ::tl::MemoryScope kScope = ::tl::MemoryScope::}] # scope # [{;
  }];
}
def TL_AllocSharedOp : TL_AllocOp<"alloc_shared", "shared">;
def TL_AllocFragmentOp : TL_AllocOp<"alloc_fragment", "fragment">;
def TL_AllocLocalOp : TL_AllocOp<"alloc_local", "local">;

def TL_AnnotateLayoutOp : TL_Op<"annotate_layout"> {
  let summary = "fix the layout of a buffer (swizzle or index map)";
  let arguments = (ins AnyMemRef:$buffer, AnyAttr:$layout);
  let assemblyFormat = "$buffer `layout` `(` $layout `)` attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile operators
//
// Each declares what it reads and writes (MemRead / MemWrite on its buffer
// operands), so that analyses ask the ops (MemoryEffectOpInterface) rather
// than knowing each one: pipeline planning's "is this tile only read after
// the copy", "does the loop write this tensor". tl.parallel and tl.pipelined
// have their bodies' effects. tl.kernel and tl.annotate_layout declare none:
// a kernel is never dead, and a layout annotation is metadata that must not
// be folded away.
//===----------------------------------------------------------------------===//

def TL_CopyOp : TL_Op<"copy", [AttrSizedOperandSegments]> {
  let summary = "copy a region of one buffer to a region of another";
  let description = [{
    Each side names a region by one offset and one static extent per
    dimension. The extents of both sides agree once unit extents are
    dropped (so `Q[b, i:i+64, h, :]` copies into a 64xD tile). Floating-point
    element types may differ: the copy converts. Regions of global tensors may
    run past the tensor's end; those elements are not read or written. The
    two regions must not overlap (a thread may read several elements before
    it writes any).
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$src, Variadic<Index>:$src_offsets,
                       DenseI64ArrayAttr:$src_sizes,
                       Arg<AnyMemRef, "", [MemWrite]>:$dst, Variadic<Index>:$dst_offsets,
                       DenseI64ArrayAttr:$dst_sizes);
  let assemblyFormat = [{
    $src `[` $src_offsets `]` $src_sizes `to` $dst `[` $dst_offsets `]` $dst_sizes
    attr-dict `:` type($src) `to` type($dst)
  }];
  let hasVerifier = 1;
}

def TL_FillOp : TL_Op<"fill"> {
  let summary = "set every element of an on-chip buffer (T.fill, T.clear)";
  let arguments = (ins Arg<AnyMemRef, "", [MemWrite]>:$buffer, AnyType:$value);
  let assemblyFormat = "$buffer `,` $value attr-dict `:` type($buffer) `,` type($value)";
  let hasVerifier = 1;
}

def TL_GemmOp : TL_Op<"gemm"> {
  let summary = "C += op(A) * op(B) on a tile (T.gemm)";
  let description = [{
    A is MxK (KxM when transpose_a), B is KxN (NxK when transpose_b), C is
    MxN and a fragment. With clear_accum, C is zeroed first. The warp policy
    says how warps split C: whole rows, whole columns, or a square grid
    (mma.sync; wgmma's warpgroups split M). With no_wgmma, the gemm, and so
    its kernel, stays on mma.sync on sm_90a. wg_wait (TileLang's) is 0: the
    gemm completes where it stands; or -1: as wgmma it stays in flight, and C
    holds its result after a later tl.wait_wgmma in the same block, with only
    register work on other fragments between (elsewhere it completes at once).
  }];
  // C is read too (C += A * B), but with clear_accum: declared read anyway.
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$a, Arg<AnyMemRef, "", [MemRead]>:$b,
                       Arg<AnyMemRef, "", [MemRead, MemWrite]>:$c,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       DefaultValuedAttr<TL_GemmWarpPolicyAttr,
                           "::tl::GemmWarpPolicy::Square">:$policy,
                       UnitAttr:$clear_accum, UnitAttr:$no_wgmma,
                       DefaultValuedAttr<I64Attr, "0">:$wg_wait);
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)
  }];
  let hasVerifier = 1;
}

def TL_WaitWgmmaOp : TL_Op<"wait_wgmma", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for the gemms left in flight (T.wait_wgmma)";
  let description = [{
    Waits until at most `pending` of the gemms this block left in flight
    (wg_wait = -1) still run; the accumulators of the others then hold their
    results. Where gemms do not stay in flight (mma.sync, the CPU) it does
    nothing.
  }];
  let arguments = (ins I64Attr:$pending);
  let assemblyFormat = "$pending attr-dict";
  let hasVerifier = 1;
}

def TL_ReduceOp : TL_Op<"reduce"> {
  let summary = "reduce a tile along one dimension (T.reduce_max, ...)";
  let description = [{
    dst has src's shape with `dim` removed. With `clear` (the default) dst is
    overwritten; without it, the old dst values join the reduction.
  }];
  // dst is read too without `clear`: declared read anyway.
  let arguments = (ins TL_ReduceKind:$kind, Arg<AnyMemRef, "", [MemRead]>:$src,
                       Arg<AnyMemRef, "", [MemRead, MemWrite]>:$dst,
                       I64Attr:$dim, DefaultValuedAttr<BoolAttr, "true">:$clear);
  let assemblyFormat = [{
    $kind $src `->` $dst attr-dict `:` type($src) `->` type($dst)
  }];
  let hasVerifier = 1;
}

def TL_AtomicAddOp : TL_Op<"atomic_add"> {
  let summary = "atomically add a value to one element of a global or shared buffer";
  let arguments = (ins Arg<AnyMemRef, "", [MemRead, MemWrite]>:$dst, Variadic<Index>:$indices,
                       AnyType:$value);
  let assemblyFormat = [{
    $dst `[` $indices `]` `,` $value attr-dict `:` type($dst) `,` type($value)
  }];
  let hasVerifier = 1;
}

def TL_AtomicAddTileOp : TL_Op<"atomic_add_tile", [AttrSizedOperandSegments]> {
  let summary = "atomically add a tile into a region of a global tensor (T.atomic_add)";
  let description = [{
    dst[region] += src[region], element by element, each addition atomic:
    blocks may add into the same elements at once. The regions are named as
    tl.copy's; the source is a shared tile or a fragment, the
    destination a global tensor, of the same float type. Elements of the
    destination region past the tensor's end are not added to. On sm_90a a
    whole shared tile of a kernel tensor without an index-map layout goes as
    TMA reduce-add boxes (tl-plan-tma-copies): one thread issues them after
    the block's writes of the tile (in a loop with a producer warpgroup, the
    producer's, tl.producer_reduce), and the copy engine adds in L2.
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$src, Variadic<Index>:$src_offsets,
                       DenseI64ArrayAttr:$src_sizes,
                       Arg<AnyMemRef, "", [MemRead, MemWrite]>:$dst, Variadic<Index>:$dst_offsets,
                       DenseI64ArrayAttr:$dst_sizes);
  let assemblyFormat = [{
    $src `[` $src_offsets `]` $src_sizes `to` $dst `[` $dst_offsets `]` $dst_sizes
    attr-dict `:` type($src) `to` type($dst)
  }];
  let hasVerifier = 1;
}

def TL_PingpongOp : TL_Op<"pingpong", [SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "the block's warpgroups issue the body's gemms one at a time, in turn";
  let description = [{
    FlashAttention-3's pingpong between consumer warpgroups: warpgroup w
    waits for warpgroup w - 1 to have issued its part of the body, issues its
    own, and lets warpgroup w + 1 go (round robin; the last hands over to the
    first). With the gemms left in flight (wg_wait = -1) and waited for after
    the body, one warpgroup's softmax then runs while the next one's gemms
    take the tensor cores. The body holds gemms only; it cannot stand in a
    tl.last_to_arrive. Every warpgroup takes every turn (the kernel's control
    flow does not depend on the thread), so the turns form one chain per
    kernel: before the kernel-level op (the outermost loop) around the first
    tl.pingpong, warpgroup 0 is let go; after the one around the last, the
    last warpgroup's hand-over is taken. Where the kernel has fewer than two
    whole warpgroups, or its gemms take mma.sync (or on the CPU), the body
    runs where it stands.
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword custom<Body>($body)";
  let hasVerifier = 1;
}

def TL_InTurnOp : TL_Op<"in_turn", [SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "run the body when a global turn counter reaches this block's turn";
  let description = [{
    The whole block waits until the i32 element `counter[indices]` of a
    global tensor equals `turn`, runs the body, and then sets the element to
    `next` (the next turn, or 0 from the last turn so that the counter is
    ready for the next launch), with the body's global writes visible to the
    block that sees it. Blocks that share an element so run their bodies one
    at a time, in the order of their turns: atomic adds in the body happen in
    a fixed order (a deterministic sum). The turns of one element must be
    taken in the grid's launch order (x fastest, then y, then z) and start at
    the element's value before the launch. A turn that never comes would
    hang: after about ten seconds the GPU traps and the CPU backend's launch
    fails with an error.
  }];
  let arguments = (ins Arg<MemRefOf<[I32]>, "", [MemRead, MemWrite]>:$counter,
                       Variadic<Index>:$indices, Index:$turn, Index:$next);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $counter `[` $indices `]` `turn` $turn `next` $next attr-dict-with-keyword `:` type($counter)
    custom<Body>($body)
  }];
  let hasVerifier = 1;
}

def TL_LastToArriveOp : TL_Op<"last_to_arrive", [SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "run the body in the block that arrives last at a global counter";
  let description = [{
    The whole block adds one to the i32 element `counter[indices]` of a
    global tensor, after all of its earlier global writes; the block whose
    addition brings it to `arrivals` runs the body, seeing every global
    write the other arriving blocks made before they arrived, and sets the
    element back to 0 for the next launch. Blocks that each write a part of
    a result so leave its completion to whichever of them finishes last (a
    split sum's fix-up: the backward's dQ rows converted once every key
    block has added into them). Exactly `arrivals` blocks must arrive at an
    element in a launch, starting from 0; fewer never run the body, more
    run it twice. On sm_90a a kernel that waits on mbarriers (TMA loads, a
    producer warpgroup) cannot take it: tl-check-sync refuses its barrier
    with a reduction.
  }];
  let arguments = (ins Arg<MemRefOf<[I32]>, "", [MemRead, MemWrite]>:$counter,
                       Variadic<Index>:$indices, Index:$arrivals);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $counter `[` $indices `]` `arrivals` $arrivals attr-dict-with-keyword `:` type($counter)
    custom<Body>($body)
  }];
  let hasVerifier = 1;
}

#endif // TL_OPS_TD
