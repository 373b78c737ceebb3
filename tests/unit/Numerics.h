// Random inputs and torch.testing.assert_close-style comparison.
#pragma once

#include "tl/runtime/HostTensor.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

namespace tl::testing {

inline runtime::HostTensor randomTensor(std::vector<std::int64_t> shape,
                                        dsl::DType dtype, std::uint32_t seed) {
  runtime::HostTensor t(std::move(shape), dtype);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, normal(rng));
  return t;
}

/// |actual - expected| <= atol + rtol * |expected| everywhere; reports the
/// worst element.
inline void checkClose(const std::string &what, const std::vector<float> &actual,
                       const std::vector<float> &expected, double rtol = 1e-2,
                       double atol = 1e-2) {
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
  INFO(what << ": " << bad << " of " << actual.size()
            << " elements out of tolerance; worst at " << worst << ": got "
            << actual[worst] << ", expected " << expected[worst]
            << "; max abs error " << maxError);
  CHECK(bad == 0);
}

} // namespace tl::testing
