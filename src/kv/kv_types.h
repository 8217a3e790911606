#pragma once
// Vocabulary shared by the KV manager, the scheduler and the executors.
#include <cstddef>
#include <cstdint>
#include <functional>

namespace seer {

using RequestId = int64_t;

// Who holds a KV block table: a request, or a cache entry that keeps a finished
// turn's KV for the next one (kv/conversation_cache.h). Requests own most tables,
// so a request id converts to its owner; a cache entry is named explicitly.
struct KvOwner {
  enum class Kind : uint8_t { Request, Cache };
  Kind kind = Kind::Request;
  int64_t id = 0;

  constexpr KvOwner() = default;
  constexpr KvOwner(RequestId request) : id(request) {}  // NOLINT(google-explicit-constructor)
  static constexpr KvOwner cache(int64_t id) {
    KvOwner o(id);
    o.kind = Kind::Cache;
    return o;
  }
  constexpr bool is_request() const { return kind == Kind::Request; }
  bool operator==(const KvOwner&) const = default;
};

struct KvOwnerHash {
  size_t operator()(const KvOwner& o) const { return std::hash<int64_t>{}(o.id); }
};

enum class KvTier : uint8_t { Device = 0, Host = 1 };
const char* kv_tier_name(KvTier t);  // "device", "host"

enum class KvOpKind {
  SwapOut,  // device block -> host block
  SwapIn,   // host block -> device block
  Copy,     // device block -> device block
};

// One block of K/V data movement. The executor performs a plan's ops in order,
// before the forward pass; each op reads its source as left by the ops before it.
struct KvOp {
  KvOpKind kind = KvOpKind::Copy;
  int32_t src = -1;
  int32_t dst = -1;
  bool operator==(const KvOp&) const = default;
};

}  // namespace seer
