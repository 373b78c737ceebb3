// The reference's four programs build and verify for its test configuration.
#include "Occurrences.h"
#include "mha/mha.h"

#include <catch2/catch.hpp>

namespace mha = tl::kernels::mha;

namespace {
using tl::test::occurrences;
} // namespace

TEST_CASE("flashattn_fwd builds and verifies", "[mha]") {
  for (bool causal : {false, true}) {
    tl::dsl::Program p = mha::flashattn_fwd(8, 32, 256, 64, causal, 64, 64);
    REQUIRE_NOTHROW(p.verify());
    CHECK(p.outputIndices() == std::vector<int>{3, 4});
    std::string ir = p.str();
    CHECK(occurrences(ir, "tl.gemm ") == 2);
    CHECK(occurrences(ir, "tl.reduce max") == 1);
    CHECK(occurrences(ir, "tl.reduce sum") == 1);
    // Causal: heaviest first over groups of heads; at 64 KiB of K and V a
    // head, all 32 heads make one group (4 query blocks each).
    CHECK(occurrences(ir, causal ? "tl.kernel grid [128, 1, 8] threads 32"
                                 : "tl.kernel grid [4, 32, 8] threads 32") == 1);
    CHECK(occurrences(ir, "layout(#tl.swizzle)") == 1);
    // The causal program masks with a select the blocks that cross the
    // diagonal and clears the others; the non-causal one clears every tile.
    CHECK(occurrences(ir, "arith.select") == (causal ? 1 : 0));
    CHECK(occurrences(ir, "scf.if") == (causal ? 2 : 0));
  }
}

TEST_CASE("flashattn_bwd builds and verifies", "[mha]") {
  for (bool causal : {false, true}) {
    tl::dsl::Program p = mha::flashattn_bwd(8, 32, 256, 64, causal, 128, 128);
    REQUIRE_NOTHROW(p.verify());
    CHECK(p.outputIndices() == std::vector<int>{7, 8});
    std::string ir = p.str();
    CHECK(occurrences(ir, "tl.gemm ") == 5);
    CHECK(occurrences(ir, "tl.atomic_add") == 1);
    CHECK(occurrences(ir, "scf.if") == (causal ? 2 : 1)); // the dQ guard; the diagonal blocks
    CHECK(occurrences(ir, "transpose_a") == 1);
    CHECK(occurrences(ir, "#tl.index_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 8, d2, d3 "
                          "floordiv 8, d3 mod 2, (d1 mod 8) * 4 + (d3 mod 8) floordiv 2), "
                          "[8, 32, 32, 8, 2, 32]>") == 1);
  }
  // Head dim 128 uses the reference's 128 x 32 blocks.
  REQUIRE_NOTHROW(mha::flashattn_bwd(2, 4, 256, 128, true, 128, 32).verify());
}

TEST_CASE("backward pre- and postprocess build and verify", "[mha]") {
  tl::dsl::Program prep = mha::flashattn_bwd_preprocess(8, 32, 256, 64);
  REQUIRE_NOTHROW(prep.verify());
  CHECK(prep.outputIndices() == std::vector<int>{2});
  CHECK(occurrences(prep.str(), "scf.for") == 1);
  tl::dsl::Program post = mha::flashattn_bwd_postprocess(8, 32, 256, 64);
  REQUIRE_NOTHROW(post.verify());
  CHECK(post.outputIndices() == std::vector<int>{1});
}

TEST_CASE("ops carry the kernel author's source lines", "[mha]") {
  tl::dsl::Program p = mha::flashattn_fwd(2, 4, 128, 64, false, 64, 64);
  std::string ir = p.str(/*withLocations=*/true);
  CHECK(ir.find("flashattn_fwd.cpp") != std::string::npos);
}
