// Element types: names and widths.
#include "tl/Support/DType.h"

namespace tl {

const char *toString(DType type) {
  switch (type) {
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::f32:
    return "f32";
  case DType::f64:
    return "f64";
  case DType::i1:
    return "i1";
  case DType::i8:
    return "i8";
  case DType::i16:
    return "i16";
  case DType::i32:
    return "i32";
  case DType::i64:
    return "i64";
  case DType::index:
    return "index";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType type : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i1, DType::i8,
                     DType::i16, DType::i32, DType::i64, DType::index})
    if (name == toString(type))
      return type;
  return std::nullopt;
}

bool isFloat(DType type) {
  return type == DType::f16 || type == DType::bf16 || type == DType::f32 || type == DType::f64;
}

int byteWidth(DType type) {
  switch (type) {
  case DType::f16:
  case DType::bf16:
  case DType::i16:
    return 2;
  case DType::f32:
  case DType::i32:
    return 4;
  case DType::i1:
  case DType::i8:
    return 1;
  default:
    return 8;
  }
}

} // namespace tl
