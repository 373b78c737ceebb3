// A small program built on a header from `tlc --emit=header` (the forward of
// mha_generators.cpp, non-causal): runs the kernel on the GPU through the
// host-tensor launcher and the device-tensor one, checks O against a naive
// attention, or says there is no GPU. Exit status 0 when it matches or there
// is no GPU.
#include "generated_fwd.h"

#include <cmath>
#include <cstdio>
#include <random>

namespace {

/// Max |O - softmax(Q K^T / sqrt(D)) V| over every element ([B, S, H, D]).
double maxError(const tl::runtime::HostTensor &q, const tl::runtime::HostTensor &k,
                const tl::runtime::HostTensor &v, const tl::runtime::HostTensor &o) {
  const auto &s = q.shape();
  const std::int64_t B = s[0], S = s[1], H = s[2], D = s[3];
  auto at = [&](std::int64_t b, std::int64_t i, std::int64_t h, std::int64_t d) {
    return ((b * S + i) * H + h) * D + d;
  };
  double worst = 0;
  std::vector<double> p(S);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < S; ++i) {
        double top = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < D; ++d)
            dot += double(q.at(at(b, i, h, d))) * k.at(at(b, j, h, d));
          p[j] = dot / std::sqrt(double(D));
          top = std::max(top, p[j]);
        }
        for (std::int64_t j = 0; j < S; ++j)
          sum += p[j] = std::exp(p[j] - top);
        for (std::int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (std::int64_t j = 0; j < S; ++j)
            acc += p[j] * v.at(at(b, j, h, d));
          worst = std::max(worst, std::fabs(acc / sum - o.at(at(b, i, h, d))));
        }
      }
  return worst;
}

} // namespace

int main() {
  const tl::GPUBinary &binary = tlc_generated::flash_fwd_binary();
  std::vector<std::int64_t> shape = binary.params[0].shape;
  tl::runtime::HostTensor q(shape, tl::DType::f16), k(shape, tl::DType::f16), v(shape, tl::DType::f16);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (tl::runtime::HostTensor *t : {&q, &k, &v})
    for (std::int64_t i = 0; i < t->numel(); ++i)
      t->set(i, normal(rng));
  try {
    std::vector<tl::runtime::HostTensor> outputs = tlc_generated::flash_fwd(q, k, v);
    double host = maxError(q, k, v, outputs[0]);
    // The device-tensor launcher, on a stream.
    tl::runtime::DeviceTensor dq = tl::runtime::DeviceTensor::fromHost(q),
                              dk = tl::runtime::DeviceTensor::fromHost(k),
                              dv = tl::runtime::DeviceTensor::fromHost(v),
                              dO(shape, tl::DType::f16), dlse(binary.params[4].shape, tl::DType::f32);
    tl::runtime::Stream stream;
    tlc_generated::flash_fwd(dq, dk, dv, dO, dlse, stream);
    stream.synchronize();
    double device = maxError(q, k, v, dO.toHost());
    std::printf("ran: %zu outputs (%s, %s), max |O - reference| = %.2e (host tensors), "
                "%.2e (device tensors)\n",
                outputs.size(), binary.arch.c_str(), binary.cubin.empty() ? "PTX" : "cubin",
                host, device);
    return host < 1e-2 && device < 1e-2 ? 0 : 1;
  } catch (const tl::runtime::CudaError &error) {
    std::printf("no GPU: %s\n", error.what());
  }
  return 0;
}
