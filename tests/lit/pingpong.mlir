// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true -split-input-file | FileCheck %s
// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true --tl-check-sync -split-input-file | FileCheck %s --check-prefix=PROVEN
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true tma=false" --tl-check-sync -split-input-file | FileCheck %s --check-prefix=PROVEN
// tl.pingpong on the wgmma path with two warpgroups: each waits on its own
// named barrier (2 + its warpgroup), issues the body's gemms and arrives on
// the next one's; warpgroup 1 lets warpgroup 0 go before the kernel-level op
// that holds the turns, and warpgroup 0 takes the last hand-over after it.
// tl-check-sync proves the chain (any trip count of the loop).

// CHECK-LABEL: gpu.func @straight
// The chain's start: warpgroup 1 arrives on barrier 2.
// CHECK: %[[C2:.*]] = arith.constant 2 : i32
// CHECK: %[[N:.*]] = arith.constant 256 : i32
// CHECK: scf.if
// CHECK-NEXT: nvvm.barrier.arrive id = %[[C2]] number_of_threads = %[[N]]
// The operands are published before the turn, not inside it.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %{{.*}}
// The chain's end: warpgroup 0 takes the last hand-over.
// CHECK: scf.if
// CHECK-NEXT: nvvm.barrier id = %[[C2]] number_of_threads = %[[N]]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// PROVEN-LABEL: gpu.func @straight
func.func @straight(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<128x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, #tl.scope<shared>>
    tl.pingpong {
      tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
    }
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}

// -----

// In a pipelined loop with a producer warpgroup (TMA loads): the turns sit
// in the consumers' loop, the chain around it; the operands were published
// by the loop (no block-wide barrier before the turn).
// CHECK-LABEL: gpu.func @producer_loop
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.barrier id = %c1_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: }
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvvm.barrier id = %c2_i32 number_of_threads = %c256_i32
// CHECK: nvvm.setmaxregister  decrease 24
// PROVEN-LABEL: gpu.func @producer_loop
func.func @producer_loop(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 256 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 2 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%c0, %k0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x256xf16> to memref<128x64xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
      tl.pingpong {
        tl.gemm %a, %b, %c {wg_wait = -1} : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
      }
      tl.wait_wgmma 0
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}

// -----

// One warpgroup: nothing to take turns with; the gemm issues where it stands.
// CHECK-LABEL: gpu.func @one_warpgroup
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: gpu.return
func.func @one_warpgroup(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.pingpong {
      tl.gemm %a, %b, %c {clear_accum, wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.wait_wgmma 0
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Two loops with turns: one chain for the kernel, started before the first
// and ended after the second (a second start could otherwise complete
// barrier 2 with arrivals alone before warpgroup 0 took the first chain's
// last hand-over). Without TMA (the third RUN) no mbarrier is waited on, and
// tl-check-sync still proves the turns.
// CHECK-LABEL: gpu.func @two_loops
// CHECK-COUNT-1: nvvm.barrier.arrive id = %c2_i32
// CHECK: scf.for
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads
// CHECK-NOT: nvvm.barrier.arrive id = %c2_i32
// CHECK-NOT: nvvm.barrier id = %c2_i32
// CHECK: scf.for
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads
// CHECK: scf.if
// CHECK-NEXT: nvvm.barrier id = %c2_i32 number_of_threads
// CHECK-NOT: nvvm.barrier.arrive id = %c2_i32
// CHECK: gpu.return
// PROVEN-LABEL: gpu.func @two_loops
func.func @two_loops(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%c0, %k0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x256xf16> to memref<128x64xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
      tl.pingpong {
        tl.gemm %a, %b, %c {wg_wait = -1} : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
      }
      tl.wait_wgmma 0
    }
    tl.pipelined %c0 to %c4 stages 1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      tl.copy %A[%c0, %k0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x256xf16> to memref<128x64xf16, #tl.scope<shared>>
      tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
      tl.pingpong {
        tl.gemm %a, %b, %c {wg_wait = -1} : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
      }
      tl.wait_wgmma 0
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}
