// One parameter of a kernel's signature: a global tensor, some of them
// outputs in the sense of TileLang's out_idx.
#pragma once

#include "tl/Support/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tl {

struct Param {
  std::string name;
  std::vector<std::int64_t> shape;
  DType dtype;
  bool output; // allocated and returned by the runtime (out_idx)
};

} // namespace tl
