// Element types, buffer scopes and the error every DSL misuse raises.
// Light header: no MLIR.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tl::dsl {

enum class DType : std::uint8_t { f16, bf16, f32, f64, i1, i8, i16, i32, i64, index };

inline constexpr DType f16 = DType::f16, float16 = DType::f16;
inline constexpr DType bf16 = DType::bf16, bfloat16 = DType::bf16;
inline constexpr DType f32 = DType::f32, float32 = DType::f32;
inline constexpr DType f64 = DType::f64, float64 = DType::f64;
inline constexpr DType boolean = DType::i1;
inline constexpr DType i8 = DType::i8, i16 = DType::i16, i32 = DType::i32;
inline constexpr DType i64 = DType::i64, index = DType::index;

/// "f16", "f32", ... as in the IR (and as the enumerators are named).
const char *toString(DType type);
/// The DType toString names `name`, or nullopt.
std::optional<DType> parseDType(std::string_view name);
bool isFloat(DType type);
/// Bytes per element (index counts as 8).
int byteWidth(DType type);

/// Where a buffer lives: global tensors are the program's parameters.
enum class Scope : std::uint8_t { global, shared, fragment, local };
const char *toString(Scope scope);

/// Raised for every misuse of the DSL and every verifier failure. what() reads
/// "file:line:column: error: message", pointing at the kernel author's code.
class Error : public std::runtime_error {
public:
  Error(const std::string &message, std::string file, unsigned line,
        unsigned column);
  const std::string &message() const { return message_; }
  const std::string &file() const { return file_; }
  unsigned line() const { return line_; }
  unsigned column() const { return column_; }

private:
  std::string message_, file_;
  unsigned line_, column_;
};

using SourceLoc = std::source_location;

} // namespace tl::dsl
