// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines -verify-diagnostics
// RUN: tl-opt %s --tl-infer-layouts=wgmma=true --tl-plan-pipelines=warp-specialize=false | FileCheck %s --check-prefix=OFF
// use_producer_warpgroup (tl.producer_warpgroup on the kernel) on a kernel whose TMA loop
// cannot take a producer warpgroup is refused at the loop's line, not
// dropped: here the loop stands in another loop, and the producer runs one
// loop of its own from the kernel's start. With warp specialisation turned
// off there is nothing to refuse. (A tile used only before the loop, as the
// overlapped attention forward's first K tile, is fine since session 29:
// warp-specialized.mlir @tile_used_only_before.)
// OFF-LABEL: func.func @loop_in_a_loop
// OFF: tl.pipelined {{.*}} attributes {tl.tma_loads
func.func @loop_in_a_loop(%A: memref<128x256xf16>, %B: memref<256x128xf16>, %C: memref<128x128xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.producer_warpgroup} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %a = tl.alloc_shared : memref<128x64xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<64x128xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x128xf32, #tl.scope<fragment>>
    tl.fill %c, %zero : memref<128x128xf32, #tl.scope<fragment>>, f32
    scf.for %r = %c0 to %c3 step %c1 {
      // expected-error @+1 {{use_producer_warpgroup: this pipelined loop loads by TMA but cannot take a producer warpgroup}}
      tl.pipelined %c0 to %c4 stages 2 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tl.copy %A[%c0, %k0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<128x256xf16> to memref<128x64xf16, #tl.scope<shared>>
        tl.copy %B[%k0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #tl.scope<shared>>
        tl.gemm %a, %b, %c : memref<128x64xf16, #tl.scope<shared>>, memref<64x128xf16, #tl.scope<shared>>, memref<128x128xf32, #tl.scope<fragment>>
      }
    }
    tl.copy %c[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128] : memref<128x128xf32, #tl.scope<fragment>> to memref<128x128xf32>
  }
  return
}
