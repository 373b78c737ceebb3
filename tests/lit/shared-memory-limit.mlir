// RUN: tl-opt %s --tl-gpu-lowering="shared-memory-limit=232448 target=sm_90a" -split-input-file -verify-diagnostics
// Shared memory past the target's limit is an error at the alloc_shared whose
// tile the limit cuts (the pass option the compiler sets from the target).

func.func @too_big(%A: memref<150x512xf16>, %B: memref<150x512xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<150x512xf16, #tl.scope<shared>>
    // expected-error @+1 {{the kernel needs 307200 bytes (300.0 KiB) of shared memory, more than the 232448 (227.0 KiB) a block has on sm_90a: this 150x512xf16 tile takes bytes [153600, 307200)}}
    %b = tl.alloc_shared : memref<150x512xf16, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [150, 512] to %a[%c0, %c0] [150, 512] : memref<150x512xf16> to memref<150x512xf16, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [150, 512] to %b[%c0, %c0] [150, 512] : memref<150x512xf16> to memref<150x512xf16, #tl.scope<shared>>
    tl.copy %a[%c0, %c0] [150, 512] to %B[%c0, %c0] [150, 512] : memref<150x512xf16, #tl.scope<shared>> to memref<150x512xf16>
    tl.copy %b[%c0, %c0] [150, 512] to %B[%c0, %c0] [150, 512] : memref<150x512xf16, #tl.scope<shared>> to memref<150x512xf16>
  }
  return
}

// -----

// Two tiles alive together: the second one placed is the one past the limit.
func.func @two_tiles(%A: memref<256x256xf16>, %B: memref<256x256xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<256x256xf16, #tl.scope<shared>>
    // expected-error @+1 {{the kernel needs 262144 bytes (256.0 KiB) of shared memory, more than the 232448 (227.0 KiB) a block has on sm_90a: this 256x256xf16 tile takes bytes [131072, 262144)}}
    %b = tl.alloc_shared : memref<256x256xf16, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [256, 256] to %a[%c0, %c0] [256, 256] : memref<256x256xf16> to memref<256x256xf16, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [256, 256] to %b[%c0, %c0] [256, 256] : memref<256x256xf16> to memref<256x256xf16, #tl.scope<shared>>
    tl.copy %a[%c0, %c0] [256, 256] to %B[%c0, %c0] [256, 256] : memref<256x256xf16, #tl.scope<shared>> to memref<256x256xf16>
    tl.copy %b[%c0, %c0] [256, 256] to %B[%c0, %c0] [256, 256] : memref<256x256xf16, #tl.scope<shared>> to memref<256x256xf16>
  }
  return
}

// -----

// Within the limit: no error.
func.func @fits(%A: memref<128x256xf16>, %B: memref<128x256xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared : memref<128x256xf16, #tl.scope<shared>>
    tl.copy %A[%c0, %c0] [128, 256] to %a[%c0, %c0] [128, 256] : memref<128x256xf16> to memref<128x256xf16, #tl.scope<shared>>
    tl.copy %a[%c0, %c0] [128, 256] to %B[%c0, %c0] [128, 256] : memref<128x256xf16, #tl.scope<shared>> to memref<128x256xf16>
  }
  return
}
