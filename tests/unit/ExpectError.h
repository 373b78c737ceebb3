// Asserts that building something raises a tl::dsl::Error at a given line of
// the test file, with a given fragment in its message.
#pragma once

#include "tl/dsl.h"

#include <catch2/catch.hpp>

#include <string>

template <typename Build>
void expectError(Build &&build, const int &line, const std::string &fragment,
                 const std::string &file = "") {
  try {
    build();
  } catch (const tl::dsl::Error &error) {
    INFO("error: " << error.what());
    CHECK(error.line() == static_cast<unsigned>(line));
    if (!file.empty())
      CHECK(error.file().find(file) != std::string::npos);
    CHECK(error.message().find(fragment) != std::string::npos);
    CHECK(std::string(error.what()).find(":" + std::to_string(line) + ":") != std::string::npos);
    return;
  }
  FAIL("no error was raised; expected one containing: " << fragment);
}
