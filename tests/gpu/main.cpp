// tl-gpu-tests: the numeric tests on the GPU. Without a GPU it prints why and
// exits with 77, which ctest reports as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tl/runtime/CudaDriver.h"

#include <cstdio>

int main(int argc, char **argv) {
  std::string why;
  if (!tl::runtime::CudaDriver::get(&why)) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
