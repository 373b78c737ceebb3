// The reference test, ported: forward -> preprocess -> backward ->
// postprocess on the test binary's backend, checking O, lse, dQ, dK and dV
// (the reference skips dQ; we don't) against fp64 attention at rtol = atol =
// 1e-2. The CPU runs small shapes; the GPU also runs the reference's own.
#include "Numerics.h"
#include "mha/attention.h"
#include "mha/reference.h"

#include "Backend.h"

#include <cstring>
#include <functional>

using tl::runtime::HostTensor;
namespace mha = tl::kernels::mha;

namespace {

/// bf16 keeps 8 bits of mantissa where f16 keeps 11: its outputs, and P and
/// dS before their gemms, round 8 times coarser.
mha::AttentionResult checkMHA(int batch, int heads, int seq, int dim, bool causal,
                              mha::AttentionConfig config = {},
                              mha::Outputs outputs = mha::Outputs::zeroed,
                              tl::dsl::DType dtype = tl::dsl::f16) {
  INFO("batch=" << batch << " heads=" << heads << " seq=" << seq << " dim=" << dim
                << " causal=" << causal << " " << tl::dsl::toString(dtype));
  std::vector<std::int64_t> shape = {batch, seq, heads, dim};
  HostTensor Q = tl::testing::randomTensor(shape, dtype, 100);
  HostTensor K = tl::testing::randomTensor(shape, dtype, 101);
  HostTensor V = tl::testing::randomTensor(shape, dtype, 102);
  HostTensor dO = tl::testing::randomTensor(shape, dtype, 103);

  mha::AttentionResult r =
      mha::attentionForwardBackward(Q, K, V, dO, causal, tl::testing::backend(), config, outputs);

  tl::testing::AttentionShape sh{batch, heads, seq, dim};
  tl::testing::AttentionGrads ref = tl::testing::attentionReference(
      sh, causal, Q.toFloat(), K.toFloat(), V.toFloat(), dO.toFloat());
  const double tolerance = dtype == tl::dsl::bf16 ? 2e-2 : 1e-2;
  CHECK(r.O.dtype() == dtype);
  CHECK(r.dQ.dtype() == dtype);
  tl::testing::checkClose("O", r.O.toFloat(), ref.O, tolerance, tolerance);
  tl::testing::checkClose("lse", r.lse.toFloat(), ref.lse);
  tl::testing::checkClose("dQ", r.dQ.toFloat(), ref.dQ, tolerance, tolerance);
  tl::testing::checkClose("dK", r.dK.toFloat(), ref.dK, tolerance, tolerance);
  tl::testing::checkClose("dV", r.dV.toFloat(), ref.dV, tolerance, tolerance);
  return r;
}

} // namespace

TEST_CASE("MHA forward and backward, non-causal", "[mha][small]") {
  checkMHA(2, 4, 128, 64, false);
}

TEST_CASE("MHA forward and backward, causal", "[mha][small]") { checkMHA(2, 4, 128, 64, true); }

TEST_CASE("MHA with seq_len not a multiple of the blocks", "[mha][small]") {
  // 200 = 3 * 64 + 8 = 128 + 72: ragged last tiles in every kernel.
  checkMHA(1, 2, 200, 64, false);
  checkMHA(1, 2, 200, 64, true);
}

TEST_CASE("MHA at head dim 256 (the reference's block sizes for it)", "[mha][small]") {
  // forwardBlocks / backwardBlocks take 32-column blocks past D = 128 and
  // D = 64 so that the tiles fit in shared memory; the backward's fragments
  // then take the Row layout (too many registers for mma.sync).
  checkMHA(1, 2, 128, 256, false);
  checkMHA(1, 2, 96, 256, true); // ragged
}

TEST_CASE("MHA at the reference's shape (8, 32, 256, 64)", "[mha][reference][gpu-only]") {
  if (tl::testing::backend() != mha::Backend::gpu)
    return; // minutes on the CPU (ctest lists it in gpu-tests only); small shapes cover it
  checkMHA(8, 32, 256, 64, false);
  checkMHA(8, 32, 256, 64, true);
  for (bool causal : {false, true}) // and in the tuned configuration
    checkMHA(8, 32, 256, 64, causal, mha::tunedConfig(64, causal));
}

TEST_CASE("MHA at long lengths in the tuned configurations (dQ handed to the producer)",
          "[mha][long][gpu-only]") {
  // From S = 1024 on sm_90a the backward has a producer warpgroup and, at a
  // length that is a multiple of 4 (lse rows TMA can load), hands it dQ as a
  // tile (D = 64 causal too since session 38). 1028 is ragged against every
  // block; at 1030 the kernel keeps its own loads and element adds. Outputs
  // poisoned: a row no kernel writes shows. Each also deterministic.
  if (tl::testing::backend() != mha::Backend::gpu)
    return; // minutes on the CPU (ctest lists it in gpu-tests only)
  for (int dim : {64, 128})
    for (bool causal : {false, true})
      for (int seq : {1028, 1030}) {
        mha::AttentionConfig config = mha::tunedConfig(dim, causal, seq, tl::testing::tunedArch());
        INFO("D=" << dim << " causal=" << causal << " S=" << seq);
        if (tl::testing::tunedArch() == "sm_90a")
          CHECK(config.bwdDqTile == (seq == 1028));
        checkMHA(1, 2, seq, dim, causal, config, mha::Outputs::poisoned);
        // Deterministic (the producer takes the tile's turns; causal, the
        // query blocks from the last down): the same bits twice.
        mha::AttentionConfig deterministic =
            mha::deterministicConfig(config, dim, causal, seq, tl::testing::tunedArch());
        if (tl::testing::tunedArch() == "sm_90a") // the tile kept where the producer runs
          CHECK(deterministic.bwdDqTile == (seq == 1028));
        mha::AttentionResult first =
            checkMHA(1, 2, seq, dim, causal, deterministic, mha::Outputs::poisoned);
        mha::AttentionResult second = checkMHA(1, 2, seq, dim, causal, deterministic);
        REQUIRE(first.dQ.bytes() == second.dQ.bytes());
        CHECK(std::memcmp(first.dQ.data(), second.dQ.data(), first.dQ.bytes()) == 0);
      }
}

TEST_CASE("MHA at D = 64 in long launches: FlashAttention-3's blocks (tunedConfig)",
          "[mha][long][gpu-only]") {
  // From S = 4096 (causal: 16384) tunedConfig's sm_90a forward at D = 64 is
  // 192 query rows on three consumer warpgroups and a producer warpgroup,
  // in pingpong (non-causal, O through the shared tile). Lengths ragged
  // against the 192-row and the 128-key blocks (the causal one, S = 8200, in
  // the configuration tunedConfig gives S = 16384: a quarter of that length's
  // work), one head; outputs poisoned: a row no kernel writes shows.
  if (tl::testing::backend() != mha::Backend::gpu)
    return; // minutes on the CPU (ctest lists it in gpu-tests only)
  for (auto [causal, seq] : {std::pair{false, 4100}, std::pair{true, 8200}}) {
    mha::AttentionConfig config =
        mha::tunedConfig(64, causal, causal ? 16384 : seq, tl::testing::tunedArch());
    INFO("causal=" << causal << " S=" << seq);
    if (tl::testing::tunedArch() == "sm_90a") {
      CHECK(config.fwdBlockM == 192);
      CHECK(config.fwdProducer);
      CHECK(config.fwdPingpong);
      CHECK(config.fwdStageO == !causal);
    }
    checkMHA(1, 1, seq, 64, causal, config, mha::Outputs::poisoned);
  }
}

TEST_CASE("MHA backward with the grid's key blocks fastest (FlashAttention-2's order)",
          "[mha][small]") {
  // bwdKeysFastest numbers the staged backward's blocks key block first, then
  // head: the same numbers. The configurations tunedConfig takes from
  // S = 1024 (on the GPU: wgmma, the producer warpgroup, dQ handed to it as a
  // tile), on a ragged length and one TMA cannot load lse rows at; then
  // deterministic (which deterministicConfig gives heads fastest, the
  // faster there; set again by hand), whose turns still follow launch order
  // (a head's key blocks launch in key order): the same bits twice.
  for (int dim : {64, 128})
    for (bool causal : {false, true}) {
      mha::AttentionConfig config = mha::tunedConfig(dim, causal, 1024, tl::testing::tunedArch());
      REQUIRE(config.bwdStaged);
      config.bwdKeysFastest = true;
      INFO("D=" << dim << " causal=" << causal);
      checkMHA(1, 3, 200, dim, causal, config, mha::Outputs::poisoned);
      checkMHA(2, 2, 201, dim, causal, config);
      mha::AttentionConfig deterministic =
          mha::deterministicConfig(config, dim, causal, 200, tl::testing::tunedArch());
      CHECK_FALSE(deterministic.bwdKeysFastest);
      deterministic.bwdKeysFastest = true;
      mha::AttentionResult first =
          checkMHA(1, 3, 200, dim, causal, deterministic, mha::Outputs::poisoned);
      mha::AttentionResult second = checkMHA(1, 3, 200, dim, causal, deterministic);
      REQUIRE(first.dQ.bytes() == second.dQ.bytes());
      CHECK(std::memcmp(first.dQ.data(), second.dQ.data(), first.dQ.bytes()) == 0);
    }
}

namespace {

/// The staged wgmma backward's loop orders: P^T computed while dP^T runs
/// (bwdPWhileDp: S^T waited for alone, dS^T after dP^T), and P^T kept in
/// registers for the dV gemm (bwdPRegisters; with the other, that gemm runs
/// while dS^T is computed); the four of them, then the dQ gemm first and
/// waited for alone (bwdDqFirst) with neither, with P in registers alone
/// and with both (its wait then leaves two gemms in flight, or one; dV's
/// gemm issued before dS^T or with it). On tunedConfig's backward from
/// S = 1024 (the producer warpgroup included where it has one), ragged,
/// outputs poisoned; deterministic. One test case a head dim, so that a runner
/// of test cases in parallel (scripts/run_tests_parallel.py) can spread them.
void checkFlashAttention3Orders(int dim) {
  for (bool causal : {false, true})
    for (int order : {0, 1, 2, 3, 4, 6, 7}) {
      mha::AttentionConfig config = mha::tunedConfig(dim, causal, 1024, tl::testing::tunedArch());
      REQUIRE(config.bwdStaged);
      config.bwdPWhileDp = order & 1, config.bwdPRegisters = order & 2;
      config.bwdDqFirst = order & 4;
      INFO("D=" << dim << " causal=" << causal << " while=" << config.bwdPWhileDp
                << " registers=" << config.bwdPRegisters << " dq-first=" << config.bwdDqFirst);
      checkMHA(1, 2, 200, dim, causal, config, mha::Outputs::poisoned);
      checkMHA(2, 1, 131, dim, causal, config);
      mha::AttentionConfig deterministic = config;
      deterministic.deterministic = true;
      checkMHA(1, 2, 200, dim, causal, deterministic, mha::Outputs::poisoned);
    }
}

} // namespace

TEST_CASE("MHA backward in FlashAttention-3's order (P while dP runs, P in registers, dQ first)"
          ", D = 64",
          "[mha][small]") {
  checkFlashAttention3Orders(64);
}

TEST_CASE("MHA backward in FlashAttention-3's order (P while dP runs, P in registers, dQ first)"
          ", D = 128",
          "[mha][small]") {
  checkFlashAttention3Orders(128);
}

TEST_CASE("MHA backward in FlashAttention-3's order (P while dP runs, P in registers, dQ first)"
          ", D = 256",
          "[mha][small]") {
  checkFlashAttention3Orders(256);
}

TEST_CASE("MHA backward with its dQ gemm first in the long configurations (bwdDqFirst)",
          "[mha][small]") {
  // tunedConfig's long-launch backwards (the producer warpgroup and its dQ
  // tile where it has them) with the dQ gemm first, on a short ragged
  // length, outputs poisoned, and deterministic: twelve runs, [small] for
  // the sanitizers (gpu-session.sh sanitize), where the
  // FlashAttention-3-order test runs every order.
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true}) {
      mha::AttentionConfig config = mha::tunedConfig(dim, causal, 16384, tl::testing::tunedArch());
      config.bwdDqFirst = true;
      INFO("D=" << dim << " causal=" << causal);
      checkMHA(1, 2, 200, dim, causal, config, mha::Outputs::poisoned);
      mha::AttentionConfig deterministic =
          mha::deterministicConfig(config, dim, causal, 16384, tl::testing::tunedArch());
      deterministic.bwdDqFirst = true;
      checkMHA(1, 2, 200, dim, causal, deterministic, mha::Outputs::poisoned);
    }
}

TEST_CASE("MHA deterministic at short lengths (the short D = 64 backward restaged)",
          "[mha][small]") {
  // Below S = 1024 tunedConfig's D = 64 backward on sm_90a is the reference's
  // program; deterministic, deterministicConfig makes it the staged wgmma one
  // on 128x128 blocks with the producer taking the turns with the dQ tile
  // (the shipped _deterministic kernels at S = 256). At the shipped length
  // and a ragged one whose lse rows TMA can load: outputs poisoned, the same
  // dQ bits twice.
  for (bool causal : {false, true})
    for (int seq : {256, 200}) {
      mha::AttentionConfig config = mha::tunedConfig(64, causal, seq, tl::testing::tunedArch());
      mha::AttentionConfig deterministic =
          mha::deterministicConfig(config, 64, causal, seq, tl::testing::tunedArch());
      INFO("causal=" << causal << " S=" << seq);
      CHECK_FALSE(config.bwdStaged);
      CHECK((deterministic.bwdStaged && deterministic.bwdWgmma && deterministic.bwdProducer &&
             deterministic.bwdDqTile && deterministic.bwdBlockM == 128 &&
             deterministic.bwdBlockN == 128));
      mha::AttentionResult first =
          checkMHA(1, 3, seq, 64, causal, deterministic, mha::Outputs::poisoned);
      mha::AttentionResult second = checkMHA(1, 3, seq, 64, causal, deterministic);
      REQUIRE(first.dQ.bytes() == second.dQ.bytes());
      CHECK(std::memcmp(first.dQ.data(), second.dQ.data(), first.dQ.bytes()) == 0);
    }
}

TEST_CASE("MHA with 4-warp blocks and plain loops (tensor cores, synchronous loads)",
          "[mha][small]") {
  mha::AttentionConfig config;
  config.fwdThreads = 128;
  config.bwdBlockM = 64;
  config.bwdBlockN = 32; // 4 warps, no pipelining: the synchronous copies
  config.bwdThreads = 128;
  checkMHA(2, 4, 128, 64, false, config);
  checkMHA(2, 4, 128, 64, true, config);
  checkMHA(1, 2, 200, 64, true, config);
}

TEST_CASE("MHA in the tuned configurations (pipelined loads on the GPU)", "[mha][small]") {
  // The configurations tunedConfig gives short launches, at their lengths:
  // on sm_90a D = 64's backward is the reference's program but from S = 512
  // not causal (the staged one with the producer taking the dQ tile), D =
  // 128's and 256's has the producer (at D = 128 where it takes the tile: S
  // a multiple of 4), D = 128's causal forward 64-row blocks two stages
  // ahead, D = 256's forward the plain loop below S = 512 and the overlapped
  // one from it. Ragged: 200 (zero-filled asynchronous tiles) and 202 (lse
  // rows TMA cannot load: no tile, at D = 128 no producer).
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true})
      for (int seq : {256, 200, 202, 512}) {
        INFO("D=" << dim << " causal=" << causal << " S=" << seq);
        checkMHA(1, 2, seq, dim, causal,
                 mha::tunedConfig(dim, causal, seq, tl::testing::tunedArch()),
                 mha::Outputs::poisoned);
      }
  // Long sequences' configurations (D=64: the staged backward on 128x128
  // blocks, and off sm_90a the causal forward's 128-row blocks; on sm_90a
  // D=64's forward on 192-row blocks, three consumer warpgroups and a
  // producer, D=128's on 128-row blocks and two warpgroups, and the backward's
  // producer warpgroup but at D=64 causal), on a short ragged sequence.
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true})
      checkMHA(1, 2, 200, dim, causal, mha::tunedConfig(dim, causal, 16384));
}

TEST_CASE("MHA forward with a producer warpgroup loading K and V (use_producer_warpgroup)",
          "[mha][small]") {
  // On sm_90a the forward's gemms take wgmma, K and V come by TMA, and one
  // more warpgroup issues them (the consumers release each copy at the end of
  // their iteration); elsewhere the request changes nothing.
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true}) {
      mha::AttentionConfig config = mha::tunedConfig(dim, causal);
      config.fwdWgmma = config.fwdProducer = true;
      config.fwdOverlap = false;
      if (dim == 128)
        config.fwdBlockN = 64; // as measured with a producer (session 12)
      if (dim != 256)
        config.fwdStages = 2; // three rotating copies of K and V
      checkMHA(1, 2, 256, dim, causal, config);
      checkMHA(1, 2, 200, dim, causal, config); // ragged: boxes past the end read zeros
      // FlashAttention-3's loop order with the producer (since session 29):
      // key block 0's K tile, loaded before the loop, has bytes of its own.
      config.fwdOverlap = true;
      checkMHA(1, 2, 256, dim, causal, config);
      checkMHA(1, 2, 200, dim, causal, config);
      checkMHA(1, 1, 48, dim, causal, config); // the loop runs no iteration
    }
}

TEST_CASE("MHA forward writing O through a shared tile (stage_O)", "[mha][small]") {
  // The tile takes the bytes of the loop's tiles; on sm_90a it leaves by a TMA
  // store (rows past a ragged end are clipped), elsewhere by 16-byte stores.
  // With and without the producer warpgroup (D = 256's long-sequence forward).
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true})
      for (bool producer : {false, true}) {
        mha::AttentionConfig config = mha::tunedConfig(dim, causal);
        config.fwdStageO = true;
        if (producer) {
          config.fwdWgmma = config.fwdProducer = true;
          config.fwdOverlap = false; // (with the overlapped loop: the test above)
          if (dim == 128)
            config.fwdBlockN = 64; // as measured with a producer (session 12)
          if (dim != 256)
            config.fwdStages = 2;
        }
        checkMHA(1, 2, 256, dim, causal, config);
        checkMHA(1, 2, 200, dim, causal, config);
      }
}

TEST_CASE("MHA forward in FlashAttention-3's order (overlap)", "[mha][small]") {
  // Key block 0's scores before the loop, the last block's P V after it; one
  // key block (S = 48: the loop runs no iteration), ragged ends, causal
  // blocks whose loops differ in length, every head dim, and a plain loop.
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true}) {
      mha::AttentionConfig config = mha::tunedConfig(dim, causal);
      config.fwdOverlap = true;
      checkMHA(1, 2, 256, dim, causal, config);
      checkMHA(1, 2, 200, dim, causal, config);
      checkMHA(1, 1, 48, dim, causal, config);
    }
  mha::AttentionConfig plain;
  plain.fwdThreads = 128, plain.fwdOverlap = true;
  checkMHA(2, 2, 192, 64, true, plain);
  // D=64's configuration from S = 1024 to 4096 (128-key blocks).
  mha::AttentionConfig wide = mha::tunedConfig(64, false, 2048);
  wide.fwdOverlap = true;
  checkMHA(1, 2, 256, 64, false, wide);
  checkMHA(1, 2, 200, 64, false, wide);
  // 48-key blocks (m64n48 wgmma): block edges off the query blocks' grid;
  // and 96 on one warpgroup (D = 128's short forward until session 27).
  mha::AttentionConfig oneGroup = mha::tunedConfig(128, true);
  oneGroup.fwdBlockM = 64, oneGroup.fwdBlockN = 96, oneGroup.fwdThreads = 128;
  oneGroup.fwdOverlap = true;
  mha::AttentionConfig narrow = oneGroup;
  narrow.fwdBlockN = 48;
  for (const mha::AttentionConfig &config : {narrow, oneGroup})
    for (bool causal : {false, true}) {
      checkMHA(1, 2, 256, 128, causal, config);
      checkMHA(1, 2, 200, 128, causal, config);
    }
}

TEST_CASE("MHA forward with its warpgroups issuing the gemms in turn (pingpong)", "[mha][small]") {
  // On sm_90a with two warpgroups (128-row blocks): the plain loop and the
  // overlapped one (whose loop runs no iteration at S = 48: the chain of
  // turns starts and ends with none taken), each with and without a producer
  // warpgroup;
  // ragged ends and causal blocks whose loops differ in length. Elsewhere
  // (one warpgroup, mma.sync, the CPU) the gemms issue where they stand.
  for (int dim : {128, 256})
    for (bool causal : {false, true})
      for (int variant : {0, 1, 2, 3}) { // plain, producer, overlapped, both
        if (dim == 256 && variant == 2)
          continue; // (the overlapped loop is D = 256's tuned one: below)
        mha::AttentionConfig config = mha::tunedConfig(dim, causal, 4096);
        config.fwdBlockM = 128, config.fwdBlockN = 64, config.fwdThreads = 256;
        config.fwdWgmma = config.fwdPingpong = true;
        config.fwdProducer = variant == 1 || variant == 3;
        config.fwdOverlap = variant >= 2;
        // (D = 256: no room for a third copy of K and V with the producer.)
        config.fwdStages = config.fwdProducer && dim != 256 ? 2 : 1;
        config.fwdStageO = !config.fwdProducer;
        checkMHA(1, 2, 256, dim, causal, config);
        checkMHA(1, 2, 200, dim, causal, config);
        if (config.fwdOverlap)
          checkMHA(1, 1, 48, dim, causal, config);
      }
  mha::AttentionConfig wide = mha::tunedConfig(256, false, 4096); // overlapped, 128x64
  wide.fwdPingpong = true;
  checkMHA(1, 2, 200, 256, true, wide);
}

TEST_CASE("MHA forward on three consumer warpgroups (192-row blocks, D = 64)", "[mha][small]") {
  // FlashAttention-3's D = 64 blocks: 192 query rows on three warpgroups,
  // 128 keys an iteration, the plain and the overlapped loop, the latter with
  // a producer warpgroup (512 threads) and with the three in pingpong, O
  // through a shared tile or not (tunedConfig's: variants 3 and 4). The
  // lengths leave a ragged query block (200 = 192 + 8, 400 = 2 * 192 + 16),
  // causal blocks whose loops differ, and one whose loop runs no iteration.
  for (bool causal : {false, true})
    for (int variant : {0, 1, 2, 3, 4}) { // plain, overlapped, + producer, + pingpong, + O tile
      mha::AttentionConfig config = mha::tunedConfig(64, causal, 4096);
      config.fwdBlockM = 192, config.fwdBlockN = 128, config.fwdThreads = 384;
      config.fwdStages = 1, config.fwdWgmma = true;
      config.fwdOverlap = variant >= 1;
      config.fwdProducer = variant >= 2;
      config.fwdPingpong = variant >= 3;
      config.fwdStageO = variant <= 1 || variant == 4;
      checkMHA(1, 2, 256, 64, causal, config);
      checkMHA(1, 2, 400, 64, causal, config);
      checkMHA(1, 1, 200, 64, causal, config);
      if (config.fwdOverlap)
        checkMHA(1, 1, 100, 64, causal, config);
    }
}

TEST_CASE("MHA backward with P and dS staged in shared memory (flashattn_bwd_staged)",
          "[mha][small]") {
  for (auto [blockM, blockN, threads] : {std::tuple{64, 32, 128}, std::tuple{128, 64, 256}}) {
    mha::AttentionConfig config;
    config.bwdBlockM = blockM, config.bwdBlockN = blockN, config.bwdThreads = threads;
    config.bwdStages = 1, config.bwdStaged = true;
    for (bool causal : {false, true}) {
      checkMHA(1, 2, 256, 64, causal, config);
      checkMHA(1, 2, 200, 128, causal, config); // ragged, and the larger head dim
    }
  }
}

TEST_CASE("MHA backward staged with its gemms on wgmma (bwdWgmma)", "[mha][small]") {
  // On sm_90a every gemm of the staged backward takes wgmma: at D = 128 and
  // 256 its dQ accumulator (64 query rows) is split by columns between the
  // two warpgroups (FragmentLayout.h); D = 64's 128x128 blocks (tunedConfig's
  // from S = 1024) split its 128 rows. Elsewhere (sm_80, the CPU) the same
  // program on mma.sync or loops. Causal and not, ragged, deterministic.
  struct Case {
    int dim, blockM, blockN, threads, seq;
  };
  for (Case c : {Case{64, 64, 64, 128, 200}, Case{64, 128, 128, 256, 200},
                 Case{128, 128, 64, 256, 200}, Case{256, 64, 64, 256, 100}}) {
    mha::AttentionConfig config;
    config.bwdBlockM = c.blockM, config.bwdBlockN = c.blockN, config.bwdThreads = c.threads;
    config.bwdStages = 1, config.bwdStaged = true, config.bwdWgmma = true;
    for (bool causal : {false, true}) {
      checkMHA(1, 2, 128, c.dim, causal, config);
      checkMHA(1, 2, c.seq, c.dim, causal, config); // ragged
    }
    config.deterministic = true;
    checkMHA(1, 2, c.seq, c.dim, true, config);
  }
}

TEST_CASE("MHA backward with a producer warpgroup loading its query blocks (bwdProducer)",
          "[mha][small]") {
  // On sm_90a the staged backward on wgmma gets one more warpgroup, which
  // loads Q and dO (swizzled boxes) and lse and Delta (one unswizzled box
  // each) by TMA on the consumers' `empty` mbarriers; causal, one masked P/dS
  // loop. A length whose lse rows are not a multiple of 16 bytes (201) cannot
  // go by TMA, and the kernel's own threads load as without the request.
  // Elsewhere (sm_80, the CPU) the request changes nothing.
  struct Case {
    int dim, blockM, blockN, stages;
  };
  for (Case c : {Case{64, 128, 128, 1}, Case{64, 128, 128, 2}, Case{128, 128, 64, 1},
                 Case{128, 128, 64, 2}, Case{256, 64, 64, 1}}) {
    mha::AttentionConfig config;
    config.bwdBlockM = c.blockM, config.bwdBlockN = c.blockN, config.bwdThreads = 256;
    config.bwdStages = c.stages, config.bwdStaged = config.bwdWgmma = true;
    config.bwdProducer = true;
    for (bool causal : {false, true}) {
      checkMHA(1, 2, 384, c.dim, causal, config, mha::Outputs::poisoned);
      checkMHA(2, 1, 200, c.dim, causal, config); // ragged: boxes past the end read zeros
    }
    checkMHA(1, 2, 201, c.dim, true, config);
    config.deterministic = true;
    checkMHA(1, 2, 200, c.dim, true, config);
    if (c.dim == 256 || c.stages > 1)
      continue; // no room for a dQ tile
    // dQ through a shared tile: the consumers hand it to the producer
    // warpgroup, which reduce-adds it by TMA (tl.producer_reduce); in a
    // deterministic backward the add stands in its turn, which the producer
    // takes (causal: the query blocks from the last down).
    config.bwdDqTile = true;
    checkMHA(1, 2, 200, c.dim, true, config);
    config.deterministic = false;
    for (bool causal : {false, true}) {
      checkMHA(1, 2, 384, c.dim, causal, config, mha::Outputs::poisoned);
      checkMHA(2, 1, 200, c.dim, causal, config);
    }
  }
}

namespace {

/// The backward with a way of adding dQ (`variant` sets it) in both
/// programs: the reference's on wgmma at D = 64, the staged one on wgmma at
/// D = 128 and on mma.sync at D = 64 with query blocks half the key blocks.
/// Causal and not, ragged (rows past seq_len add into dQ's padding rows or
/// past its end, where nothing lands), several key blocks a query block,
/// deterministic.
void checkDqVariant(const std::function<void(mha::AttentionConfig &)> &variant) {
  struct Case {
    bool staged, wgmma;
    int dim, blockM, blockN, threads, seq;
  };
  for (Case c : {Case{false, false, 64, 64, 64, 128, 200}, Case{true, true, 128, 128, 64, 256, 200},
                 Case{true, false, 64, 64, 32, 128, 100}}) {
    mha::AttentionConfig config;
    config.bwdBlockM = c.blockM, config.bwdBlockN = c.blockN, config.bwdThreads = c.threads;
    config.bwdStages = 1, config.bwdStaged = c.staged, config.bwdWgmma = c.wgmma;
    variant(config);
    for (bool causal : {false, true}) {
      checkMHA(1, 2, 256, c.dim, causal, config);
      checkMHA(2, 1, c.seq, c.dim, causal, config); // ragged
    }
    config.deterministic = true;
    checkMHA(1, 2, c.seq, c.dim, true, config);
    checkMHA(1, 2, c.seq, c.dim, false, config);
  }
}

} // namespace

TEST_CASE("MHA backward adding dQ a tile at a time (bwdDqTile)", "[mha][small]") {
  // A block's dQ rows go to a shared f32 tile and into dQ as one
  // T.atomic_add on a region: on sm_90a TMA reduce-add boxes, else an
  // atomic add per element.
  checkDqVariant([](mha::AttentionConfig &config) { config.bwdDqTile = true; });
}

TEST_CASE("MHA backward with dQ in accumulator tile order (bwdDqMmaTiles)", "[mha][small]") {
  // dQ laid out by make_mma_tile_layout and each block's rows added as one
  // atomic_add of the dQ gemm's accumulator: on sm_90a 16-byte vector
  // reductions (at D = 128 with dQ's columns split between two warpgroups),
  // elsewhere an atomic add per element; the postprocess reads the same
  // order. Rows past seq_len add zeros into dQ's padding rows. And with the
  // main kernel converting dQ, which reads the rows through the layout.
  checkDqVariant([](mha::AttentionConfig &config) { config.bwdDqMmaTiles = true; });
  mha::AttentionConfig config;
  config.bwdBlockM = 128, config.bwdBlockN = 64, config.bwdThreads = 256, config.bwdStages = 1;
  config.bwdStaged = true, config.bwdWgmma = true, config.bwdDqMmaTiles = true;
  config.bwdConvertDq = true;
  checkMHA(1, 2, 200, 128, false, config);
  config.deterministic = true;
  checkMHA(1, 2, 200, 128, true, config);
}

TEST_CASE("MHA backward converting dQ in its main kernel (bwdConvertDq)", "[mha][small]") {
  // The key block that adds last into a query block's dQ rows (last_to_arrive)
  // writes them out as f16 and zeroes them: no postprocess. The outputs start
  // as NaN, so a row no block converts shows. Both programs, key blocks
  // larger, smaller and as large as query blocks (the causal count of the
  // key blocks that add into a query block depends on both), causal and not,
  // ragged, deterministic, dQ a tile at a time (element adds from the shared
  // tile on sm_90a too: the TMA reduce-add needs a dQ only added into), the
  // tuned configurations.
  struct Case {
    bool staged, wgmma;
    int dim, blockM, blockN, threads, seq;
  };
  for (Case c :
       {Case{false, false, 64, 64, 64, 128, 200}, Case{true, true, 128, 128, 64, 256, 201},
        Case{true, false, 64, 32, 64, 128, 100}, Case{false, false, 64, 64, 32, 128, 77}}) {
    mha::AttentionConfig config;
    config.bwdBlockM = c.blockM, config.bwdBlockN = c.blockN, config.bwdThreads = c.threads;
    config.bwdStages = 1, config.bwdStaged = c.staged, config.bwdWgmma = c.wgmma;
    config.bwdConvertDq = true;
    INFO("staged=" << c.staged << " blocks " << c.blockM << "x" << c.blockN);
    for (bool causal : {false, true}) {
      checkMHA(1, 2, 256, c.dim, causal, config, mha::Outputs::poisoned);
      checkMHA(2, 1, c.seq, c.dim, causal, config, mha::Outputs::poisoned); // ragged
    }
    mha::AttentionConfig deterministic = config;
    deterministic.deterministic = true;
    checkMHA(1, 2, c.seq, c.dim, true, deterministic, mha::Outputs::poisoned);
    mha::AttentionConfig tile = config;
    tile.bwdDqTile = true;
    checkMHA(1, 2, c.seq, c.dim, false, tile, mha::Outputs::poisoned);
  }
  for (int dim : {64, 128, 256}) {
    mha::AttentionConfig config = mha::tunedConfig(dim, true, 150);
    config.bwdConvertDq = true;
    checkMHA(1, 2, 150, dim, true, config, mha::Outputs::poisoned);
  }
}

TEST_CASE("MHA backward in deterministic mode: dQ has the same bits on every run", "[mha][small]") {
  // The key blocks add into each query block's dQ rows in key order
  // (in_turn): on the GPU, where atomics otherwise land in any order, two
  // runs give the same bits (OpsTest's in_turn test reuses one counter
  // across launches: the last turn resets it). Both backward
  // programs, causal (query blocks with fewer key blocks) and not, ragged,
  // key blocks larger and smaller than query blocks, and the tuned
  // configurations (on the GPU: the reference's program on wgmma at D = 64,
  // the staged one on wgmma at 128).
  std::vector<std::pair<int, mha::AttentionConfig>> configs;
  for (auto [staged, blockM, blockN] :
       {std::tuple{false, 64, 32}, std::tuple{true, 64, 32}, std::tuple{true, 32, 64}}) {
    mha::AttentionConfig c;
    c.bwdBlockM = blockM, c.bwdBlockN = blockN, c.bwdThreads = 128, c.bwdStages = 1;
    c.bwdStaged = staged;
    configs.push_back({64, c});
  }
  for (bool causal : {false, true}) {
    std::vector<std::pair<int, mha::AttentionConfig>> all = configs;
    for (int dim : {64, 128})
      all.push_back({dim, mha::tunedConfig(dim, causal)});
    for (auto [dim, config] : all) {
      config.deterministic = true;
      INFO("staged=" << config.bwdStaged << " blocks " << config.bwdBlockM << "x"
                     << config.bwdBlockN << " causal=" << causal);
      mha::AttentionResult first = checkMHA(1, 3, 333, dim, causal, config);
      mha::AttentionResult second = checkMHA(1, 3, 333, dim, causal, config);
      REQUIRE(first.dQ.bytes() == second.dQ.bytes());
      CHECK(std::memcmp(first.dQ.data(), second.dQ.data(), first.dQ.bytes()) == 0);
    }
  }
}

TEST_CASE("MHA in bf16: the reference's and the tuned configurations", "[mha][small]") {
  // Q, K, V and dO in bf16, and O, dQ, dK and dV with them: the same
  // programs (wgmma and mma.sync take bf16 as they take f16). The reference's
  // blocks, and tunedConfig's at a short length and (on a ragged one, as in
  // the tests above) at S = 1024's, where the backward is the staged wgmma
  // one with its producer warpgroup and dQ tile, and there in
  // FlashAttention-3's loop orders too (P while dP runs, in registers: bf16
  // wgmma with A from registers); outputs poisoned. Against the fp32
  // reference on the bf16 inputs.
  checkMHA(1, 2, 200, 64, true, {}, mha::Outputs::poisoned, tl::dsl::bf16);
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true}) {
      INFO("D=" << dim << " causal=" << causal);
      const std::string arch = tl::testing::tunedArch();
      checkMHA(1, 2, 200, dim, causal, mha::tunedConfig(dim, causal, 200, arch),
               mha::Outputs::poisoned, tl::dsl::bf16);
      checkMHA(2, 1, 132, dim, causal, mha::tunedConfig(dim, causal, 1024, arch),
               mha::Outputs::poisoned, tl::dsl::bf16);
      if (dim != 256) { // (P in registers needs warpgroups along M: not D = 256's blocks)
        mha::AttentionConfig orders = mha::tunedConfig(dim, causal, 1024, arch);
        orders.bwdPWhileDp = orders.bwdPRegisters = true;
        checkMHA(1, 2, 132, dim, causal, orders, mha::Outputs::poisoned, tl::dsl::bf16);
      }
    }
}

TEST_CASE("MHA inputs of mixed or other element types: an error naming the tensor",
          "[mha][small]") {
  std::vector<std::int64_t> shape = {1, 8, 1, 64};
  HostTensor Q = tl::testing::randomTensor(shape, tl::dsl::bf16, 1);
  HostTensor K = tl::testing::randomTensor(shape, tl::dsl::f16, 2);
  HostTensor V = tl::testing::randomTensor(shape, tl::dsl::bf16, 3);
  HostTensor dO = tl::testing::randomTensor(shape, tl::dsl::bf16, 4);
  CHECK_THROWS_WITH(mha::attentionForwardBackward(Q, K, V, dO, false, tl::testing::backend()),
                    Catch::Contains("attention: K is f16 but Q is bf16"));
  HostTensor F = tl::testing::randomTensor(shape, tl::dsl::f32, 5);
  CHECK_THROWS_WITH(mha::attentionForwardBackward(Q, F, F, F, false, tl::testing::backend()),
                    Catch::Contains("attention: K must be f16 or bf16, got f32"));
}

TEST_CASE("MHA with large logits: dQ and dK as accurate as FlashAttention-2", "[mha][small]") {
  // Q and K scaled by 8: the softmax is nearly one-hot and dS = P * (dP -
  // Delta) cancels, so Delta's rounding shows. Measured on the H200 (issue
  // 14): SDPA's FlashAttention-2 backend has dQ and dK within 1.0e-3
  // (relative Frobenius against fp64) on such inputs; with Delta's products
  // rounded to f16 (the reference's preprocess) ours were 1.8e-3 to 2.0e-3.
  for (auto [dim, causal, tuned] :
       {std::tuple{64, false, true}, std::tuple{128, true, true}, std::tuple{64, true, false}}) {
    INFO("dim=" << dim << " causal=" << causal << (tuned ? " tuned" : " reference"));
    const int batch = 1, heads = 2, seq = 384;
    std::vector<std::int64_t> shape = {batch, seq, heads, dim};
    HostTensor Q = tl::testing::randomTensor(shape, tl::dsl::f16, 200, 8.0f);
    HostTensor K = tl::testing::randomTensor(shape, tl::dsl::f16, 201, 8.0f);
    HostTensor V = tl::testing::randomTensor(shape, tl::dsl::f16, 202);
    HostTensor dO = tl::testing::randomTensor(shape, tl::dsl::f16, 203);
    mha::AttentionConfig config =
        tuned ? mha::tunedConfig(dim, causal, seq) : mha::AttentionConfig{};
    mha::AttentionResult r =
        mha::attentionForwardBackward(Q, K, V, dO, causal, tl::testing::backend(), config);
    tl::testing::AttentionGrads ref = tl::testing::attentionReference(
        {batch, heads, seq, dim}, causal, Q.toFloat(), K.toFloat(), V.toFloat(), dO.toFloat());
    double dQ = tl::testing::relativeFrobenius(r.dQ.toFloat(), ref.dQ);
    double dK = tl::testing::relativeFrobenius(r.dK.toFloat(), ref.dK);
    std::printf("large logits D=%d causal=%d %s: dQ %.2e dK %.2e (relative Frobenius)\n", dim,
                causal ? 1 : 0, tuned ? "tuned" : "reference", dQ, dK);
    CHECK(dQ <= 1.0e-3);
    CHECK(dK <= 1.0e-3);
  }
}
