#include "server/redis_kv_store.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "common/error.h"
#include "kv/kv_chunk_codec.h"

namespace seer {

namespace {

int64_t bytes_per_token(const RedisKvStoreOptions& o) {
  return std::max<int64_t>(1, o.block_bytes / std::max(o.block_size, 1));
}

int32_t whole_chunk_tokens(const RedisKvStoreOptions& o) {
  const int32_t b = std::max(o.block_size, 1);
  return std::max(1, (o.chunk_tokens + b - 1) / b) * b;
}

}  // namespace

RedisKvStore::RedisKvStore(RedisKvStoreOptions options, KvBlockAccess blocks)
    : options_(std::move(options)),
      blocks_(std::move(blocks)),
      index_(bytes_per_token(options_), whole_chunk_tokens(options_), options_.limits),
      client_(options_.endpoint, options_.timeout) {
  if (options_.block_size <= 0 || options_.block_bytes <= 0) fail("shared KV tier: bad block layout");
  if (options_.timeout.count() <= 0) fail("--shared-kv-timeout-ms must be > 0");
  if (!blocks_.read || !blocks_.write_host) fail("shared KV tier: no access to the K/V blocks");
  chunk_blocks_ = whole_chunk_tokens(options_) / options_.block_size;
  io_ = std::thread([this] { io_loop(); });
  enqueue(Job{Job::Kind::Ping, "", {}, "", nullptr});  // connects (or warns) at start-up
}

RedisKvStore::~RedisKvStore() {
  (void)wait_idle(std::chrono::milliseconds(2000));
  {
    MutexLock lock(mutex_);
    stop_ = true;
    wake_ = nullptr;
  }
  cv_.notify_all();
  io_.join();
}

std::string RedisKvStore::history_key(const std::string& conversation) const {
  return fmt::format("{}:{:016x}:{}:h", options_.key_prefix, options_.fingerprint, conversation);
}

std::string RedisKvStore::chunk_key(const std::string& conversation, int32_t chunk) const {
  return fmt::format("{}{}", chunk_key_prefix(conversation), chunk);
}

std::string RedisKvStore::chunk_key_prefix(const std::string& conversation) const {
  return fmt::format("{}:{:016x}:{}:c:", options_.key_prefix, options_.fingerprint, conversation);
}

// ---- Engine thread.

void RedisKvStore::forget_failed_writes() {
  std::vector<std::string> failed;
  {
    MutexLock lock(mutex_);
    failed.swap(failed_writes_);
  }
  for (const std::string& c : failed) index_.forget(c);
}

void RedisKvStore::store(const std::string& conversation, std::span<const int32_t> tokens, int32_t kv_tokens,
                         std::span<const KvBlockRef> blocks, double now) {
  if (conversation.empty()) return;
  forget_failed_writes();
  const int32_t b = options_.block_size, ct = whole_chunk_tokens(options_);
  // Whole blocks only, and only as far as the blocks to write (from the first chunk
  // not stored yet) can be read now.
  kv_tokens = std::max(0, std::min({kv_tokens / b * b, static_cast<int32_t>(blocks.size()) * b,
                                    static_cast<int32_t>(tokens.size()) / b * b}));
  const int32_t kept = index_.stored_tokens(conversation, tokens) / ct * ct;
  for (int32_t i = kept / b; i < kv_tokens / b; ++i)
    if (blocks[static_cast<size_t>(i)].block < 0) {
      kv_tokens = i * b;
      break;
    }
  const SharedStoreDelta delta = index_.record(conversation, tokens, kv_tokens, now);
  const std::string ttl = fmt::format("{}", std::max<int64_t>(1, static_cast<int64_t>(options_.limits.ttl_s)));
  delete_evicted(delta, "");
  if (delta.history_changed) {
    KvEntry h{KvEntryKind::History, options_.fingerprint, 0, {tokens.begin(), tokens.end()}, {}};
    enqueue(Job{Job::Kind::Set, conversation, {history_key(conversation), ttl}, encode_kv_entry(h), nullptr});
    // Chunks stored before keep living as long as the history does.
    Job touch{Job::Kind::Expire, conversation, {}, "", nullptr};
    const int32_t before = delta.end_token > 0 ? delta.first_token : index_.stored_tokens(conversation);
    for (int32_t k = 0; k < (before + ct - 1) / ct; ++k) touch.keys.push_back(chunk_key(conversation, k));
    touch.keys.push_back(ttl);
    if (touch.keys.size() > 1) enqueue(std::move(touch));
  }
  for (int32_t first = delta.first_token; first < delta.end_token; first += ct) {
    const int32_t n = std::min(ct, delta.end_token - first);
    KvEntry c{KvEntryKind::Chunk, options_.fingerprint, first,
              {tokens.begin() + first, tokens.begin() + first + n}, {}};
    c.payload.resize(static_cast<size_t>(n / b) * static_cast<size_t>(options_.block_bytes));
    for (int32_t i = 0; i < n / b; ++i) {
      const KvBlockRef& ref = blocks[static_cast<size_t>(first / b + i)];
      blocks_.read(ref.tier, ref.block, c.payload.data() + static_cast<size_t>(i) * options_.block_bytes);
    }
    enqueue(Job{Job::Kind::Set, conversation, {chunk_key(conversation, first / ct), ttl}, encode_kv_entry(c),
                nullptr});
  }
}

void RedisKvStore::delete_evicted(const SharedStoreDelta& delta, const std::string& keep_history) {
  const int32_t ct = whole_chunk_tokens(options_);
  for (const auto& [name, history_tokens] : delta.evicted) {
    Job del{Job::Kind::Del, name, {}, "", nullptr};
    if (name != keep_history) del.keys.push_back(history_key(name));
    for (int32_t k = 0; k < (history_tokens + ct - 1) / ct; ++k) del.keys.push_back(chunk_key(name, k));
    if (!del.keys.empty()) enqueue(std::move(del));
  }
}

int32_t RedisKvStore::stored_tokens(const std::string& conversation, std::span<const int32_t> prompt) const {
  auto it = staged_.find(conversation);
  if (it == staged_.end()) return 0;
  const SharedFetch& f = *it->second;
  const int32_t limit = std::min<int32_t>(f.kv_tokens, static_cast<int32_t>(prompt.size()));
  int32_t common = 0;
  while (common < limit && f.history[static_cast<size_t>(common)] == prompt[static_cast<size_t>(common)]) ++common;
  return common;
}

std::span<const int32_t> RedisKvStore::history(const std::string& conversation) const {
  auto it = staged_.find(conversation);
  if (it == staged_.end()) return {};
  return it->second->history;
}

void RedisKvStore::restored(const std::string& conversation, int32_t tokens, std::span<const int32_t> host_blocks,
                            double now) {
  auto it = staged_.find(conversation);
  if (it != staged_.end() && !it->second->history.empty()) {
    // What the read found intact in Redis counts as written by this replica (restored
    // or not): its next turn writes only the chunks past it, and the byte cap and
    // TTL of its index cover the conversation from now on.
    const SharedFetch& f = *it->second;
    delete_evicted(index_.record(conversation, f.history, f.kv_tokens, now), conversation);
  }
  if (tokens <= 0 || it == staged_.end()) {
    counters_.misses.fetch_add(1);
    return;
  }
  const SharedFetch& f = *it->second;
  for (size_t i = 0; i < host_blocks.size(); ++i)
    blocks_.write_host(host_blocks[i], f.kv.data() + i * static_cast<size_t>(options_.block_bytes));
  counters_.hits.fetch_add(1);
  counters_.hit_tokens.fetch_add(tokens);
  staged_.erase(it);
}

std::shared_ptr<const SharedFetch> RedisKvStore::fetch(const std::string& conversation) {
  auto f = std::make_shared<SharedFetch>();
  f->conversation = conversation;
  std::erase_if(fetches_, [](const std::weak_ptr<SharedFetch>& w) { return w.expired(); });
  fetches_.push_back(f);
  enqueue(Job{Job::Kind::Fetch, conversation, {}, "", f});
  return f;
}

void RedisKvStore::stage(const std::shared_ptr<const SharedFetch>& fetch) {
  if (fetch && fetch->done.load()) staged_[fetch->conversation] = fetch;
}

void RedisKvStore::erase(const std::string& conversation) {
  if (conversation.empty()) return;
  forget_failed_writes();
  // The keys this replica knows of; run_erase() finds the others.
  const int32_t ct = whole_chunk_tokens(options_);
  const auto known = static_cast<int32_t>(index_.history(conversation).size());
  Job job{Job::Kind::Erase, conversation, {history_key(conversation)}, "", nullptr};
  for (int32_t k = 0; k < (known + ct - 1) / ct; ++k) job.keys.push_back(chunk_key(conversation, k));
  index_.erase(conversation);
  staged_.erase(conversation);
  {
    MutexLock lock(mutex_);
    cancel_writes(conversation);
    // A read done but not consumed is the engine thread's to clear; one not done
    // yet the I/O thread clears when it ends (io_loop).
    for (const std::weak_ptr<SharedFetch>& w : fetches_) {
      std::shared_ptr<SharedFetch> f = w.lock();
      if (!f || f->conversation != conversation) continue;
      f->erased = true;
      if (f->done.load()) f->forget();
    }
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

// ---- Shared.

void RedisKvStore::cancel_writes(const std::string& conversation) {
  std::erase_if(jobs_, [&](const Job& job) REQUIRES(mutex_) {
    const bool write = job.kind == Job::Kind::Set || job.kind == Job::Kind::Expire || job.kind == Job::Kind::Del;
    if (!write || job.conversation != conversation) return false;
    if (job.kind == Job::Kind::Set) queued_bytes_ -= static_cast<int64_t>(job.value.size());
    return true;
  });
}

std::string RedisKvStore::last_error() const {
  MutexLock lock(mutex_);
  return last_error_;
}

void RedisKvStore::set_wake(std::function<void()> wake) {
  MutexLock lock(mutex_);
  wake_ = std::move(wake);
}

void RedisKvStore::enqueue(Job job) {
  {
    MutexLock lock(mutex_);
    if (job.kind == Job::Kind::Set) {
      if (queued_bytes_ + static_cast<int64_t>(job.value.size()) > options_.max_queued_bytes) {
        counters_.dropped_writes.fetch_add(1);
        failed_writes_.push_back(job.conversation);
        return;
      }
      queued_bytes_ += static_cast<int64_t>(job.value.size());
    }
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

bool RedisKvStore::wait_idle(std::chrono::milliseconds timeout) {
  MutexLock lock(mutex_);
  return lock.wait_for(idle_cv_, timeout, [&]() REQUIRES(mutex_) { return jobs_.empty() && !busy_; });
}

}  // namespace seer
