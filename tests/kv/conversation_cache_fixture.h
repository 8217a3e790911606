#pragma once
// A KV manager and a conversation cache over it, checked after every release
// (tests/kv/conversation_cache_test.cc, conversation_quota_test.cc).
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "kv/conversation_cache.h"
#include "kv/conversation_key.h"

namespace seer::testing_kv {

constexpr int32_t kBlock = 16;

struct Fixture {
  explicit Fixture(int32_t device = 16, int32_t host = 8, ConversationCacheConfig c = chunk_of_one_block())
      : kv(KvConfig{kBlock, device, host, 100}), cache(kv, std::move(c)) {}
  static ConversationCacheConfig chunk_of_one_block() {
    ConversationCacheConfig c;
    c.chunk_tokens = kBlock;
    return c;
  }
  // A request `id` that computed `n` tokens (0..n-1) ends as conversation `name`
  // (of the tenant its key names: kv/conversation_key.h).
  void finish(RequestId id, const std::string& name, int32_t n, double now, int32_t dropped = 0,
              const std::string& tenant = "") {
    EXPECT_TRUE(kv.allocate(id, n));
    std::vector<int32_t> t(static_cast<size_t>(n));
    std::iota(t.begin(), t.end(), 0);
    cache.release(id, name.empty() ? tenant : conversation_key_tenant(name), name, t, n, dropped, now);
    check();
  }
  void check() {
    kv.check_invariants();
    cache.check_invariants();
  }
  std::vector<int32_t> prompt(int32_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    std::iota(t.begin(), t.end(), 0);
    return t;
  }
  KvManager kv;
  ConversationCache cache;
  std::vector<KvOp> ops;
};

}  // namespace seer::testing_kv
