// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true -split-input-file | FileCheck %s
// RUN: tl-opt %s --tl-gpu-lowering=wgmma=true -split-input-file | FileCheck %s --check-prefix=GEP
// RUN: tl-opt %s --tl-gpu-lowering="target=sm_80" -split-input-file | FileCheck %s --check-prefix=SM80
// RUN: tlc %S/Inputs/mma-tile-adds-ptx.mlir --target=sm_90a --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// RUN: tlc %S/Inputs/mma-tile-adds-ptx.mlir --target=sm_80 --emit=ptx -o - | FileCheck %s --check-prefix=PTX80
// RUN: env TLC_CACHE_DIR=%t.cache tlc %S/Inputs/mha_generators.cpp -k flash_bwd_tuned -p dim=128 -p mma_tile_dq=1 --emit=ptx --target=sm_90a -o - | FileCheck %s --check-prefix=DSL
// A gemm accumulator added into a tensor laid out in accumulator tile order
// (the eDSL's make_mma_tile_layout(4, 1, 3)): on sm_90 and sm_90a each
// thread adds each of its 16x8 tiles with one red.global.add.v4.f32 (128 x
// 64 over one warpgroup: 2 x 8 tiles a thread), inside the tensor or not at
// all (one scf.if a tile: the address is made inside it, one level in), the
// first tile's address computed once and each other tile a constant number
// of elements after it: 128 a column tile (d / 8 grows by one), 12288 for
// the second row tile (64 rows further: l / 16 grows by 4, times 3 heads x 8
// x 128). sm_80 has no vector reductions: an atomic add per element, through
// the same layout. The backward's dQ, as the eDSL writes the layout, takes
// the same path (8 a thread at D = 128, from the generator file).
// CHECK-LABEL: gpu.func @tile_adds
// CHECK-COUNT-16: llvm.inline_asm has_side_effects asm_dialect = att "red.global.add.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f,~{memory}"
// CHECK-NOT: memref.atomic_rmw
// CHECK: gpu.return
// GEP-LABEL: gpu.func @tile_adds
// GEP: {{^        }}%{{.*}} = llvm.getelementptr %[[TILE:.*]][0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// GEP: {{^        }}%{{.*}} = llvm.getelementptr %[[TILE]][128]
// GEP: llvm.getelementptr %[[TILE]][896]
// GEP: {{^        }}%{{.*}} = llvm.getelementptr %[[TILE]][12288]
// GEP: llvm.getelementptr %[[TILE]][13184]
// GEP-NOT: llvm.getelementptr %[[TILE]]
// GEP: gpu.return
// SM80-LABEL: gpu.func @tile_adds
// SM80-NOT: red.global.add.v4
// SM80-COUNT-64: memref.atomic_rmw addf
// SM80-NOT: red.global.add.v4
// SM80: gpu.return
// PTX: .version 8.1
// PTX-COUNT-16: red.global.add.v4.f32
// PTX-NOT: atom.global
// PTX80: .version 8.0
// PTX80-NOT: .v4.f32
// PTX80: atom.global.add.f32
// DSL: .version 8.1
// DSL-COUNT-8: red.global.add.v4.f32
// DSL-NOT: atom.global.add.f32
func.func @tile_adds(%A: memref<128x32xf16>, %W: memref<32x64xf16>, %Acc: memref<2x256x3x64xf32>) {
  tl.kernel grid [2, 2] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    tl.annotate_layout %Acc layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3 floordiv 8, (d1 mod 8) * 16 + ((d3 mod 8) floordiv 2) * 4 + ((d1 mod 16) floordiv 8) * 2 + d3 mod 2), [2, 16, 3, 8, 128]>) : memref<2x256x3x64xf32>
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x32xf16> to memref<128x32xf16, #tl.scope<shared>>
    tl.copy %W[%c0, %c0] [32, 64] to %w[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %w, %c {clear_accum} : memref<128x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<128x64xf32, #tl.scope<fragment>>
    %row = arith.muli %by, %c128 : index
    tl.atomic_add_tile %c[%c0, %c0] [128, 64] to %Acc[%bx, %row, %c0, %c0] [1, 128, 1, 64] : memref<128x64xf32, #tl.scope<fragment>> to memref<2x256x3x64xf32>
  }
  return
}

// -----

// A region whose rows may start inside a 16-row tile (an offset of 8 rows a
// block), or a tensor in another order, keeps the element adds.
// CHECK-LABEL: gpu.func @not_tile_aligned
// CHECK-NOT: red.global.add.v4
// CHECK: memref.atomic_rmw addf
// CHECK-LABEL: gpu.func @other_order
// CHECK-NOT: red.global.add.v4
// CHECK: memref.atomic_rmw addf
func.func @not_tile_aligned(%A: memref<64x32xf16>, %W: memref<32x64xf16>, %Acc: memref<2x128x3x64xf32>) {
  tl.kernel grid [2, 2] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    tl.annotate_layout %Acc layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3 floordiv 8, (d1 mod 8) * 16 + ((d3 mod 8) floordiv 2) * 4 + ((d1 mod 16) floordiv 8) * 2 + d3 mod 2), [2, 8, 3, 8, 128]>) : memref<2x128x3x64xf32>
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %W[%c0, %c0] [32, 64] to %w[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %w, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    %row = arith.muli %by, %c8 : index
    tl.atomic_add_tile %c[%c0, %c0] [64, 64] to %Acc[%bx, %row, %c0, %c0] [1, 64, 1, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<2x128x3x64xf32>
  }
  return
}
func.func @other_order(%A: memref<64x32xf16>, %W: memref<32x64xf16>, %Acc: memref<2x128x3x64xf32>) {
  tl.kernel grid [2, 2] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    tl.annotate_layout %Acc layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 8, d2, d3 floordiv 8, d3 mod 2, (d1 mod 8) * 4 + (d3 mod 8) floordiv 2), [2, 16, 3, 8, 2, 32]>) : memref<2x128x3x64xf32>
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #tl.scope<shared>>
    tl.copy %W[%c0, %c0] [32, 64] to %w[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %w, %c {clear_accum} : memref<64x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    %row = arith.muli %by, %c64 : index
    tl.atomic_add_tile %c[%c0, %c0] [64, 64] to %Acc[%bx, %row, %c0, %c0] [1, 64, 1, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<2x128x3x64xf32>
  }
  return
}

// -----

// The same map with its last result's terms in another order is the same
// layout: recognised.
// CHECK-LABEL: gpu.func @reordered_sum
// CHECK-COUNT-16: red.global.add.v4.f32
func.func @reordered_sum(%A: memref<128x32xf16>, %W: memref<32x64xf16>, %Acc: memref<2x256x3x64xf32>) {
  tl.kernel grid [2, 2] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    tl.annotate_layout %Acc layout(#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3 floordiv 8, d3 mod 2 + ((d1 mod 16) floordiv 8) * 2 + (d1 mod 8) * 16 + ((d3 mod 8) floordiv 2) * 4), [2, 16, 3, 8, 128]>) : memref<2x256x3x64xf32>
    %a = tl.alloc_shared : memref<128x32xf16, #tl.scope<shared>>
    %w = tl.alloc_shared : memref<32x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<128x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [128, 32] to %a[%c0, %c0] [128, 32] : memref<128x32xf16> to memref<128x32xf16, #tl.scope<shared>>
    tl.copy %W[%c0, %c0] [32, 64] to %w[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #tl.scope<shared>>
    tl.gemm %a, %w, %c {clear_accum} : memref<128x32xf16, #tl.scope<shared>>, memref<32x64xf16, #tl.scope<shared>>, memref<128x64xf32, #tl.scope<fragment>>
    %row = arith.muli %by, %c128 : index
    tl.atomic_add_tile %c[%c0, %c0] [128, 64] to %Acc[%bx, %row, %c0, %c0] [1, 128, 1, 64] : memref<128x64xf32, #tl.scope<fragment>> to memref<2x256x3x64xf32>
  }
  return
}

