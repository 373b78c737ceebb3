// Every input a fuzzer ever crashed tl-opt or tlc with (tests/fuzz/fuzz.py),
// reduced: each must now be a diagnostic at the offending op, before any
// lowering runs. The first three came from an earlier mutation fuzzer; the
// rest name the seed and mutant of tests/fuzz/fuzz.py that found them.
//
// RUN: tl-opt %s -split-input-file -verify-diagnostics
// RUN: tl-opt %s -split-input-file -verify-diagnostics --tl-gpu-lowering
// RUN: tl-opt %s -split-input-file -verify-diagnostics --convert-tl-to-cpu
//
// tlc on the first three as they were found: a diagnostic, exit 1, no crash.
// RUN: not tlc %S/Inputs/fuzz/div0.mlir --emit=ptx 2>&1 | FileCheck %s --check-prefix=DIV0
// RUN: not tlc %S/Inputs/fuzz/div0.mlir --emit=llvm --target=cpu 2>&1 | FileCheck %s --check-prefix=DIV0
// DIV0: div0.mlir:5:5: error: 'tl.annotate_layout' op layout result 0: 'd0 floordiv 0' divides by 0
// RUN: not tlc %S/Inputs/fuzz/nested.mlir --emit=ptx 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not tlc %S/Inputs/fuzz/nested.mlir --emit=llvm --target=cpu 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: nested.mlir:4:5: error: 'tl.kernel' op must not be nested inside another tl.kernel
// RUN: not tlc %S/Inputs/fuzz/capture.mlir --emit=ptx 2>&1 | FileCheck %s --check-prefix=CAPTURE
// RUN: not tlc %S/Inputs/fuzz/capture.mlir --emit=llvm --target=cpu 2>&1 | FileCheck %s --check-prefix=CAPTURE
// CAPTURE: capture.mlir:5:5: error: 'tl.copy' op uses %c0, which is defined outside its tl.kernel

// (a) An index map dividing by zero: the lowerings folded the division
// away and built loads without indices.
func.func @div0(%A: memref<64x64xf32>, %B: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{layout result 0: 'd0 floordiv 0' divides by 0: floordiv needs a positive constant divisor}}
    tl.annotate_layout %A layout(#tl.index_map<(d0, d1) -> (d0 floordiv 0, d1), [64, 64]>) : memref<64x64xf32>
    tl.copy %A[%c0, %c0] [64, 64] to %B[%c0, %c0] [64, 64] : memref<64x64xf32> to memref<64x64xf32>
  }
  return
}

// -----

// (b) A kernel inside a kernel: --convert-tl-to-gpu outlined both and
// read the erased function (segfault).
func.func @nested(%A: memref<64xf32>, %B: memref<64xf32> {tl.output}) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{must not be nested inside another tl.kernel}}
    tl.kernel grid [1] threads 32 {
    ^bb0(%by: index):
      %c0 = arith.constant 0 : index
      tl.copy %A[%c0] [64] to %B[%c0] [64] : memref<64xf32> to memref<64xf32>
    }
  }
  return
}

// -----

// (c) A constant defined outside the kernel: --convert-tl-to-gpu replaced it
// by the thread id without a word; tlc --emit=ptx segfaulted.
func.func @capture(%A: memref<64xf32>, %B: memref<64xf32> {tl.output}) {
  // expected-note @+1 {{defined here}}
  %c0 = arith.constant 0 : index
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{uses %c0, which is defined outside its tl.kernel}}
    tl.copy %A[%c0] [64] to %B[%c0] [64] : memref<64xf32> to memref<64xf32>
  }
  return
}

// -----

// Seed 1, mutant 317: 2^31 - 1 pipeline stages; the GPU lowering unrolled
// its prologue once per stage (timeout).
func.func @stages(%A: memref<64x256xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %a = tl.alloc_shared : memref<64x32xf16, #tl.scope<shared>>
    // expected-error @+1 {{num_stages 2147483647 exceeds 16}}
    tl.pipelined %c0 to %c8 stages 2147483647 {
    ^bb0(%k: index):
      %c32 = arith.constant 32 : index
      %k0 = arith.muli %k, %c32 : index
      tl.copy %A[%c0, %k0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x256xf16> to memref<64x32xf16, #tl.scope<shared>>
    }
  }
  return
}

// -----

// Seed 2, mutant 12964: an scf.if whose condition is defined inside the
// scf.if itself. The parser leaves the operand unlinked; the kernel's check
// of what its body uses followed it into freed memory (segfault). That check
// now leaves it to MLIR's own report.
func.func @unlinked_operand(%A: memref<8x64xf16>) {
  tl.kernel grid [1] threads 64 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{operation's operand is unlinked}}
    scf.if %branch {
      %branch = arith.cmpi ne, %bx, %c0 : index
    }
  }
  return
}

// -----

// Seed 3, mutant 1762: a kernel's body wrapped in a pipelined loop, so its
// shared tile was allocated inside the loop; the GPU lowering's multi-buffered
// copy looked for a tile it never planned (segfault in stageView).
func.func @alloc_in_pipelined_loop(%X: memref<128x64xf16>) {
  tl.kernel grid [2] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    tl.pipelined %c0 to %c64 stages 3 {
    ^bb0(%iv: index):
      // expected-error @+1 {{'tl.alloc_shared' op must be directly in the tl.kernel's body (a buffer lives as long as the thread block), not inside 'tl.pipelined'}}
      %s = tl.alloc_shared : memref<64x64xf16, #tl.scope<shared>>
      tl.copy %X[%c0, %c0] [64, 64] to %s[%c0, %c0] [64, 64] : memref<128x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    }
  }
  return
}
