#include "server/api_keys.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"

namespace seer::server {

namespace {

// A key without a tenant name is its own tenant, named after the key so that every
// replica given the same key (in any order) agrees on the name. FNV-1a: an
// identifier, not a secret-keeping digest (name tenants in the key file for that).
std::string tenant_of_key(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
  return fmt::format("key-{:016x}", h);
}

void check_key(std::string_view key, const std::string& where) {
  if (key.empty()) fail("{}: an API key must not be empty", where);
  for (unsigned char c : key)
    if (c <= ' ' || c == 0x7f) fail("{}: an API key must be printable ASCII without spaces", where);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool valid_tenant_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (unsigned char c : name)
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

ApiKeys::ApiKeys(std::vector<std::string> cli_keys, std::string key_file) : key_file_(std::move(key_file)) {
  for (const std::string& k : cli_keys) {
    check_key(k, "--api-key");
    cli_keys_.push_back({k, tenant_of_key(k)});
  }
  keys_ = cli_keys_;
  if (!key_file_.empty()) {
    std::vector<Key> from_file = read_file(key_file_);
    keys_.insert(keys_.end(), from_file.begin(), from_file.end());
  }
}

std::vector<ApiKeys::Key> ApiKeys::read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("--api-key-file {}: cannot read it", path);
  std::vector<Key> keys;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string_view l = trim(line);
    if (l.empty() || l.front() == '#') continue;
    const std::string where = fmt::format("--api-key-file {}:{}", path, n);
    std::istringstream fields{std::string(l)};
    std::string key, tenant, extra;
    fields >> key >> tenant >> extra;
    if (!extra.empty()) fail("{}: expected 'KEY [TENANT]', got more fields", where);
    check_key(key, where);
    if (!tenant.empty() && !valid_tenant_name(tenant))
      fail("{}: tenant names are 1-64 characters of [A-Za-z0-9_.-]", where);
    keys.push_back({key, tenant.empty() ? tenant_of_key(key) : tenant});
  }
  return keys;
}

bool ApiKeys::enabled() const {
  ReaderLock lock(mutex_);
  return !keys_.empty();
}

size_t ApiKeys::size() const {
  ReaderLock lock(mutex_);
  return keys_.size();
}

std::optional<std::string> ApiKeys::authenticate(std::string_view authorization) const {
  ReaderLock lock(mutex_);
  if (keys_.empty()) return kAnonymousTenant;
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i)  // the scheme is case-insensitive
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i])))
      return std::nullopt;
  const std::string_view presented = trim(authorization.substr(kScheme.size()));
  const Key* found = nullptr;
  for (const Key& k : keys_)  // every key, every time
    if (constant_time_equal(presented, k.secret) && !found) found = &k;
  if (!found) return std::nullopt;
  return found->tenant;
}

std::string ApiKeys::reload() {
  if (key_file_.empty()) return "";
  try {
    std::vector<Key> keys = cli_keys_;
    std::vector<Key> from_file = read_file(key_file_);
    keys.insert(keys.end(), from_file.begin(), from_file.end());
    // A server started with keys never turns open by a reload.
    if (keys.empty()) return "the file holds no key; keeping the keys in force";
    WriterLock lock(mutex_);
    keys_ = std::move(keys);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace seer::server
