// RUN: tl-opt %s --convert-tl-to-gpu="sm90a-plans=false target=sm_80" -split-input-file -verify-diagnostics
// Plans that need sm_90a's instructions, written by hand in tl text and
// compiled for another target (tlc FILE.mlir --target=sm_80): an error at the
// op that carries the plan, not a crash in LLVM's instruction selection (the
// fuzzer found a TMA copy's proxy fence so).

func.func @tma_copy(%A: memref<64x64xf16>, %C: memref<64x64xf16> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.fragment_layout = "row: no gemm"} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared {tl.offset = 0 : i64} : memref<64x64xf16, #tl.scope<shared>>
    // expected-error @+1 {{'tl.copy' op is planned for a TMA copy (tl.tma_copy), which needs sm_90a; the target is sm_80}}
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] {tl.tma_copy} : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.copy %a[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf16, #tl.scope<shared>> to memref<64x64xf16>
  }
  return
}

// -----

func.func @wgmma_layout(%A: memref<64x64xf16>, %C: memref<64x64xf32> {tl.output}) {
  tl.kernel grid [1] threads 128 attributes {tl.fragment_layout = "wgmma"} {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tl.alloc_shared {tl.offset = 0 : i64} : memref<64x64xf16, #tl.scope<shared>>
    // expected-error @+1 {{'tl.alloc_fragment' op is planned for a wgmma fragment layout, which needs sm_90a; the target is sm_80}}
    %c = tl.alloc_fragment {tl.layout = #tl.wgmma<warps = [4, 1]>} : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #tl.scope<shared>>
    tl.gemm %a, %a, %c {clear_accum} : memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf16, #tl.scope<shared>>, memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<64x64xf32>
  }
  return
}
