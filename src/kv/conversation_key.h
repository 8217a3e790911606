#pragma once
// The key of a conversation in every cache tier (device, host, the shared Redis
// tier): "TENANT/ID". The server scopes each client's conversation id by its tenant
// (docs/security.md), so the same id under two tenants names two conversations
// everywhere, and a tier never has to be told about tenants to keep them apart.
// Keys without a '/' (the simulator's traces) belong to the tenant "".
#include <string>
#include <string_view>

namespace seer {

inline std::string conversation_key(std::string_view tenant, std::string_view id) {
  std::string key;
  key.reserve(tenant.size() + 1 + id.size());
  key.append(tenant).append("/").append(id);
  return key;
}

inline std::string conversation_key_tenant(std::string_view key) {
  const size_t slash = key.find('/');
  return slash == std::string_view::npos ? std::string() : std::string(key.substr(0, slash));
}

// The client's id (ids never hold a '/').
inline std::string conversation_key_id(std::string_view key) {
  const size_t slash = key.rfind('/');
  return std::string(slash == std::string_view::npos ? key : key.substr(slash + 1));
}

}  // namespace seer
