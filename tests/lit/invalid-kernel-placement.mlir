// RUN: tl-opt %s -split-input-file -verify-diagnostics
// Where a kernel may sit and what it may use from outside (TLOps.cpp, "Where
// a kernel sits and what it sees"): both lowerings turn the kernel's function
// into the kernel, so anything else in it would be dropped or misplaced.

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

func.func @captured_constant(%A: memref<64xf32>, %B: memref<64xf32> {tl.output}) {
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

func.func @captured_in_loop(%A: memref<64xf32>, %B: memref<64xf32> {tl.output}) {
  // expected-note @+1 {{defined here}}
  %scale = arith.constant 2.0 : f32
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tl.alloc_fragment : memref<64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0] [64] to %f[%c0] [64] : memref<64xf32> to memref<64xf32, #tl.scope<fragment>>
    tl.parallel [64] {
    ^bb0(%i: index):
      %v = memref.load %f[%i] : memref<64xf32, #tl.scope<fragment>>
      // expected-error @+1 {{uses %cst, which is defined outside its tl.kernel}}
      %w = arith.mulf %v, %scale : f32
      memref.store %w, %f[%i] : memref<64xf32, #tl.scope<fragment>>
    }
    tl.copy %f[%c0] [64] to %B[%c0] [64] : memref<64xf32, #tl.scope<fragment>> to memref<64xf32>
  }
  return
}

// -----

func.func @op_beside_kernel(%A: memref<64xf32>) {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  // expected-error @+1 {{is outside the tl.kernel of @op_beside_kernel}}
  %c0 = arith.constant 0 : index
  return
}

// -----

func.func @two_kernels() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  // expected-error @+1 {{is a second tl.kernel in @two_kernels; a function holds one kernel}}
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  return
}

// -----

// expected-error @+1 {{must be directly inside a func.func (the program's function), not inside 'builtin.module'}}
tl.kernel grid [1] threads 32 {
^bb0(%bx: index):
}

// -----

func.func @in_a_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{must be directly inside a func.func (the program's function), not inside 'scf.for'}}
    tl.kernel grid [1] threads 32 {
    ^bb0(%bx: index):
    }
  }
  return
}

// -----

func.func @returns_a_value() -> index {
  // expected-error @+1 {{is in @returns_a_value, which returns 1 value(s); a kernel's function returns nothing}}
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  %c0 = arith.constant 0 : index
  return %c0 : index
}

// -----

func.func @index_argument(%n: index) {
  // expected-error @+1 {{takes its global tensors from the arguments of @index_argument, but argument 0 has type 'index'}}
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @shared_argument(%A: memref<64xf32, #tl.scope<shared>>) {
  // expected-error @+1 {{but argument 0 has type 'memref<64xf32, #tl.scope<shared>>'}}
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @dynamic_argument(%A: memref<?xf32>) {
  // expected-error @+1 {{but argument 0 has type 'memref<?xf32>'}}
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @strided_argument(%A: memref<64x64xf32, strided<[1, 64]>>) {
  // expected-error @+1 {{but argument 0 has type 'memref<64x64xf32, strided<[1, 64]>>'}}
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @empty_argument(%A: memref<0xf32>) {
  // expected-error @+1 {{but argument 0 has type 'memref<0xf32>'}}
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
  }
  return
}

// -----

func.func @strided_alloc() {
  tl.kernel grid [1] threads 32 {
  ^bb0(%bx: index):
    // expected-error @+1 {{result must have the identity layout (a layout is set with tl.annotate_layout)}}
    %a = tl.alloc_shared : memref<64x64xf16, strided<[1, 64]>, #tl.scope<shared>>
  }
  return
}

