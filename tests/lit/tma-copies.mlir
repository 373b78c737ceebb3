// RUN: tl-opt %s --tl-plan-pipelines --tl-plan-tma-copies -split-input-file | FileCheck %s --check-prefix=PLAN
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true" -split-input-file | FileCheck %s
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true tma=false" -split-input-file | FileCheck %s --check-prefix=OFF
// OFF-NOT: tl.tma_copy
// OFF-NOT: nvvm.cp.async.bulk
// On sm_90a a copy at the kernel's top level that moves a whole shared tile
// from or to a kernel tensor goes by TMA (tl-plan-tma-copies): the load is
// armed and issued by thread 0 on an mbarrier of its own, which every thread
// waits for; the store follows a proxy fence and a barrier, and thread 0
// waits for its bulk group to have read the tile. The tile takes the
// swizzle-atom layout (1024-byte aligned) of the boxes.

// A tile copy: [64, 128] f16 tiles, 256-byte rows: two boxes of [64, 64]
// each way (128-byte swizzle), 16 KiB.
// PLAN-LABEL: func.func @tile_copy
// PLAN: tl.copy %arg0{{.*}} {tl.tma_copy}
// PLAN: tl.copy {{.*}} to %arg1{{.*}} {tl.tma_copy}
// CHECK-LABEL: gpu.func @tile_copy
// CHECK-SAME: %arg2: !llvm.ptr, %arg3: !llvm.ptr
// CHECK-SAME: tl.tensor_maps = [#tl.tensor_map<param = 0, box = [64, 64], swizzle = 128>, #tl.tensor_map<param = 1, box = [64, 64], swizzle = 128>]
// CHECK: nvvm.mbarrier.init
// CHECK: gpu.barrier
// CHECK: %[[BYTES:.*]] = arith.constant 16384 : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %[[BYTES]]
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg2
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.global.shared.cta %arg3
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
func.func @tile_copy(%A: memref<1000x520xf16>, %B: memref<1000x520xf16> {tl.output}) {
  tl.kernel grid [5, 16] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c128 : index
    %tile = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    tl.copy %A[%row, %col] [64, 128] to %tile[%c0, %c0] [64, 128] : memref<1000x520xf16> to memref<64x128xf16, #tl.scope<shared>>
    tl.copy %tile[%c0, %c0] [64, 128] to %B[%row, %col] [64, 128] : memref<64x128xf16, #tl.scope<shared>> to memref<1000x520xf16>
  }
  return
}

// -----

// What stays a plain copy: rows TMA cannot stride (130 f16 = 260 bytes), a
// tile of 48-byte rows (no swizzle atom), a converting copy, a copy in a loop.
// PLAN-LABEL: func.func @plain_copies
// PLAN-NOT: tl.tma_copy
// CHECK-LABEL: gpu.func @plain_copies
// CHECK-NOT: nvvm.cp.async.bulk
// CHECK: gpu.return
func.func @plain_copies(%A: memref<64x130xf16>, %B: memref<64x130xf16> {tl.output},
                        %C: memref<64x24xf16>, %D: memref<64x64xf32>, %E: memref<256x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %t = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [64, 128] to %t[%c0, %c0] [64, 128] : memref<64x130xf16> to memref<64x128xf16, #tl.scope<shared>>
    tl.copy %t[%c0, %c0] [64, 128] to %B[%c0, %c0] [64, 128] : memref<64x128xf16, #tl.scope<shared>> to memref<64x130xf16>
    %narrow = tl.alloc_shared : memref<64x24xf16, #tl.scope<shared>>
    tl.copy %C[%c0, %c0] [64, 24] to %narrow[%c0, %c0] [64, 24] : memref<64x24xf16> to memref<64x24xf16, #tl.scope<shared>>
    %converted = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    tl.copy %D[%c0, %c0] [64, 64] to %converted[%c0, %c0] [64, 64] : memref<64x64xf32> to memref<64x64xf16, #tl.scope<shared>>
    scf.for %i = %c0 to %c4 step %c1 {
      %row = arith.muli %i, %c64 : index
      tl.copy %converted[%c0, %c0] [64, 64] to %E[%row, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<256x64xf16>
    }
  }
  return
}

// -----

// Loads in a row are in flight together: each thread waits for their
// mbarriers only before the first op that could touch a tile (here the gemm),
// not between them; a fragment fill and index math may come first. A load
// into a tile annotated make_swizzled_layout goes by TMA too (the boxes'
// swizzle is one; a forward's Q tile); a store from such a tile stays with the
// threads (the backward's dK and dV: not measured).
// (The plan needs the gemm's wgmma layout: the full lowering's case only.)
// PLAN-LABEL: func.func @loads_in_a_row
// CHECK-LABEL: gpu.func @loads_in_a_row
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3
// CHECK-NOT: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4
// CHECK-NOT: nvvm.wgmma
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: gpu.return
func.func @loads_in_a_row(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %o = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    tl.annotate_layout %a layout(#tl.swizzle) : memref<64x64xf16, #tl.scope<shared>>
    tl.annotate_layout %o layout(#tl.swizzle) : memref<64x64xf16, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.fill %c, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {transpose_b} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %o[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %o[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
  }
  return
}

// -----

// Every load is waited for before its block ends, even one nothing reads
// after it (the block must not exit with the copy engine still writing its
// shared memory); and a load into bytes a pending load writes waits for that
// one first (two loads into one tile would land in either order).
// PLAN-LABEL: func.func @waited_loads
// PLAN-COUNT-4: {tl.tma_copy}
// CHECK-LABEL: gpu.func @waited_loads
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: gpu.return
func.func @waited_loads(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %unread = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %a[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
    tl.copy %A[%c0, %c0] [64, 64] to %unread[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
  }
  return
}

// -----

// tl.atomic_add_tile of a whole shared f32 tile into a kernel tensor, in a
// loop: reduce-add boxes (f32 [32, 64]: 256-byte rows, two boxes of [32, 32]
// with the 128-byte swizzle). Thread 0 issues them after the proxy fence,
// which goes before the barrier that ends the copy writing the tile, and
// does not wait; the next write of the tile waits for the boxes to have read
// it, and the kernel's end for them to complete.
// PLAN-LABEL: func.func @tile_reduce_add
// PLAN: tl.atomic_add_tile {{.*}} {tl.tma_copy}
// CHECK-LABEL: gpu.func @tile_reduce_add
// CHECK-SAME: tl.tensor_maps = [#tl.tensor_map<param = 1, box = [32, 32], swizzle = 128>]
// CHECK: scf.for
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: gpu.barrier
// CHECK: vector.store
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.reduce %arg2, %{{.*}}, box[%{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<add>}
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: scf.if
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0{{$}}
// CHECK: gpu.return
func.func @tile_reduce_add(%X: memref<4x32x64xf32>, %Acc: memref<100x64xf32>) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %t = tl.alloc_shared : memref<32x64xf32, #tl.scope<shared>>
    scf.for %k = %c0 to %c4 step %c1 {
      %row = arith.muli %k, %c32 : index
      tl.copy %X[%bx, %c0, %c0] [1, 32, 64] to %t[%c0, %c0] [32, 64] : memref<4x32x64xf32> to memref<32x64xf32, #tl.scope<shared>>
      tl.atomic_add_tile %t[%c0, %c0] [32, 64] to %Acc[%row, %c0] [32, 64] : memref<32x64xf32, #tl.scope<shared>> to memref<100x64xf32>
    }
  }
  return
}

// -----

// A wgmma accumulator copied into an f32 reduce-add tile (the 128-byte swizzle
// atom): its column pairs go as two 32-bit stores, the odd rows' second
// element first (8-byte pairs of rows r and r ^ 1 would share two chunks).
// CHECK-LABEL: gpu.func @accumulator_to_reduce_tile
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: arith.andi %{{.*}}, %c1
// CHECK: arith.select
// CHECK: memref.store
// CHECK: arith.select
// CHECK: memref.store
// CHECK-NOT: vector.store
// CHECK: nvvm.cp.async.bulk.tensor.reduce
func.func @accumulator_to_reduce_tile(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %Acc: memref<64x64xf32>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %t = tl.alloc_shared : memref<64x64xf32, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.fill %c, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.gemm %a, %b, %c {transpose_b} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %t[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32, #tl.scope<shared>>
    tl.atomic_add_tile %t[%c0, %c0] [64, 64] to %Acc[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<shared>> to memref<64x64xf32>
  }
  return
}

// -----

// Element by element too: a tile of 4 rows whose rows span two 128-byte
// atoms (the second box would start 512 bytes in, off the 1024-byte swizzle
// pattern the copy engine takes from the address), and a tensor the kernel
// also reads (nothing would order the read after the boxes' adds).
// PLAN-LABEL: func.func @reduce_tiles_refused
// PLAN-NOT: tl.tma_copy
// CHECK-LABEL: gpu.func @reduce_tiles_refused
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: memref.atomic_rmw addf
// CHECK: gpu.return
func.func @reduce_tiles_refused(%X: memref<8x64xf32>, %Acc: memref<8x64xf32>, %Read: memref<8x32xf32>, %Y: memref<8x32xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %short = tl.alloc_shared : memref<4x64xf32, #tl.scope<shared>>
    tl.copy %X[%c0, %c0] [4, 64] to %short[%c0, %c0] [4, 64] : memref<8x64xf32> to memref<4x64xf32, #tl.scope<shared>>
    tl.atomic_add_tile %short[%c0, %c0] [4, 64] to %Acc[%c0, %c0] [4, 64] : memref<4x64xf32, #tl.scope<shared>> to memref<8x64xf32>
    %t = tl.alloc_shared : memref<8x32xf32, #tl.scope<shared>>
    tl.copy %X[%c0, %c0] [8, 32] to %t[%c0, %c0] [8, 32] : memref<8x64xf32> to memref<8x32xf32, #tl.scope<shared>>
    tl.atomic_add_tile %t[%c0, %c0] [8, 32] to %Read[%c0, %c0] [8, 32] : memref<8x32xf32, #tl.scope<shared>> to memref<8x32xf32>
    tl.copy %Read[%c0, %c0] [8, 32] to %Y[%c0, %c0] [8, 32] : memref<8x32xf32> to memref<8x32xf32>
  }
  return
}

// -----

// Element by element where boxes cannot go: a fragment source, a tensor with
// an index-map layout, part of a tile.
// PLAN-LABEL: func.func @element_atomic_adds
// PLAN-NOT: tl.tma_copy
// CHECK-LABEL: gpu.func @element_atomic_adds
// CHECK-NOT: nvvm.cp.async.bulk
// CHECK: memref.atomic_rmw addf
// CHECK: gpu.return
func.func @element_atomic_adds(%X: memref<32x64xf32>, %Acc: memref<32x64xf32>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tl.alloc_fragment : memref<32x64xf32, #tl.scope<fragment>>
    tl.copy %X[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, #tl.scope<fragment>>
    tl.atomic_add_tile %f[%c0, %c0] [32, 64] to %Acc[%c0, %c0] [32, 64] : memref<32x64xf32, #tl.scope<fragment>> to memref<32x64xf32>
    %t = tl.alloc_shared : memref<32x64xf32, #tl.scope<shared>>
    tl.copy %X[%c0, %c0] [32, 64] to %t[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, #tl.scope<shared>>
    tl.atomic_add_tile %t[%c0, %c0] [16, 64] to %Acc[%c0, %c0] [16, 64] : memref<32x64xf32, #tl.scope<shared>> to memref<32x64xf32>
  }
  return
}
