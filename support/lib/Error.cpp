// The author-facing error.
#include "tl/Support/Error.h"

namespace tl {

Error::Error(const std::string &message, std::string file, unsigned line, unsigned column)
    : std::runtime_error(file + ":" + std::to_string(line) + ":" + std::to_string(column) +
                         ": error: " + message),
      message_(message), file_(std::move(file)), line_(line), column_(column) {}

} // namespace tl
