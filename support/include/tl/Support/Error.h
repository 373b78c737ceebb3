// The error a kernel author sees: raised for every misuse of the eDSL, every
// verifier failure and every compile error, at the author's source position.
#pragma once

#include <stdexcept>
#include <string>

namespace tl {

/// what() reads "file:line:column: error: message".
class Error : public std::runtime_error {
public:
  Error(const std::string &message, std::string file, unsigned line, unsigned column);
  const std::string &message() const { return message_; }
  const std::string &file() const { return file_; }
  unsigned line() const { return line_; }
  unsigned column() const { return column_; }

private:
  std::string message_, file_;
  unsigned line_, column_;
};

} // namespace tl
