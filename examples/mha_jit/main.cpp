// A host application: builds the four flash-attention programs with the tl
// eDSL, JIT-compiles them with tl::jit (on the GPU when there is one, else on
// the CPU backend), runs forward and backward on its own buffers and checks
// O, dQ, dK and dV against a naive reference. On the GPU the tensors live in
// device memory (tl::runtime::DeviceTensor) and every launch is queued on one
// stream, as a framework would. Prints each compile's time and whether a
// cache served it (run it twice: the second run loads from the disk cache).
// Exit status 0 when every result matches.
#include "mha/attention.h"
#include "mha/mha.h"
#include "mha/reference.h"
#include "tl/runtime/GPUKernel.h"
#include "tl/runtime/Jit.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

namespace mha = tl::kernels::mha;
using tl::runtime::DeviceTensor;
using tl::runtime::HostTensor;

namespace {

std::unique_ptr<tl::runtime::Kernel> compile(const tl::dsl::Program &program) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<tl::runtime::Kernel> kernel = tl::jit(program);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto *gpu = dynamic_cast<tl::runtime::GPUKernel *>(kernel.get());
  std::printf("  compiled %-16s %8.1f ms  %s\n", program.name().c_str(), ms,
              !gpu              ? "(CPU backend)"
              : gpu->cacheHit() ? (gpu->loadedCubin() ? "(cache hit, cubin)" : "(cache hit, PTX)")
                                : (gpu->loadedCubin() ? "(compiled, cubin)" : "(compiled, PTX)"));
  return kernel;
}

/// The largest |actual - expected| beyond atol + rtol |expected| (<= 0: all close).
double worstExcess(const char *what, const HostTensor &actual, const std::vector<float> &expected) {
  double worst = -1, maxError = 0;
  for (std::int64_t i = 0; i < actual.numel(); ++i) {
    double error = std::fabs(double(actual.at(i)) - expected[i]);
    maxError = std::max(maxError, error);
    worst = std::max(worst, error - (1e-2 + 1e-2 * std::fabs(double(expected[i]))));
  }
  std::printf("  max |%s - reference| = %.2e\n", what, maxError);
  return worst;
}

} // namespace

int main() {
  const int batch = 1, heads = 2, seq = 256, dim = 64;
  const bool causal = true;
  std::vector<std::int64_t> shape = {batch, seq, heads, dim};
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  HostTensor q(shape, tl::dsl::f16), k(shape, tl::dsl::f16), v(shape, tl::dsl::f16),
      dO(shape, tl::dsl::f16);
  for (HostTensor *t : {&q, &k, &v, &dO})
    for (std::int64_t i = 0; i < t->numel(); ++i)
      t->set(i, normal(rng));

  mha::AttentionConfig c = mha::tunedConfig(dim, causal, seq);
  std::printf("flash attention (batch %d, heads %d, seq %d, dim %d, causal) through tl::jit\n",
              batch, heads, seq, dim);
  // The programs of the tuned configuration (its backward is
  // flashattn_bwd_staged where c.bwdStaged says so).
  auto fwd = compile(mha::forwardKernel(batch, heads, seq, dim, causal, c));
  auto prep = compile(mha::flashattn_bwd_preprocess(batch, heads, seq, dim));
  auto bwd = compile(mha::backwardKernel(batch, heads, seq, dim, causal, c));
  auto post = compile(mha::flashattn_bwd_postprocess(batch, heads, seq, dim));

  HostTensor O, dQ, dK, dV;
  if (dynamic_cast<tl::runtime::GPUKernel *>(fwd.get())) {
    // The application's buffers on the device; out_idx outputs come back as
    // device tensors; one stream orders the four kernels.
    tl::runtime::Stream stream;
    DeviceTensor dq = DeviceTensor::fromHost(q), dk = DeviceTensor::fromHost(k),
                 dv = DeviceTensor::fromHost(v), ddO = DeviceTensor::fromHost(dO);
    std::vector<DeviceTensor> o_lse = fwd->callOnDevice({&dq, &dk, &dv}, stream);
    std::vector<DeviceTensor> delta = prep->callOnDevice({&o_lse[0], &ddO}, stream);
    DeviceTensor dQaccum(mha::dqAccumulatorShape(batch, heads, seq, dim), tl::dsl::f32); // zeros
    std::vector<DeviceTensor> dk_dv =
        bwd->callOnDevice({&dq, &dk, &dv, &ddO, &o_lse[1], &delta[0], &dQaccum}, stream);
    std::vector<DeviceTensor> dq_out = post->callOnDevice({&dQaccum}, stream);
    stream.synchronize();
    O = o_lse[0].toHost(), dQ = dq_out[0].toHost(), dK = dk_dv[0].toHost(), dV = dk_dv[1].toHost();
  } else {
    std::vector<HostTensor> o_lse = (*fwd)({&q, &k, &v}); // out_idx = [3, 4]
    std::vector<HostTensor> delta = (*prep)({&o_lse[0], &dO});
    HostTensor dQaccum(mha::dqAccumulatorShape(batch, heads, seq, dim), tl::dsl::f32);
    std::vector<HostTensor> dk_dv =
        (*bwd)({&q, &k, &v, &dO, &o_lse[1], &delta[0], &dQaccum}); // out_idx = [7, 8]
    O = o_lse[0], dQ = (*post)({&dQaccum})[0], dK = dk_dv[0], dV = dk_dv[1];
  }

  tl::testing::AttentionGrads ref = tl::testing::attentionReference(
      {batch, heads, seq, dim}, causal, q.toFloat(), k.toFloat(), v.toFloat(), dO.toFloat());
  double worst = std::max({worstExcess("O", O, ref.O), worstExcess("dQ", dQ, ref.dQ),
                           worstExcess("dK", dK, ref.dK), worstExcess("dV", dV, ref.dV)});
  std::printf("%s\n", worst <= 0 ? "matches the reference (rtol = atol = 1e-2)"
                                 : "DOES NOT match the reference");
  return worst <= 0 ? 0 : 1;
}
