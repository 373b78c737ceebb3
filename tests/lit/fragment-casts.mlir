// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true | FileCheck %s
// RUN: tlc %s --target=sm_90a --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// RUN: tlc %s --target=sm_80 --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// A fragment copied into another of the same shape and layout (attention's
// P = f16(S), which the next gemm reads from registers) goes slot pair by slot
// pair, each pair converted as one vector: one cvt.rn.f16x2.f32 a pair in PTX,
// where two scalar conversions took two cvts and the shifts and ors that pack
// them for the gemm. A 64x64 wgmma fragment is 32 slots a thread: 16 pairs.
// So is C's way out through a shared tile (pairs of slots to pairs of columns).
// CHECK-LABEL: gpu.func @scores_to_probabilities
// CHECK-COUNT-16: arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
// CHECK-NOT: arith.truncf %{{.*}} : f32 to f16
// CHECK: wgmma.mma_async
// CHECK-COUNT-16: arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
// PTX-COUNT-32: cvt.rn.f16x2.f32
// PTX-NOT: cvt.rn.f16.f32
func.func @scores_to_probabilities(%Q: memref<64x64xf16>, %K: memref<64x64xf16>, %V: memref<64x64xf16>, %O: memref<64x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %q = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %k = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %v = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %s = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %p = tl.alloc_fragment : memref<64x64xf16, #tl.scope<fragment>>
    %o = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    %out = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    tl.copy %Q[%c0, %c0] [64, 64] to %q[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %K[%c0, %c0] [64, 64] to %k[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %V[%c0, %c0] [64, 64] to %v[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %q, %k, %s {transpose_b, policy = #tl.policy<FullRow>, clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf16, #tl.scope<fragment>>
    tl.gemm %p, %v, %o {policy = #tl.policy<FullRow>, clear_accum} : memref<64x64xf16, #tl.scope<fragment>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %o[%c0, %c0] [64, 64] to %out[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %out[%c0, %c0] [64, 64] to %O[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
  }
  return
}
