// Every tl op on its own against a naive C++ reference on random inputs, on
// the backend of the test binary (Backend.h).
#include "Backend.h"
#include "Numerics.h"

#include "tl/dsl.h"

#include <cmath>

using namespace tl::dsl;
using tl::runtime::HostTensor;
using tl::testing::checkClose;
using tl::testing::randomTensor;
using tl::testing::run;

TEST_CASE("copy: tiles through shared memory, casts, ragged edges", "[ops]") {
  // 100 rows in tiles of 32: the last tile runs past the end.
  const int rows = 100, cols = 48, tile = 32;
  Program p("copy_tiles");
  Buffer X = p.tensor("X", {rows, cols}, f16);
  Buffer Y = p.output("Y", {rows, cols}, f32);
  p.kernel({ceildiv(rows, tile)}, 128, [&](Expr bx) {
    Buffer s = alloc_shared({tile, cols}, f16);
    Buffer f = alloc_fragment({tile, cols}, f32);
    copy(X(slice(bx * tile, tile), all), s);
    copy(s, f);
    copy(f, Y(slice(bx * tile, tile), all));
  });
  HostTensor x = randomTensor({rows, cols}, f16, 1);
  std::vector<HostTensor> out = run(p, {&x});
  REQUIRE(out.size() == 1);
  checkClose("Y", out[0].toFloat(), x.toFloat(), 0, 0);
}

TEST_CASE("copy: a column slice and a point index", "[ops]") {
  Program p("copy_slice");
  Buffer X = p.tensor("X", {4, 64, 3}, f32);
  Buffer Y = p.output("Y", {4, 16}, f32);
  p.kernel({4}, 32, [&](Expr bx) {
    Buffer f = alloc_fragment({16}, f32);
    copy(X(bx, slice(8, 16), 2), f);
    copy(f, Y(bx, all));
  });
  HostTensor x = randomTensor({4, 64, 3}, f32, 2);
  std::vector<HostTensor> out = run(p, {&x});
  std::vector<float> expected;
  for (int b = 0; b < 4; ++b)
    for (int i = 0; i < 16; ++i)
      expected.push_back(x.at((b * 64 + 8 + i) * 3 + 2));
  checkClose("Y", out[0].toFloat(), expected, 0, 0);
}

TEST_CASE("fill, parallel, select and math", "[ops]") {
  Program p("elementwise");
  Buffer X = p.tensor("X", {64, 32}, f32);
  Buffer Y = p.output("Y", {64, 32}, f32);
  p.kernel({2}, 128, [&](Expr bx) {
    Buffer f = alloc_fragment({32, 32}, f32);
    Buffer bias = alloc_fragment({32}, f32);
    fill(bias, 0.5);
    copy(X(slice(bx * 32, 32), all), f);
    parallel({32, 32}, [&](Expr i, Expr j) {
      f(i, j) =
          if_then_else(i >= j, exp2(f(i, j)) + bias(i), log2(abs(f(i, j)) + 1.0) - infinity(f32));
    });
    copy(f, Y(slice(bx * 32, 32), all));
  });
  HostTensor x = randomTensor({64, 32}, f32, 3);
  std::vector<HostTensor> out = run(p, {&x});
  std::vector<float> expected;
  for (int r = 0; r < 64; ++r)
    for (int j = 0; j < 32; ++j) {
      float v = x.at(r * 32 + j);
      expected.push_back((r % 32) >= j ? std::exp2(v) + 0.5f
                                       : -std::numeric_limits<float>::infinity());
    }
  checkClose("Y", out[0].toFloat(), expected, 1e-5, 1e-5);
}

namespace {
/// C = op(A) op(B) (+ C0 unless clear) with A f16 [M,K] or [K,M], B [K,N] or [N,K].
void checkGemm(int M, int N, int K, bool ta, bool tb, bool clearAccum, bool aInFragment,
               GemmWarpPolicy policy = GemmWarpPolicy::FullRow, int threads = 128,
               bool bInFragment = false) {
  Program p("gemm");
  std::vector<std::int64_t> aShape =
      ta ? std::vector<std::int64_t>{K, M} : std::vector<std::int64_t>{M, K};
  std::vector<std::int64_t> bShape =
      tb ? std::vector<std::int64_t>{N, K} : std::vector<std::int64_t>{K, N};
  Buffer A = p.tensor("A", aShape, f16);
  Buffer B = p.tensor("B", bShape, f16);
  Buffer C0 = p.tensor("C0", {M, N}, f32);
  Buffer C = p.output("C", {M, N}, f32);
  p.kernel({1}, threads, [&](Expr) {
    Buffer a = aInFragment ? alloc_fragment(aShape, f16) : alloc_shared(aShape, f16);
    Buffer b = bInFragment ? alloc_fragment(bShape, f16) : alloc_shared(bShape, f16);
    Buffer c = alloc_fragment({M, N}, f32);
    copy(A, a);
    copy(B, b);
    copy(C0, c);
    gemm(a, b, c,
         {.transpose_A = ta, .transpose_B = tb, .policy = policy, .clear_accum = clearAccum});
    copy(c, C);
  });
  HostTensor a = randomTensor(aShape, f16, 10), b = randomTensor(bShape, f16, 11);
  HostTensor c0 = randomTensor({M, N}, f32, 12);
  std::vector<HostTensor> out = run(p, {&a, &b, &c0});
  std::vector<float> expected(static_cast<std::size_t>(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = clearAccum ? 0 : c0.at(i * N + j);
      for (int k = 0; k < K; ++k)
        sum += double(a.at(ta ? k * M + i : i * K + k)) * b.at(tb ? j * K + k : k * N + j);
      expected[i * N + j] = static_cast<float>(sum);
    }
  INFO("gemm " << M << "x" << N << "x" << K << " ta=" << ta << " tb=" << tb
               << " policy=" << int(policy) << " threads=" << threads
               << " A in fragment=" << aInFragment << " B in fragment=" << bInFragment);
  checkClose("C", out[0].toFloat(), expected, 1e-4, 1e-4);
}
} // namespace

TEST_CASE("gemm: transposes, accumulation, operands from fragments", "[ops]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      checkGemm(32, 48, 64, ta, tb, /*clearAccum=*/false, /*aInFragment=*/false);
  checkGemm(64, 16, 32, false, true, /*clearAccum=*/true, /*aInFragment=*/true);
}

TEST_CASE("gemm: shapes the GPU runs on tensor cores (mma.sync)", "[ops]") {
  // 64 x 64 tiles over 4 warps: FullRow gives each warp 16 rows, Square 32x32.
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      checkGemm(64, 64, 32, ta, tb, /*clearAccum=*/false, /*aInFragment=*/false);
  checkGemm(64, 64, 64, false, true, false, false, GemmWarpPolicy::Square);
  checkGemm(64, 32, 32, false, false, true, false, GemmWarpPolicy::FullCol);
  // An odd number of n8 tiles per warp (FullCol: 1 and 3): the last tile's
  // ldmatrix.x4 has no neighbour and must not address outside B, which the
  // second case places first in shared memory (A comes from a fragment).
  for (bool tb : {false, true}) {
    checkGemm(64, 32, 32, false, tb, true, false, GemmWarpPolicy::FullCol);
    checkGemm(64, 32, 32, false, tb, false, /*aInFragment=*/true, GemmWarpPolicy::FullCol);
    checkGemm(64, 96, 32, false, tb, false, false, GemmWarpPolicy::FullCol);
  }
  checkGemm(64, 64, 32, false, true, /*clearAccum=*/true, /*aInFragment=*/true);
  checkGemm(128, 64, 16, false, false, false, false, GemmWarpPolicy::FullRow, 256);
}

TEST_CASE("gemm: B, and a transposed A, from fragments", "[ops]") {
  // Operands the tensor cores cannot take from registers go through shared
  // memory on the GPU; small tiles run the scalar (Row) path, 64x64 the mma one.
  for (bool tb : {false, true}) {
    checkGemm(32, 48, 64, false, tb, false, false, GemmWarpPolicy::FullRow, 128, true);
    checkGemm(64, 64, 32, false, tb, false, false, GemmWarpPolicy::FullRow, 128, true);
    checkGemm(64, 64, 32, false, tb, true, true, GemmWarpPolicy::Square, 128, true);
  }
  checkGemm(64, 64, 32, true, false, false, true, GemmWarpPolicy::FullRow, 128);
  checkGemm(32, 48, 64, true, true, false, true, GemmWarpPolicy::FullRow, 128);
}

TEST_CASE("reduce: max, min, sum, abssum over either dimension", "[ops]") {
  struct Case {
    const char *name;
    int kind;
    int dim;
    bool clear;
  };
  // 24 rows on 64 threads: one thread per row. 32 rows on 128 threads: on the
  // GPU, 4 threads share each row (10 columns each) and shuffle row results.
  for (auto [R, threads] : {std::pair{24, 64}, std::pair{32, 128}})
    for (Case c : {Case{"max", 0, 1, true}, Case{"min", 1, 0, true}, Case{"sum", 2, 1, true},
                   Case{"abssum", 3, 0, true}, Case{"max-accumulate", 0, 1, false},
                   Case{"sum-accumulate", 2, 0, false}, Case{"abssum-accumulate", 3, 1, false}}) {
      const int C = 40;
      const int outLen = c.dim == 1 ? R : C;
      Program p("reduce");
      Buffer X = p.tensor("X", {R, C}, f32);
      Buffer Init = p.tensor("Init", {outLen}, f32);
      Buffer Y = p.output("Y", {outLen}, f32);
      p.kernel({1}, threads, [&](Expr) {
        Buffer x = alloc_fragment({R, C}, f32), y = alloc_fragment({outLen}, f32);
        copy(X, x);
        copy(Init, y);
        switch (c.kind) {
        case 0:
          reduce_max(x, y, c.dim, c.clear);
          break;
        case 1:
          reduce_min(x, y, c.dim, c.clear);
          break;
        case 2:
          reduce_sum(x, y, c.dim, c.clear);
          break;
        default:
          reduce_abssum(x, y, c.dim, c.clear);
          break;
        }
        copy(y, Y);
      });
      HostTensor x = randomTensor({R, C}, f32, 20), init = randomTensor({outLen}, f32, 21);
      std::vector<HostTensor> out = run(p, {&x, &init});
      std::vector<float> expected;
      for (int o = 0; o < outLen; ++o) {
        double acc = c.kind == 0 ? -INFINITY : c.kind == 1 ? INFINITY : 0;
        if (!c.clear)
          acc = init.at(o);
        for (int r = 0; r < (c.dim == 1 ? C : R); ++r) {
          double v = c.dim == 1 ? x.at(o * C + r) : x.at(r * C + o);
          acc = c.kind == 0   ? std::max(acc, v)
                : c.kind == 1 ? std::min(acc, v)
                : c.kind == 2 ? acc + v
                              : acc + std::fabs(v);
        }
        expected.push_back(static_cast<float>(acc));
      }
      INFO("reduce " << c.name << ", " << R << " rows, " << threads << " threads");
      checkClose("Y", out[0].toFloat(), expected, 1e-5, 1e-5);
    }
}

TEST_CASE("atomic_add: many blocks into one tensor, through an index map", "[ops]") {
  // 64 blocks each add their own row of X into every row of Acc: atomics across
  // the thread pool must not lose updates. Acc is stored through a layout that
  // swaps its two halves; the read back goes through the same layout.
  const int blocks = 64, rows = 8, cols = 16;
  Layout swapHalves = Layout::indexMap([&](IndexExpr r, IndexExpr c) {
    return std::vector<IndexExpr>{(r + rows / 2) % rows, c};
  });
  Program p("atomics");
  Buffer X = p.tensor("X", {blocks, cols}, f32);
  Buffer Acc = p.tensor("Acc", {rows, cols}, f32);
  p.kernel({blocks}, 32, [&](Expr bx) {
    annotate_layout(Acc, swapHalves);
    parallel({rows, cols},
             [&](Expr i, Expr j) { if_(i < rows, [&] { atomic_add(Acc(i, j), X(bx, j)); }); });
  });
  Program read("read_back");
  Buffer Acc2 = read.tensor("Acc", {rows, cols}, f32);
  Buffer Out = read.output("Out", {rows, cols}, f32);
  read.kernel({1}, 32, [&](Expr) {
    annotate_layout(Acc2, swapHalves);
    copy(Acc2, Out);
  });
  HostTensor x = randomTensor({blocks, cols}, f32, 30);
  HostTensor acc({rows, cols}, f32);
  tl::testing::compile(p)->run({&x, &acc});
  std::vector<float> column(cols, 0), expectedPhysical, expectedLogical;
  for (int b = 0; b < blocks; ++b)
    for (int j = 0; j < cols; ++j)
      column[j] += x.at(b * cols + j);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j)
      expectedLogical.push_back(column[j]);
  checkClose("Acc (physical)", acc.toFloat(), expectedLogical, 1e-5, 1e-4);
  std::vector<HostTensor> out = run(read, {&acc});
  checkClose("Out", out[0].toFloat(), expectedLogical, 1e-5, 1e-4);
}

TEST_CASE("atomic_add of a tile: shared and fragment sources, ragged edges, in turns", "[ops]") {
  // 8 blocks add their [16, 64] f32 tile of X into rows (bx % 4) * 16 .. +16
  // of a 50-row tensor: two blocks into each row block, the last row block
  // running past the end (rows 48..63: only 48 and 49 exist). A from a
  // shared tile (on sm_90a TMA reduce-add boxes), B from a fragment (an
  // atomic add per element), C from the shared tile in turns (bit for bit
  // the sum in turn order).
  const int blocks = 8, rows = 50, tileRows = 16, cols = 64;
  Program p("tile_atomics");
  Buffer X = p.tensor("X", {blocks, tileRows, cols}, f32);
  Buffer A = p.tensor("A", {rows, cols}, f32);
  Buffer B = p.tensor("B", {rows, cols}, f32);
  Buffer C = p.tensor("C", {rows, cols}, f32);
  Buffer Turn = p.tensor("Turn", {4}, i32);
  p.kernel({blocks}, 128, [&](Expr bx) {
    Buffer s = alloc_shared({tileRows, cols}, f32);
    Buffer f = alloc_fragment({tileRows, cols}, f32);
    copy(X(bx, all, all), s);
    copy(X(bx, all, all), f);
    Expr row = (bx % 4) * tileRows;
    atomic_add(A(slice(row, tileRows), all), s);
    atomic_add(B(slice(row, tileRows), all), f);
    in_turn(Turn(bx % 4), bx / 4, if_then_else(bx / 4 == 1, 0, bx / 4 + 1),
            [&] { atomic_add(C(slice(row, tileRows), all), s); });
  });
  // In odd columns C starts at -1e8, blocks 0-3 add 1e8 and blocks 4-7 a
  // small x: in turn order -1e8 + 1e8 + x is x, the other way round 0.
  HostTensor x = randomTensor({blocks, tileRows, cols}, f32, 40);
  for (int i = 0; i < 4 * tileRows * cols; i += 2)
    x.set(i + 1, 1e8f);
  HostTensor a = randomTensor({rows, cols}, f32, 41), c({rows, cols}, f32);
  HostTensor b = HostTensor::fromFloat({rows, cols}, f32, a.toFloat()); // its own storage
  for (int i = 0; i < rows * cols; i += 2)
    c.set(i + 1, -1e8f);
  HostTensor turn({4}, i32);
  std::vector<float> expected = a.toFloat(), ordered = c.toFloat();
  for (int bx = 0; bx < blocks; ++bx) // turn 0 (blocks 0-3), then turn 1
    for (int r = 0; r < tileRows; ++r)
      for (int j = 0; j < cols; ++j) {
        int row = (bx % 4) * tileRows + r;
        float v = x.at((bx * tileRows + r) * cols + j);
        if (row >= rows)
          continue;
        expected[row * cols + j] += v;
        ordered[row * cols + j] += v;
      }
  auto kernel = tl::testing::compile(p);
  kernel->run({&x, &a, &b, &c, &turn});
  checkClose("A", a.toFloat(), expected, 1e-5, 1e-4);
  checkClose("B", b.toFloat(), expected, 1e-5, 1e-4);
  std::vector<float> got = c.toFloat();
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("C element " << i);
    CHECK(got[i] == ordered[i]); // bit for bit: turn 0's block first
  }
  for (std::int64_t i = 0; i < turn.numel(); ++i)
    CHECK(turn.at(i) == 0);
}

TEST_CASE("atomic_add of a gemm accumulator into accumulator tile order", "[ops]") {
  // 24 blocks each compute a [128, 64] gemm accumulator (wgmma on sm_90a:
  // one warpgroup, two 16-row tiles and eight 8-column tiles a thread) and
  // add it into rows 0..127 or 128..255 of one (batch, head) of a [2, 240,
  // 3, 64] tensor laid out by make_mma_tile_layout: every region twice (bx
  // and bx + 12), the second row block running past row 239. On sm_90 the
  // adds are one 16-byte vector reduction per 16x8 tile and thread. The
  // tensor is checked at the physical positions the layout's documented
  // formula gives.
  const int blocks = 24, M = 128, N = 64, K = 32, B = 2, R = 240, H = 3;
  Program p("tile_order_adds");
  Buffer A = p.tensor("A", {blocks, M, K}, f16);
  Buffer W = p.tensor("W", {K, N}, f16);
  Buffer Acc = p.tensor("Acc", {B, R, H, N}, f32);
  p.kernel({blocks}, 128, [&](Expr bx) {
    annotate_layout(Acc, make_mma_tile_layout(4, 1, 3));
    Buffer a = alloc_shared({M, K}, f16);
    Buffer w = alloc_shared({K, N}, f16);
    Buffer c = alloc_fragment({M, N}, f32);
    copy(A(bx, all, all), a);
    copy(W, w);
    clear(c);
    gemm(a, w, c);
    atomic_add(Acc(bx % 2, slice((bx / 2) % 2 * M, M), bx % 3, all), c);
  });
  HostTensor a = randomTensor({blocks, M, K}, f16, 50), w = randomTensor({K, N}, f16, 51);
  HostTensor acc = randomTensor({B, R, H, N}, f32, 52);
  std::vector<float> start = acc.toFloat(), expected = start;
  auto physical = [&](int b, int l, int h, int d) { // make_mma_tile_layout(4, 1, 3)
    int position = 16 * (l % 8) + 4 * ((d % 8) / 2) + 2 * ((l % 16) / 8) + d % 2;
    return (((b * (R / 16) + l / 16) * H + h) * (N / 8) + d / 8) * 128 + position;
  };
  for (int bx = 0; bx < blocks; ++bx)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        int l = (bx / 2) % 2 * M + i;
        if (l >= R)
          continue;
        float sum = 0;
        for (int k = 0; k < K; ++k)
          sum += a.at((bx * M + i) * K + k) * w.at(k * N + j);
        expected[physical(bx % 2, l, bx % 3, j)] += sum;
      }
  tl::testing::compile(p)->run({&a, &w, &acc});
  checkClose("Acc (physical)", acc.toFloat(), expected, 1e-4, 1e-3);
}

TEST_CASE("in_turn: blocks add in the order of their turns", "[ops]") {
  // Each of 3 x 2 rows of 48 blocks adds its value into its row's sum. f32
  // addition does not associate (1e8 + 1 - 1e8 is 0, 1 - 1e8 + 1e8 is 1), so
  // only the order of the turns gives the sequential sum's bits; the blocks
  // of a row take turns along x (the launch order), the last of each row
  // setting the counter back to 0.
  const int blocks = 48, rows = 3, planes = 2;
  Program p("turns");
  Buffer X = p.tensor("X", {planes, rows, blocks}, f32);
  Buffer Sum = p.tensor("Sum", {planes, rows, 4}, f32);
  Buffer Turn = p.tensor("Turn", {planes, rows}, i32);
  p.kernel({blocks, rows, planes}, 128, [&](Expr bx, Expr by, Expr bz) {
    in_turn(Turn(bz, by), bx, if_then_else(bx == blocks - 1, 0, bx + 1),
            [&] { parallel({4}, [&](Expr j) { atomic_add(Sum(bz, by, j), X(bz, by, bx)); }); });
  });
  HostTensor x({planes, rows, blocks}, f32), sum({planes, rows, 4}, f32), turn({planes, rows}, i32);
  std::vector<float> expected;
  for (int z = 0; z < planes; ++z)
    for (int r = 0; r < rows; ++r) {
      float total = 0;
      for (int b = 0; b < blocks; ++b) {
        float v = (b % 3 == 0) ? 1e8f : (b % 3 == 1 ? float(r + 1 + z) : -1e8f);
        x.set((z * rows + r) * blocks + b, v);
        total += v;
      }
      for (int j = 0; j < 4; ++j)
        expected.push_back(total);
    }
  auto kernel = tl::testing::compile(p);
  for (int launch = 0; launch < 2; ++launch) { // the counters are ready again
    sum = HostTensor({planes, rows, 4}, f32);
    kernel->run({&x, &sum, &turn});
    std::vector<float> got = sum.toFloat();
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("launch " << launch << " sum " << i);
      CHECK(got[i] == expected[i]); // bit for bit
    }
    for (std::int64_t i = 0; i < turn.numel(); ++i)
      CHECK(turn.at(i) == 0);
  }
}

TEST_CASE("last_to_arrive: the last block sees every block's adds, once a launch", "[ops]") {
  // 97 blocks of each of 3 x 2 rows add their value into the row's 64 sums;
  // the block that arrives last copies the sums out (a tile copy through a
  // fragment), sets them back to zero and counts its run. Integer values:
  // any order of the adds gives the same sums, so the copy shows whether
  // the last block saw them all.
  const int blocks = 97, rows = 3, planes = 2, cols = 64;
  Program p("arrivals");
  Buffer X = p.tensor("X", {planes, rows, blocks}, f32);
  Buffer Sum = p.tensor("Sum", {planes, rows, cols}, f32);
  Buffer Out = p.tensor("Out", {planes, rows, cols}, f32);
  Buffer Runs = p.tensor("Runs", {planes, rows}, f32);
  Buffer Count = p.tensor("Count", {planes, rows}, i32);
  p.kernel({blocks, rows, planes}, 128, [&](Expr bx, Expr by, Expr bz) {
    Buffer sums = alloc_fragment({cols}, f32);
    parallel({cols}, [&](Expr j) { atomic_add(Sum(bz, by, j), X(bz, by, bx) * (j + 1)); });
    last_to_arrive(Count(bz, by), blocks, [&] {
      copy(Sum(bz, by, all), sums);
      copy(sums, Out(bz, by, all));
      clear(sums);
      copy(sums, Sum(bz, by, all));
      atomic_add(Runs(bz, by), 1.0f);
    });
  });
  HostTensor x({planes, rows, blocks}, f32), sum({planes, rows, cols}, f32);
  HostTensor runs({planes, rows}, f32), count({planes, rows}, i32);
  std::vector<float> expected;
  for (int z = 0; z < planes; ++z)
    for (int r = 0; r < rows; ++r) {
      float total = 0;
      for (int b = 0; b < blocks; ++b) {
        float v = float((b * 7 + r + 5 * z) % 13 - 6);
        x.set((z * rows + r) * blocks + b, v);
        total += v;
      }
      for (int j = 0; j < cols; ++j)
        expected.push_back(total * float(j + 1));
    }
  auto kernel = tl::testing::compile(p);
  for (int launch = 1; launch <= 3; ++launch) { // the sums and counters are ready again
    HostTensor out = HostTensor::fromFloat({planes, rows, cols}, f32,
                                           std::vector<float>(planes * rows * cols, NAN));
    kernel->run({&x, &sum, &out, &runs, &count});
    std::vector<float> got = out.toFloat(), left = sum.toFloat();
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("launch " << launch << " sum " << i);
      CHECK(got[i] == expected[i]);
      CHECK(left[i] == 0);
    }
    for (std::int64_t i = 0; i < count.numel(); ++i) {
      INFO("launch " << launch << " row " << i);
      CHECK(count.at(i) == 0);
      CHECK(runs.toFloat()[i] == float(launch)); // one last block a launch
    }
  }
}

TEST_CASE("an index map moves elements where it says", "[ops]") {
  Layout transposeTiles = Layout::indexMap([](IndexExpr r, IndexExpr c) {
    return std::vector<IndexExpr>{c, r};
  });
  Program p("layout_store");
  Buffer X = p.tensor("X", {8, 8}, f32);
  Buffer Y = p.output("Y", {8, 8}, f32);
  p.kernel({1}, 32, [&](Expr) {
    annotate_layout(Y, transposeTiles);
    copy(X, Y);
  });
  HostTensor x = randomTensor({8, 8}, f32, 40);
  std::vector<HostTensor> out = run(p, {&x});
  std::vector<float> expected;
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      expected.push_back(x.at(c * 8 + r)); // Y's storage is X transposed
  checkClose("Y storage", out[0].toFloat(), expected, 0, 0);
}

TEST_CASE("an index map places the elements a parallel loop writes, at constant steps", "[ops]") {
  // make_dq_layout's shape of map: floordiv and mod by 8 and 2. The loop's
  // element writes go through the map like copies do; on the GPU the steps of
  // 16 rows and 8 columns pass through it as constants, 9 columns as 8 plus a
  // base one further, 3 columns not at all.
  Layout tiled = Layout::indexMap([](IndexExpr r, IndexExpr c) {
    return std::vector<IndexExpr>{r / 8, c / 8, c % 2, 4 * (r % 8) + (c % 8) / 2};
  });
  const int R = 32, C = 16;
  for (int step : {8, 9, 3}) {
    Program p("layout_steps");
    Buffer X = p.tensor("X", {R, C}, f32);
    Buffer Y = p.output("Y", {R, C}, f32);
    p.kernel({1}, 128, [&](Expr) {
      annotate_layout(Y, tiled); // three loops, disjoint parts of Y (no order between them)
      parallel({R, step}, [&](Expr i, Expr j) { Y(i, j) = X(i, j); });
      parallel({16, C - step}, [&](Expr i, Expr j) { Y(i, j + step) = X(i, j + step) * 2; });
      parallel({16, C - step},
               [&](Expr i, Expr j) { Y(i + 16, j + step) = X(i + 16, j + step) * 3; });
    });
    HostTensor x = randomTensor({R, C}, f32, 41);
    std::vector<HostTensor> out = run(p, {&x});
    std::vector<float> expected(R * C);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) {
        int physical = (((r / 8) * 2 + c / 8) * 2 + c % 2) * 32 + 4 * (r % 8) + (c % 8) / 2;
        expected[physical] = x.at(r * C + c) * (c < step ? 1 : r < 16 ? 2 : 3);
      }
    INFO("column step " << step);
    checkClose("Y storage", out[0].toFloat(), expected, 0, 0);
  }
}

TEST_CASE("pipelined: a K loop whose tiles load num_stages iterations ahead", "[ops]") {
  // Y[64, 64] = X[64, K] W[K, 64] + sum over the tiles of bias[k-tile], for
  // K = 200: the last 32-wide tile runs past K (zero-filled rows and
  // columns); on the GPU the X, W and bias tiles are cp.async groups into
  // rotating copies, the bias in 16-byte pieces at a dynamic offset.
  const int M = 64, N = 64, K = 200, tile = 32, tiles = (K + tile - 1) / tile;
  for (int stages : {0, 1, 2, 3}) {
    INFO("num_stages = " << stages);
    Program p("pipelined_gemm");
    Buffer X = p.tensor("X", {M, K}, f16);
    Buffer W = p.tensor("W", {K, N}, f16);
    Buffer Bias = p.tensor("Bias", {tiles * tile}, f32);
    Buffer Y = p.output("Y", {M, N}, f32);
    p.kernel({1}, 128, [&](Expr) {
      Buffer x = alloc_shared({M, tile}, f16), w = alloc_shared({tile, N}, f16);
      Buffer b = alloc_shared({tile}, f32);
      Buffer acc = alloc_fragment({M, N}, f32);
      clear(acc);
      pipelined(ceildiv(K, tile), stages, [&](Expr k) {
        copy(X(all, slice(k * tile, tile)), x);
        copy(W(slice(k * tile, tile), all), w);
        copy(Bias(slice(k * tile, tile)), b);
        gemm(x, w, acc, {.policy = GemmWarpPolicy::FullRow});
        parallel({M, N}, [&](Expr i, Expr j) { acc(i, j) += b(j % tile); });
      });
      copy(acc, Y);
    });
    HostTensor x = randomTensor({M, K}, f16, 40), w = randomTensor({K, N}, f16, 41);
    HostTensor bias = randomTensor({tiles * tile}, f32, 42);
    std::vector<HostTensor> out = run(p, {&x, &w, &bias});
    std::vector<float> expected(M * N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int kk = 0; kk < K; ++kk)
          acc += double(x.at(i * K + kk)) * w.at(kk * N + j);
        for (int t = 0; t < tiles; ++t)
          acc += bias.at(t * tile + j % tile);
        expected[i * N + j] = static_cast<float>(acc);
      }
    checkClose("Y", out[0].toFloat(), expected);
  }
}

TEST_CASE("reduce: rows of a gemm tile that several warps share", "[ops]") {
  // Square over 4 warps: 2 x 2 warps, so each row's columns sit in two warps
  // (on the GPU: quad shuffles, then the warps' partials through shared).
  const int M = 64, N = 64, K = 32;
  Program p("reduce_across_warps");
  Buffer A = p.tensor("A", {M, K}, f16);
  Buffer B = p.tensor("B", {K, N}, f16);
  Buffer Init = p.tensor("Init", {M}, f32);
  Buffer Max = p.output("Max", {M}, f32);
  Buffer Sum = p.output("Sum", {M}, f32);
  Buffer Y = p.output("Y", {M, N}, f32);
  p.kernel({1}, 128, [&](Expr) {
    Buffer a = alloc_shared({M, K}, f16), b = alloc_shared({K, N}, f16);
    Buffer c = alloc_fragment({M, N}, f32);
    Buffer rowMax = alloc_fragment({M}, f32), rowSum = alloc_fragment({M}, f32);
    copy(A, a);
    copy(B, b);
    gemm(a, b, c, {.policy = GemmWarpPolicy::Square, .clear_accum = true});
    reduce_max(c, rowMax, 1);
    copy(Init, rowSum);
    reduce_abssum(c, rowSum, 1, /*clear=*/false);
    parallel({M, N}, [&](Expr i, Expr j) { c(i, j) = c(i, j) - rowMax(i); });
    copy(rowMax, Max);
    copy(rowSum, Sum);
    copy(c, Y);
  });
  HostTensor a = randomTensor({M, K}, f16, 50), b = randomTensor({K, N}, f16, 51);
  HostTensor init = randomTensor({M}, f32, 52);
  std::vector<HostTensor> out = run(p, {&a, &b, &init});
  std::vector<float> maxes(M), sums(M), y(M * N);
  for (int i = 0; i < M; ++i) {
    std::vector<double> row(N);
    double top = -INFINITY, total = init.at(i);
    for (int j = 0; j < N; ++j) {
      for (int k = 0; k < K; ++k)
        row[j] += double(a.at(i * K + k)) * b.at(k * N + j);
      top = std::max(top, row[j]);
      total += std::fabs(row[j]);
    }
    maxes[i] = static_cast<float>(top), sums[i] = static_cast<float>(total);
    for (int j = 0; j < N; ++j)
      y[i * N + j] = static_cast<float>(row[j] - top);
  }
  checkClose("Max", out[0].toFloat(), maxes, 1e-4, 1e-4);
  checkClose("Sum", out[1].toFloat(), sums, 1e-4, 1e-3);
  checkClose("Y", out[2].toFloat(), y, 1e-4, 1e-4);
}

TEST_CASE("wait_wgmma: a gemm left in flight while registers work on another tile", "[ops]") {
  // On sm_90a the second gemm stays in flight (wg_wait = -1) while the first
  // gemm's result is scaled, and wait_wgmma brings its result in (lit
  // wait-wgmma.mlir shows the order); elsewhere gemms complete where they
  // stand. Either way: the products.
  const int M = 64, N = 64, K = 64;
  Program p("in_flight");
  Buffer A = p.tensor("A", {M, K}, f16);
  Buffer B = p.tensor("B", {K, N}, f16);
  Buffer C = p.output("C", {M, N}, f32);
  Buffer D = p.output("D", {M, N}, f32);
  p.kernel({1}, 128, [&](Expr) {
    Buffer a = alloc_shared({M, K}, f16), b = alloc_shared({K, N}, f16);
    Buffer c = alloc_fragment({M, N}, f32), d = alloc_fragment({M, N}, f32);
    copy(A, a);
    copy(B, b);
    gemm(a, b, d, {.policy = GemmWarpPolicy::FullRow, .clear_accum = true});
    gemm(a, b, c, {.policy = GemmWarpPolicy::FullRow, .clear_accum = true, .wg_wait = -1});
    parallel({M, N}, [&](Expr i, Expr j) { d(i, j) = d(i, j) * 2; });
    wait_wgmma(0);
    copy(c, C);
    copy(d, D);
  });
  HostTensor a = randomTensor({M, K}, f16, 60), b = randomTensor({K, N}, f16, 61);
  std::vector<HostTensor> out = run(p, {&a, &b});
  std::vector<float> product(M * N), twice(M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = 0;
      for (int k = 0; k < K; ++k)
        sum += double(a.at(i * K + k)) * b.at(k * N + j);
      product[i * N + j] = static_cast<float>(sum), twice[i * N + j] = static_cast<float>(2 * sum);
    }
  checkClose("C", out[0].toFloat(), product, 1e-4, 1e-4);
  checkClose("D", out[1].toFloat(), twice, 1e-4, 1e-4);
}
