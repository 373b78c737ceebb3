// Registering programs for the `tlc` command (Halide-style generators). A DSL
// file given to tlc registers each program with its typed parameters and
// their defaults:
//
//   TLC_GENERATOR(flash_fwd, ({{"batch", 8}, {"seq_len", 256}, {"causal", 0}}))
//   (const tl::dsl::GeneratorArgs &a) {
//     return flashattn_fwd(a["batch"], ..., a["causal"] != 0, ...);
//   }
//
// The body follows the macro (it is not one of its arguments), so errors in
// it point at its own lines.
//
// Light header: no MLIR.
#pragma once

#include "tl/dsl/Program.h"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tl::dsl {

/// Integer parameters by name (bools are 0/1).
class GeneratorArgs {
public:
  explicit GeneratorArgs(std::map<std::string, long long> values) : values_(std::move(values)) {}
  int operator[](const std::string &name) const;

private:
  std::map<std::string, long long> values_;
};

struct Generator {
  std::string name;
  std::vector<std::pair<std::string, long long>> params; // with defaults, in order
  std::function<Program(const GeneratorArgs &)> build;
};

void registerGenerator(Generator generator);
const std::vector<Generator> &registeredGenerators();

} // namespace tl::dsl

#define TLC_GENERATOR_CONCAT2(a, b) a##b
#define TLC_GENERATOR_CONCAT(a, b) TLC_GENERATOR_CONCAT2(a, b)
#define TLC_GENERATOR(NAME, PARAMS)                                                                \
  static ::tl::dsl::Program TLC_GENERATOR_CONCAT(tlc_generator_fn_,                                \
                                                 NAME)(const ::tl::dsl::GeneratorArgs &);          \
  static const bool TLC_GENERATOR_CONCAT(tlc_generator_, NAME) = [] {                              \
    ::tl::dsl::registerGenerator({#NAME, std::vector<std::pair<std::string, long long>> PARAMS,    \
                                  &TLC_GENERATOR_CONCAT(tlc_generator_fn_, NAME)});                \
    return true;                                                                                   \
  }();                                                                                             \
  static ::tl::dsl::Program TLC_GENERATOR_CONCAT(tlc_generator_fn_, NAME)
