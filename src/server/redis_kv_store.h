#pragma once
// The shared KV tier of `seer serve --shared-kv redis://HOST:PORT` (docs/deploy.md):
// conversation histories and K/V chunks in Redis, so that a replica that gets a
// turn of a conversation it does not hold restores what it can instead of
// recomputing it. It implements SharedTier, the interface the conversation cache
// already uses with the simulator's model (kv/shared_tier.h).
//
// Keys: "<prefix>:<model fingerprint>:<conversation>:h" (the history) and
// "...:c:<k>" (chunk k: tokens [k*chunk, (k+1)*chunk)), values in the format of
// kv/kv_chunk_codec.h, written with SET ... EX ttl. What this replica wrote, or
// read intact when it took a conversation over, is indexed by a SharedKvTier (the
// simulator's model, same cap and TTL), so each chunk is written once and the byte
// cap holds for what it writes. A read refreshes the TTL of every key it found.
//
// Threads. The engine thread calls everything except the I/O thread's own work:
// store() copies the blocks' bytes (the backend's memory may change after the
// step) and queues the writes; fetch() queues a read whose result the engine
// thread stages (stage()) before restore_from_shared() uses it, like the host
// tier's swap ops. All Redis I/O happens on one I/O thread owned by the store,
// each call bounded by the timeout; Redis down means writes are dropped, reads
// find nothing, one warning per outage, reconnects with backoff.
//
// Forgetting. erase() takes a conversation out of Redis: the writes of it still
// queued are cancelled, a read of it not yet consumed finds nothing, and the I/O
// thread deletes its history, the chunks this replica knows of, and any other
// chunk keys of it (written by other replicas, or with another --chunk-tokens)
// that a SCAN of the keyspace finds. The SCAN walks all of Redis's keys (1000 a
// round trip) and other jobs wait meanwhile. An erase that meets Redis down is not
// retried: what it could not delete expires with its TTL.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "server/redis_client.h"
#include "kv/shared_kv_tier.h"
#include "kv/shared_tier.h"

namespace seer {

struct RedisKvStoreOptions {
  RedisEndpoint endpoint;
  std::string key_prefix = "seer:kv";
  uint64_t fingerprint = 0;      // kv/model_fingerprint.h: model, K/V type and block layout
  int32_t block_size = 16;       // tokens per block
  int64_t block_bytes = 0;       // K/V bytes of one block as the backend stores it
  int32_t chunk_tokens = 32;     // rounded up to whole blocks
  SharedTierLimits limits{0, 3600};  // byte cap on what this replica writes; key TTL
  std::chrono::milliseconds timeout{500};  // connect and each command
  int64_t max_queued_bytes = int64_t{256} << 20;  // writes beyond are dropped (counted)
  // Called on the I/O thread with each Redis round trip's duration (may be empty).
  std::function<void(double seconds)> observe_latency;
};

// The backend's K/V blocks (engine thread only).
struct KvBlockAccess {
  std::function<void(KvTier tier, int32_t block, char* dst)> read;
  std::function<void(int32_t host_block, const char* src)> write_host;
};

struct SharedKvCounters {
  std::atomic<int64_t> hits{0};          // restores that brought K/V back
  std::atomic<int64_t> misses{0};        // lookups that brought no K/V
  std::atomic<int64_t> hit_tokens{0};
  std::atomic<int64_t> histories{0};     // lookups that found the conversation's history
  std::atomic<int64_t> bytes_read{0};
  std::atomic<int64_t> bytes_written{0};
  std::atomic<int64_t> errors{0};        // failed Redis calls (down, timeout, error reply)
  std::atomic<int64_t> corrupt{0};       // entries rejected: bad magic, sizes, checksum, tokens
  std::atomic<int64_t> stale{0};         // entries of another model or format version
  std::atomic<int64_t> dropped_writes{0};  // over max_queued_bytes, or Redis down
  std::atomic<int64_t> erased{0};        // erase() calls whose deletions all reached Redis
};

// One asynchronous read: the conversation's history and the K/V of its leading
// whole blocks that were stored intact. Written by the I/O thread until `done`.
struct SharedFetch {
  std::string conversation;
  std::atomic<bool> done{false};
  std::vector<int32_t> history;
  int32_t kv_tokens = 0;  // whole blocks
  std::string kv;         // block i's bytes at i * block_bytes
  // Set (under the store's lock) when the conversation was erased before the read
  // was done: the read then finds nothing.
  bool erased = false;
  void forget() {  // what was read is dropped: the read found nothing
    history.clear();
    kv.clear();
    kv_tokens = 0;
  }
};

class RedisKvStore final : public SharedTier {
 public:
  // Starts the I/O thread and tries to connect (a failure only warns). Throws
  // seer::Error for bad options.
  RedisKvStore(RedisKvStoreOptions options, KvBlockAccess blocks);
  ~RedisKvStore() override;  // finishes queued writes for up to 2 s, then stops
  RedisKvStore(const RedisKvStore&) = delete;
  RedisKvStore& operator=(const RedisKvStore&) = delete;

  // ---- SharedTier (engine thread).
  bool needs_block_data() const override { return true; }
  void store(const std::string& conversation, std::span<const int32_t> tokens, int32_t kv_tokens,
             std::span<const KvBlockRef> blocks, double now) override;
  int32_t stored_tokens(const std::string& conversation, std::span<const int32_t> prompt) const override;
  std::span<const int32_t> history(const std::string& conversation) const override;
  void restored(const std::string& conversation, int32_t tokens, std::span<const int32_t> host_blocks,
                double now) override;
  void expire(double now) override { index_.expire_idle(now); }
  // Forgets `conversation` here and in Redis (see "Forgetting" above). Never blocks.
  void erase(const std::string& conversation) override;

  // ---- Reads (engine thread).
  // Queues a read of `conversation`; the result is ready when ->done (the wake
  // callback is called then).
  [[nodiscard]] std::shared_ptr<const SharedFetch> fetch(const std::string& conversation);
  // Makes a finished fetch what stored_tokens()/history()/restored() see for its
  // conversation, until restored() or unstage().
  void stage(const std::shared_ptr<const SharedFetch>& fetch);
  void unstage(const std::string& conversation) { staged_.erase(conversation); }
  // Called on the I/O thread whenever a fetch is done (nullptr: none), under the
  // store's lock: it must not call into the store. Thread-safe.
  void set_wake(std::function<void()> wake);

  const SharedKvCounters& counters() const { return counters_; }
  // Why Redis was last unavailable (e.g. "authentication failed ..."); empty while
  // it never was. Thread-safe.
  [[nodiscard]] std::string last_error() const;
  const RedisKvStoreOptions& options() const { return options_; }
  // Waits until every queued job ran (tests, shutdown). False on timeout. Thread-safe.
  [[nodiscard]] bool wait_idle(std::chrono::milliseconds timeout);
  std::string history_key(const std::string& conversation) const;
  std::string chunk_key(const std::string& conversation, int32_t chunk) const;
  std::string chunk_key_prefix(const std::string& conversation) const;  // chunk_key() less the number

 private:
  struct Job {
    enum class Kind { Ping, Set, Expire, Del, Fetch, Erase } kind = Kind::Set;
    std::string conversation;
    std::vector<std::string> keys;
    std::string value;  // Set
    std::shared_ptr<SharedFetch> fetch;
  };
  void enqueue(Job job);
  // Deletes the keys of the conversations the index evicted over the byte cap (the
  // history of `keep_history` stays: it is being written or was just read).
  void delete_evicted(const SharedStoreDelta& delta, const std::string& keep_history);
  // The I/O thread's side (server/redis_kv_io.cc).
  void io_loop();
  void run(Job& job);
  void run_fetch(SharedFetch& f);
  // Deletes job.keys, then every chunk key of job.conversation a SCAN finds.
  void run_erase(const Job& job);
  // Under mutex_: takes the queued writes of `conversation` out of the queue.
  void cancel_writes(const std::string& conversation) REQUIRES(mutex_);
  // The chunks of f.history's whole blocks (one MGET) into f.kv; appends the keys
  // that exist to `found`.
  void read_chunks(SharedFetch& f, std::vector<std::string>& found);
  // One command, timed and counted; nullopt when it failed (warns once per outage).
  [[nodiscard]] std::optional<RedisReply> call(const std::vector<std::string_view>& args);
  // Commands in one round trip, timed and counted as one call; an error reply is
  // counted and logged but returned. nullopt on a transport failure.
  [[nodiscard]] std::optional<std::vector<RedisReply>> pipeline(
      const std::vector<std::vector<std::string_view>>& commands);
  void expire_keys(const std::vector<std::string>& keys, const std::string& ttl);  // pipelined EXPIREs
  void note_outage(bool down);
  void forget_failed_writes();

  RedisKvStoreOptions options_;
  KvBlockAccess blocks_;
  SharedKvCounters counters_;
  int32_t chunk_blocks_ = 1;

  // Engine thread only.
  SharedKvTier index_;  // what this replica wrote
  std::unordered_map<std::string, std::shared_ptr<const SharedFetch>> staged_;
  std::vector<std::weak_ptr<SharedFetch>> fetches_;  // issued, maybe not consumed yet

  // Shared with the I/O thread (mutex_).
  mutable Mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<Job> jobs_ GUARDED_BY(mutex_);
  int64_t queued_bytes_ GUARDED_BY(mutex_) = 0;
  bool busy_ GUARDED_BY(mutex_) = false;
  bool stop_ GUARDED_BY(mutex_) = false;
  std::function<void()> wake_ GUARDED_BY(mutex_);
  std::vector<std::string> failed_writes_ GUARDED_BY(mutex_);  // conversations to write again in full
  std::string last_error_ GUARDED_BY(mutex_);

  // I/O thread only.
  RedisClient client_;
  bool down_ = false;
  std::thread io_;
};

}  // namespace seer
