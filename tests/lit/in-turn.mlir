// RUN: tl-opt %s --tl-gpu-lowering | FileCheck %s --check-prefix=GPU
// RUN: tl-opt %s --convert-tl-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: tlc %s --target=sm_90a --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// tl.in_turn: the blocks of a row add into its sum one after another, in the
// order of bx.
//
// On the GPU, thread 0 spins on an acquire load of the counter (trapping
// after ten seconds), a barrier lets the block in, the body runs, a barrier
// gathers it, and thread 0 stores the next turn with release semantics. The
// barriers stay: tl-elide-barriers counts an acquire or release as touching
// everything.
// GPU-LABEL: gpu.func @turns
// GPU: %[[FIRST:.*]] = arith.andi
// GPU: scf.if %[[FIRST]] {
// GPU: nvvm.read.ptx.sreg.globaltimer
// GPU: scf.while
// GPU: llvm.load %{{.*}} atomic syncscope("device") acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// GPU: llvm.intr.trap
// GPU: gpu.barrier
// GPU: memref.atomic_rmw addf
// GPU: gpu.barrier
// GPU: scf.if %[[FIRST]] {
// GPU: llvm.store %{{.*}} atomic syncscope("device") release {alignment = 4 : i64} : i32, !llvm.ptr<1>
//
// On the CPU a block is one host thread: it waits in the host runtime's
// tl_cpu_wait_turn (which gives up after ten seconds, marking tl_turn_status),
// runs the body if its turn came and stores the next turn; outside the
// counter, it waits for nothing and stores nothing.
// CPU: func.func private @tl_cpu_wait_turn(!llvm.ptr, i32, !llvm.ptr) -> i1
// CPU: llvm.mlir.global external @tl_turn_status(0 : i32)
// CPU-LABEL: func.func @turns
// CPU: %[[STATUS:.*]] = llvm.mlir.addressof @tl_turn_status
// CPU: %[[INSIDE:.*]] = arith.cmpi ult
// CPU: %[[CAME:.*]] = scf.if %[[INSIDE]] -> (i1) {
// CPU: func.call @tl_cpu_wait_turn(%{{.*}}, %{{.*}}, %[[STATUS]])
// CPU: scf.if %[[CAME]] {
// CPU: scf.for
// CPU: memref.atomic_rmw addf
// CPU: scf.if %[[INSIDE]] {
// CPU: memref.atomic_rmw assign
//
// PTX-LABEL: .entry turns
// PTX: ld.acquire.gpu.global.b32
// PTX: bar.sync 0;
// PTX: atom.global.add.f32
// PTX: bar.sync 0;
// PTX: st.release.gpu.global.b32
// PTX: trap;
func.func @turns(%x: memref<4x64xf32> {tl.name = "X"}, %sum: memref<4x8xf32> {tl.name = "Sum"},
                 %turn: memref<4xi32> {tl.name = "Turn"}) {
  tl.kernel grid [64, 4] threads 128 {
  ^bb0(%bx: index, %by: index):
    %c1 = arith.constant 1 : index
    %next = arith.addi %bx, %c1 : index
    tl.in_turn %turn[%by] turn %bx next %next : memref<4xi32> {
      tl.parallel [8] {
      ^bb0(%j: index):
        %v = memref.load %x[%by, %bx] : memref<4x64xf32>
        tl.atomic_add %sum[%by, %j], %v : memref<4x8xf32>, f32
      }
    }
  }
  return
}
