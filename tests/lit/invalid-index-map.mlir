// RUN: tl-opt %s -split-input-file -verify-diagnostics
// Index-map layouts (IndexMapRange.cpp): the lowerings access the physical
// index unchecked, so a map must divide by positive constants only and stay
// inside its physical shape for every logical index of the buffer.

func.func @floordiv_by_zero(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout result 0: 'd0 floordiv 0' divides by 0: floordiv needs a positive constant divisor}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0 floordiv 0, d1), [64, 64]>) : memref<64x64xf32>
  }
  return
}

// -----

func.func @ceildiv_by_negative(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout result 1: 'd1 ceildiv -2' divides by -2: ceildiv needs a positive constant divisor}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0, d1 ceildiv -2), [64, 64]>) : memref<64x64xf32>
  }
  return
}

// -----

func.func @mod_by_zero_nested(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{'d1 mod 0' divides by 0: mod needs a positive constant divisor}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0, (d1 mod 0) * 2), [64, 64]>) : memref<64x64xf32>
  }
  return
}

// -----

func.func @mod_by_negative_on_shared() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %s = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    // expected-error @+1 {{'d0 mod -1' divides by -1: mod needs a positive constant divisor}}
    tl.annotate_layout %s layout(#tl.index_map<(d0, d1) -> (d0 mod -1, d1), [64, 64]>) : memref<64x64xf16, #tl.scope<shared>>
  }
  return
}

// -----

func.func @result_past_the_end(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout result 0 ('d0 + 1') takes values in [1, 64] over the buffer's indices [64, 64], outside [0, 63] of the physical shape [64, 64]}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0 + 1, d1), [64, 64]>) : memref<64x64xf32>
  }
  return
}

// -----

func.func @result_negative(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout result 1 ('d1 - 8') takes values in [-8, 55]}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0, d1 - 8), [64, 64]>) : memref<64x64xf32>
  }
  return
}

// -----

// The physical shape holds as many elements as the buffer, but the rows
// folded in pairs need 128 columns, not 64.
func.func @folded_rows_too_narrow(%A: memref<100x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout result 1 ('d1 + (d0 mod 2) * 64') takes values in [0, 127] over the buffer's indices [100, 64], outside [0, 63] of the physical shape [100, 64]}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0 floordiv 2, d1 + (d0 mod 2) * 64), [100, 64]>) : memref<100x64xf32>
  }
  return
}

// -----

func.func @swapped_extents(%A: memref<32x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout result 0 ('d1') takes values in [0, 63] over the buffer's indices [32, 64], outside [0, 31] of the physical shape [32, 64]}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d1, d0), [32, 64]>) : memref<32x64xf32>
  }
  return
}

// -----

func.func @overflow(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout result 0: 'd0 * 4611686018427387904' overflows 64-bit integers over the buffer's indices}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0 * 4611686018427387904, d1), [64, 64]>) : memref<64x64xf32>
  }
  return
}

// -----

func.func @zero_physical_extent(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout's physical extent 0 in dimension 1 must be positive}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0, d1), [64, 0]>) : memref<64x64xf32>
  }
  return
}

// -----

func.func @negative_physical_extents(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout's physical extent -64 in dimension 0 must be positive}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0, d1), [-64, -64]>) : memref<64x64xf32>
  }
  return
}

// -----

func.func @huge_physical_shape(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout's physical shape [4294967296, 4294967296] has more than 2^63 elements}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0, d1), [4294967296, 4294967296]>) : memref<64x64xf32>
  }
  return
}

// -----

// Kept: a global tensor's layout may not map into more elements than it holds.
func.func @more_elements_than_the_tensor(%A: memref<64x64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout maps into [64, 128] (8192 elements) but the buffer holds 4096}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0, d1), [64, 128]>) : memref<64x64xf32>
  }
  return
}
