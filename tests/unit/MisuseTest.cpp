// Misuse of the eDSL: every mistake is an Error that names the author's line.
#include "ExpectError.h"
#include "tl/Compiler/GPUCompiler.h"

using namespace tl::dsl;

namespace {
const char *kFile = "MisuseTest.cpp";

/// A program with the reference's tensor shapes and a kernel whose body is
/// `body`; returns the program so a test can inspect it.
template <typename Body> Program withKernel(Body &&body, int threads = 128) {
  Program p("misuse");
  p.tensor("Q", {2, 128, 4, 64}, f16);
  p.output("O", {2, 128, 4, 64}, f16);
  p.kernel({2, 4, 2}, threads, [&](Expr bx, Expr by, Expr bz) {
    body(p, bx, by, bz);
  });
  return p;
}
} // namespace

TEST_CASE("gemm with mismatched K", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer A = alloc_shared({64, 32}, f16), B = alloc_shared({64, 64}, f16);
      Buffer C = alloc_fragment({64, 64}, f32);
      line = __LINE__; gemm(A, B, C);
    });
  }, line, "K of A (32) does not match K of B (64)", kFile);
}

TEST_CASE("gemm whose C does not match A*B", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer A = alloc_shared({64, 32}, f16), B = alloc_shared({16, 32}, f16);
      Buffer C = alloc_fragment({64, 64}, f32);
      line = __LINE__; gemm(A, B, C, {.transpose_B = true});
    });
  }, line, "C is [64, 64] but A*B is [64, 16]", kFile);
}

TEST_CASE("gemm accumulating into shared memory", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer A = alloc_shared({64, 64}, f16), B = alloc_shared({64, 64}, f16);
      Buffer C = alloc_shared({64, 64}, f32);
      line = __LINE__; gemm(A, B, C);
    });
  }, line, "accumulator C must be a fragment, got a shared buffer", kFile);
}

TEST_CASE("gemm with different A and B element types", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer A = alloc_shared({64, 64}, f16), B = alloc_shared({64, 64}, f32);
      Buffer C = alloc_fragment({64, 64}, f32);
      line = __LINE__; gemm(A, B, C);
    });
  }, line, "A and B element types differ ('f16' vs 'f32')", kFile);
}

TEST_CASE("copy of unequal extents", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer Q = p.tensor("Q", {2, 128, 4, 64}, f16);
    p.kernel({2}, 128, [&](Expr bx) {
      Buffer Q_s = alloc_shared({32, 64}, f16);
      line = __LINE__; copy(Q(0, slice(bx * 64, 64), 0, all), Q_s);
    });
  }, line, "extents differ: source region [1, 64, 1, 64] vs destination region [32, 64]", kFile);
}

TEST_CASE("copy of a region outside an on-chip buffer", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer a = alloc_fragment({64, 64}, f32), b = alloc_fragment({32, 64}, f32);
      line = __LINE__; copy(a(slice(48, 32), all), b);
    });
  }, line, "region [48, 80) in dimension 0 lies outside the buffer's extent 64", kFile);
}

TEST_CASE("copy between an integer and a float buffer", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer a = alloc_fragment({64}, i32), b = alloc_fragment({64}, f32);
      line = __LINE__; copy(a, b);
    });
  }, line, "cannot convert 'i32' to 'f32'", kFile);
}

TEST_CASE("reduce over a dimension the buffer lacks", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer s = alloc_fragment({64, 64}, f32), m = alloc_fragment({64}, f32);
      line = __LINE__; reduce_max(s, m, /*dim=*/2);
    });
  }, line, "reduces over dimension 2 but the source has rank 2", kFile);
}

TEST_CASE("reduce into a buffer of the wrong shape", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer s = alloc_fragment({64, 32}, f32), m = alloc_fragment({64}, f32);
      line = __LINE__; reduce_sum(s, m, /*dim=*/0);
    });
  }, line, "result has shape [64] but reducing [64, 32] over dimension 0 gives [32]", kFile);
}

TEST_CASE("fragment passed where a global tensor is needed", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer acc = alloc_fragment({64, 64}, f32);
      parallel({64, 64}, [&](Expr i, Expr j) {
        line = __LINE__; atomic_add(acc(i, j), 1.0);
      });
    });
  }, line, "needs a global or shared destination, got a fragment", kFile);
}

TEST_CASE("in_turn on a counter that is not an i32 tensor", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer turns = p.tensor("turns", {4}, f32);
    p.kernel({4}, 128, [&](Expr bx) {
      line = __LINE__; in_turn(turns(0), bx, [&] {});
    });
  }, line, "in_turn's counter 'turns' must be an i32 tensor, got f32", kFile);
}

TEST_CASE("in_turn inside a parallel loop", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer turns = p.tensor("turns", {4}, i32);
    p.kernel({4}, 128, [&](Expr bx) {
      parallel({4}, [&](Expr i) {
        line = __LINE__; in_turn(turns(i), bx, [&] {});
      });
    });
  }, line, "waits for the whole block, so it cannot be inside a tl.parallel", kFile);
}

TEST_CASE("pingpong around something other than gemms", "[misuse]") {
  // The turns order whole warpgroups: a fill in a turn is an error at the
  // fill's line, a pingpong in a parallel loop at the pingpong's.
  int line = 0;
  expectError([&] {
    Program p("t");
    p.kernel({1}, 256, [&](Expr) {
      Buffer acc = alloc_fragment({128, 64}, f32);
      pingpong([&] {
        line = __LINE__; clear(acc);
      });
    });
  }, line, "cannot be in a tl.pingpong: its body holds gemms only", kFile);
  expectError([&] {
    Program p("t");
    p.kernel({1}, 256, [&](Expr) {
      parallel({4}, [&](Expr) {
        line = __LINE__; pingpong([&] {});
      });
    });
  }, line, "orders whole warpgroups, so it cannot be inside a tl.parallel", kFile);
  expectError([&] {
    Program p("t");
    p.kernel({1}, 256, [&](Expr) {
      line = __LINE__; pingpong([&] {});
    });
  }, line, "has an empty body; it orders the issue of gemms", kFile);
}

TEST_CASE("last_to_arrive on a counter that is not an i32 tensor", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer count = p.tensor("count", {4}, f32);
    p.kernel({4}, 128, [&](Expr bx) {
      line = __LINE__; last_to_arrive(count(bx), 4, [&] {});
    });
  }, line, "last_to_arrive's counter 'count' must be an i32 tensor, got f32", kFile);
}

TEST_CASE("last_to_arrive on a region of its counter", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer count = p.tensor("count", {4}, i32);
    p.kernel({4}, 128, [&](Expr) {
      line = __LINE__; last_to_arrive(count(slice(0, 2)), 4, [&] {});
    });
  }, line, "last_to_arrive's counter is one element: a point per dimension", kFile);
}

TEST_CASE("last_to_arrive inside another", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer count = p.tensor("count", {4}, i32);
    p.kernel({4}, 128, [&](Expr bx) {
      last_to_arrive(count(bx), 4, [&] {
        line = __LINE__; last_to_arrive(count(bx), 4, [&] {});
      });
    });
  }, line, "cannot be inside another tl.last_to_arrive (only one block runs its body)", kFile);
}

TEST_CASE("annotate_layout of the wrong rank", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer dQ = p.tensor("dQ", {2, 128, 4, 64}, f32);
    p.kernel({2}, 128, [&](Expr) {
      Layout threeD = Layout::indexMap([](IndexExpr a, IndexExpr b, IndexExpr c) {
        return std::vector<IndexExpr>{a, b, c};
      });
      line = __LINE__; annotate_layout(dQ, threeD);
    });
  }, line, "layout takes 3 indices but the buffer has rank 4", kFile);
}

TEST_CASE("a swizzled layout on a fragment", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer acc = alloc_fragment({64, 64}, f32);
      line = __LINE__; annotate_layout(acc, make_swizzled_layout());
    });
  }, line, "a swizzled layout needs a shared buffer of rank >= 2, got a fragment", kFile);
}

TEST_CASE("an index map that overflows the tensor", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer dQ = p.tensor("dQ", {2, 100, 4, 64}, f32); // 100 is not a multiple of 8
    p.kernel({2}, 128, [&](Expr) {
      Layout dq = Layout::indexMap([](IndexExpr b, IndexExpr l, IndexExpr h, IndexExpr d) {
        return std::vector<IndexExpr>{b, l / 8, h, d / 8, d % 2, 4 * (l % 8) + (d % 8) / 2};
      });
      line = __LINE__; annotate_layout(dQ, dq);
    });
  }, line, "but the buffer holds 51200", kFile);
}

TEST_CASE("thread count 100", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    line = __LINE__; p.kernel({1}, 100, [&](Expr) {});
  }, line, "thread count 100 is not a positive multiple of 32", kFile);
}

TEST_CASE("a grid of four dimensions", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    line = __LINE__; p.kernel({1, 2, 3, 4}, 128, [&](Expr, Expr, Expr, Expr) {});
  }, line, "grid must have 1 to 3 dimensions, got 4", kFile);
}

TEST_CASE("a zero-sized tile", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      line = __LINE__; alloc_shared({0, 64}, f16);
    });
  }, line, "zero-sized buffer: extent 0 in dimension 0", kFile);
}

TEST_CASE("a zero-sized tensor", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    line = __LINE__; p.tensor("Q", {2, 0, 4}, f16);
  }, line, "tensor 'Q' has extent 0 in dimension 1", kFile);
}

TEST_CASE("an element read with too few subscripts", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer acc = alloc_fragment({64, 64}, f32), row = alloc_fragment({64}, f32);
      parallel({64}, [&](Expr i) {
        line = __LINE__; row(i) = acc(i);
      });
    });
  }, line, "gives 1 subscript(s) but the buffer has rank 2", kFile);
}

TEST_CASE("a slice where an element is needed", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      Buffer acc = alloc_fragment({64, 64}, f32);
      parallel({64}, [&](Expr i) {
        line = __LINE__; acc(i, slice(0, 4)) = 1.0;
      });
    });
  }, line, "needs a point per dimension, not a slice", kFile);
}

TEST_CASE("a parallel body with the wrong number of indices", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr, Expr, Expr) {
      line = __LINE__; parallel({64, 64}, [&](Expr) {});
    });
  }, line, "parallel has 2 dimension(s) but its body takes 1 index argument(s)", kFile);
}

TEST_CASE("a tile operator outside a kernel", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    line = __LINE__; alloc_fragment({64}, f32);
  }, line, "alloc_fragment must be called inside a kernel body", kFile);
}

TEST_CASE("fill of a global tensor", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    Buffer Q = p.tensor("Q", {64}, f32);
    p.kernel({1}, 32, [&](Expr) {
      line = __LINE__; fill(Q, 0);
    });
  }, line, "needs a shared, fragment or local buffer, got a global tensor", kFile);
}

TEST_CASE("a select whose condition is not boolean", "[misuse]") {
  int line = 0;
  expectError([&] {
    withKernel([&](Program &, Expr bx, Expr, Expr) {
      Buffer acc = alloc_fragment({64}, f32);
      parallel({64}, [&](Expr i) {
        line = __LINE__; acc(i) = if_then_else(bx + i, 0.0, 1.0);
      });
    });
  }, line, "select needs a boolean condition, got index", kFile);
}

TEST_CASE("two kernels in one program", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    p.kernel({1}, 32, [&](Expr) {});
    line = __LINE__; p.kernel({1}, 32, [&](Expr) {});
  }, line, "a program has one kernel", kFile);
}

TEST_CASE("a program whose build failed does not verify", "[misuse]") {
  Program p("t");
  CHECK_THROWS_AS(p.kernel({1}, 100, [&](Expr) {}), Error);
  CHECK_THROWS_WITH(p.verify(), Catch::Matchers::Contains("is incomplete"));
}

// Resource limits of the target are compile errors at the author's line.

TEST_CASE("shared memory past the target's limit", "[misuse]") {
  // One 300 KiB tile is more than any GPU gives a block: the verifier says so
  // as the tile is built.
  int line = 0;
  expectError([&] {
    Program p("t");
    p.kernel({1}, 128, [&](Expr) {
      line = __LINE__; alloc_shared({300, 512}, f16);
    });
    tl::compileForGPU(p, "sm_90a");
  }, line, "takes 307200 bytes, more than the 232448 (227 KiB) a thread block can have", kFile);
  // Two 150 KiB tiles alive together: the compiler, at the one the limit cuts.
  auto program = [&] {
    Program p("t");
    Buffer X = p.tensor("X", {150, 512}, f16);
    Buffer Y = p.output("Y", {150, 512}, f16);
    p.kernel({1}, 128, [&](Expr) {
      Buffer a = alloc_shared({150, 512}, f16);
      line = __LINE__; Buffer b = alloc_shared({150, 512}, f16);
      copy(X(all, all), a);
      copy(X(all, all), b);
      copy(a, Y(all, all));
      copy(b, Y(all, all));
    });
    return p;
  };
  expectError([&] { tl::compileForGPU(program(), "sm_90a"); }, line,
              // (The total counts the TMA loads' mbarriers, placed after the tiles.)
              "of shared memory, more than the 232448 (227.0 KiB) a block has on sm_90a: this "
              "150x512xf16 tile takes bytes [153600, 307200)",
              kFile);
  // The device's own limit, when the runtime passes it.
  expectError([&] { tl::compileForGPU(program(), "sm_90a", {.sharedMemoryLimit = 200000}); },
              line, "more than the 200000 (195.3 KiB) a block has on sm_90a", kFile);
}

TEST_CASE("shared memory that fits sm_90a but not sm_80: the tile that crosses the limit", "[misuse]") {
  int line = 0;
  auto program = [&] {
    Program p("t");
    Buffer X = p.tensor("X", {128, 512}, f16);
    Buffer Y = p.output("Y", {128, 512}, f16);
    p.kernel({1}, 128, [&](Expr) {
      Buffer a = alloc_shared({128, 512}, f16); // 128 KiB, placed first (the largest)
      line = __LINE__; Buffer b = alloc_shared({64, 512}, f16); // 64 KiB, after it
      copy(X(all, all), a);
      copy(X(slice(0, 64), all), b);
      copy(a, Y(all, all));
      copy(b, Y(slice(0, 64), all));
    });
    return p;
  };
  // On sm_90a the copies go by TMA: the tiles, then the loads' mbarriers.
  std::int64_t bytes = tl::compileForGPU(program(), "sm_90a").sharedBytes;
  CHECK(bytes >= 196608);
  CHECK(bytes <= 196608 + 2 * 128);
  expectError([&] { tl::compileForGPU(program(), "sm_80"); }, line,
              "more than the 166912 (163.0 KiB) a block has on sm_80: this 64x512xf16 tile "
              "takes bytes [131072, 196608)",
              kFile);
}

TEST_CASE("use_swizzle on a 1-D grid, or with a panel of 0", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    p.kernel({4}, 128, [&](Expr) {
      line = __LINE__; use_swizzle(8);
    });
  }, line, "use_swizzle needs a 2-D or 3-D grid", kFile);
  expectError([&] {
    Program p("t");
    p.kernel({4, 4}, 128, [&](Expr, Expr) {
      line = __LINE__; use_swizzle(0);
    });
  }, line, "use_swizzle's panel_size must be at least 1, got 0", kFile);
}

TEST_CASE("make_mma_tile_layout with a bad rank or dimensions", "[misuse]") {
  int line = 0;
  expectError([&] {
    line = __LINE__; (void)make_mma_tile_layout(4, 1, 1);
  }, line, "make_mma_tile_layout: rank 4 with row_dim 1 and col_dim 1", kFile);
  expectError([&] {
    line = __LINE__; (void)make_mma_tile_layout(2, 0, 2);
  }, line, "needs rank 2-6 and two different dimensions below it", kFile);
  // A tensor whose rows are not whole 16-row tiles: the map reaches past it.
  expectError([&] {
    Program p("t");
    Buffer acc = p.tensor("acc", {40, 64}, f32);
    p.kernel({1}, 128, [&](Expr) {
      line = __LINE__; annotate_layout(acc, make_mma_tile_layout(2, 0, 1));
    });
  }, line, "(3072 elements) but the buffer holds 2560", kFile);
}

TEST_CASE("use_producer_warpgroup outside a kernel", "[misuse]") {
  int line = 0;
  expectError([&] {
    line = __LINE__; use_producer_warpgroup();
  }, line, "use_producer_warpgroup must be called inside a kernel body", kFile);
}

TEST_CASE("more than 1024 threads", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    line = __LINE__; p.kernel({1}, 2048, [&](Expr) {});
  }, line, "thread count 2048 exceeds the 1024 threads of a block", kFile);
}

TEST_CASE("grid extents past a launch's", "[misuse]") {
  int line = 0;
  expectError([&] {
    Program p("t");
    line = __LINE__; p.kernel({4, 65536}, 128, [&](Expr, Expr) {});
  }, line, "grid extent 65536 in dimension 1 (y) exceeds the 65535 blocks a GPU launch allows",
     kFile);
  expectError([&] {
    Program p("t");
    line = __LINE__; p.kernel({1, 1, 70000}, 128, [&](Expr, Expr, Expr) {});
  }, line, "grid extent 70000 in dimension 2 (z) exceeds the 65535", kFile);
  expectError([&] {
    Program p("t");
    line = __LINE__; p.kernel({std::int64_t{1} << 31}, 128, [&](Expr) {});
  }, line, "grid extent 2147483648 in dimension 0 (x) exceeds the 2147483647", kFile);
}

TEST_CASE("a GPU target the code generator does not serve", "[misuse]") {
  Program p("t");
  Buffer Y = p.output("Y", {128}, f32);
  p.kernel({1}, 128, [&](Expr) {
    Buffer x = alloc_fragment({128}, f32);
    fill(x, 1);
    copy(x, Y(all));
  });
  for (const char *arch : {"sm_75", "sm_70", "sm_999", "compute_90", ""})
    CHECK_THROWS_WITH(tl::compileForGPU(p, arch),
                      Catch::Contains("tlc compiles for sm_80") &&
                          Catch::Contains("got '" + std::string(arch) + "'"));
  CHECK_THROWS_WITH(tl::emitGPUStage(p, "sm_75", "thread"), Catch::Contains("got 'sm_75'"));
  CHECK(tl::compileForGPU(p, "sm_86").ptx.find(".target sm_86") != std::string::npos);
}

// A gemm left in flight (wg_wait = -1): its accumulator is off limits until
// wait_wgmma, and the wait must come (errors of the sm_90a lowering, at the
// author's lines).
TEST_CASE("a gemm left in flight: touched before wait_wgmma, or never waited for", "[misuse]") {
  int line = 0;
  auto program = [&](bool readEarly, bool wait) {
    Program p("t");
    Buffer A = p.tensor("A", {64, 64}, f16);
    Buffer C = p.output("C", {64, 64}, f32);
    p.kernel({1}, 128, [&](Expr) {
      Buffer a = alloc_shared({64, 64}, f16);
      Buffer c = alloc_fragment({64, 64}, f32);
      copy(A, a);
      if (!readEarly && !wait) {
        line = __LINE__; gemm(a, a, c, {.clear_accum = true, .wg_wait = -1});
      } else
        gemm(a, a, c, {.clear_accum = true, .wg_wait = -1});
      if (readEarly) {
        line = __LINE__; copy(c, C);
      }
      if (wait) {
        wait_wgmma(0);
        copy(c, C);
      }
    });
    return p;
  };
  expectError([&] { tl::compileForGPU(program(true, true), "sm_90a"); }, line,
              "touches a fragment of a gemm still in flight: wait_wgmma first", kFile);
  expectError([&] { tl::compileForGPU(program(false, false), "sm_90a"); }, line,
              "gemm left in flight (wg_wait = -1) with no wait_wgmma after it in its block", kFile);
  // On mma.sync the gemm completes where it stands: nothing is in flight.
  CHECK_NOTHROW(tl::compileForGPU(program(false, true), "sm_80"));
  CHECK_NOTHROW(tl::compileForGPU(program(false, true), "sm_90a"));
}
