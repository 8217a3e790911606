#pragma once
// seer reports bad input (files, requests, flags) by throwing seer::Error with a
// message a person can act on; the CLI prints it and exits 1, the server turns it
// into a 4xx. Programming errors use assertions instead.
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace seer {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // `code`: a machine-readable name the server reports (error.code), e.g.
  // "context_length_exceeded", "conversation_not_found"; "" when there is none.
  Error(std::string code, const std::string& message) : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_with_code(std::string code, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(std::move(code), fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace seer
