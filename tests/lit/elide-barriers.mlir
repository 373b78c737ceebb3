// RUN: tl-opt %s --tl-elide-barriers | FileCheck %s
// tl-elide-barriers, alone on hand-written thread-level code: two tiles of
// dynamic shared memory (their views carry their bytes), four barriers.
//   (1) nothing touched memory since the kernel began: removed;
//   (2) orders the write of %a before its read: kept;
//   (3) between a read of %a and a write of %b (other bytes), with barrier (4)
//       after: nothing to order, removed;
//   (4) orders the write of %b before its read: kept.
// CHECK-LABEL: gpu.func @four_barriers
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: gpu.dynamic_shared_memory
// CHECK-NEXT: memref.view
// CHECK-NEXT: memref.view
// CHECK-NEXT: gpu.thread_id
// CHECK-NEXT: arith.constant
// CHECK-NEXT: memref.store
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @four_barriers(%out: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %a = memref.view %base[%c0][] {tl.shared_range = array<i64: 0, 256>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
      %b = memref.view %base[%c256][] {tl.shared_range = array<i64: 256, 512>} : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      gpu.barrier
      memref.store %one, %a[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %v = memref.load %a[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      memref.store %v, %b[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %b[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %w, %out[%tid] : memref<64xf32>
      gpu.return
    }
  }
}
