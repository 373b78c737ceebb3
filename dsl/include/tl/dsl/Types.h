// Element types, buffer scopes and the error every DSL misuse raises.
// Light header: no MLIR.
#pragma once

#include "tl/Support/DType.h"
#include "tl/Support/Error.h"

#include <cstdint>
#include <source_location>
#include <string>

namespace tl::dsl {

using tl::byteWidth;
using tl::DType;
using tl::isFloat;
using tl::parseDType;
using tl::toString;

inline constexpr DType f16 = DType::f16, float16 = DType::f16;
inline constexpr DType bf16 = DType::bf16, bfloat16 = DType::bf16;
inline constexpr DType f32 = DType::f32, float32 = DType::f32;
inline constexpr DType f64 = DType::f64, float64 = DType::f64;
inline constexpr DType boolean = DType::i1;
inline constexpr DType i8 = DType::i8, i16 = DType::i16, i32 = DType::i32;
inline constexpr DType i64 = DType::i64, index = DType::index;

/// Where a buffer lives: global tensors are the program's parameters.
enum class Scope : std::uint8_t { global, shared, fragment, local };
const char *toString(Scope scope);

/// Raised for every misuse of the DSL and every verifier failure. what() reads
/// "file:line:column: error: message", pointing at the kernel author's code.
using Error = tl::Error;

using SourceLoc = std::source_location;

} // namespace tl::dsl
