// RUN: tl-opt %s --tl-gpu-lowering | FileCheck %s --check-prefix=FAST
// RUN: tl-opt %s --tl-gpu-lowering="fast-math=false" | FileCheck %s --check-prefix=EXACT
// The shared-divisor rewrite (attention's acc_o /= logsum): with fast-math
// (the default), one reciprocal per row a thread holds (2 here) and
// multiplications; without it, a division per element (32 here), exact.
// FAST-COUNT-2: arith.divf %cst
// FAST-NOT: arith.divf
// EXACT-COUNT-32: arith.divf
// EXACT-NOT: arith.divf

func.func @mma(%A: memref<128x32xf16>, %B: memref<32x64xf16>,
               %C: memref<128x64xf32> {tl.output}, %R: memref<128xf32> {tl.output}) {
  tl.kernel grid [2] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %row = arith.muli %bx, %c64 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %r = tl.alloc_fragment : memref<64xf32, #tl.scope<fragment>>
    tl.copy %A[%row, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<128x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {policy = #tl.policy<FullRow>, clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.reduce max %c -> %r {dim = 1 : i64} : memref<64x64xf32, #tl.scope<fragment>> -> memref<64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %x = memref.load %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %m = memref.load %r[%i] : memref<64xf32, #tl.scope<fragment>>
      %q = arith.divf %x, %m : f32
      memref.store %q, %c[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %c[%c0, %c0] [64, 64] to %C[%row, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<128x64xf32>
    tl.copy %r[%c0] [64] to %R[%row] [64] : memref<64xf32, #tl.scope<fragment>> to memref<128xf32>
  }
  return
}

