// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines -verify-diagnostics
// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines=warp-specialize=false | FileCheck %s --check-prefix=OFF
// use_producer_warpgroup (tl.producer_warpgroup) on a kernel whose TMA loop
// cannot take a producer warpgroup is refused at the loop's line, not
// dropped: here %first is used only before the loop (as the overlapped
// attention forward's first K tile), so its bytes could be the rotating
// tiles' the producer fills while the consumers still read it. With warp
// specialisation turned off there is nothing to refuse.
// OFF-LABEL: func.func @tile_used_only_before
// OFF: tl.pipelined {{.*}} attributes {tl.tma_loads} {
func.func @tile_used_only_before(%A: memref<64x256xf16>, %B: memref<256x128xf16>, %C: memref<64x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %first = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x128xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x256xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [64, 128] to %first[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
    tl.gemm %a, %first, %c {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<64x128xf32, #tl.scope<fragment>>
    // expected-error @+1 {{use_producer_warpgroup: this pipelined loop loads by TMA but cannot take a producer warpgroup}}
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
