// RUN: tl-opt %s -split-input-file -verify-diagnostics
// What the GPUs have room for (TLOps.cpp): sizes past these overflowed the
// lowerings' arithmetic and compiled to something else without a word (a
// shared tile of 2^63 bytes planned to 0 bytes, a 2^62 x 4 loop to 16
// iterations).

func.func @grid_y() {
  // expected-error @+1 {{grid extent 65536 in dimension 1 (y) exceeds the 65535 blocks a GPU launch allows there}}
  tl.kernel grid [1, 65536] threads 32 {
  ^bb0(%bx: index, %by: index):
  }
  return
}

// -----

func.func @grid_x() {
  // expected-error @+1 {{grid extent 2147483648 in dimension 0 (x) exceeds the 2147483647 blocks a GPU launch allows there}}
  tl.kernel grid [2147483648] threads 32 {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @shared_too_big() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{buffer [256, 512] x 'f16' takes 262144 bytes, more than the 232448 (227 KiB) a thread block can have}}
    %s = tl.alloc_shared : memref<256x512xf16, #tl.scope<shared>>
  }
  return
}

// -----

func.func @shared_overflows() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{buffer [4611686018427387904] x 'f16' takes more than 2^63 bytes}}
    %s = tl.alloc_shared : memref<4611686018427387904xf16, #tl.scope<shared>>
  }
  return
}

// -----

func.func @local_too_big() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{takes 1048576 bytes, more than the 524288 (512 KiB) of local memory of a thread}}
    %l = tl.alloc_local : memref<262144xf32, #tl.scope<local>>
  }
  return
}

// -----

func.func @fragment_too_big() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{takes 67108864 bytes, more than its 32 threads can hold even in local memory (512 KiB each)}}
    %f = tl.alloc_fragment : memref<4096x4096xf32, #tl.scope<fragment>>
  }
  return
}

// -----

func.func @parallel_too_many() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{the loop nest [4611686018427387904, 4] covers more than 2147483647 (2^31 - 1) elements}}
    tl.parallel [4611686018427387904, 4] {
    ^bb0(%i: index, %j: index):
    }
  }
  return
}

// -----

func.func @copy_too_many(%A: memref<65536x65536xf16>, %B: memref<65536x65536xf16> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{the region [65536, 65536] covers more than 2147483647 (2^31 - 1) elements}}
    tl.copy %A[%c0, %c0] [65536, 65536] to %B[%c0, %c0] [65536, 65536] : memref<65536x65536xf16> to memref<65536x65536xf16>
  }
  return
}

// -----

func.func @global_overflows(%A: memref<4611686018427387904x4xf32>) {
  // expected-error @+1 {{argument 0 of @global_overflows ('memref<4611686018427387904x4xf32>') holds more than 2^63 bytes}}
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  return
}

// -----

// The message's end of a region past a global tensor's end does not wrap.
func.func @region_end(%A: memref<64xf32>, %B: memref<64xf32> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    // expected-error @+1 {{source region [64, 9223372036854775807) in dimension 0 lies outside the buffer's extent 64}}
    tl.copy %A[%c64] [9223372036854775807] to %B[%c0] [9223372036854775807] : memref<64xf32> to memref<64xf32>
  }
  return
}
