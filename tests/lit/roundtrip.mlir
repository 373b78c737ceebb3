// RUN: tl-opt %s | tl-opt | FileCheck %s
// Every tl op prints and parses back to itself.

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%Q: memref<2x128x4x64xf16> {tl.name = "Q"},
                   %dQ: memref<2x128x4x64xf32> {tl.name = "dQ"},
                   %O: memref<2x128x4x64xf16> {tl.name = "O", tl.output}) {
  // CHECK: tl.kernel grid [2, 4, 2] threads 128 {
  // CHECK-NEXT: ^bb0(%bx: index, %by: index, %bz: index):
  tl.kernel grid [2, 4, 2] threads 128 {
  ^bb0(%bx: index, %by: index, %bz: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    // CHECK: tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %qs = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    // CHECK: tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %acc = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %row = tl.alloc_fragment : memref<64xf32, #tl.scope<fragment>>
    // CHECK: tl.alloc_local : memref<1xf32, #tl.scope<local>>
    %l = tl.alloc_local : memref<1xf32, #tl.scope<local>>
    // CHECK: tl.annotate_layout %{{.*}} layout(#tl.swizzle)
    tl.annotate_layout %qs layout(#tl.swizzle) : memref<64x64xf16, #tl.scope<shared>>
    // CHECK: tl.annotate_layout %{{.*}} layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 8, d2, d3), [2, 16, 4, 64]>)
    tl.annotate_layout %dQ layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 8, d2, d3), [2, 16, 4, 64]>) : memref<2x128x4x64xf32>
    // CHECK: tl.copy %{{.*}}[%bz, %{{.*}}, %by, %{{.*}}] [1, 64, 1, 64] to %{{.*}}[%{{.*}}, %{{.*}}] [64, 64]
    tl.copy %Q[%bz, %c0, %by, %c0] [1, 64, 1, 64] to %qs[%c0, %c0] [64, 64] : memref<2x128x4x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    %zero = arith.constant 0.0 : f32
    // CHECK: tl.fill %{{.*}}, %{{.*}} : memref<64x64xf32, #tl.scope<fragment>>, f32
    tl.fill %acc, %zero : memref<64x64xf32, #tl.scope<fragment>>, f32
    // CHECK: tl.pipelined %{{.*}} to %{{.*}} stages 2 {
    // CHECK-NEXT: ^bb0(%iv: index):
    tl.pipelined %c0 to %c2 stages 2 {
    ^bb0(%k: index):
      // CHECK: tl.gemm {{.*}} {clear_accum, policy = #tl.policy<FullRow>, transpose_b}
      tl.gemm %qs, %qs, %acc {policy = #tl.policy<FullRow>, transpose_b, clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      // CHECK: tl.pingpong {
      // CHECK-NEXT: tl.gemm {{.*}}wg_wait = -1
      tl.pingpong {
        tl.gemm %qs, %qs, %acc {wg_wait = -1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
      }
      // CHECK: tl.wait_wgmma 0
      tl.wait_wgmma 0
    }
    // CHECK: tl.reduce max %{{.*}} -> %{{.*}} {clear = false, dim = 1 : i64}
    tl.reduce max %acc -> %row {dim = 1 : i64, clear = false} : memref<64x64xf32, #tl.scope<fragment>> -> memref<64xf32, #tl.scope<fragment>>
    // CHECK: tl.reduce sum %{{.*}} -> %{{.*}} {dim = 0 : i64}
    tl.reduce sum %acc -> %row {dim = 0 : i64} : memref<64x64xf32, #tl.scope<fragment>> -> memref<64xf32, #tl.scope<fragment>>
    // CHECK: tl.parallel [64, 64] {
    // CHECK-NEXT: ^bb0(%i: index, %j: index):
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %acc[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %e = math.exp2 %v : f32
      // CHECK: tl.atomic_add %{{.*}}[%bz, %i, %by, %j], %{{.*}} : memref<2x128x4x64xf32>, f32
      tl.atomic_add %dQ[%bz, %i, %by, %j], %e : memref<2x128x4x64xf32>, f32
    }
    // CHECK: tl.copy {{.*}} : memref<64x64xf32, #tl.scope<fragment>> to memref<2x128x4x64xf16>
    tl.copy %acc[%c0, %c0] [64, 64] to %O[%bz, %c0, %by, %c0] [1, 64, 1, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<2x128x4x64xf16>
  }
  return
}
