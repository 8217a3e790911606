#pragma once
// A test replica of the Redis-backed shared KV tier (kv/redis_kv_store.h): block
// storage standing in for the backend, a KV manager and a conversation cache over
// a RedisKvStore, for the tests that run a real redis-server.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "kv/conversation_cache.h"
#include "server/redis_kv_store.h"
#include "support/redis_server.h"

namespace seer::kv_testing {

using namespace std::chrono_literals;

inline constexpr int32_t kBlock = 4;
inline constexpr int64_t kBlockBytes = 64;

inline std::vector<int32_t> tokens(int32_t n, int32_t first = 100) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

// How a test replica is set up (the flags of `seer serve` it stands for).
struct ReplicaSetup {
  int64_t max_bytes = 0;       // --shared-kv-max-bytes
  int32_t device = 16;         // device and host blocks
  int32_t host = 16;           // --swap-blocks
  bool write_through = true;   // false: --shared-kv-evicted-only
  double ttl_s = 3600;         // --shared-kv-ttl
};

// A replica: block storage standing in for the backend, a KV manager, a cache over
// the Redis store.
struct Replica {
  Replica(const std::string& url, uint64_t fingerprint, ReplicaSetup setup = {})
      : setup(setup),
        device_bytes(static_cast<size_t>(setup.device * kBlockBytes)),
        host_bytes(static_cast<size_t>(setup.host * kBlockBytes)),
        kv(KvConfig{kBlock, setup.device, setup.host, kBlockBytes}),
        store(options(url, fingerprint), access()),
        cache(kv, config()) {}

  RedisKvStoreOptions options(const std::string& url, uint64_t fingerprint) {
    RedisKvStoreOptions o;
    o.endpoint = parse_redis_url(url, "--shared-kv");
    o.fingerprint = fingerprint;
    o.block_size = kBlock;
    o.block_bytes = kBlockBytes;
    o.chunk_tokens = 2 * kBlock;
    o.timeout = 2000ms;
    o.key_prefix = "test";
    o.limits = {setup.max_bytes, setup.ttl_s};
    return o;
  }
  KvBlockAccess access() {
    KvBlockAccess a;
    a.read = [this](KvTier t, int32_t b, char* dst) {
      std::memcpy(dst, (t == KvTier::Host ? host_bytes : device_bytes).data() + b * kBlockBytes, kBlockBytes);
    };
    a.write_host = [this](int32_t b, const char* src) { std::memcpy(host_bytes.data() + b * kBlockBytes, src, kBlockBytes); };
    return a;
  }
  ConversationCacheConfig config() {
    ConversationCacheConfig c;
    c.chunk_tokens = 2 * kBlock;
    c.shared = &store;
    c.shared_write_through = setup.write_through;
    return c;
  }
  // A finished turn of `n` tokens whose K/V block i is filled with byte `seed + i`.
  void finish(RequestId id, const std::string& name, int32_t n, char seed) {
    ASSERT_TRUE(kv.allocate(id, n));
    const auto& table = kv.table(id).device;
    for (size_t i = 0; i < table.size(); ++i)
      std::memset(device_bytes.data() + table[i] * kBlockBytes, seed + static_cast<char>(i), kBlockBytes);
    cache.release(id, "", name, tokens(n), n, 0, 0);
  }
  // Reads `name` from Redis and restores it as the AsyncEngine does.
  int32_t restore(const std::string& name, std::span<const int32_t> prompt) {
    std::shared_ptr<const SharedFetch> f = store.fetch(name);
    EXPECT_TRUE(store.wait_idle(10s));
    EXPECT_TRUE(f->done.load());
    store.stage(f);
    const int32_t n = cache.restore_from_shared(name, prompt, 1);
    store.unstage(name);
    kv.check_invariants();
    cache.check_invariants();
    return n;
  }
  char host_byte(const std::string& name, int32_t logical) {
    auto m = cache.match("", name, tokens(64));
    EXPECT_TRUE(m.has_value());
    return host_bytes[static_cast<size_t>(kv.table(m->owner).host[static_cast<size_t>(logical)] * kBlockBytes)];
  }
  // Frees device blocks as the scheduler does before a step, then runs the step's
  // K/V moves as the executor would.
  int32_t make_room(int32_t blocks, double now) {
    std::vector<KvOp> ops;
    const int32_t freed = cache.make_room(blocks, now, ops);
    for (const KvOp& op : ops) {
      char* dst = (op.kind == KvOpKind::SwapOut ? host_bytes : device_bytes).data() + op.dst * kBlockBytes;
      const char* src = (op.kind == KvOpKind::SwapIn ? host_bytes : device_bytes).data() + op.src * kBlockBytes;
      std::memcpy(dst, src, kBlockBytes);
    }
    cache.plan_executed();
    kv.check_invariants();
    cache.check_invariants();
    return freed;
  }

  ReplicaSetup setup;
  std::vector<char> device_bytes, host_bytes;
  KvManager kv;
  RedisKvStore store;
  ConversationCache cache;
};

// A test with a real redis-server of its own on a free port; skips when none is installed.
class RedisServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (seer::testing::redis_server_binary().empty())
      GTEST_SKIP() << "redis-server is not installed (scripts/install-deps.sh installs it)";
    redis_ = std::make_unique<seer::testing::RedisServer>();
    ASSERT_TRUE(redis_->up()) << "redis-server did not answer PING";
  }
  std::unique_ptr<seer::testing::RedisServer> redis_;
};

}  // namespace seer::kv_testing
