// Random inputs and torch.testing.assert_close-style comparison.
#pragma once

#include "tl/dsl/Types.h"
#include "tl/runtime/HostTensor.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace tl::testing {

/// Normal values times `scale`, rounded to `dtype`.
inline runtime::HostTensor randomTensor(std::vector<std::int64_t> shape, dsl::DType dtype,
                                        std::uint32_t seed, float scale = 1.0f) {
  runtime::HostTensor t(std::move(shape), dtype);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, normal(rng));
  return t;
}

/// C = op(A) op(B) in double precision, rounded to float: A is [M, K] ([K, M]
/// when `ta`), B is [K, N] ([N, K] when `tb`), row-major.
inline std::vector<float> referenceGemm(const runtime::HostTensor &a, const runtime::HostTensor &b,
                                        int M, int N, int K, bool ta, bool tb) {
  std::vector<float> av = a.toFloat(), bv = b.toFloat();
  std::vector<float> c(static_cast<std::size_t>(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = 0;
      for (int k = 0; k < K; ++k)
        sum += double(av[ta ? std::size_t(k) * M + i : std::size_t(i) * K + k]) *
               bv[tb ? std::size_t(j) * K + k : std::size_t(k) * N + j];
      c[std::size_t(i) * N + j] = static_cast<float>(sum);
    }
  return c;
}

/// ||actual - expected||_F / ||expected||_F. Below an rms expected value of
/// 1e-3 the denominator stays there (dQ and dK are zero at seq_len 1, where
/// softmax has no gradient): the error may then be 1e-5 rms.
inline double relativeFrobenius(const std::vector<float> &actual,
                                const std::vector<float> &expected) {
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    double diff = double(actual[i]) - expected[i];
    error += diff * diff;
    norm += double(expected[i]) * expected[i];
  }
  return std::sqrt(error) / std::max(std::sqrt(norm), 1e-3 * std::sqrt(double(actual.size())));
}

/// |actual - expected| <= atol + rtol * |expected| everywhere; reports the
/// worst element, and returns whether all were close.
inline bool checkClose(const std::string &what, const std::vector<float> &actual,
                       const std::vector<float> &expected, double rtol = 1e-2, double atol = 1e-2) {
  REQUIRE(actual.size() == expected.size());
  std::size_t bad = 0, worst = 0;
  double worstExcess = 0, maxError = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == expected[i]) // exact, infinities included
      continue;
    double error = std::fabs(double(actual[i]) - expected[i]);
    double excess = error - (atol + rtol * std::fabs(double(expected[i])));
    if (!(excess <= 0)) { // NaN counts as bad
      ++bad;
      if (!(excess <= worstExcess)) {
        worstExcess = excess;
        worst = i;
      }
    }
    if (!(error <= maxError))
      maxError = error;
  }
  INFO(what << ": " << bad << " of " << actual.size() << " elements out of tolerance; worst at "
            << worst << ": got " << actual[worst] << ", expected " << expected[worst]
            << "; max abs error " << maxError);
  CHECK(bad == 0);
  return bad == 0;
}

} // namespace tl::testing
