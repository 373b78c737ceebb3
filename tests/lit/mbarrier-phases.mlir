// RUN: tl-opt %s --tl-check-sync -split-input-file -verify-diagnostics
// tl-check-sync's phase proof (MbarrierPhases.cpp): the threads' barrier and
// mbarrier events run against each other in every order; a wait that can
// hang, or pass on more than one phase, is a compile error. Hand-written
// thread-level kernels of 64 threads, mbarriers at constant shared offsets;
// the lowered kernels of wgmma.mlir, tma.mlir, tma-copies.mlir and
// warp-specialized.mlir go through the same proof.

// A ring of two slots, right: thread 32 produces (waits for the slot's
// release, a phase of empty[slot], then arrives on full[slot]); threads
// 0..31 consume (wait for full[slot]'s phase, release the slot). Its trip
// count is a kernel argument: the proof runs it with several, and every use
// of the bound (the consumers' guard) reads the same.
gpu.module @kernels {
  gpu.func @ring(%n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %i8 = arith.constant 8 : i32
    %i16 = arith.constant 16 : i32
    %i24 = arith.constant 24 : i32
    %one = arith.constant 1 : i32
    %consumers = arith.constant 32 : i32
    %ticks = arith.constant 1000 : i32
    %full0 = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %full1 = llvm.inttoptr %i8 : i32 to !llvm.ptr<3>
    %empty0 = llvm.inttoptr %i16 : i32 to !llvm.ptr<3>
    %empty1 = llvm.inttoptr %i24 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %full0, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %full1, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty0, %consumers : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty1, %consumers : !llvm.ptr<3>, i32
    }
    gpu.barrier
    %producer = arith.cmpi eq, %tid, %c32 : index
    scf.if %producer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        // The slot's previous round released: phase round - 1 of empty.
        %next = arith.addi %round, %c1 : index
        %pbit = arith.remui %next, %c2 : index
        %pp = arith.index_cast %pbit : index to i32
        nvvm.mbarrier.try_wait.parity %empty, %pp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %full : !llvm.ptr<3>
      }
    }
    // (A guard that reads the loop's bound before the loop does.)
    %consumer = arith.cmpi ult, %tid, %c32 : index
    %nonempty = arith.cmpi slt, %c0, %n : index
    %consumes = arith.andi %consumer, %nonempty : i1
    scf.if %consumes {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        %cbit = arith.remui %round, %c2 : index
        %cp = arith.index_cast %cbit : index to i32
        nvvm.mbarrier.try_wait.parity %full, %cp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %empty : !llvm.ptr<3>
      }
    }
    gpu.return
  }
}

// -----

// The consumers wait for the phase one past the slot's: a hang.
gpu.module @kernels {
  gpu.func @parity_off(%n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %i8 = arith.constant 8 : i32
    %i16 = arith.constant 16 : i32
    %i24 = arith.constant 24 : i32
    %one = arith.constant 1 : i32
    %consumers = arith.constant 32 : i32
    %ticks = arith.constant 1000 : i32
    %full0 = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %full1 = llvm.inttoptr %i8 : i32 to !llvm.ptr<3>
    %empty0 = llvm.inttoptr %i16 : i32 to !llvm.ptr<3>
    %empty1 = llvm.inttoptr %i24 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %full0, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %full1, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty0, %consumers : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty1, %consumers : !llvm.ptr<3>, i32
    }
    gpu.barrier
    %producer = arith.cmpi eq, %tid, %c32 : index
    scf.if %producer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        // The slot's previous round released: phase round - 1 of empty.
        %next = arith.addi %round, %c1 : index
        %pbit = arith.remui %next, %c2 : index
        %pp = arith.index_cast %pbit : index to i32
        nvvm.mbarrier.try_wait.parity %empty, %pp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %full : !llvm.ptr<3>
      }
    }
    %consumer = arith.cmpi ult, %tid, %c32 : index
    scf.if %consumer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        %ahead = arith.addi %round, %c1 : index
        %cbit = arith.remui %ahead, %c2 : index
        %cp = arith.index_cast %cbit : index to i32
        // expected-error @+3 {{the kernel can hang here: no thread can move (when its loop runs 1 iteration from index 0)}}
        // expected-note @+2 {{thread 0 waits for the phase of parity 1 of the mbarrier at shared byte 0, which has completed 1 phase; 1 of its 1 arrivals and 0 transaction bytes are outstanding}}
        // expected-note @+1 {{threads 1..31 wait for the phase of parity 1}}
        nvvm.mbarrier.try_wait.parity %full, %cp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %empty : !llvm.ptr<3>
      }
    }
    gpu.return
  }
}

// -----

// empty[] counts 64 arrivals, but 32 threads release: the kernel ends
// with the slots' phases half done (and with more iterations, the producer
// would wait forever).
gpu.module @kernels {
  gpu.func @short_count(%n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %i8 = arith.constant 8 : i32
    %i16 = arith.constant 16 : i32
    %i24 = arith.constant 24 : i32
    %one = arith.constant 1 : i32
    %consumers = arith.constant 64 : i32
    %ticks = arith.constant 1000 : i32
    %full0 = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %full1 = llvm.inttoptr %i8 : i32 to !llvm.ptr<3>
    %empty0 = llvm.inttoptr %i16 : i32 to !llvm.ptr<3>
    %empty1 = llvm.inttoptr %i24 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %full0, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %full1, %one : !llvm.ptr<3>, i32
      // expected-error @+1 {{the kernel can end with the mbarrier at shared byte 16 in the middle of a phase: 32 of its 64 arrivals made, 0 transaction bytes outstanding (when its loop runs 1 iteration from index 0)}}
      nvvm.mbarrier.init %empty0, %consumers : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty1, %consumers : !llvm.ptr<3>, i32
    }
    gpu.barrier
    %producer = arith.cmpi eq, %tid, %c32 : index
    scf.if %producer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        // The slot's previous round released: phase round - 1 of empty.
        %next = arith.addi %round, %c1 : index
        %pbit = arith.remui %next, %c2 : index
        %pp = arith.index_cast %pbit : index to i32
        nvvm.mbarrier.try_wait.parity %empty, %pp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %full : !llvm.ptr<3>
      }
    }
    %consumer = arith.cmpi ult, %tid, %c32 : index
    scf.if %consumer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        %cbit = arith.remui %round, %c2 : index
        %cp = arith.index_cast %cbit : index to i32
        nvvm.mbarrier.try_wait.parity %full, %cp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %empty : !llvm.ptr<3>
      }
    }
    gpu.return
  }
}

// -----

// No barrier between thread 0's initialisation and the other threads' use.
gpu.module @kernels {
  gpu.func @unpublished(%n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %i8 = arith.constant 8 : i32
    %i16 = arith.constant 16 : i32
    %i24 = arith.constant 24 : i32
    %one = arith.constant 1 : i32
    %consumers = arith.constant 32 : i32
    %ticks = arith.constant 1000 : i32
    %full0 = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %full1 = llvm.inttoptr %i8 : i32 to !llvm.ptr<3>
    %empty0 = llvm.inttoptr %i16 : i32 to !llvm.ptr<3>
    %empty1 = llvm.inttoptr %i24 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %full0, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %full1, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty0, %consumers : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty1, %consumers : !llvm.ptr<3>, i32
    }
    %producer = arith.cmpi eq, %tid, %c32 : index
    scf.if %producer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        // The slot's previous round released: phase round - 1 of empty.
        %next = arith.addi %round, %c1 : index
        %pbit = arith.remui %next, %c2 : index
        %pp = arith.index_cast %pbit : index to i32
        nvvm.mbarrier.try_wait.parity %empty, %pp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %full : !llvm.ptr<3>
      }
    }
    %consumer = arith.cmpi ult, %tid, %c32 : index
    scf.if %consumer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        %cbit = arith.remui %round, %c2 : index
        %cp = arith.index_cast %cbit : index to i32
        // expected-error @+1 {{waits on the mbarrier at shared byte 0 before its initialisation is visible to these threads, or after its invalidation (threads 1..31) (when its loop runs 1 iteration from index 0)}}
        nvvm.mbarrier.try_wait.parity %full, %cp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %empty : !llvm.ptr<3>
      }
    }
    gpu.return
  }
}

// -----

// A parity the proof cannot know (a kernel argument): refused, not guessed.
gpu.module @kernels {
  gpu.func @unknown_parity(%n: index, %p: i32) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %i8 = arith.constant 8 : i32
    %i16 = arith.constant 16 : i32
    %i24 = arith.constant 24 : i32
    %one = arith.constant 1 : i32
    %consumers = arith.constant 32 : i32
    %ticks = arith.constant 1000 : i32
    %full0 = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %full1 = llvm.inttoptr %i8 : i32 to !llvm.ptr<3>
    %empty0 = llvm.inttoptr %i16 : i32 to !llvm.ptr<3>
    %empty1 = llvm.inttoptr %i24 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %full0, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %full1, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty0, %consumers : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %empty1, %consumers : !llvm.ptr<3>, i32
    }
    gpu.barrier
    %producer = arith.cmpi eq, %tid, %c32 : index
    scf.if %producer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        // The slot's previous round released: phase round - 1 of empty.
        %next = arith.addi %round, %c1 : index
        %pbit = arith.remui %next, %c2 : index
        %pp = arith.index_cast %pbit : index to i32
        nvvm.mbarrier.try_wait.parity %empty, %pp, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %full : !llvm.ptr<3>
      }
    }
    %consumer = arith.cmpi ult, %tid, %c32 : index
    scf.if %consumer {
      scf.for %k = %c0 to %n step %c1 {
        %slot = arith.remui %k, %c2 : index
        %round = arith.divui %k, %c2 : index
        %s = arith.index_cast %slot : index to i32
        %fo = arith.muli %s, %i8 : i32
        %eo = arith.addi %fo, %i16 : i32
        %full = llvm.inttoptr %fo : i32 to !llvm.ptr<3>
        %empty = llvm.inttoptr %eo : i32 to !llvm.ptr<3>
        %cbit = arith.remui %round, %c2 : index
        %cp = arith.index_cast %cbit : index to i32
        // expected-error @+1 {{tl-check-sync cannot prove this kernel's mbarrier phases: its parity depends on more than the thread and loop indices}}
        nvvm.mbarrier.try_wait.parity %full, %p, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.mbarrier.arrive %empty : !llvm.ptr<3>
      }
    }
    gpu.return
  }
}

// -----

// Thread 32 completes three phases of an mbarrier nobody releases it from;
// the others wait once for phase 0. Whether they see 1 or 3 phases done
// depends on the order the threads run in: the wait is not pinned (a race).
gpu.module @kernels {
  gpu.func @lapped() kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %ticks = arith.constant 1000 : i32
    %bar = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
    }
    gpu.barrier
    %producer = arith.cmpi eq, %tid, %c32 : index
    scf.if %producer {
      scf.for %k = %c0 to %c3 step %c1 {
        nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
      }
    }
    %consumer = arith.cmpi ult, %tid, %c32 : index
    scf.if %consumer {
      // expected-error @+1 {{waits on the mbarrier at shared byte 0 with parity 0, which passes after 1 phase in one order of the threads and after 3 phases in another: the wait is not pinned to one phase (a race)}}
      nvvm.mbarrier.try_wait.parity %bar, %i0, %ticks : !llvm.ptr<3>, i32, i32
    }
    gpu.return
  }
}

// -----

// The consumers meet at a named barrier of 64 threads; only 32 come.
gpu.module @kernels {
  gpu.func @short_barrier() kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %id = arith.constant 1 : i32
    %sixty_four = arith.constant 64 : i32
    %one = arith.constant 1 : i32
    %ticks = arith.constant 1000 : i32
    %bar = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
    }
    gpu.barrier
    %producer = arith.cmpi eq, %tid, %c32 : index
    scf.if %producer {
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    }
    %consumer = arith.cmpi ult, %tid, %c32 : index
    scf.if %consumer {
      nvvm.mbarrier.try_wait.parity %bar, %i0, %ticks : !llvm.ptr<3>, i32, i32
      // expected-error @+3 {{the kernel can hang here: no thread can move}}
      // expected-note @+2 {{thread 0 waits at barrier 1}}
      // expected-note @+1 {{threads 1..31 wait at barrier 1}}
      nvvm.barrier id = %id number_of_threads = %sixty_four
    }
    gpu.return
  }
}

// -----

// An mbarrier initialised again while valid (no mbarrier.inval between), and
// one invalidated in the middle of a phase.
gpu.module @kernels {
  gpu.func @init_twice() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %i0 = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %ticks = arith.constant 1000 : i32
    %bar = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
      nvvm.mbarrier.try_wait.parity %bar, %i0, %ticks : !llvm.ptr<3>, i32, i32
      // expected-error @+1 {{the mbarrier at shared byte 0 is initialised again while valid (mbarrier.inval first) (thread 0)}}
      nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
    }
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @inval_mid_phase() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %i0 = arith.constant 0 : i32
    %two = arith.constant 2 : i32
    %ticks = arith.constant 1000 : i32
    %bar = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %bar, %two : !llvm.ptr<3>, i32
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
      nvvm.mbarrier.try_wait.parity %bar, %i0, %ticks : !llvm.ptr<3>, i32, i32
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
      // expected-error @+1 {{invalidates the mbarrier at shared byte 0 in the middle of a phase (1 of its 2 arrivals made, 0 transaction bytes outstanding) (thread 0)}}
      nvvm.mbarrier.inval %bar : !llvm.ptr<3>
    }
    gpu.return
  }
}

// -----

// Initialised, used, invalidated and initialised again: right.
gpu.module @kernels {
  gpu.func @reinit() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %i0 = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %ticks = arith.constant 1000 : i32
    %bar = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.for %r = %c0 to %c3 step %c1 {
      scf.if %first {
        nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
      }
      nvvm.mbarrier.try_wait.parity %bar, %i0, %ticks : !llvm.ptr<3>, i32, i32
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
    }
    gpu.return
  }
}

// -----

// Pingpong (FlashAttention-3's warp scheduler barriers): group g = tid / 32
// waits at barrier 2 + g and hands over to the other group with bar.arrive,
// group 1 having arrived once at group 0's barrier before the loop; after
// it group 0 takes that last arrival (the barrier completes). Any trip count.
gpu.module @kernels {
  gpu.func @pingpong(%n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %i2 = arith.constant 2 : i32
    %i3 = arith.constant 3 : i32
    %sixty_four = arith.constant 64 : i32
    %ticks = arith.constant 1000 : i32
    %bar = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %bar, %i1 : !llvm.ptr<3>, i32
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    }
    gpu.barrier
    nvvm.mbarrier.try_wait.parity %bar, %i0, %ticks : !llvm.ptr<3>, i32, i32
    %group = arith.divui %tid, %c32 : index
    %g = arith.index_cast %group : index to i32
    %own = arith.addi %g, %i2 : i32
    %other = arith.subi %i3, %g : i32
    %second = arith.cmpi eq, %group, %c1 : index
    scf.if %second {
      nvvm.barrier.arrive id = %i2 number_of_threads = %sixty_four
    }
    scf.for %k = %c0 to %n step %c1 {
      nvvm.barrier id = %own number_of_threads = %sixty_four
      nvvm.barrier.arrive id = %other number_of_threads = %sixty_four
    }
    %firstGroup = arith.cmpi eq, %group, %c0 : index
    scf.if %firstGroup {
      nvvm.barrier id = %i2 number_of_threads = %sixty_four
    }
    gpu.return
  }
}

// -----

// The same without group 0's last wait: group 1's last arrival is left at
// barrier 2 when the kernel ends.
gpu.module @kernels {
  gpu.func @pingpong_pending(%n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %i2 = arith.constant 2 : i32
    %i3 = arith.constant 3 : i32
    %sixty_four = arith.constant 64 : i32
    %ticks = arith.constant 1000 : i32
    %bar = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %bar, %i1 : !llvm.ptr<3>, i32
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    }
    gpu.barrier
    nvvm.mbarrier.try_wait.parity %bar, %i0, %ticks : !llvm.ptr<3>, i32, i32
    %group = arith.divui %tid, %c32 : index
    %g = arith.index_cast %group : index to i32
    %own = arith.addi %g, %i2 : i32
    %other = arith.subi %i3, %g : i32
    %second = arith.cmpi eq, %group, %c1 : index
    scf.if %second {
      // expected-error @+1 {{the kernel can end with 32 threads arrived at barrier 2 and the barrier not completed (when its loop runs 1 iteration from index 0)}}
      nvvm.barrier.arrive id = %i2 number_of_threads = %sixty_four
    }
    scf.for %k = %c0 to %n step %c1 {
      nvvm.barrier id = %own number_of_threads = %sixty_four
      nvvm.barrier.arrive id = %other number_of_threads = %sixty_four
    }
    gpu.return
  }
}

// -----

// Threads that meet at one barrier with different counts (PTX leaves that
// undefined): group 1 arrives counting 64 threads, group 0 waits counting 96.
gpu.module @kernels {
  gpu.func @counts_differ() kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %sixty_four = arith.constant 64 : i32
    %ninety_six = arith.constant 96 : i32
    %ticks = arith.constant 1000 : i32
    %bar = llvm.inttoptr %i0 : i32 to !llvm.ptr<3>
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      nvvm.mbarrier.init %bar, %i1 : !llvm.ptr<3>, i32
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    }
    gpu.barrier
    nvvm.mbarrier.try_wait.parity %bar, %i0, %ticks : !llvm.ptr<3>, i32, i32
    %second = arith.cmpi uge, %tid, %c32 : index
    scf.if %second {
      nvvm.barrier.arrive id = %i1 number_of_threads = %sixty_four
    } else {
      // expected-error @+1 {{barrier 1 is counted as 96 threads here and as 64 by threads that meet it at the same time (threads 1..31)}}
      nvvm.barrier id = %i1 number_of_threads = %ninety_six
    }
    gpu.return
  }
}
