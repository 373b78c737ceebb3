// The reference test, ported: forward -> preprocess -> backward ->
// postprocess on the CPU backend, checking O, lse, dQ, dK and dV (the
// reference skips dQ; we don't) against fp64 attention at rtol = atol = 1e-2.
#include "mha/reference.h"
#include "Numerics.h"

#include "mha/mha.h"
#include "tl/runtime/CPUKernel.h"

using tl::runtime::CPUKernel;
using tl::runtime::HostTensor;
namespace mha = tl::kernels::mha;

namespace {

void checkMHA(int batch, int heads, int seq, int dim, bool causal) {
  INFO("batch=" << batch << " heads=" << heads << " seq=" << seq << " dim=" << dim
                << " causal=" << causal);
  std::vector<std::int64_t> shape = {batch, seq, heads, dim};
  HostTensor Q = tl::testing::randomTensor(shape, tl::dsl::f16, 100);
  HostTensor K = tl::testing::randomTensor(shape, tl::dsl::f16, 101);
  HostTensor V = tl::testing::randomTensor(shape, tl::dsl::f16, 102);
  HostTensor dO = tl::testing::randomTensor(shape, tl::dsl::f16, 103);

  mha::BlockSizes fb = mha::forwardBlocks(dim), bb = mha::backwardBlocks(dim);
  CPUKernel fwd(mha::flashattn_fwd(batch, heads, seq, dim, causal, fb.block_M, fb.block_N));
  CPUKernel prep(mha::flashattn_bwd_preprocess(batch, heads, seq, dim));
  CPUKernel bwd(mha::flashattn_bwd(batch, heads, seq, dim, causal, bb.block_M, bb.block_N));
  CPUKernel post(mha::flashattn_bwd_postprocess(batch, heads, seq, dim));

  std::vector<HostTensor> o_lse = fwd({&Q, &K, &V});
  HostTensor &O = o_lse[0], &lse = o_lse[1];
  std::vector<HostTensor> delta = prep({&O, &dO});
  HostTensor dQ(shape, tl::dsl::f32); // zeros, as torch.zeros_like
  std::vector<HostTensor> dk_dv = bwd({&Q, &K, &V, &dO, &lse, &delta[0], &dQ});
  std::vector<HostTensor> dq = post({&dQ});

  tl::testing::AttentionShape sh{batch, heads, seq, dim};
  tl::testing::AttentionGrads ref = tl::testing::attentionReference(
      sh, causal, Q.toFloat(), K.toFloat(), V.toFloat(), dO.toFloat());
  tl::testing::checkClose("O", O.toFloat(), ref.O);
  tl::testing::checkClose("lse", lse.toFloat(), ref.lse);
  tl::testing::checkClose("dQ", dq[0].toFloat(), ref.dQ);
  tl::testing::checkClose("dK", dk_dv[0].toFloat(), ref.dK);
  tl::testing::checkClose("dV", dk_dv[1].toFloat(), ref.dV);
}

} // namespace

TEST_CASE("MHA forward and backward on the CPU, non-causal", "[cpu][mha]") {
  checkMHA(2, 4, 128, 64, false);
}

TEST_CASE("MHA forward and backward on the CPU, causal", "[cpu][mha]") {
  checkMHA(2, 4, 128, 64, true);
}

TEST_CASE("MHA on the CPU with seq_len not a multiple of the blocks", "[cpu][mha]") {
  // 200 = 3 * 64 + 8 = 128 + 72: ragged last tiles in every kernel.
  checkMHA(1, 2, 200, 64, false);
  checkMHA(1, 2, 200, 64, true);
}
