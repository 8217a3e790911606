#pragma once
// API keys and the tenants they name (docs/security.md). `--api-key KEY` makes each key
// its own tenant; `--api-key-file F` holds one key per line, optionally followed by a
// tenant name that several keys may share. With no key at all the server is open and
// every client is the anonymous tenant.
//
// A key is checked against every configured key in constant time (no early exit on
// the first differing byte, nor on the first matching key), so response timing does
// not reveal how much of a guess was right.
//
// Thread-safe: the I/O threads authenticate while a SIGHUP re-reads the file.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/thread_annotations.h"

namespace seer::server {

// The tenant of requests on a server without keys.
inline constexpr const char* kAnonymousTenant = "anonymous";

class ApiKeys {
 public:
  // Throws seer::Error when the file cannot be read or a line is malformed.
  ApiKeys(std::vector<std::string> cli_keys, std::string key_file);
  ApiKeys() = default;  // no keys: open
  ApiKeys(const ApiKeys&) = delete;
  ApiKeys& operator=(const ApiKeys&) = delete;

  bool enabled() const;
  size_t size() const;
  // The tenant of an `Authorization` header value ("Bearer KEY"); nullopt when the
  // header is missing, malformed or names no configured key. Without keys: the
  // anonymous tenant, whatever the header says.
  [[nodiscard]] std::optional<std::string> authenticate(std::string_view authorization) const;
  // Re-reads the key file (SIGHUP). On failure keeps the keys in force and returns
  // the reason; "" on success.
  [[nodiscard]] std::string reload();
  const std::string& key_file() const { return key_file_; }

 private:
  struct Key {
    std::string secret;
    std::string tenant;
  };
  static std::vector<Key> read_file(const std::string& path);

  // Set at construction.
  std::vector<Key> cli_keys_;
  std::string key_file_;
  // Written only by reload().
  mutable SharedMutex mutex_;
  std::vector<Key> keys_ GUARDED_BY(mutex_);
};

// Equal strings, in time that depends only on the lengths.
[[nodiscard]] bool constant_time_equal(std::string_view a, std::string_view b);

// 1-64 characters of [A-Za-z0-9_.-]: tenant names become part of cache and Redis keys.
[[nodiscard]] bool valid_tenant_name(std::string_view name);

}  // namespace seer::server
