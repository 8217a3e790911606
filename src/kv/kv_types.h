#pragma once
// Vocabulary shared by the KV manager, the scheduler and the executors.
#include <cstdint>

namespace seer {

using RequestId = int64_t;

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
