// A seeded random sweep of attention shapes: batch, heads, seq_len (biased to
// awkward values: primes, block sizes +- 1, multiples of 8 +- 1, the
// smallest lengths), head dim 64 / 128 / 256, causal or not, the reference's
// configuration or the tuned one, dQ converted to f16 by the backward's main
// kernel (bwdConvertDq) or by the postprocess, dQ summed atomically or in key
// order (mha::deterministicConfig), f16 or bf16, each for half the shapes. Every output the kernels
// write is poisoned (NaN) beforehand; O, lse, dQ, dK and dV are checked against an fp32 reference:
// relative Frobenius error <= 1e-2 and the reference test's allclose (rtol = atol = 1e-2; bf16,
// whose outputs round 8 times coarser: 2e-2 and 2e-2). On the
// GPU it draws 200 shapes up to seq_len 5000; on the CPU backend (CI) 30 small ones. Two test
// cases run the draw's two halves.
//
// TLC_SWEEP_SEED, TLC_SWEEP_COUNT and TLC_SWEEP_MAX_SEQ override the seed,
// the count and the longest seq_len (under compute-sanitizer, say); a
// failing shape is printed with the seed and its index, and the same seed
// draws the same shapes and inputs again.
#include "Numerics.h"
#include "mha/attention.h"
#include "mha/mha.h"
#include "mha/reference.h"

#include "Backend.h"

#include <cstdio>
#include <cstdlib>
#include <random>

using tl::runtime::HostTensor;
namespace mha = tl::kernels::mha;

namespace {

struct SweepShape {
  int batch, heads, seq, dim;
  bool causal, tuned, convertDq, deterministic;
  tl::dsl::DType dtype = tl::dsl::f16;
};

struct SweepBounds {
  int count, maxBatch, maxHeads, maxSeq;
};

bool isPrime(int n) {
  if (n < 2)
    return false;
  for (int d = 2; d * d <= n; ++d)
    if (n % d == 0)
      return false;
  return true;
}

/// A sequence length near `base`, made awkward one of five ways.
int awkwardLength(std::mt19937 &rng, int base, int maxSeq) {
  static const int tiny[] = {1, 2, 3, 5, 7, 9, 15, 17, 31, 33};
  int seq = base;
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
  case 0: // as drawn
    break;
  case 1: // a prime
    while (seq > 2 && !isPrime(seq))
      --seq;
    break;
  case 2: // a multiple of 8, +- 1
    seq = std::max(1, seq / 8 * 8 + (rng() % 2 ? 1 : -1));
    break;
  case 3: { // a block size's multiple, +- 1
    const int blocks[] = {32, 64, 128};
    int block = blocks[rng() % 3];
    seq = std::max(1, std::max(1, seq / block) * block + (rng() % 2 ? 1 : -1));
    break;
  }
  default:
    seq = tiny[rng() % std::size(tiny)];
  }
  return std::clamp(seq, 1, maxSeq);
}

std::vector<SweepShape> drawShapes(std::uint32_t seed, const SweepBounds &bounds) {
  std::mt19937 rng(seed);
  std::vector<SweepShape> shapes;
  for (int i = 0; i < bounds.count; ++i) {
    SweepShape s{};
    s.batch = std::uniform_int_distribution<int>(1, bounds.maxBatch)(rng);
    s.heads = std::uniform_int_distribution<int>(1, bounds.maxHeads)(rng);
    // Log-uniform base: long sequences occur, short ones dominate the cost.
    double logBase = std::uniform_real_distribution<double>(0, std::log(bounds.maxSeq))(rng);
    s.seq = awkwardLength(rng, static_cast<int>(std::lround(std::exp(logBase))), bounds.maxSeq);
    const int dims[] = {64, 128, 256};
    s.dim = dims[rng() % 3];
    s.causal = rng() % 2;
    s.tuned = i % 2;         // both configurations, alternately
    s.convertDq = i / 2 % 2; // dQ converted by the main kernel or the postprocess, each
    s.deterministic = i / 4 % 2; // (drawing nothing: the same seed, the same shapes)
    s.dtype = i / 8 % 2 ? tl::dsl::bf16 : tl::dsl::f16; // every combination of the above in each
    shapes.push_back(s);
  }
  return shapes;
}

int environmentInt(const char *name, int fallback) {
  const char *text = std::getenv(name);
  return text && *text ? std::atoi(text) : fallback;
}

mha::AttentionConfig configOf(const SweepShape &s) {
  mha::AttentionConfig c = s.tuned
                               ? mha::tunedConfig(s.dim, s.causal, s.seq, tl::testing::tunedArch())
                               : mha::AttentionConfig{};
  c.bwdConvertDq = s.convertDq;
  return s.deterministic
             ? mha::deterministicConfig(c, s.dim, s.causal, s.seq, tl::testing::tunedArch())
             : c;
}

/// One half of the seed's draw of shapes: two test cases of one draw, so that a runner of
/// test cases in parallel (scripts/run_tests_parallel.py) can give each half a process.
void sweep(bool secondHalf) {
  bool gpu = tl::testing::backend() == mha::Backend::gpu;
  SweepBounds bounds = gpu ? SweepBounds{200, 4, 8, 5000} : SweepBounds{30, 2, 3, 300};
  bounds.count = environmentInt("TLC_SWEEP_COUNT", bounds.count);
  bounds.maxSeq = std::max(1, environmentInt("TLC_SWEEP_MAX_SEQ", bounds.maxSeq));
  auto seed = static_cast<std::uint32_t>(environmentInt("TLC_SWEEP_SEED", 20261201));
  std::vector<SweepShape> shapes = drawShapes(seed, bounds);
  const std::size_t first = secondHalf ? shapes.size() / 2 : 0;
  const std::size_t last = secondHalf ? shapes.size() : shapes.size() / 2;

  std::vector<std::function<tl::dsl::Program()>> makers;
  for (std::size_t n = first; n < last; ++n) {
    const SweepShape &s = shapes[n];
    mha::AttentionConfig c = configOf(s);
    makers.push_back(
        [=] { return mha::forwardKernel(s.batch, s.heads, s.seq, s.dim, s.causal, c, s.dtype); });
    // As attentionForwardBackward compiles them: the preprocess zeroes dQ
    // unless the main kernel converts it, and then no postprocess runs.
    makers.push_back(
        [=] { return mha::preprocessKernel(s.batch, s.heads, s.seq, s.dim, c, s.dtype); });
    makers.push_back(
        [=] { return mha::backwardKernel(s.batch, s.heads, s.seq, s.dim, s.causal, c, s.dtype); });
    if (!c.bwdConvertDq)
      makers.push_back(
          [=] { return mha::postprocessKernel(s.batch, s.heads, s.seq, s.dim, c, s.dtype); });
  }
  tl::testing::precompile(makers);

  int failures = 0;
  for (std::size_t n = first; n < last; ++n) {
    const SweepShape &s = shapes[n];
    char label[176];
    std::snprintf(label, sizeof label,
                  "sweep seed %u shape %zu/%zu: B=%d H=%d S=%d D=%d %s %s %s%s%s", seed, n + 1,
                  shapes.size(), s.batch, s.heads, s.seq, s.dim, tl::dsl::toString(s.dtype),
                  s.causal ? "causal" : "non-causal", s.tuned ? "tuned" : "reference",
                  s.convertDq ? " convert-dq" : "", s.deterministic ? " deterministic" : "");
    INFO(label);
    std::vector<std::int64_t> shape = {s.batch, s.seq, s.heads, s.dim};
    std::uint32_t inputSeed = seed * 7919u + static_cast<std::uint32_t>(n) * 4u;
    HostTensor Q = tl::testing::randomTensor(shape, s.dtype, inputSeed);
    HostTensor K = tl::testing::randomTensor(shape, s.dtype, inputSeed + 1);
    HostTensor V = tl::testing::randomTensor(shape, s.dtype, inputSeed + 2);
    HostTensor dO = tl::testing::randomTensor(shape, s.dtype, inputSeed + 3);
    const double tolerance = s.dtype == tl::dsl::bf16 ? 2e-2 : 1e-2;
    mha::AttentionResult r = mha::attentionForwardBackward(
        Q, K, V, dO, s.causal, tl::testing::backend(), configOf(s), mha::Outputs::poisoned);
    tl::testing::AttentionGrads ref =
        tl::testing::attentionReference<float>({s.batch, s.heads, s.seq, s.dim}, s.causal,
                                               Q.toFloat(), K.toFloat(), V.toFloat(), dO.toFloat());
    std::string errors;
    bool ok = true;
    for (auto [name, actual, expected] : {std::tuple{"O", &r.O, &ref.O},
                                          {"lse", &r.lse, &ref.lse},
                                          {"dQ", &r.dQ, &ref.dQ},
                                          {"dK", &r.dK, &ref.dK},
                                          {"dV", &r.dV, &ref.dV}}) {
      std::vector<float> values = actual->toFloat();
      double relative = tl::testing::relativeFrobenius(values, *expected);
      char figure[48];
      std::snprintf(figure, sizeof figure, " %s %.1e", name, relative);
      errors += figure;
      bool close = tl::testing::checkClose(name, values, *expected, tolerance, tolerance);
      CHECK(relative <= tolerance); // NaN fails too
      ok = ok && close && relative <= tolerance;
    }
    std::printf("%s:%s %s\n", label, errors.c_str(), ok ? "ok" : "FAILED");
    std::fflush(stdout);
    failures += ok ? 0 : 1;
  }
  std::printf("sweep seed %u shapes %zu-%zu of %zu: %d failed\n", seed, first + 1, last,
              shapes.size(), failures);
  CHECK(failures == 0);
}

} // namespace

TEST_CASE("MHA random shape sweep: any seq_len, head dims 64/128/256, both configurations "
          "(first half of the draw)",
          "[mha][sweep]") {
  sweep(false);
}

TEST_CASE("MHA random shape sweep: any seq_len, head dims 64/128/256, both configurations "
          "(second half of the draw)",
          "[mha][sweep]") {
  sweep(true);
}
