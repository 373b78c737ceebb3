// A fresh directory under the system's temporary one, removed with its
// contents when the test is done (caches, generated files).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace tl::testing {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string &prefix = "tl-test") {
    path = std::filesystem::temp_directory_path() /
           (prefix + "-" + std::to_string(::getpid()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path, error);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
};

} // namespace tl::testing
