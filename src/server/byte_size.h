#pragma once
// Sizes given on the command line: "1073741824", "512M", "2G", "1.5GiB" (K, M, G, T
// are powers of 1024, with or without "iB"/"B").
#include <cstdint>
#include <string>

namespace seer::server {

// Throws seer::Error naming `flag` for anything else.
int64_t parse_byte_size(const std::string& text, const std::string& flag);

}  // namespace seer::server
