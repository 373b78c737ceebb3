// RUN: tl-opt %s --tl-check-sync -split-input-file -verify-diagnostics
// tl-check-sync: what would hang or silently serialise a Hopper kernel is a
// compile error. (Tensor maps are the kernel's trailing parameters.) Hand-written thread-level kernels, one mistake each, and
// two that are right.

!acc = !llvm.struct<(f32, f32, f32, f32)>
gpu.module @kernels {
  // An mbarrier armed for 16 KiB whose boxes bring 8 KiB ([128, 32] f16).
  gpu.func @short_of_bytes(%A: memref<128x256xf16>, %bar: !llvm.ptr<3>, %dst: !llvm.ptr<7>, %map: !llvm.ptr) kernel attributes {tl.tensor_maps = [#tl.tensor_map<param = 0, box = [128, 32], swizzle = 64>]} {
    %c0 = arith.constant 0 : i32
    %bytes = arith.constant 16384 : i32
    // expected-error @+1 {{an mbarrier is armed for 16384 bytes, but the TMA boxes issued on it bring 8192: its phase would never complete}}
    nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %map, %bar, box[%c0, %c0] : !llvm.ptr<7>, !llvm.ptr
    gpu.return
  }
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
gpu.module @kernels {
  // Two boxes for the bytes of two: right.
  gpu.func @matched(%A: memref<128x256xf16>, %bar: !llvm.ptr<3>, %dst: !llvm.ptr<7>, %map: !llvm.ptr) kernel attributes {tl.tensor_maps = [#tl.tensor_map<param = 0, box = [128, 32], swizzle = 64>]} {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %bytes = arith.constant 16384 : i32
    nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %map, %bar, box[%c0, %c0] : !llvm.ptr<7>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %map, %bar, box[%c32, %c0] : !llvm.ptr<7>, !llvm.ptr
    gpu.return
  }
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
gpu.module @kernels {
  // wgmma under `tid < 128`: ptxas cannot see that the branch is uniform
  // in each warpgroup.
  gpu.func @divergent(%a: i64, %b: i64, %init: !acc) kernel {
    %tid = gpu.thread_id x
    %c128 = arith.constant 128 : index
    %consumer = arith.cmpi ult, %tid, %c128 : index
    // expected-note @+1 {{the branch}}
    scf.if %consumer {
      nvvm.wgmma.fence.aligned
      // expected-error @+1 {{a wgmma under a branch on the thread index}}
      %d = nvvm.wgmma.mma_async %a, %b, %init, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
    }
    gpu.return
  }
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
gpu.module @kernels {
  // The same branch on a warpgroup index broadcast from lane 0: right.
  gpu.func @uniform(%a: i64, %b: i64, %init: !acc) kernel {
    %tid = gpu.thread_id x
    %c128 = arith.constant 128 : index
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %group = arith.divui %tid, %c128 : index
    %g = arith.index_cast %group : index to i32
    %role, %valid = gpu.shuffle idx %g, %c0, %c32 : i32
    %consumer = arith.cmpi ult, %role, %c1 : i32
    scf.if %consumer {
      nvvm.wgmma.fence.aligned
      %d = nvvm.wgmma.mma_async %a, %b, %init, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      %x = llvm.extractvalue %d[0] : !acc
    }
    gpu.return
  }
}

// -----

!acc = !llvm.struct<(f32, f32, f32, f32)>
gpu.module @kernels {
  // An accumulator read before the wait.
  gpu.func @early_read(%a: i64, %b: i64, %init: !acc) kernel {
    nvvm.wgmma.fence.aligned
    // expected-note @+1 {{the wgmma}}
    %d = nvvm.wgmma.mma_async %a, %b, %init, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !acc -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    // expected-error @+1 {{touches a wgmma's accumulators before wgmma.wait_group}}
    %x = llvm.extractvalue %d[0] : !acc
    nvvm.wgmma.wait.group.sync.aligned 0
    gpu.return
  }
}

// -----

// A wgmma with A from registers (the lowering's inline PTX) is a wgmma too:
// its accumulator read before the wait is refused...
!acc = !llvm.struct<(f32, f32, f32, f32)>
gpu.module @kernels {
  gpu.func @registers_early_read(%a0: i32, %b: i64, %x0: f32) kernel {
    nvvm.wgmma.fence.aligned
    // expected-note @+1 {{the wgmma}}
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, p, 1, 1, 1;", "=f,=f,=f,=f,r,r,r,r,l,0,1,2,3" %a0, %a0, %a0, %a0, %b, %x0, %x0, %x0, %x0 : (i32, i32, i32, i32, i64, f32, f32, f32, f32) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    // expected-error @+1 {{touches a wgmma's accumulators before wgmma.wait_group}}
    %x = llvm.extractvalue %d[0] : !acc
    %y = arith.addf %x, %x0 : f32
    nvvm.wgmma.wait.group.sync.aligned 0
    gpu.return
  }
}

// -----

// ... while passing it on to the next wgmma, one value at a time, is right.
!acc = !llvm.struct<(f32, f32, f32, f32)>
gpu.module @kernels {
  gpu.func @registers_chained(%a0: i32, %b: i64, %x0: f32) kernel {
    nvvm.wgmma.fence.aligned
    %d = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, p, 1, 1, 1;", "=f,=f,=f,=f,r,r,r,r,l,0,1,2,3" %a0, %a0, %a0, %a0, %b, %x0, %x0, %x0, %x0 : (i32, i32, i32, i32, i64, f32, f32, f32, f32) -> !acc
    %d0 = llvm.extractvalue %d[0] : !acc
    %d1 = llvm.extractvalue %d[1] : !acc
    %d2 = llvm.extractvalue %d[2] : !acc
    %d3 = llvm.extractvalue %d[3] : !acc
    %e = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, p, 1, 1, 1;", "=f,=f,=f,=f,r,r,r,r,l,0,1,2,3" %a0, %a0, %a0, %a0, %b, %d0, %d1, %d2, %d3 : (i32, i32, i32, i32, i64, f32, f32, f32, f32) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    gpu.return
  }
}
