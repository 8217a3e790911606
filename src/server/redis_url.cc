#include "server/redis_url.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"

namespace seer {

namespace {

constexpr std::string_view kForm = "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]";

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// nullopt on a '%' not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 2 < s.size() ? hex_digit(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// A whole decimal number in [lo, hi], else nullopt.
std::optional<int> parse_int(std::string_view s, int lo, int hi) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

// Never the password: the URL is echoed in messages only up to its credentials.
std::string without_credentials(std::string_view url) {
  const size_t at = url.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const size_t scheme = url.find("://");
  return fmt::format("{}***@{}", scheme == std::string_view::npos ? "" : url.substr(0, scheme + 3),
                     url.substr(at + 1));
}

void parse_credentials(std::string_view userinfo, const std::string& url, const std::string& flag,
                       RedisEndpoint& e) {
  const size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos)
    fail("{}: '{}' names a user without a password (expected {})", flag, without_credentials(url), kForm);
  std::optional<std::string> user = percent_decode(userinfo.substr(0, colon));
  std::optional<std::string> password = percent_decode(userinfo.substr(colon + 1));
  if (!user || !password)
    fail("{}: bad percent escape in the user or password of '{}' (expected %XX, e.g. %40 for '@')", flag,
         without_credentials(url));
  if (password->empty()) fail("{}: empty password in '{}' (expected {})", flag, without_credentials(url), kForm);
  e.user = std::move(*user);
  e.password = std::move(*password);
}

}  // namespace

std::string RedisEndpoint::text() const {
  std::string s = password.empty() ? "" : fmt::format("{}:***@", user);
  s += fmt::format("{}:{}", host, port);
  if (db != 0) s += fmt::format("/{}", db);
  return s;
}

RedisEndpoint parse_redis_url(const std::string& url, const std::string& flag) {
  std::string_view rest = url;
  if (const size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
    const std::string_view name = rest.substr(0, scheme);
    if (name == "rediss")
      fail("{}: rediss:// (TLS) is not supported: this build's hiredis (0.14, Debian 12) has no TLS. Reach Redis "
           "over a private network or loopback with redis://, or through a TLS tunnel (e.g. stunnel or "
           "spiped on this host, then redis://127.0.0.1:LOCAL_PORT)",
           flag);
    if (name != "redis") fail("{}: unsupported scheme '{}://' (expected {})", flag, name, kForm);
    rest.remove_prefix(scheme + 3);
  }
  RedisEndpoint e;
  // The last '@' ends the credentials: a password may hold a raw '@'.
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    parse_credentials(rest.substr(0, at), url, flag, e);
    rest.remove_prefix(at + 1);
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) {
      std::optional<int> n = parse_int(db, 0, 1 << 30);
      if (!n) fail("{}: bad database number '{}' in '{}' (expected {})", flag, db, without_credentials(url), kForm);
      e.db = *n;
    }
    rest = rest.substr(0, slash);
  }
  const size_t colon = rest.rfind(':');
  e.host = std::string(rest.substr(0, colon));
  if (colon != std::string_view::npos) {
    const std::string_view port = rest.substr(colon + 1);
    std::optional<int> n = parse_int(port, 1, 65535);
    if (!n) fail("{}: bad port '{}' in '{}' (expected {})", flag, port, without_credentials(url), kForm);
    e.port = *n;
  }
  if (e.host.empty() || e.host.find_first_of("/@ ?#%") != std::string::npos)
    fail("{}: expected {}, got '{}'", flag, kForm, without_credentials(url));
  return e;
}

std::string escape_redis_glob(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace seer
