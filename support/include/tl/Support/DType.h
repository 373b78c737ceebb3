// Element types, as every layer names them: the eDSL (tl::dsl::f16 ...), the
// compiler (parameters of a compiled kernel), the runtime (tensors) and
// what they store (cache entries, generated headers: by name, see
// toString/parseDType).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tl {

enum class DType : std::uint8_t { f16, bf16, f32, f64, i1, i8, i16, i32, i64, index };

/// "f16", "f32", ... as in the IR (and as the enumerators are named).
const char *toString(DType type);
/// The DType toString names `name`, or nullopt.
std::optional<DType> parseDType(std::string_view name);
bool isFloat(DType type);
/// Bytes per element (index counts as 8).
int byteWidth(DType type);

} // namespace tl
