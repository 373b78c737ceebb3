// A host application: builds the flash-attention forward with the tl eDSL,
// JIT-compiles it with tl::jit (on the GPU when there is one, else on the CPU
// backend), runs it on its own buffers and checks it against a naive
// reference. Exit status 0 when the result matches.
#include "mha/mha.h"
#include "mha/reference.h"
#include "tl/runtime/Jit.h"

#include <cmath>
#include <cstdio>
#include <random>

int main() {
  const int batch = 1, heads = 2, seq = 128, dim = 64;
  const bool causal = true;
  std::vector<std::int64_t> shape = {batch, seq, heads, dim};
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  tl::runtime::HostTensor q(shape, tl::dsl::f16), k(shape, tl::dsl::f16), v(shape, tl::dsl::f16);
  for (tl::runtime::HostTensor *t : {&q, &k, &v})
    for (std::int64_t i = 0; i < t->numel(); ++i)
      t->set(i, normal(rng));

  auto blocks = tl::kernels::mha::forwardBlocks(dim);
  auto kernel = tl::jit(tl::kernels::mha::flashattn_fwd(batch, heads, seq, dim, causal,
                                                        blocks.block_M, blocks.block_N));
  std::vector<tl::runtime::HostTensor> o_lse = (*kernel)({&q, &k, &v}); // out_idx = [3, 4]

  std::vector<float> zeros(static_cast<std::size_t>(q.numel()), 0.0f);
  tl::testing::AttentionGrads ref = tl::testing::attentionReference(
      {batch, heads, seq, dim}, causal, q.toFloat(), k.toFloat(), v.toFloat(), zeros);
  double worst = 0;
  for (std::int64_t i = 0; i < o_lse[0].numel(); ++i)
    worst = std::max(worst, std::fabs(double(o_lse[0].at(i)) - ref.O[i]));
  std::printf("flash attention forward through tl::jit: max |O - reference| = %.2e\n", worst);
  return worst < 1e-2 ? 0 : 1;
}
