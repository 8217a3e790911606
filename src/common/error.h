#pragma once
// seer reports bad input (files, requests, flags) by throwing seer::Error with a
// message a person can act on; the CLI prints it and exits 1, the server turns it
// into a 4xx. Programming errors use assertions instead.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace seer {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace seer
