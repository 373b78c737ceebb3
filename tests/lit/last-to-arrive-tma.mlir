// RUN: tlc %s --target=sm_90a --emit=ptx -o - | FileCheck %s --check-prefix=TMA
// RUN: tlc %s --target=sm_80 --emit=ptx -o - | FileCheck %s --check-prefix=SM80
// tl.last_to_arrive in a kernel with TMA writes (here a reduce-add tile into
// another tensor): thread 0, which issued them, waits for them to complete
// and fences the async proxy before it arrives. Without TMA (sm_80) nothing
// waits.
// SM80-LABEL: .entry tile_adds
// SM80-NOT: cp.async.bulk
// SM80: atom.acq_rel.gpu.global.add.u32
// TMA-LABEL: .entry tile_adds
// TMA: cp.reduce.async.bulk.tensor
// TMA: cp.async.bulk.commit_group;
// TMA: bar.sync 0;
// TMA: cp.async.bulk.wait_group 0;
// TMA-NEXT: fence.proxy.async;
// TMA: atom.acq_rel.gpu.global.add.u32
// TMA: bar.red.or.pred
func.func @tile_adds(%x: memref<4x32x64xf32> {tl.name = "X"},
                     %acc: memref<100x64xf32> {tl.name = "Acc"},
                     %y: memref<4xf32> {tl.name = "Y"}, %out: memref<4xf32> {tl.name = "Out"},
                     %count: memref<4xi32> {tl.name = "Count"}) {
  tl.kernel grid [4] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %t = tl.alloc_shared : memref<32x64xf32, #tl.scope<shared>>
    tl.copy %x[%bx, %c0, %c0] [1, 32, 64] to %t[%c0, %c0] [32, 64] : memref<4x32x64xf32> to memref<32x64xf32, #tl.scope<shared>>
    tl.atomic_add_tile %t[%c0, %c0] [32, 64] to %acc[%c0, %c0] [32, 64] : memref<32x64xf32, #tl.scope<shared>> to memref<100x64xf32>
    tl.last_to_arrive %count[%c0] arrivals %c4 : memref<4xi32> {
      %v = memref.load %y[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
    }
  }
  return
}
