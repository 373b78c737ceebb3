// The registry TLC_GENERATOR fills (one per process; plugins add to it).
#include "tl/dsl/Generator.h"

#include <stdexcept>

namespace tl::dsl {
namespace {
std::vector<Generator> &registry() {
  static std::vector<Generator> generators;
  return generators;
}
} // namespace

int GeneratorArgs::operator[](const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    throw std::invalid_argument("generator parameter '" + name + "' is not declared");
  return static_cast<int>(it->second);
}

void registerGenerator(Generator generator) { registry().push_back(std::move(generator)); }
const std::vector<Generator> &registeredGenerators() { return registry(); }

} // namespace tl::dsl
