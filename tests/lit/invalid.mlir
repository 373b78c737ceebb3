// RUN: tl-opt %s -split-input-file -verify-diagnostics
// Each verifier error, one per split.

func.func @threads_not_warp_multiple() {
  // expected-error @+1 {{thread count 100 is not a positive multiple of 32}}
  tl.kernel grid [1] threads 100 {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @grid_too_deep() {
  // expected-error @+1 {{grid must have 1 to 3 dimensions, got 4}}
  tl.kernel grid [1, 1, 1, 1] threads 32 {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
  }
  return
}

// -----

func.func @block_index_count() {
  // expected-error @+1 {{body must take 2 block indices (one per dimension), got 1}}
  tl.kernel grid [1, 2] threads 32 {
  ^bb0(%a: index):
  }
  return
}

// -----

func.func @alloc_outside_kernel() {
  // expected-error @+1 {{must be inside a tl.kernel}}
  %a = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
  return
}

// -----

func.func @zero_sized() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{zero-sized buffer: extent 0 in dimension 1 of [64, 0]}}
    %a = tl.alloc_shared : memref<64x0xf16, #tl.scope<shared>>
  }
  return
}

// -----

func.func @wrong_scope() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{result must be in #tl.scope<fragment>}}
    %a = tl.alloc_fragment : memref<64xf16, #tl.scope<shared>>
  }
  return
}

// -----

func.func @gemm_k(%A: memref<64x32xf16, #tl.scope<shared>>, %B: memref<64x64xf16, #tl.scope<shared>>, %C: memref<64x64xf32, #tl.scope<fragment>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{K of A (32) does not match K of B (64)}}
    tl.gemm %A, %B, %C : memref<64x32xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
  }
  return
}

// -----

func.func @gemm_global_operand(%A: memref<64x64xf16>, %B: memref<64x64xf16, #tl.scope<shared>>, %C: memref<64x64xf32, #tl.scope<fragment>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{operand A must be a shared or fragment tile, got a global tensor}}
    tl.gemm %A, %B, %C : memref<64x64xf16>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
  }
  return
}

// -----

func.func @copy_extents(%Q: memref<2x128x4x64xf16>, %S: memref<32x64xf16, #tl.scope<shared>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{extents differ: source region [1, 64, 1, 64] vs destination region [32, 64]}}
    tl.copy %Q[%c0, %c0, %c0, %c0] [1, 64, 1, 64] to %S[%c0, %c0] [32, 64] : memref<2x128x4x64xf16> to memref<32x64xf16, #tl.scope<shared>>
  }
  return
}

// -----

func.func @copy_rank(%Q: memref<2x128xf16>, %S: memref<64xf16, #tl.scope<shared>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{source region has 1 offsets and 1 extents but the buffer has rank 2}}
    tl.copy %Q[%c0] [64] to %S[%c0] [64] : memref<2x128xf16> to memref<64xf16, #tl.scope<shared>>
  }
  return
}

// -----

func.func @copy_start_outside(%Q: memref<2x128xf16>, %S: memref<64xf16, #tl.scope<shared>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    // expected-error @+1 {{source region [2, 3) in dimension 0 lies outside the buffer's extent 2}}
    tl.copy %Q[%c2, %c0] [1, 64] to %S[%c0] [64] : memref<2x128xf16> to memref<64xf16, #tl.scope<shared>>
  }
  return
}

// -----

func.func @reduce_dim(%S: memref<64x64xf32, #tl.scope<fragment>>, %D: memref<64xf32, #tl.scope<fragment>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{reduces over dimension 2 but the source has rank 2}}
    tl.reduce max %S -> %D {dim = 2 : i64} : memref<64x64xf32, #tl.scope<fragment>> -> memref<64xf32, #tl.scope<fragment>>
  }
  return
}

// -----

func.func @fill_type(%S: memref<64xf32, #tl.scope<fragment>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %v = arith.constant 0.0 : f16
    // expected-error @+1 {{value type 'f16' does not match the buffer's element type 'f32'}}
    tl.fill %S, %v : memref<64xf32, #tl.scope<fragment>>, f16
  }
  return
}

// -----

func.func @atomic_fragment(%S: memref<64xf32, #tl.scope<fragment>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %v = arith.constant 1.0 : f32
    // expected-error @+1 {{needs a global or shared destination, got a fragment}}
    tl.atomic_add %S[%bx], %v : memref<64xf32, #tl.scope<fragment>>, f32
  }
  return
}

// -----

func.func @atomic_tile_global_source(%X: memref<64xf32>, %Y: memref<64xf32>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{needs a shared or fragment source, got a global tensor}}
    tl.atomic_add_tile %X[%c0] [64] to %Y[%c0] [64] : memref<64xf32> to memref<64xf32>
  }
  return
}

// -----

func.func @atomic_tile_shared_destination(%S: memref<64xf32, #tl.scope<shared>>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %t = tl.alloc_shared : memref<64xf32, #tl.scope<shared>>
    // expected-error @+1 {{needs a global destination, got a shared buffer}}
    tl.atomic_add_tile %t[%c0] [64] to %S[%c0] [64] : memref<64xf32, #tl.scope<shared>> to memref<64xf32, #tl.scope<shared>>
  }
  return
}

// -----

func.func @atomic_tile_types(%Y: memref<64xf32>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %t = tl.alloc_shared : memref<64xf16, #tl.scope<shared>>
    // expected-error @+1 {{adds 'f16' into 'f32'; it takes one float type on both sides}}
    tl.atomic_add_tile %t[%c0] [64] to %Y[%c0] [64] : memref<64xf16, #tl.scope<shared>> to memref<64xf32>
  }
  return
}

// -----

func.func @layout_rank(%dQ: memref<2x128x4x64xf32>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout takes 3 indices but the buffer has rank 4}}
    tl.annotate_layout %dQ layout(#tl.index_map<(d0, d1, d2) -> (d0, d1, d2), [2, 128, 4]>) : memref<2x128x4x64xf32>
  }
  return
}

// -----

func.func @layout_kind(%dQ: memref<2x128xf32>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{layout must be #tl.swizzle or #tl.index_map}}
    tl.annotate_layout %dQ layout(42 : i32) : memref<2x128xf32>
  }
  return
}

// -----

func.func @parallel_extent() {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{extent 0 in dimension 1 must be positive}}
    tl.parallel [4, 0] {
    ^bb0(%i: index, %j: index):
    }
  }
  return
}

// -----

func.func @pipelined_stages() {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{num_stages must be >= 0, got -1}}
    tl.pipelined %c0 to %c0 stages -1 {
    ^bb0(%k: index):
    }
  }
  return
}

// -----

func.func @in_turn_shared_counter() {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    %t = tl.alloc_shared : memref<4xi32, #tl.scope<shared>>
    // expected-error @+1 {{needs its turn counter in a global tensor, got a shared buffer}}
    tl.in_turn %t[%bx] turn %bx next %bx : memref<4xi32, #tl.scope<shared>> {
    }
  }
  return
}

// -----

func.func @in_turn_in_parallel(%t: memref<4xi32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    tl.parallel [4] {
    ^bb0(%i: index):
      // expected-error @+1 {{waits for the whole block, so it cannot be inside a tl.parallel}}
      tl.in_turn %t[%i] turn %bx next %bx : memref<4xi32> {
      }
    }
  }
  return
}

// -----

func.func @in_turn_nested(%t: memref<4xi32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    tl.in_turn %t[%bx] turn %bx next %bx : memref<4xi32> {
      // expected-error @+1 {{cannot be inside another tl.in_turn}}
      tl.in_turn %t[%bx] turn %bx next %bx : memref<4xi32> {
      }
    }
  }
  return
}

// -----

func.func @in_turn_counter_type(%t: memref<4xf32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{memref of 32-bit signless integer values}}
    tl.in_turn %t[%bx] turn %bx next %bx : memref<4xf32> {
    }
  }
  return
}

// -----

func.func @last_to_arrive_shared_counter() {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    %t = tl.alloc_shared : memref<4xi32, #tl.scope<shared>>
    // expected-error @+1 {{needs its arrival counter in a global tensor, got a shared buffer}}
    tl.last_to_arrive %t[%bx] arrivals %bx : memref<4xi32, #tl.scope<shared>> {
    }
  }
  return
}

// -----

func.func @last_to_arrive_in_parallel(%t: memref<4xi32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    tl.parallel [4] {
    ^bb0(%i: index):
      // expected-error @+1 {{waits for the whole block, so it cannot be inside a tl.parallel}}
      tl.last_to_arrive %t[%i] arrivals %bx : memref<4xi32> {
      }
    }
  }
  return
}

// -----

func.func @last_to_arrive_nested(%t: memref<4xi32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    tl.last_to_arrive %t[%bx] arrivals %bx : memref<4xi32> {
      // expected-error @+1 {{cannot be inside another tl.last_to_arrive (only one block runs its body)}}
      tl.last_to_arrive %t[%bx] arrivals %bx : memref<4xi32> {
      }
    }
  }
  return
}

// -----

func.func @last_to_arrive_no_arrivals(%t: memref<4xi32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{waits for 0 arrivals; a block that arrives makes at least one}}
    tl.last_to_arrive %t[%bx] arrivals %c0 : memref<4xi32> {
    }
  }
  return
}

// -----

func.func @in_turn_in_last_to_arrive(%t: memref<4xi32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    tl.last_to_arrive %t[%bx] arrivals %bx : memref<4xi32> {
      // expected-error @+1 {{cannot be inside a tl.last_to_arrive (only the last block would take its turn; the other blocks' turns would never come)}}
      tl.in_turn %t[%bx] turn %bx next %bx : memref<4xi32> {
      }
    }
  }
  return
}

// -----

func.func @last_to_arrive_rank(%t: memref<4x4xi32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{takes 1 indices but the arrival counter has rank 2}}
    tl.last_to_arrive %t[%bx] arrivals %bx : memref<4x4xi32> {
    }
  }
  return
}

// -----

func.func @gemm_wg_wait(%A: memref<64x64xf16>) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %a = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
    %c = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    // expected-error @+1 {{wg_wait is 0 (complete here) or -1 (stay in flight until wait_wgmma), got 1}}
    tl.gemm %a, %a, %c {wg_wait = 1} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
  }
  return
}

// -----

func.func @wait_wgmma_pending() {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    // expected-error @+1 {{pending counts gemms still in flight: 0 or more, got -1}}
    tl.wait_wgmma -1
  }
  return
}

// -----

func.func @pingpong_not_gemm() {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    %zero = arith.constant 0.0 : f32
    %c = tl.alloc_fragment : memref<128x64xf32, #tl.scope<fragment>>
    tl.pingpong {
      // expected-error @+1 {{cannot be in a tl.pingpong: its body holds gemms only}}
      tl.fill %c, %zero : memref<128x64xf32, #tl.scope<fragment>>, f32
    }
  }
  return
}

// -----

func.func @pingpong_empty() {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    // expected-error @+1 {{has an empty body; it orders the issue of gemms}}
    tl.pingpong {
    }
  }
  return
}

// -----

func.func @pingpong_nested() {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    tl.pingpong {
      // expected-error @+1 {{cannot be inside another tl.pingpong}}
      tl.pingpong {
      }
    }
  }
  return
}

// -----

func.func @pingpong_in_parallel() {
  tl.kernel grid [1] threads 256 {
  ^bb0(%bx: index):
    tl.parallel [4] {
    ^bb0(%i: index):
      // expected-error @+1 {{orders whole warpgroups, so it cannot be inside a tl.parallel}}
      tl.pingpong {
      }
    }
  }
  return
}

// -----

func.func @pingpong_in_last_to_arrive(%t: memref<4xi32> {tl.name = "T"}) {
  tl.kernel grid [4] threads 256 {
  ^bb0(%bx: index):
    %c4 = arith.constant 4 : index
    tl.last_to_arrive %t[%bx] arrivals %c4 : memref<4xi32> {
      // expected-error @+1 {{cannot be inside a tl.last_to_arrive}}
      tl.pingpong {
      }
    }
  }
  return
}
