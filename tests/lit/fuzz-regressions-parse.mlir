// Inputs that corrupted the heap as they failed to parse (fuzzer seed 2,
// mutant 5317): a value defined in the body of a tl.kernel, tl.parallel or
// tl.pipelined and used, by forward reference, outside it, when the body
// then fails to parse. The generated parser freed the body with the use
// still pointing into it; parseBody (TLOps.cpp) drops such uses first.
// Under valgrind where there is one (the heap damage is silent otherwise
// for the first case; the second aborted in malloc).
//
// RUN: %memcheck tl-opt %s -split-input-file -verify-diagnostics

func.func @forward_use(%A: memref<64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %use = arith.addi %bx, %later : index
    tl.parallel [4] {
      %later = arith.constant 1 : index
    ^bb1(%i: index):
      // expected-error @+1 {{expected operation name in quotes}}
      %bad =
    }
  }
  return
}

// -----

// As the fuzzer found it, reduced: the body never ends.
      %19 = arith.addi %1, %c1_6 : index
      tl.pipelined %c0_9 to %21 stages 1 {
      %c1_6 = arith.constant 1 : index
      ^bb0(%iv: index):
        %c32_16 = arith.constant 32 : index
        %c0_17 = arith.constant 0 : index
        %c0_18 = arith.constant 0 : index
        %c0_19 = arith.constant 0 : index
        %c128_20 = arith.constant 128 : index
        %c32_21 = arith.constant 32 : index
        // expected-error @+1 {{expected operation name in quotes}}
        %c31 = arith.constant 31 : index
