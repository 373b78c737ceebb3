// Sample DSL file for tlc: the reference's forward and backward as generators.
#include "mha/mha.h"
#include "tl/dsl.h"

namespace mha = tl::kernels::mha;

TLC_GENERATOR(flash_fwd,
              ({{"batch", 8}, {"heads", 32}, {"seq_len", 256}, {"dim", 64}, {"causal", 0},
                {"block_M", 64}, {"block_N", 64}, {"threads", 128}, {"num_stages", 1}}))
(const tl::dsl::GeneratorArgs &a) {
  return mha::flashattn_fwd(a["batch"], a["heads"], a["seq_len"], a["dim"], a["causal"] != 0,
                            a["block_M"], a["block_N"], a["threads"], a["num_stages"]);
}

TLC_GENERATOR(flash_bwd,
              ({{"batch", 8}, {"heads", 32}, {"seq_len", 256}, {"dim", 64}, {"causal", 0},
                {"block_M", 64}, {"block_N", 32}, {"threads", 128}, {"num_stages", 1}}))
(const tl::dsl::GeneratorArgs &a) {
  return mha::flashattn_bwd(a["batch"], a["heads"], a["seq_len"], a["dim"], a["causal"] != 0,
                            a["block_M"], a["block_N"], a["threads"], a["num_stages"]);
}

// The tuned backward's program (P and dS staged in shared memory), at the
// H200's D=64 configuration.
TLC_GENERATOR(flash_bwd_staged,
              ({{"batch", 4}, {"heads", 32}, {"seq_len", 4096}, {"dim", 64}, {"causal", 0},
                {"block_M", 128}, {"block_N", 128}, {"threads", 256}, {"num_stages", 1}}))
(const tl::dsl::GeneratorArgs &a) {
  return mha::flashattn_bwd_staged(a["batch"], a["heads"], a["seq_len"], a["dim"],
                                   a["causal"] != 0, a["block_M"], a["block_N"], a["threads"],
                                   a["num_stages"]);
}

// The backward main kernel sm_90a's tunedConfig ships for a shape, with the
// dQ accumulator in accumulator tile order or the reference's, and dQ added
// a tile at a time (dq_tile: with the producer warpgroup, handed to it) or not,
// deterministic (dQ summed in turns) or not, P computed while the dP gemm
// runs or after (p_while_dp) and kept in registers for the dV gemm or not
// (p_registers), with a producer warpgroup or not (producer; -1: as tunedConfig
// has them).
TLC_GENERATOR(flash_bwd_tuned, ({{"batch", 4},
                                 {"heads", 16},
                                 {"seq_len", 4096},
                                 {"dim", 128},
                                 {"causal", 0},
                                 {"mma_tile_dq", 1},
                                 {"dq_tile", 0},
                                 {"deterministic", 0},
                                 {"p_while_dp", -1},
                                 {"p_registers", -1},
                                 {"producer", -1}}))
(const tl::dsl::GeneratorArgs &a) {
  mha::AttentionConfig config = mha::tunedConfig(a["dim"], a["causal"] != 0, a["seq_len"]);
  if (a["producer"] >= 0) // -1: tunedConfig's
    config.bwdProducer = a["producer"] != 0;
  config.bwdDqMmaTiles = a["mma_tile_dq"] != 0;
  config.bwdDqTile = a["dq_tile"] != 0;
  config.deterministic = a["deterministic"] != 0;
  if (a["p_while_dp"] >= 0) // -1: tunedConfig's
    config.bwdPWhileDp = a["p_while_dp"] != 0;
  if (a["p_registers"] >= 0)
    config.bwdPRegisters = a["p_registers"] != 0;
  return mha::backwardKernel(a["batch"], a["heads"], a["seq_len"], a["dim"], a["causal"] != 0,
                             config);
}
