// RUN: tl-opt %s --tl-gpu-lowering | FileCheck %s --check-prefix=GPU
// RUN: tl-opt %s --convert-tl-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: tlc %s --target=sm_90a --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// RUN: tlc %s --target=sm_80 --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// tl.last_to_arrive: the 64 blocks of a row add into its sums, and the block
// that adds last copies the first sum out.
//
// On the GPU a barrier gathers the block's adds, thread 0 adds one to the
// counter (atom.acq_rel.gpu in inline assembly, since LLVM 22's NVPTX drops an
// atomicrmw's ordering), and when it read 63 sets it back to 0; a barrier
// that ORs a predicate tells every thread whether the block is the last, and
// the body runs in that block only.
// GPU-LABEL: gpu.func @arrivals
// GPU: memref.atomic_rmw addf
// GPU: gpu.barrier
// GPU: %[[LAST:.*]] = scf.if %{{.*}} -> (i32) {
// GPU: llvm.inline_asm has_side_effects {{.*}}"atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;", "=r,l,~{memory}"
// GPU: scf.if
// GPU: llvm.store
// GPU: %[[ANY:.*]] = nvvm.barrier #nvvm.reduction<or> %[[LAST]] -> i32
// GPU: %[[GO:.*]] = arith.cmpi ne, %[[ANY]]
// GPU: scf.if %[[GO]] {
// GPU: memref.load
// GPU: memref.store
//
// On the CPU a block is one host thread: an atomic add returns the count
// before it, and the block that read 63 runs the body and resets the counter.
// CPU-LABEL: func.func @arrivals
// CPU: memref.atomic_rmw addf
// CPU: %[[LAST:.*]] = scf.if %{{.*}} -> (i1) {
// CPU: memref.atomic_rmw addi
// CPU: arith.cmpi eq
// CPU: scf.if %[[LAST]] {
// CPU: memref.load
// CPU: memref.store
// CPU: memref.atomic_rmw assign
//
// PTX-LABEL: .entry arrivals
// PTX: atom.global.add.f32
// PTX: bar.sync 0;
// PTX: atom.acq_rel.gpu.global.add.u32 %r{{[0-9]+}}, [%rd{{[0-9]+}}], 1;
// PTX: setp.ne.b32 %p{{[0-9]+}}, %r{{[0-9]+}}, 63;
// PTX: st.global.b32 [%rd{{[0-9]+}}], 0;
// PTX: bar.red.or.pred
// PTX: ld.global
// PTX: st.global
func.func @arrivals(%x: memref<4x64xf32> {tl.name = "X"}, %sum: memref<4x8xf32> {tl.name = "Sum"},
                    %total: memref<4xf32> {tl.name = "Total"},
                    %count: memref<4xi32> {tl.name = "Count"}) {
  tl.kernel grid [64, 4] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c64 = arith.constant 64 : index
    tl.parallel [8] {
    ^bb0(%j: index):
      %v = memref.load %x[%by, %bx] : memref<4x64xf32>
      tl.atomic_add %sum[%by, %j], %v : memref<4x8xf32>, f32
    }
    tl.last_to_arrive %count[%by] arrivals %c64 : memref<4xi32> {
      %c0 = arith.constant 0 : index
      %s = memref.load %sum[%by, %c0] : memref<4x8xf32>
      memref.store %s, %total[%by] : memref<4xf32>
    }
  }
  return
}
