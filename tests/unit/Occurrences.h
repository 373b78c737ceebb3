// How often a piece of text occurs in generated code (PTX, IR): the tests
// that count instructions or barriers.
#pragma once

#include <cstddef>
#include <string>

namespace tl::test {

/// Occurrences of `what` in `text`, overlapping ones included.
inline int occurrences(const std::string &text, const std::string &what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

} // namespace tl::test
