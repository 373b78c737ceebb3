// RUN: tl-opt %s --tl-pass-tensor-maps -split-input-file -verify-diagnostics | FileCheck %s
// tl-pass-tensor-maps: a kernel's trailing tensor-map parameters become
// 128-byte by-value, 64-byte aligned grid constants (PTX `.param .align 64
// .b8 p[128]`), which TMA reads its descriptor from.

// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
llvm.func @kernel(%a: !llvm.ptr, %map: !llvm.ptr) attributes {nvvm.kernel, tl.tensor_maps = [#tl.tensor_map<param = 0, box = [64, 64], swizzle = 128>]} {
  llvm.return
}

// -----

// expected-error @+1 {{lists 2 tensor maps but is not a kernel with as many trailing parameters}}
llvm.func @too_few(%map: !llvm.ptr) attributes {nvvm.kernel, tl.tensor_maps = [#tl.tensor_map<param = 0, box = [64], swizzle = 0>, #tl.tensor_map<param = 0, box = [64], swizzle = 0>]} {
  llvm.return
}

// -----

// expected-error @+1 {{a TMA box has 1 to 5 dimensions of 1 to 256 elements}}
llvm.func @big_box(%map: !llvm.ptr) attributes {nvvm.kernel, tl.tensor_maps = [#tl.tensor_map<param = 0, box = [512], swizzle = 0>]} {
  llvm.return
}
