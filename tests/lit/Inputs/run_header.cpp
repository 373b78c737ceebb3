// A small program built on a header from `tlc --emit=header`: runs the
// kernel on the GPU, or says there is none.
#include "generated_fwd.h"

#include <cstdio>

int main() {
  std::vector<std::int64_t> shape = {2, 128, 4, 64};
  tl::runtime::HostTensor q(shape, tl::dsl::f16), k(shape, tl::dsl::f16), v(shape, tl::dsl::f16);
  try {
    std::vector<tl::runtime::HostTensor> outputs = tlc_generated::flash_fwd(q, k, v);
    std::printf("ran: %zu outputs\n", outputs.size());
  } catch (const tl::runtime::CudaError &error) {
    std::printf("no GPU: %s\n", error.what());
  }
}
