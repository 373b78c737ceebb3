// RUN: tl-opt %s --convert-tl-to-cpu | FileCheck %s
// The CPU lowering: kernel outlined into the function, on-chip buffers on the
// stack, tile ops as loops, global regions bounds-checked, index-map layouts
// applied, atomics as atomic_rmw.

// CHECK-LABEL: func.func @tile
// CHECK-SAME: %{{.*}}: memref<100x64xf16> {tl.name = "X"}, %{{.*}}: memref<100x64xf32> {tl.name = "Y", tl.output}, %[[BX:.*]]: index)
// CHECK-SAME: attributes {tl.grid = array<i64: 4>, tl.threads = 128 : i64}
// CHECK-NOT: tl.
// CHECK: memref.alloca() : memref<32x64xf32>
// CHECK: scf.for
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: memref.load {{.*}} : memref<100x64xf16>
// CHECK: arith.extf
// CHECK: memref.atomic_rmw addf {{.*}} : (f32, memref<50x128xf32>) -> f32
// CHECK: return
func.func @tile(%X: memref<100x64xf16> {tl.name = "X"}, %Y: memref<100x64xf32> {tl.name = "Y", tl.output}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %row = arith.muli %bx, %c32 : index
    %f = tl.alloc_fragment : memref<32x64xf32, #tl.scope<fragment>>
    tl.annotate_layout %Y layout(#tl.index_map<(d0, d1) -> (d0 floordiv 2, d1 + (d0 mod 2) * 64), [50, 128]>) : memref<100x64xf32>
    tl.copy %X[%row, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<100x64xf16> to memref<32x64xf32, #tl.scope<fragment>>
    tl.parallel [32, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %f[%i, %j] : memref<32x64xf32, #tl.scope<fragment>>
      %r = arith.addi %row, %i : index
      tl.atomic_add %Y[%r, %j], %v : memref<100x64xf32>, f32
    }
  }
  return
}
