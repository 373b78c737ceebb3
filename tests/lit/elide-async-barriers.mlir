// RUN: tl-opt %s --tl-elide-barriers="async-proxy=true" | FileCheck %s
// RUN: tl-opt %s --tl-elide-barriers | FileCheck %s --check-prefix=OFF
// tl-elide-barriers with `async-proxy` (off by default), on hand-written
// thread-level code shaped as the staged wgmma backward's consumer loop: the
// consumers' barrier (bar.sync 1, 256), P and dS stored to their tiles, a
// proxy fence and a barrier before each wgmma batch.
//   (1) first in the loop body: kept (no barrier before it in the body);
//   (2) right after the stores, with a fence and barrier (3) after it:
//       removed ((3) orders the stores, after every thread's fence);
//   (3) publishes P and dS to the wgmma after it: kept;
//   (4) nothing written since (3), its fence publishes nothing: removed;
//   (5) the body's last: kept (nothing after it in the body to compare with).
// Without the option every barrier stays: the fences and wgmma ops count as
// touching all memory, and `nvvm.barrier id = 1` is not taken for a barrier.
// CHECK-LABEL: gpu.func @consumer_loop
// CHECK: scf.for
// CHECK-NEXT: nvvm.barrier id
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.store
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier id
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NEXT: nvvm.wgmma.mma_async
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NEXT: nvvm.wgmma.mma_async
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier id
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// OFF-LABEL: gpu.func @consumer_loop
// OFF-COUNT-5: nvvm.barrier id
// OFF-NOT: nvvm.barrier id
// OFF-LABEL: gpu.func @fence_after_barrier

// A fence publishes the thread's writes since its last fence, those before
// a barrier too: (1) stays (it orders the store before the load), and (2)
// stays only because the fence after (1) publishes the store before it for
// the wgmma, which reads the tile (without the fence rule nothing between (1)
// and (2) would conflict with what runs between (2) and (3)).
// CHECK-LABEL: gpu.func @fence_after_barrier
// CHECK: memref.store
// CHECK-NEXT: nvvm.barrier id
// CHECK-NEXT: memref.load
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier id
// CHECK-NEXT: nvvm.wgmma.fence.aligned

// What the mode does not take. A block-wide barrier (2) is not removed for
// the consumers' barrier after it, which orders fewer threads (a
// gpu.barrier after it would have let it go: nothing on its two sides
// conflicts).
// CHECK-LABEL: gpu.func @block_barrier_kept
// CHECK: memref.store
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.load
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store
// CHECK-NEXT: nvvm.barrier id

// A fence of global memory publishes nothing of shared memory: it counts as
// touching anything, so the consumers' barrier after it stays (a shared
// fence there would publish nothing new, the earlier one having published
// the store, and the barrier would go).
// CHECK-LABEL: gpu.func @global_fence
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
// CHECK-NEXT: nvvm.barrier id
// CHECK-NEXT: memref.load
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @consumer_loop(%n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2048 = arith.constant 2048 : index
      %c4096 = arith.constant 4096 : index
      %id = arith.constant 1 : i32
      %threads = arith.constant 256 : i32
      %four = arith.constant 4 : i64
      %h = arith.constant 1.0 : f16
      %zero = arith.constant 0.0 : f32
      %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %p = memref.view %base[%c0][] {tl.shared_range = array<i64: 0, 2048>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
      %ds = memref.view %base[%c2048][] {tl.shared_range = array<i64: 2048, 4096>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
      %do = memref.view %base[%c4096][] {tl.shared_range = array<i64: 4096, 6144>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      %u = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
      %u0 = llvm.insertvalue %zero, %u[0] : !llvm.struct<(f32, f32, f32, f32)>
      %u1 = llvm.insertvalue %zero, %u0[1] : !llvm.struct<(f32, f32, f32, f32)>
      %u2 = llvm.insertvalue %zero, %u1[2] : !llvm.struct<(f32, f32, f32, f32)>
      %acc = llvm.insertvalue %zero, %u2[3] : !llvm.struct<(f32, f32, f32, f32)>
      // The descriptors: each tile's address, shifted, held by an opaque move.
      %pa = memref.extract_aligned_pointer_as_index %p : memref<16x64xf16, #gpu.address_space<workgroup>> -> index
      %pi = arith.index_cast %pa : index to i64
      %ps = arith.shrui %pi, %four : i64
      %dp = llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;", "=l,l" %ps : (i64) -> i64
      %sa = memref.extract_aligned_pointer_as_index %ds : memref<16x64xf16, #gpu.address_space<workgroup>> -> index
      %si = arith.index_cast %sa : index to i64
      %ss = arith.shrui %si, %four : i64
      %dds = llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;", "=l,l" %ss : (i64) -> i64
      %oa = memref.extract_aligned_pointer_as_index %do : memref<16x64xf16, #gpu.address_space<workgroup>> -> index
      %oi = arith.index_cast %oa : index to i64
      %os = arith.shrui %oi, %four : i64
      %ddo = llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;", "=l,l" %os : (i64) -> i64
      scf.for %k = %c0 to %n step %c1 {
        nvvm.barrier id = %id number_of_threads = %threads
        memref.store %h, %p[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
        memref.store %h, %ds[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
        nvvm.barrier id = %id number_of_threads = %threads
        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
        nvvm.barrier id = %id number_of_threads = %threads
        nvvm.wgmma.fence.aligned
        %dv = nvvm.wgmma.mma_async %dp, %ddo, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
        nvvm.wgmma.commit.group.sync.aligned
        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
        nvvm.barrier id = %id number_of_threads = %threads
        nvvm.wgmma.fence.aligned
        %dk = nvvm.wgmma.mma_async %dds, %ddo, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
        nvvm.wgmma.commit.group.sync.aligned
        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
        nvvm.barrier id = %id number_of_threads = %threads
        nvvm.wgmma.fence.aligned
        %dq = nvvm.wgmma.mma_async %dds, %dp, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
        nvvm.wgmma.commit.group.sync.aligned
        nvvm.wgmma.wait.group.sync.aligned 0
      }
      gpu.return
    }

    gpu.func @fence_after_barrier() kernel {
      %c0 = arith.constant 0 : index
      %id = arith.constant 1 : i32
      %threads = arith.constant 256 : i32
      %four = arith.constant 4 : i64
      %h = arith.constant 1.0 : f16
      %zero = arith.constant 0.0 : f32
      %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %p = memref.view %base[%c0][] {tl.shared_range = array<i64: 0, 2048>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      %u = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
      %u0 = llvm.insertvalue %zero, %u[0] : !llvm.struct<(f32, f32, f32, f32)>
      %u1 = llvm.insertvalue %zero, %u0[1] : !llvm.struct<(f32, f32, f32, f32)>
      %u2 = llvm.insertvalue %zero, %u1[2] : !llvm.struct<(f32, f32, f32, f32)>
      %acc = llvm.insertvalue %zero, %u2[3] : !llvm.struct<(f32, f32, f32, f32)>
      %pa = memref.extract_aligned_pointer_as_index %p : memref<16x64xf16, #gpu.address_space<workgroup>> -> index
      %pi = arith.index_cast %pa : index to i64
      %dp = arith.shrui %pi, %four : i64
      memref.store %h, %p[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      nvvm.barrier id = %id number_of_threads = %threads
      %l = memref.load %p[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier id = %id number_of_threads = %threads
      nvvm.wgmma.fence.aligned
      %r = nvvm.wgmma.mma_async %dp, %dp, %acc, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      nvvm.barrier id = %id number_of_threads = %threads
      gpu.return
    }

    gpu.func @block_barrier_kept(%out: memref<64xf16>) kernel {
      %c0 = arith.constant 0 : index
      %c2048 = arith.constant 2048 : index
      %id = arith.constant 1 : i32
      %threads = arith.constant 256 : i32
      %h = arith.constant 1.0 : f16
      %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %p = memref.view %base[%c0][] {tl.shared_range = array<i64: 0, 2048>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
      %q = memref.view %base[%c2048][] {tl.shared_range = array<i64: 2048, 4096>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      memref.store %h, %p[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      %a = memref.load %p[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      memref.store %a, %q[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      nvvm.barrier id = %id number_of_threads = %threads
      %b = memref.load %q[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      memref.store %b, %out[%tid] : memref<64xf16>
      gpu.return
    }

    gpu.func @global_fence(%out: memref<64xf16>) kernel {
      %c0 = arith.constant 0 : index
      %id = arith.constant 1 : i32
      %threads = arith.constant 256 : i32
      %h = arith.constant 1.0 : f16
      %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %p = memref.view %base[%c0][] {tl.shared_range = array<i64: 0, 2048>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      memref.store %h, %p[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier id = %id number_of_threads = %threads
      %a = memref.load %p[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
      nvvm.barrier id = %id number_of_threads = %threads
      %b = memref.load %p[%c0, %tid] : memref<16x64xf16, #gpu.address_space<workgroup>>
      nvvm.barrier id = %id number_of_threads = %threads
      memref.store %b, %out[%tid] : memref<64xf16>
      gpu.return
    }
  }
}
