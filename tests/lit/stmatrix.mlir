// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true stmatrix=true" -split-input-file | FileCheck %s
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=false stmatrix=true" -split-input-file | FileCheck %s --check-prefix=MMA
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=true" -split-input-file | FileCheck %s --check-prefix=OFF --implicit-check-not=nvvm.stmatrix
// RUN: tl-opt %s --tl-gpu-lowering="wgmma=false stmatrix=true target=sm_80" -split-input-file | FileCheck %s --check-prefix=OFF --implicit-check-not=nvvm.stmatrix
// The `stmatrix` option (LowerMatrixStores.cpp): an Mma fragment's 16-bit
// stores to a shared tile go as one stmatrix.x4 per 16x16 block (four 8x8
// matrices: four 32-bit registers, each a column pair) where the code
// generator would store one column pair at a time. Both writers: a parallel
// loop storing at its own (row, column), and a copy of the fragment. Off by
// default, and on sm_80 (no stmatrix) whatever the option.

// 128 threads, a 64x32 accumulator: each warp holds 16 rows, four 16x8
// tiles, two 16x16 blocks. The loop's stores go as two stmatrix (its f16
// values packed in pairs); so does the copy's conversion of the second
// accumulator. (The tile read by the second gemm is a wgmma operand with
// its swizzle atoms: the addresses go through it, as the pairs' did.)
// CHECK-LABEL: gpu.func @loop_and_copy
// CHECK: nvvm.wgmma.mma_async
// CHECK: vector.bitcast {{.*}} : vector<2xf16> to vector<1xi32>
// CHECK-COUNT-2: nvvm.stmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// CHECK-NOT: memref<64x32xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK: nvvm.wgmma.mma_async
// The copy's first block: the lane's row l % 16 and column 8 (l / 16) of it;
// register i the pair of slots 2i, 2i + 1, converted as one vector.
// CHECK: arith.remui %[[LANE:.*]], %c16{{(_[0-9]+)?}} : index
// CHECK: %[[HALF:.*]] = arith.divui %[[LANE]], %c16{{(_[0-9]+)?}} : index
// CHECK: arith.muli %[[HALF]], %c8{{(_[0-9]+)?}} : index
// CHECK: %[[L0:.*]] = vector.load %[[ACC:.*]][%c0{{(_[0-9]+)?}}] : memref<16xf32>, vector<2xf32>
// CHECK: %[[H0:.*]] = arith.truncf %[[L0]] : vector<2xf32> to vector<2xf16>
// CHECK: %[[L1:.*]] = vector.load %[[ACC]][%c2{{(_[0-9]+)?}}] : memref<16xf32>, vector<2xf32>
// CHECK: %[[H1:.*]] = arith.truncf %[[L1]] : vector<2xf32> to vector<2xf16>
// CHECK: %[[L2:.*]] = vector.load %[[ACC]][%c4{{(_[0-9]+)?}}] : memref<16xf32>, vector<2xf32>
// CHECK: %[[H2:.*]] = arith.truncf %[[L2]] : vector<2xf32> to vector<2xf16>
// CHECK: %[[L3:.*]] = vector.load %[[ACC]][%c6{{(_[0-9]+)?}}] : memref<16xf32>, vector<2xf32>
// CHECK: %[[H3:.*]] = arith.truncf %[[L3]] : vector<2xf32> to vector<2xf16>
// CHECK: %[[W0:.*]] = vector.bitcast %[[H0]] : vector<2xf16> to vector<1xi32>
// CHECK: %[[R0:.*]] = vector.extract %[[W0]][0] : i32 from vector<1xi32>
// CHECK: %[[W1:.*]] = vector.bitcast %[[H1]] : vector<2xf16> to vector<1xi32>
// CHECK: %[[R1:.*]] = vector.extract %[[W1]][0] : i32 from vector<1xi32>
// CHECK: %[[W2:.*]] = vector.bitcast %[[H2]] : vector<2xf16> to vector<1xi32>
// CHECK: %[[R2:.*]] = vector.extract %[[W2]][0] : i32 from vector<1xi32>
// CHECK: %[[W3:.*]] = vector.bitcast %[[H3]] : vector<2xf16> to vector<1xi32>
// CHECK: %[[R3:.*]] = vector.extract %[[W3]][0] : i32 from vector<1xi32>
// CHECK: nvvm.stmatrix %{{.*}}, %[[R0]], %[[R1]], %[[R2]], %[[R3]] {
// CHECK: nvvm.stmatrix
// CHECK-NOT: nvvm.stmatrix
// mma.sync on sm_90a: the same layout per warp, the same stores.
// MMA-LABEL: gpu.func @loop_and_copy
// MMA: nvvm.mma.sync
// MMA-COUNT-2: nvvm.stmatrix
// MMA: nvvm.mma.sync
// MMA-COUNT-2: nvvm.stmatrix
// MMA-NOT: nvvm.stmatrix
// OFF-LABEL: gpu.func @loop_and_copy
// OFF: memref<64x32xf16, #gpu.address_space<workgroup>>, vector<2xf16>
func.func @loop_and_copy(%A: memref<64x16xf16>, %B: memref<16x32xf16>, %B2: memref<32x32xf16>, %C: memref<64x32xf32> {tl.output}, %P: memref<64x32xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x16xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<16x32xf16, #tl.scope<shared>>
    %b2 = tl.alloc_shared : memref<32x32xf16, #tl.scope<shared>>
    %p = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %q = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x32xf32, #tl.scope<fragment>>
    %d = tl.alloc_fragment : memref<64x32xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 16] to %a[%c0, %c0] [64, 16] : memref<64x16xf16> to memref<64x16xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [16, 32] to %b[%c0, %c0] [16, 32] : memref<16x32xf16> to memref<16x32xf16, #tl.scope<shared>>
    tl.copy %B2[%c0, %c0] [32, 32] to %b2[%c0, %c0] [32, 32] : memref<32x32xf16> to memref<32x32xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x16xf16, #tl.scope<shared>>, memref<16x32xf16, #tl.scope<shared>>, memref<64x32xf32, #tl.scope<fragment>>
    tl.parallel [64, 32] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %c[%i, %j] : memref<64x32xf32, #tl.scope<fragment>>
      %e = math.exp2 %v : f32
      %h = arith.truncf %e : f32 to f16
      memref.store %h, %p[%i, %j] : memref<64x32xf16, #tl.scope<shared>>
    }
    tl.gemm %p, %b2, %d {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x32xf16, #tl.scope<shared>>, memref<64x32xf32, #tl.scope<fragment>>
    tl.copy %d[%c0, %c0] [64, 32] to %q[%c0, %c0] [64, 32] : memref<64x32xf32, #tl.scope<fragment>> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %q[%c0, %c0] [64, 32] to %P[%c0, %c0] [64, 32] : memref<64x32xf16, #tl.scope<shared>> to memref<64x32xf16>
    tl.copy %c[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf32, #tl.scope<fragment>> to memref<64x32xf32>
  }
  return
}

// -----

// Three 16x8 tiles a warp: the first two as one stmatrix, the third as
// column pairs. The 32-bit tile the body also writes between them stays
// column pairs and does not separate the 16-bit stores.
// CHECK-LABEL: gpu.func @odd_tiles
// CHECK: nvvm.stmatrix
// CHECK-NOT: nvvm.stmatrix
// CHECK: vector.store {{.*}} : memref<64x24xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: vector.store {{.*}} : memref<64x24xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NOT: memref<64x24xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NOT: nvvm.stmatrix
// MMA-LABEL: gpu.func @odd_tiles
// OFF-LABEL: gpu.func @odd_tiles
func.func @odd_tiles(%A: memref<64x16xf16>, %B: memref<16x24xf16>, %P: memref<64x24xf16> {tl.output}, %F: memref<64x24xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<64x16xf16, #tl.scope<shared>>
    %b = tl.alloc_shared : memref<16x24xf16, #tl.scope<shared>>
    %p = tl.alloc_shared : memref<64x24xf16, #tl.scope<shared>>
    %f = tl.alloc_shared : memref<64x24xf32, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x24xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 16] to %a[%c0, %c0] [64, 16] : memref<64x16xf16> to memref<64x16xf16, #tl.scope<shared>>
    tl.copy %B[%c0, %c0] [16, 24] to %b[%c0, %c0] [16, 24] : memref<16x24xf16> to memref<16x24xf16, #tl.scope<shared>>
    tl.gemm %a, %b, %c {clear_accum} : memref<64x16xf16, #tl.scope<shared>>, memref<16x24xf16, #tl.scope<shared>>, memref<64x24xf32, #tl.scope<fragment>>
    tl.parallel [64, 24] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %c[%i, %j] : memref<64x24xf32, #tl.scope<fragment>>
      %h = arith.truncf %v : f32 to f16
      memref.store %h, %p[%i, %j] : memref<64x24xf16, #tl.scope<shared>>
      memref.store %v, %f[%i, %j] : memref<64x24xf32, #tl.scope<shared>>
    }
    tl.copy %p[%c0, %c0] [64, 24] to %P[%c0, %c0] [64, 24] : memref<64x24xf16, #tl.scope<shared>> to memref<64x24xf16>
    tl.copy %f[%c0, %c0] [64, 24] to %F[%c0, %c0] [64, 24] : memref<64x24xf32, #tl.scope<shared>> to memref<64x24xf32>
  }
  return
}
