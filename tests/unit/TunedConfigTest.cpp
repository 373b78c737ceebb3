// mha::tunedConfig only returns configurations that fit their target: for
// every head dim it accepts, causal or not, every sequence-length bucket and
// the architectures it serves, the forward and backward programs compile
// (shared memory within the architecture's limit: a compile error otherwise)
// and, where ptxas is there, assemble within the register file (registers *
// threads <= 64K) with at most a small spill allowance.
#include "mha/attention.h"
#include "mha/mha.h"
#include "tl/Compiler/GPUCompiler.h"
#include "tl/Compiler/Ptxas.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <regex>
#include <set>
#include <tuple>
#include <utility>

namespace mha = tl::kernels::mha;

namespace {

/// What ptxas reports of a kernel.
struct Assembled {
  int registers = 0, spillStores = 0, spillLoads = 0;
};

Assembled assemble(const std::string &ptxas, const tl::GPUBinary &binary) {
  std::string report;
  tl::assembleCubin(ptxas, binary.ptx, binary.arch, &report);
  INFO(report);
  std::smatch registers, spills;
  REQUIRE(std::regex_search(report, registers, std::regex("Used (\\d+) registers")));
  REQUIRE(std::regex_search(report, spills,
                            std::regex("(\\d+) bytes spill stores, (\\d+) bytes spill loads")));
  return {std::stoi(registers[1]), std::stoi(spills[1]), std::stoi(spills[2])};
}

} // namespace

TEST_CASE("tunedConfig: every configuration fits its target", "[tuned][ptx]") {
  std::string ptxas = tl::findPtxas();
  if (ptxas.empty())
    WARN("no ptxas: checking shared memory only, not registers");
  // The seq_len buckets tunedConfig tells apart (0: short), checked at a
  // ragged length near each.
  const int buckets[] = {0, 512, 2048, 16384};
  std::set<std::pair<std::string, std::string>> seen; // configuration, arch
  for (const char *arch : {"sm_90a", "sm_80", "sm_86"})
    for (int dim : {64, 128, 256})
      for (bool causal : {false, true})
        for (int bucket : buckets) {
          mha::AttentionConfig c = mha::tunedConfig(dim, causal, bucket, arch);
          int seq = 1000;
          for (bool forward : {true, false}) {
            char config[128];
            std::snprintf(
                config, sizeof config, "%s D=%d causal=%d %dx%d/%d s%d%s%s%s%s%s%s",
                forward ? "forward" : "backward", dim, causal ? 1 : 0,
                forward ? c.fwdBlockM : c.bwdBlockM, forward ? c.fwdBlockN : c.bwdBlockN,
                forward ? c.fwdThreads : c.bwdThreads, forward ? c.fwdStages : c.bwdStages,
                !forward && c.bwdStaged ? " staged" : "",
                (forward ? c.fwdWgmma : c.bwdWgmma) ? " wgmma" : "",
                (forward ? c.fwdProducer : c.bwdProducer) ? " producer" : "",
                !forward && c.bwdDqTile ? " dq-tile" : "", forward && c.fwdStageO ? " stage-O" : "",
                forward && c.fwdOverlap ? " overlap" : "");
            if (!seen.insert({config, arch}).second)
              continue;
            INFO(config << " for " << arch);
            tl::dsl::Program program = forward ? mha::forwardKernel(1, 2, seq, dim, causal, c)
                                               : mha::backwardKernel(1, 2, seq, dim, causal, c);
            tl::GPUBinary binary;
            REQUIRE_NOTHROW(binary = tl::compileForGPU(program, arch));
            CHECK(binary.sharedBytes <= tl::sharedMemoryLimit(arch));
            // Tensor cores (mma.sync, or wgmma on sm_90a), not the Row fallback.
            CHECK((binary.fragmentLayout == "mma" ||
                   (binary.fragmentLayout == "wgmma" && std::string(arch) == "sm_90a")));
            // What the configuration asks for wgmma gets it (a gemm the layout
            // inference refuses would silently fall back to mma.sync).
            if ((forward ? c.fwdWgmma : c.bwdWgmma) && std::string(arch) == "sm_90a")
              CHECK(binary.fragmentLayout == "wgmma");
            if (ptxas.empty())
              continue;
            Assembled a = assemble(ptxas, binary);
            std::printf("tuned %-40s %-6s %6.1f KiB shared, %3d registers, spills %d/%d\n", config,
                        arch, binary.sharedBytes / 1024.0, a.registers, a.spillStores,
                        a.spillLoads);
            CHECK(a.registers * binary.threads <= 65536);
            // The measured-fastest backward spills a little (PTXTest.cpp's
            // allowances); more than that is a configuration that does not fit.
            CHECK(a.spillStores <= 256);
            CHECK(a.spillLoads <= 256);
          }
        }
}

TEST_CASE("tunedConfig: head dims it does not take, and targets too small", "[tuned]") {
  for (int dim : {32, 96, 192, 512})
    CHECK_THROWS_WITH(mha::tunedConfig(dim, false),
                      Catch::Contains("head dim " + std::to_string(dim) + " is not supported"));
  CHECK_THROWS_WITH(mha::tunedConfig(64, false, 0, "sm_75"),
                    Catch::Contains("sm_75 gives a block 64 KiB of shared memory"));
}

TEST_CASE("tunedConfig: dQ a tile at a time with the producer; deterministicConfig keeps it "
          "there only",
          "[tuned]") {
  // On sm_90a the backward's producer warpgroup reduce-adds the consumers'
  // dQ tile from S = 1024, and below it where the tile is what made the
  // producer faster: D = 128, and D = 64 not causal from S = 512 (there the
  // staged program instead of the reference's; causal, the staged one from
  // S = 1024, with the producer since session 38); not at D = 256 (no room; its
  // producer goes without); not where the kernel keeps its own loads (lse
  // rows TMA cannot load). In turns (deterministic) the
  // producer's tile is faster than element adds, the consumers' slower:
  // deterministicConfig keeps the one, adding the producer wherever the
  // staged wgmma backward lacks it and making the short D = 64 one (the
  // reference's program) the staged one with it, and drops the other.
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true})
      for (int seq : {0, 256, 254, 512, 516, 514, 1024, 4096, 4094, 4093}) {
        INFO("D=" << dim << " causal=" << causal << " S=" << seq);
        mha::AttentionConfig c = mha::tunedConfig(dim, causal, seq);
        CHECK(c.bwdDqTile == (c.bwdProducer && dim != 256 && seq % 4 == 0));
        const bool tileable = seq > 0 && seq % 4 == 0; // 0: a length not known
        const bool stagedShort = dim == 64 && !causal && seq >= 512 && tileable;
        CHECK(c.bwdDqTile ==
              (tileable && (dim == 128 || (dim == 64 && seq >= (causal ? 1024 : 512)))));
        CHECK(c.bwdProducer == (c.bwdWgmma && (seq >= 1024 || dim == 256 || tileable)));
        // Key blocks fastest in the grid where that was faster.
        CHECK(c.bwdKeysFastest == (seq >= 1024 && (!causal || dim == 256)));
        // The dQ gemm first on wgmma from S = 1024, where it was timed and tested.
        CHECK(c.bwdDqFirst == (c.bwdWgmma && seq >= 1024));
        // FlashAttention-3's loop orders (P while dP runs, P in registers)
        // wait for the H200: neither is tunedConfig's yet, in turns neither.
        CHECK_FALSE((c.bwdPWhileDp || c.bwdPRegisters));
        mha::AttentionConfig d = mha::deterministicConfig(c, dim, causal, seq, "sm_90a");
        CHECK(d.deterministic);
        // Wherever the producer can take the tile, it takes it in turns.
        const bool takes = dim != 256 && tileable;
        CHECK(d.bwdDqTile == takes);
        CHECK(d.bwdProducer == (c.bwdProducer || takes));
        CHECK(c.bwdStaged == (dim != 64 || seq >= 1024 || stagedShort));
        const bool restaged = dim == 64 && !c.bwdStaged && takes; // the reference's program
        CHECK(d.bwdStaged == (c.bwdStaged || restaged));
        CHECK(d.bwdWgmma == d.bwdStaged);
        CHECK(d.bwdBlockM == (restaged ? 128 : c.bwdBlockM));
        CHECK(d.bwdBlockN == (restaged ? 128 : c.bwdBlockN));
        CHECK(d.bwdThreads == (restaged ? 256 : c.bwdThreads));
        CHECK_FALSE((d.bwdPWhileDp || d.bwdPRegisters));
        // Heads fastest (turns wait less) but at D = 256 non-causal from S = 4096.
        CHECK(d.bwdKeysFastest == (dim == 256 && !causal && seq >= 4096));
        mha::AttentionConfig consumersAdd = c; // the tile without the producer
        consumersAdd.bwdDqTile = true;
        consumersAdd.bwdProducer = false;
        // In turn the consumers' add is slower: deterministicConfig hands the
        // tile to a producer it adds or drops it.
        mha::AttentionConfig handed =
            mha::deterministicConfig(consumersAdd, dim, causal, seq, "sm_90a");
        CHECK(handed.bwdProducer == takes);
        CHECK(handed.bwdDqTile == handed.bwdProducer);
        // The producer without the tile (an autotuner's pick, say): in turn it
        // takes the tile wherever it can.
        mha::AttentionConfig elementAdds = c;
        elementAdds.bwdDqTile = false;
        CHECK(mha::deterministicConfig(elementAdds, dim, causal, seq, "sm_90a").bwdDqTile ==
              d.bwdDqTile);
        // dQ in accumulator tile order stays so: no tile, no producer added.
        mha::AttentionConfig mmaTiles = c;
        mmaTiles.bwdDqTile = false;
        mmaTiles.bwdDqMmaTiles = true;
        mha::AttentionConfig kept = mha::deterministicConfig(mmaTiles, dim, causal, seq, "sm_90a");
        CHECK((kept.bwdDqMmaTiles && !kept.bwdDqTile && kept.bwdProducer == c.bwdProducer));
        CHECK(kept.bwdStaged == c.bwdStaged);
        // sm_80 (no wgmma): neither, and the blocks stay.
        mha::AttentionConfig ampereTuned = mha::tunedConfig(dim, causal, seq, "sm_80");
        mha::AttentionConfig ampere =
            mha::deterministicConfig(ampereTuned, dim, causal, seq, "sm_80");
        CHECK((ampere.deterministic && !ampere.bwdDqTile && !ampere.bwdProducer));
        CHECK((ampere.bwdBlockM == ampereTuned.bwdBlockM &&
               ampere.bwdBlockN == ampereTuned.bwdBlockN));
        CHECK_FALSE(ampereTuned.bwdKeysFastest);
        CHECK_FALSE((ampereTuned.bwdPWhileDp || ampereTuned.bwdPRegisters));
        // The restaging is sm_90a's and tunedConfig's short D = 64 one's only:
        // elsewhere the reference's program stays, in turns.
        for (const char *arch : {"sm_80", "sm_86"}) {
          mha::AttentionConfig reference = c;
          reference.bwdStaged = false, reference.bwdWgmma = false, reference.bwdProducer = false;
          reference.bwdBlockM = 64, reference.bwdBlockN = 64, reference.bwdThreads = 128;
          mha::AttentionConfig kept = mha::deterministicConfig(reference, dim, causal, seq, arch);
          CHECK_FALSE(kept.bwdStaged);
          CHECK((kept.bwdBlockM == 64 && kept.bwdBlockN == 64 && !kept.bwdProducer));
        }
        mha::AttentionConfig untuned = mha::deterministicConfig({}, dim, causal, seq, "sm_90a");
        CHECK((!untuned.bwdStaged && untuned.bwdBlockM == 0 && !untuned.bwdProducer));
        CHECK_FALSE(mha::tunedConfig(dim, causal, seq, "sm_80").bwdDqTile);
      }
}

TEST_CASE("tunedConfig: the forward's blocks and loop by length on sm_90a", "[tuned]") {
  // 64-row blocks on one warpgroup at D = 64 and, below S = 1024, D = 128
  // causal (two stages ahead); 128-row blocks on two warpgroups elsewhere.
  // FlashAttention-3's overlapped loop at D = 256 from S = 512 and D = 64 not
  // causal from S = 1024 (on 128-key blocks); the plain loop elsewhere. At
  // D = 64 from S = 4096 (causal: 16384) FlashAttention-3's whole schedule:
  // 192 rows on three consumer warpgroups, a producer, pingpong (causal, O
  // by the threads' own stores).
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true})
      for (int seq : {0, 256, 511, 512, 1023, 1024, 4095, 4096, 8192, 16383, 16384, 32768}) {
        INFO("D=" << dim << " causal=" << causal << " S=" << seq);
        mha::AttentionConfig c = mha::tunedConfig(dim, causal, seq);
        const bool shortCausal128 = dim == 128 && causal && seq < 1024;
        const bool fa3 = dim == 64 && seq >= (causal ? 16384 : 4096);
        CHECK(c.fwdWgmma);
        CHECK(c.fwdStageO == !(fa3 && causal));
        CHECK(c.fwdProducer == fa3);
        CHECK(c.fwdPingpong == fa3);
        CHECK(c.fwdBlockM == (fa3 ? 192 : dim == 64 || shortCausal128 ? 64 : 128));
        CHECK(c.fwdThreads == (fa3 ? 384 : dim == 64 || shortCausal128 ? 128 : 256));
        CHECK(c.fwdStages == (shortCausal128 ? 2 : 1));
        CHECK(c.fwdOverlap ==
              ((dim == 256 && seq >= 512) || (dim == 64 && ((!causal && seq >= 1024) || fa3))));
        CHECK(c.fwdBlockN == (dim == 64 && c.fwdOverlap ? 128 : 64));
        // sm_80 keeps the mma.sync forward without a producer or turns.
        mha::AttentionConfig ampere = mha::tunedConfig(dim, causal, seq, "sm_80");
        CHECK_FALSE((ampere.fwdWgmma || ampere.fwdProducer || ampere.fwdPingpong));
      }
}

TEST_CASE("tunedConfig: the backward is the same configuration from S = 1024 up on sm_90a",
          "[tuned]") {
  // What the GPU tests run at tunedConfig's S = 1024 (FlashAttention-3's
  // orders) and 16384 (the long configurations, dQ first) is what the
  // benchmark times at 4096 (results/2026-12-05-session36.md leans on it).
  auto backward = [](const mha::AttentionConfig &c) {
    return std::tuple(c.bwdBlockM, c.bwdBlockN, c.bwdThreads, c.bwdStages, c.bwdStaged, c.bwdWgmma,
                      c.bwdProducer, c.bwdDqTile, c.bwdConvertDq, c.bwdDqMmaTiles, c.bwdKeysFastest,
                      c.bwdPWhileDp, c.bwdPRegisters, c.bwdDqFirst);
  };
  for (int dim : {64, 128, 256})
    for (bool causal : {false, true}) {
      auto at1024 = backward(mha::tunedConfig(dim, causal, 1024, "sm_90a"));
      for (int seq : {2048, 4096, 8192, 16384}) {
        INFO("D=" << dim << " causal=" << causal << " S=" << seq);
        CHECK(backward(mha::tunedConfig(dim, causal, seq, "sm_90a")) == at1024);
      }
    }
}
