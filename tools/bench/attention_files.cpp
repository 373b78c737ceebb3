// tl-attention-files: runs the attention forward and backward on tensors
// read from files, and writes the results beside them, so that a peer (a
// Python script with PyTorch, say) can compare on the very same inputs
// (tools/bench/accuracy_peer.py does).
//
//   tl-attention-files DIR B,H,S,D CAUSAL [tuned|reference]
//
// Reads DIR/{Q,K,V,dO}.f16 (raw little-endian f16, [B, S, H, D]); writes
// DIR/{O,dQ,dK,dV}.f16 (same layout) and DIR/lse.f32 ([B, H, S], log2
// domain). Runs on the GPU when there is one, else on the CPU backend.
// Exit code 1: an error (a file, a shape, a compile error); 2: usage.
#include "mha/attention.h"
#include "tl/dsl/Types.h"
#include "tl/runtime/CudaDriver.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

using tl::runtime::HostTensor;
namespace mha = tl::kernels::mha;

HostTensor readTensor(const std::string &path, std::vector<std::int64_t> shape) {
  HostTensor tensor(std::move(shape), tl::dsl::f16);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  in.read(static_cast<char *>(tensor.data()), static_cast<std::streamsize>(tensor.bytes()));
  if (in.gcount() != static_cast<std::streamsize>(tensor.bytes()) || in.peek() != EOF)
    throw std::runtime_error(path + " does not hold " + std::to_string(tensor.bytes()) +
                             " bytes (" + tl::runtime::formatShape(tensor.shape()) + " f16)");
  return tensor;
}

void writeTensor(const std::string &path, const HostTensor &tensor) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char *>(tensor.data()), static_cast<std::streamsize>(tensor.bytes()));
  out.close();
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

int usage() {
  std::fprintf(stderr, "usage: tl-attention-files DIR B,H,S,D CAUSAL(0|1) [tuned|reference]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5)
    return usage();
  std::string dir = argv[1], config = argc == 5 ? argv[4] : "tuned";
  int B, H, S, D;
  if (std::sscanf(argv[2], "%d,%d,%d,%d", &B, &H, &S, &D) != 4 ||
      (std::strcmp(argv[3], "0") && std::strcmp(argv[3], "1")) ||
      (config != "tuned" && config != "reference"))
    return usage();
  bool causal = argv[3][0] == '1';
  try {
    bool gpu = tl::runtime::CudaDriver::get() != nullptr;
    std::vector<std::int64_t> shape = {B, S, H, D};
    HostTensor Q = readTensor(dir + "/Q.f16", shape), K = readTensor(dir + "/K.f16", shape),
               V = readTensor(dir + "/V.f16", shape), dO = readTensor(dir + "/dO.f16", shape);
    mha::AttentionConfig c;
    if (config == "tuned")
      c = mha::tunedConfig(D, causal, S,
                           gpu ? tl::runtime::CudaDriver::require().arch() : "sm_90a");
    mha::AttentionResult r = mha::attentionForwardBackward(
        Q, K, V, dO, causal, gpu ? mha::Backend::gpu : mha::Backend::cpu, c);
    for (auto [name, tensor] : {std::pair{"O.f16", &r.O},
                                {"dQ.f16", &r.dQ},
                                {"dK.f16", &r.dK},
                                {"dV.f16", &r.dV},
                                {"lse.f32", &r.lse}})
      writeTensor(dir + "/" + name, *tensor);
    std::printf("tl-attention-files: %s, %s configuration, B=%d H=%d S=%d D=%d causal=%d\n",
                gpu ? "GPU" : "CPU", config.c_str(), B, H, S, D, causal ? 1 : 0);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "tl-attention-files: %s\n", error.what());
    return 1;
  }
  return 0;
}
