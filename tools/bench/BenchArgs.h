// What the GPU benchmarks share on their command line and in their JSON
// lines: comma-separated numbers (shapes, configurations) and escaped text.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace tl::bench {

/// "128,256,64" -> {128, 256, 64}; a piece that is not a number ends the
/// program with a usage error (exit 2) naming `tool` and the text.
inline std::vector<int> numbers(const std::string &text, const char *tool) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    try {
      out.push_back(std::stoi(item, &used));
    } catch (const std::exception &) {
      used = 0;
    }
    if (used == 0 || used != item.size()) {
      std::fprintf(stderr, "%s: '%s' is not a list of numbers\n", tool, text.c_str());
      std::exit(2);
    }
  }
  return out;
}

/// `text` inside a JSON string (compile errors have quotes and newlines).
inline std::string jsonEscaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) >= 0x20)
      out += c;
  }
  return out;
}

} // namespace tl::bench
