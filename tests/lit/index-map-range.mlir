// RUN: tl-opt %s | FileCheck %s
// Index maps whose results stay inside their physical shape are accepted:
// the interval arithmetic is exact for these (IndexMapRange.cpp).

// CHECK-LABEL: func.func @in_range
// CHECK-COUNT-6: tl.annotate_layout
func.func @in_range(%A: memref<100x64xf32>, %B: memref<32x64xf32>, %C: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // Rows folded in pairs: [0, 49] x [0, 127].
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0 floordiv 2, d1 + (d0 mod 2) * 64), [50, 128]>) : memref<100x64xf32>
    // A transpose.
    tl.annotate_layout %B layout(#tl.index_map<(d0, d1) -> (d1, d0), [64, 32]>) : memref<32x64xf32>
    // ceildiv reaches 64 ceildiv 2 - ... = 32 at most for d1 = 63: [0, 32].
    tl.annotate_layout %C layout(#tl.index_map<(d0, d1) -> (d0, d1 ceildiv 2), [64, 33]>) : memref<64x64xf32>
    // mod within one period: d0 floordiv 16 in [0, 3], mod 4 is the same.
    tl.annotate_layout %C layout(#tl.index_map<(d0, d1) -> ((d0 floordiv 16) mod 4, d1), [4, 64]>) : memref<64x64xf32>
    // A negative coefficient brought back into range: 63 - d1 in [0, 63].
    tl.annotate_layout %C layout(#tl.index_map<(d0, d1) -> (d0, 63 - d1), [64, 64]>) : memref<64x64xf32>
    %s = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    // An XOR-free swizzle of 8-element chunks by row: (d1 floordiv 8 + d0) mod 8.
    tl.annotate_layout %s layout(#tl.index_map<(d0, d1) -> (d0, ((d1 floordiv 8 + d0) mod 8) * 8 + d1 mod 8), [64, 64]>) : memref<64x64xf16, #tl.scope<shared>>
  }
  return
}
