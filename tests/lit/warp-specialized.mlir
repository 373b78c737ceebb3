// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines -split-input-file | FileCheck %s --check-prefix=PLAN
// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true -split-input-file | FileCheck %s
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true early-tile-hand-back=true" -split-input-file | FileCheck %s --check-prefix=EARLY
// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines --tl-plan-tma-copies -split-input-file | FileCheck %s --check-prefix=HANDOFF
// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines --tl-plan-tma-copies --tl-plan-shared-memory -split-input-file | FileCheck %s --check-prefix=PLACED
// A TMA loop with its wgmma batches in flight, directly in the kernel body,
// after every use of the shared tiles, in a kernel taking more than half of
// the shared memory (here 4 x 32 KiB), gets a producer warpgroup: the kernel
// runs T + 128 threads; thread T issues every iteration's boxes once the
// consumers have released the rotating copy (empty mbarriers); the T
// consumers wait on the full mbarriers and meet at no barrier in the loop.
// The roles are warpgroup indices broadcast from lane 0 (uniform for
// ptxas); past 256 threads the producer gives its registers to the
// consumers (setmaxnreg).

// PLAN-LABEL: func.func @gemm_loop
// PLAN: tl.pipelined {{.*}} stages 3 attributes {tl.tma_loads, tl.warp_specialized, tl.wgmma_in_flight}
// CHECK-LABEL: gpu.func @gemm_loop
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: tl.threads = 256
// Full (arrival count 1) and empty (count T = 128) mbarriers per rotating
// copy, then a barrier of every thread.
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[T:.*]] = arith.constant 128 : i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %[[ONE]]
// CHECK: nvvm.mbarrier.init %{{.*}}, %[[T]]
// CHECK-COUNT-6: nvvm.mbarrier.init
// CHECK: nvvm.barrier
// CHECK-NOT: gpu.barrier
// CHECK: %[[ROLE:.*]], %{{.*}} = gpu.shuffle  idx
// The producer is warpgroup T / 128 = 1, the consumers those below.
// CHECK: %[[PRODUCER:.*]] = arith.cmpi eq, %[[ROLE]], %c1_i32
// CHECK: arith.cmpi ult, %[[ROLE]], %c1_i32
// CHECK-NEXT: scf.if
// CHECK-NOT: nvvm.setmaxregister
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: barrier
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The producer's thread T (tid == 128) waits for the copy's release, arms,
// issues.
// CHECK: scf.if %[[PRODUCER]]
// CHECK: scf.if
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// The producer's loop stays rolled (LLVM loop metadata: unroll disable).
// CHECK: } {loop_annotation = #loop_annotation}
// CHECK: gpu.return

func.func @gemm_loop(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 3 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%c0, %k0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x256xf16> to memref<128x64xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}

// -----

// Two consumer warpgroups: 384 threads, which would leave each 168
// registers; the producer keeps 24 and the consumers take 240 (FA3's split). The
// consumers' own barriers (a shared tile staged after the loop) become
// named barriers of the T consumer threads: bar.sync 1, T.
// CHECK-LABEL: gpu.func @staged_epilogue
// CHECK-SAME: tl.threads = 384
// The thread index's bound counts the producer warpgroup.
// CHECK: gpu.thread_id x upper_bound 384
// CHECK: scf.if
// CHECK: nvvm.setmaxregister  increase 240
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.setmaxregister  decrease 24
func.func @staged_epilogue(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf16> {tl.output}) {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %o = tl.alloc_shared : memref<128x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 2 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%c0, %k0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x256xf16> to memref<128x64xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [128, 128] to %o[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf16, #tl.scope<shared>>
    tl.copy %o[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf16, #tl.scope<shared>> to memref<128x128xf16>
  }
  return
}

// -----

// A shared tile used before the loop: the producer would load while the
// consumers still run that code, so no producer warpgroup.
// PLAN-LABEL: func.func @tile_used_before
// PLAN: tl.pipelined {{.*}} attributes {tl.tma_loads, tl.wgmma_in_flight}
// CHECK-LABEL: gpu.func @tile_used_before
// CHECK-SAME: tl.threads = 128
func.func @tile_used_before(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    %zh = arith.constant 0.0 : f16
    %s = tl.alloc_shared : memref<128x128xf16, #tl.scope<shared>>
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %s, %zh : memref<128x128xf16, #tl.scope<shared>>, f16
    tl.copy %s[%c0, %c0] [128, 128] to %c[%c0, %c0] [128, 128] : memref<128x128xf16, #tl.scope<shared>> to memref<128x128xf32, #tl.scope<fragment>>
    tl.pipelined %c0 to %c8 stages 3 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c32 : index
      tl.copy %A[%c0, %k0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x256xf16> to memref<128x32xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [32, 128] to %b[%c0, %c0] [32, 128] : memref<256x128xf16> to memref<32x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<128x32xf16, #tl.scope<shared>>, memref<32x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}

// -----

// Tiles that leave room for two blocks an SM (4 x 16 KiB): the producer's
// registers would cost one of them, so no producer warpgroup.
// PLAN-LABEL: func.func @small_tiles
// PLAN: tl.pipelined {{.*}} attributes {tl.tma_loads, tl.wgmma_in_flight}
// CHECK-LABEL: gpu.func @small_tiles
// CHECK-SAME: tl.threads = 128
func.func @small_tiles(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c8 stages 3 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c32 : index
      tl.copy %A[%c0, %k0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x256xf16> to memref<128x32xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [32, 128] to %b[%c0, %c0] [32, 128] : memref<256x128xf16> to memref<32x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<128x32xf16, #tl.scope<shared>>, memref<32x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}

// -----

// use_producer_warpgroup (tl.producer_warpgroup on the kernel): a TMA loop
// whose gemm's accumulator is read in the loop (no wgmma in flight), in a
// kernel of 48 KiB, gets a producer warpgroup anyway. Each consumer releases
// the copy it used at the end of its own iteration, and the producer waits
// for the release of round - 1 (no last-copy adjustment); tl-check-sync's
// phase proof runs on the result.

// PLAN-LABEL: func.func @requested
// PLAN: tl.pipelined {{.*}} stages 1 attributes {tl.tma_loads, tl.warp_specialized} {
// CHECK-LABEL: gpu.func @requested
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// The consumers release (k - start + 0) % C at the end of iteration k.
// CHECK: scf.for %[[K:.*]] = %[[KSTART:.*]] to
// CHECK: %[[SUM:.*]] = arith.addi %{{[0-9]+}}, %c0{{(_[0-9]+)?}} : index
// CHECK-NEXT: arith.remui %[[SUM]]
// CHECK: nvvm.mbarrier.arrive
// CHECK-NEXT: }
// The producer: the slot, the round, parity (round + 1) & 1.
// CHECK: scf.for %[[J:.*]] = %[[START:.*]] to
// CHECK-NEXT: %[[USED:.*]] = arith.subi %[[J]], %[[START]]
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.remui %[[USED]]
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[ROUND:.*]] = arith.divui %[[USED]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[ROUND]]
// CHECK-NEXT: arith.andi %[[NEXT]], %[[ONE]]
// CHECK-NOT: arith.select
// CHECK: nvvm.mbarrier.try_wait.parity

func.func @requested(%A: memref<64x256xf16>, %B: memref<256x128xf16>, %C: memref<64x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x128xf32, #tl.scope<fragment>>
    %o = tl.alloc_fragment : memref<64x128xf32, #tl.scope<fragment>>
    tl.fill %o, %zero : memref<64x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%c0, %k0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x256xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
      tl.fill %c, %zero : memref<64x128xf32, #tl.scope<fragment>>, f32
      tl.gemm %a, %b, %c : memref<64x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<64x128xf32, #tl.scope<fragment>>
      tl.parallel [64, 128] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %c[%i, %j] : memref<64x128xf32, #tl.scope<fragment>>
        %y = memref.load %o[%i, %j] : memref<64x128xf32, #tl.scope<fragment>>
        %s = arith.addf %x, %y : f32
        memref.store %s, %o[%i, %j] : memref<64x128xf32, #tl.scope<fragment>>
      }
    }
    tl.copy %o[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf32, #tl.scope<fragment>> to memref<64x128xf32>
  }
  return
}

// -----

// A row vector loaded beside the tiles (the staged backward's lse and Delta):
// in a kernel that asks for a producer warpgroup it goes by TMA too, one
// unswizzled box of its 64 f32 (256 bytes, whole 128-byte lines), through a
// tensor map of its own; the mbarrier expects the tile's and the vector's
// bytes. The vector's annotation-free tile needs no atom layout.

// PLAN-LABEL: func.func @vector_requested
// PLAN: tl.pipelined {{.*}} stages 1 attributes {tl.tma_loads, tl.warp_specialized} {
// CHECK-LABEL: gpu.func @vector_requested
// CHECK-SAME: tl.tensor_maps = [#tl.tensor_map<param = 0, box = [64, 64], swizzle = 128>, #tl.tensor_map<param = 1, box = [1, 64], swizzle = 0>]
// CHECK: scf.if
// CHECK: scf.for
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8448_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: gpu.return
func.func @vector_requested(%A: memref<256x64xf16>, %L: memref<4x256xf32>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [4] threads 128 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %l = tl.alloc_shared : memref<64xf32, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %o = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.fill %o, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%k0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.copy %L[%bx, %k0] [1, 64] to %l[%c0] [64] : memref<4x256xf32> to memref<64xf32, #tl.scope<shared>>
      tl.fill %c, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
      tl.gemm %a, %a, %c {transpose_b} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      tl.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
        %y = memref.load %l[%j] : memref<64xf32, #tl.scope<shared>>
        %z = memref.load %o[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %p, %z : f32
        memref.store %s, %o[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      }
    }
    tl.copy %o[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// The same loop in a kernel that does not ask for a producer: its vector
// keeps cp.async, and so does the whole loop (TMA loads all or none), as
// before vectors could go by TMA.

// PLAN-LABEL: func.func @vector_unrequested
// PLAN: tl.pipelined {{.*}} stages 1 {
// PLAN-NOT: tl.tma_loads
// CHECK-LABEL: gpu.func @vector_unrequested
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: gpu.return
func.func @vector_unrequested(%A: memref<256x64xf16>, %L: memref<4x256xf32>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %l = tl.alloc_shared : memref<64xf32, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %o = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.fill %o, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%k0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.copy %L[%bx, %k0] [1, 64] to %l[%c0] [64] : memref<4x256xf32> to memref<64xf32, #tl.scope<shared>>
      tl.fill %c, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
      tl.gemm %a, %a, %c {transpose_b} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      tl.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
        %y = memref.load %l[%j] : memref<64xf32, #tl.scope<shared>>
        %z = memref.load %o[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %p, %z : f32
        memref.store %s, %o[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      }
    }
    tl.copy %o[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A reduce-add by TMA in the loop, of a shared tile the consumers write there
// (the staged backward's dQ): the producer warpgroup issues it
// (tl.producer_reduce). Two more mbarriers hand the tile over: full (count
// T), which each consumer arrives at after its writes and a proxy fence;
// empty (count 1), which the producer's thread T + 32 arrives at once its
// boxes have read the tile. The consumers wait for empty before writing
// (parity (n + 1) & 1 in iteration n); the producer for full (parity n & 1),
// then issues, commits, waits for the read and, after its loop, for the
// boxes to complete.

// PLAN-LABEL: func.func @reduce_handed_over
// HANDOFF-LABEL: func.func @reduce_handed_over
// HANDOFF: tl.atomic_add_tile {{.*}} {tl.producer_reduce, tl.tma_copy}
// CHECK-LABEL: gpu.func @reduce_handed_over
// The consumers' loop: the tile's wait comes after the gemm, the fence and
// the arrival after the tile's writes, and no reduce-add.
// CHECK: scf.for
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: %[[N:.*]] = arith.subi %[[K:.*]], %c0
// CHECK-NEXT: %[[N1:.*]] = arith.addi %[[N]]
// CHECK-NEXT: %[[P:.*]] = arith.andi %[[N1]]
// CHECK-NEXT: %[[PARITY:.*]] = arith.index_cast %[[P]]
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PARITY]]
// The tile's 32 writes a thread: each a constant element offset from one of
// eight per-thread bases (crossedPairBases), which LLVM folds into the
// store's address (not 32 addresses kept live across the loop).
// CHECK: llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.store
// CHECK: llvm.getelementptr %{{.*}}[256] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
// CHECK-COUNT-29: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// The producer: loads (thread T), then the reduce-adds (thread T + 32).
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: arith.cmpi eq, %{{.*}}, %c160
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.reduce
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.mbarrier.arrive
// CHECK: } {loop_annotation = #loop_annotation}
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: read
// CHECK: gpu.return
func.func @reduce_handed_over(%A: memref<256x64xf16>, %Acc: memref<256x64xf32>) {
  tl.kernel grid [1] threads 128 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %t = tl.alloc_shared : memref<64x64xf32, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%k0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.fill %c, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
      tl.gemm %a, %a, %c {transpose_b} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      tl.copy %c[%c0, %c0] [64, 64] to %t[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32, #tl.scope<shared>>
      tl.atomic_add_tile %t[%c0, %c0] [64, 64] to %Acc[%k0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<shared>> to memref<256x64xf32>
    }
  }
  return
}

// -----

// The same add in a tl.in_turn (a deterministic sum; its offsets' math in
// the turn's body, as the eDSL writes it): the plan moves that math before
// the turn and hands the add over. The consumers take no turn (no acquire
// spin, no release): they write the tile and arrive. The producer's thread
// T + 32 waits for the turn (an acquire spin), issues, waits for the boxes to
// complete, fences their writes from the async proxy and passes the turn on
// (a release store) before it hands the tile back (with early-tile-hand-back
// after the boxes' read, before the turn passes).

// HANDOFF-LABEL: func.func @reduce_handed_over_in_turn
// HANDOFF: tl.copy {{.*}} to memref<64x64xf32, #tl.scope<shared>>
// HANDOFF-NEXT: arith.constant 64
// HANDOFF-NEXT: arith.muli
// HANDOFF-NEXT: tl.in_turn
// HANDOFF-NEXT: tl.atomic_add_tile {{.*}} {tl.producer_reduce, tl.tma_copy}
// CHECK-LABEL: gpu.func @reduce_handed_over_in_turn
// CHECK: scf.for
// CHECK-NOT: atomic syncscope("device") acquire
// CHECK-NOT: atomic syncscope("device") release
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: atomic syncscope("device")
// CHECK: arith.cmpi eq, %{{.*}}, %c160
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.while
// CHECK: llvm.load {{.*}} atomic syncscope("device") acquire
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async>}
// CHECK: nvvm.cp.async.bulk.tensor.reduce
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: read
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async>}
// CHECK: llvm.store {{.*}} atomic syncscope("device") release
// CHECK: nvvm.mbarrier.arrive
// CHECK: gpu.return
// With early-tile-hand-back the producer hands the tile back once the boxes
// have read it, then waits for their sums and passes the turn.
// EARLY-LABEL: gpu.func @reduce_handed_over_in_turn
// EARLY: llvm.load {{.*}} atomic syncscope("device") acquire
// EARLY: nvvm.cp.async.bulk.tensor.reduce
// EARLY: nvvm.cp.async.bulk.commit.group
// EARLY-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// EARLY: nvvm.mbarrier.arrive
// EARLY-NEXT: nvvm.cp.async.bulk.wait_group 0
// EARLY-NOT: read
// EARLY-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async>}
// EARLY: llvm.store {{.*}} atomic syncscope("device") release
// EARLY-NOT: nvvm.mbarrier.arrive
// EARLY: gpu.return
func.func @reduce_handed_over_in_turn(%A: memref<256x64xf16>, %Acc: memref<256x64xf32>, %Turns: memref<4xi32>) {
  tl.kernel grid [2] threads 128 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %t = tl.alloc_shared : memref<64x64xf32, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %next = arith.addi %bx, %c1 : index
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %c64a = arith.constant 64 : index
      %k0 = arith.muli %k, %c64a : index
      tl.copy %A[%k0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.fill %c, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
      tl.gemm %a, %a, %c {transpose_b} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      tl.copy %c[%c0, %c0] [64, 64] to %t[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32, #tl.scope<shared>>
      tl.in_turn %Turns[%k] turn %bx next %next : memref<4xi32> {
        %c64 = arith.constant 64 : index
        %row = arith.muli %k, %c64 : index
        tl.atomic_add_tile %t[%c0, %c0] [64, 64] to %Acc[%row, %c0] [64, 64] : memref<64x64xf32, #tl.scope<shared>> to memref<256x64xf32>
      }
    }
  }
  return
}

// -----

// Math after the add in the turn's body moves out too (a walk over the adds
// that let the moved ops' block change under it did not end).

// HANDOFF-LABEL: func.func @in_turn_math_after_add
// HANDOFF: tl.copy {{.*}} to memref<64x64xf32, #tl.scope<shared>>
// HANDOFF-NEXT: arith.addi
// HANDOFF-NEXT: tl.in_turn
// HANDOFF-NEXT: tl.atomic_add_tile {{.*}} {tl.producer_reduce, tl.tma_copy}
// HANDOFF-NEXT: }
func.func @in_turn_math_after_add(%A: memref<256x64xf16>, %Acc: memref<256x64xf32>, %Turns: memref<4xi32>) {
  tl.kernel grid [2] threads 128 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %t = tl.alloc_shared : memref<64x64xf32, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %next = arith.addi %bx, %c1 : index
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %c64a = arith.constant 64 : index
      %k0 = arith.muli %k, %c64a : index
      tl.copy %A[%k0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, #tl.scope<shared>>
      tl.fill %c, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
      tl.gemm %a, %a, %c {transpose_b} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      tl.copy %c[%c0, %c0] [64, 64] to %t[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32, #tl.scope<shared>>
      tl.in_turn %Turns[%k] turn %bx next %next : memref<4xi32> {
        tl.atomic_add_tile %t[%c0, %c0] [64, 64] to %Acc[%k0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<shared>> to memref<256x64xf32>
        %dead = arith.addi %k0, %c1 : index
      }
    }
  }
  return
}

// -----

// use_producer_warpgroup with a tile used only before the loop (the
// overlapped attention forward's first K tile): the loop takes the producer,
// and its rotating tile lives from the kernel's start, so %first does not
// share its bytes (it would have taken offset 0 without the producer: the
// producer fills %b while the consumers still read %first).
// PLAN-LABEL: func.func @tile_used_only_before
// PLAN: tl.pipelined {{.*}} attributes {tl.tma_loads, tl.warp_specialized} {
// PLACED-LABEL: func.func @tile_used_only_before
// PLACED: tl.alloc_shared {tl.offset = 49152 : i64} : memref<64x64xf16
// PLACED-NEXT: tl.alloc_shared {tl.offset = 32768 : i64} : memref<64x128xf16
// PLACED-NEXT: tl.alloc_shared {tl.offset = 0 : i64, tl.rotating_copies = 2 : i64} : memref<64x128xf16
// CHECK-LABEL: gpu.func @tile_used_only_before
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
func.func @tile_used_only_before(%A: memref<64x256xf16>, %B: memref<256x128xf16>, %C: memref<64x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %first = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x128xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x256xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 128] to %first[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
    tl.gemm %a, %first, %c {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<64x128xf32, #tl.scope<fragment>>
    tl.pipelined %c1 to %c4 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
      tl.gemm %a, %b, %c : memref<64x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<64x128xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf32, #tl.scope<fragment>> to memref<64x128xf32>
  }
  return
}
