// RUN: not tlc %s --target=sm_90a --emit=ptx -o /dev/null 2>&1 | FileCheck %s
// tl.last_to_arrive in a kernel that waits on mbarriers (here the TMA load of
// its tile) is refused at the op's line: tl-check-sync, which proves such a
// kernel's mbarrier phases, does not model a barrier with a reduction
// (bar.red.or). In a producer-warpgroup kernel that barrier could not work
// as lowered either: it counts every thread of the block, and the producer's
// never reach it.
// CHECK: last-to-arrive-refused.mlir:[[# @LINE + 11]]:5: error: GPU lowering failed: tl-check-sync cannot prove this kernel's mbarrier phases: a barrier with a reduction
func.func @loaded(%A: memref<4x64x64xf16> {tl.name = "A"},
                  %C: memref<4x64x64xf16> {tl.name = "C", tl.output},
                  %count: memref<4xi32> {tl.name = "Count"}, %t: memref<4xf16> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    tl.copy %A[%bx, %c0, %c0] [1, 64, 64] to %a[%c0, %c0] [64, 64] : memref<4x64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %a[%c0, %c0] [64, 64] to %C[%bx, %c0, %c0] [1, 64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<4x64x64xf16>
    tl.last_to_arrive %count[%c0] arrivals %c4 : memref<4xi32> {
      %v = memref.load %C[%c0, %c0, %c0] : memref<4x64x64xf16>
      memref.store %v, %t[%c0] : memref<4xf16>
    }
  }
  return
}
