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

void forget_read(SharedFetch& f) {
  f.history.clear();
  f.kv.clear();
  f.kv_tokens = 0;
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
      if (f->done.load()) forget_read(*f);
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

// ---- I/O thread.

void RedisKvStore::io_loop() {
  for (;;) {
    Job job;
    {
      MutexLock lock(mutex_);
      busy_ = false;
      if (jobs_.empty()) idle_cv_.notify_all();
      lock.wait(cv_, [&]() REQUIRES(mutex_) { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      if (job.kind == Job::Kind::Set) queued_bytes_ -= static_cast<int64_t>(job.value.size());
      busy_ = true;
    }
    run(job);
    if (job.fetch) {
      // Under the lock: erase() sees the read either done or not, and
      // set_wake(nullptr) returns only after a running wake ended.
      MutexLock lock(mutex_);
      if (job.fetch->erased) forget_read(*job.fetch);
      job.fetch->done.store(true);
      if (wake_) wake_();
    }
  }
}

void RedisKvStore::note_outage(bool down) {
  if (down) {
    MutexLock lock(mutex_);
    last_error_ = client_.last_error();
  }
  if (down && !down_)
    std::fprintf(stderr,
                 "seer serve: warning: shared KV tier: Redis at %s unavailable (%s); caching locally only and "
                 "reconnecting with backoff\n",
                 client_.endpoint().text().c_str(), client_.last_error().c_str());
  if (!down && down_)
    std::fprintf(stderr, "seer serve: shared KV tier: Redis at %s is back\n", client_.endpoint().text().c_str());
  down_ = down;
}

std::optional<RedisReply> RedisKvStore::call(const std::vector<std::string_view>& args) {
  std::optional<std::vector<RedisReply>> r = pipeline({args});
  if (!r || r->front().type == RedisReply::Type::Error) return std::nullopt;
  return std::move(r->front());
}

std::optional<std::vector<RedisReply>> RedisKvStore::pipeline(
    const std::vector<std::vector<std::string_view>>& commands) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool attempted = client_.connected() || client_.ensure_connected();
  std::optional<std::vector<RedisReply>> r = attempted ? client_.pipeline(commands) : std::nullopt;
  if (attempted && options_.observe_latency)
    options_.observe_latency(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (!r) {
    counters_.errors.fetch_add(1);
    note_outage(true);
    return std::nullopt;
  }
  note_outage(false);
  for (const RedisReply& reply : *r)
    if (reply.type == RedisReply::Type::Error) {
      counters_.errors.fetch_add(1);
      std::fprintf(stderr, "seer serve: shared KV tier: Redis answered '%s'\n", reply.str.c_str());
    }
  return r;
}

void RedisKvStore::expire_keys(const std::vector<std::string>& keys, const std::string& ttl) {
  if (keys.empty()) return;
  std::vector<std::vector<std::string_view>> commands;
  for (const std::string& k : keys) commands.push_back({"EXPIRE", k, ttl});
  (void)pipeline(commands);
}

void RedisKvStore::run(Job& job) {
  switch (job.kind) {
    case Job::Kind::Set: {
      if (!call({"SET", job.keys[0], job.value, "EX", job.keys[1]})) {
        counters_.dropped_writes.fetch_add(1);
        MutexLock lock(mutex_);
        failed_writes_.push_back(job.conversation);
        return;
      }
      counters_.bytes_written.fetch_add(static_cast<int64_t>(job.value.size()));
      return;
    }
    case Job::Kind::Ping: (void)call({"PING"}); return;
    case Job::Kind::Expire: {
      const std::string ttl = job.keys.back();
      job.keys.pop_back();
      expire_keys(job.keys, ttl);
      return;
    }
    case Job::Kind::Del: {
      std::vector<std::string_view> args{"DEL"};
      for (const std::string& k : job.keys) args.push_back(k);
      (void)call(args);
      return;
    }
    case Job::Kind::Fetch: {
      bool erased = false;
      {
        MutexLock lock(mutex_);
        erased = job.fetch->erased;
      }
      if (!erased) run_fetch(*job.fetch);
      return;
    }
    case Job::Kind::Erase: run_erase(job); return;
  }
}

void RedisKvStore::run_erase(const Job& job) {
  std::vector<std::string_view> del{"DEL"};
  for (const std::string& k : job.keys) del.push_back(k);
  if (!call(del)) return;
  // Chunk keys are "<conversation's prefix>:c:<k>"; the digits check keeps out the
  // keys of a conversation whose name extends this one's (e.g. "x:c:5" for "x").
  const std::string prefix = chunk_key_prefix(job.conversation);
  const std::string pattern = escape_redis_glob(prefix) + "*";
  std::string cursor = "0";
  do {
    std::optional<RedisReply> r = call({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (!r || r->type != RedisReply::Type::Array || r->elements.size() != 2) return;
    cursor = r->elements[0].str;
    std::vector<std::string_view> found{"DEL"};
    for (const RedisReply& key : r->elements[1].elements)
      if (key.str.size() > prefix.size() && key.str.starts_with(prefix) &&
          key.str.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
        found.push_back(key.str);
    if (found.size() > 1 && !call(found)) return;
  } while (cursor != "0");
  counters_.erased.fetch_add(1);
}

void RedisKvStore::run_fetch(SharedFetch& f) {
  const std::string hkey = history_key(f.conversation);
  std::optional<RedisReply> h = call({"GET", hkey});
  if (!h || h->type != RedisReply::Type::String) return;
  counters_.bytes_read.fetch_add(static_cast<int64_t>(h->str.size()));
  KvDecodeResult hist = decode_kv_entry(h->str, KvEntryKind::History, options_.fingerprint, 0);
  if (hist.status != KvDecodeStatus::Ok) {
    (hist.status == KvDecodeStatus::Stale ? counters_.stale : counters_.corrupt).fetch_add(1);
    std::fprintf(stderr, "seer serve: shared KV tier: %s entry %s ignored (%s)\n",
                 kv_decode_status_name(hist.status), hkey.c_str(), hist.why.c_str());
    return;
  }
  f.history = std::move(hist.entry.tokens);
  counters_.histories.fetch_add(1);
  // Read means alive: the TTL counts idleness, as in the simulator's model, so the
  // history and every chunk found get their TTL back, in one round trip.
  std::vector<std::string> read{hkey};
  read_chunks(f, read);
  expire_keys(read, fmt::format("{}", std::max<int64_t>(1, static_cast<int64_t>(options_.limits.ttl_s))));
}

void RedisKvStore::read_chunks(SharedFetch& f, std::vector<std::string>& found) {
  const int32_t ct = whole_chunk_tokens(options_), b = options_.block_size;
  const int32_t whole = static_cast<int32_t>(f.history.size()) / b * b;  // K/V is stored in whole blocks
  const int32_t chunks = (whole + ct - 1) / ct;
  if (chunks == 0) return;
  std::vector<std::string> keys;
  std::vector<std::string_view> args{"MGET"};
  for (int32_t k = 0; k < chunks; ++k) keys.push_back(chunk_key(f.conversation, k));
  for (const std::string& k : keys) args.push_back(k);
  std::optional<RedisReply> r = call(args);
  if (!r || r->type != RedisReply::Type::Array) return;
  for (size_t k = 0; k < keys.size() && k < r->elements.size(); ++k)
    if (r->elements[k].type == RedisReply::Type::String) found.push_back(keys[k]);
  // The stored prefix: consecutive chunks that decode and describe this history.
  for (int32_t k = 0; k < chunks && static_cast<size_t>(k) < r->elements.size(); ++k) {
    const RedisReply& v = r->elements[static_cast<size_t>(k)];
    if (v.type != RedisReply::Type::String) break;  // missing (never written, expired, evicted)
    counters_.bytes_read.fetch_add(static_cast<int64_t>(v.str.size()));
    KvDecodeResult c = decode_kv_entry(v.str, KvEntryKind::Chunk, options_.fingerprint, k * ct);
    const int32_t n = static_cast<int32_t>(c.entry.tokens.size());
    const bool fits = c.status == KvDecodeStatus::Ok && n > 0 && n % b == 0 && n <= ct &&
                      k * ct + n <= static_cast<int32_t>(f.history.size()) &&
                      std::equal(c.entry.tokens.begin(), c.entry.tokens.end(), f.history.begin() + k * ct) &&
                      c.entry.payload.size() == static_cast<size_t>(n / b) * static_cast<size_t>(options_.block_bytes);
    if (!fits) {
      const bool stale = c.status == KvDecodeStatus::Stale;
      (stale ? counters_.stale : counters_.corrupt).fetch_add(1);
      std::fprintf(stderr, "seer serve: shared KV tier: %s chunk %s ignored (%s); recomputing from there\n",
                   stale ? "stale" : "corrupt", keys[static_cast<size_t>(k)].c_str(),
                   c.status != KvDecodeStatus::Ok ? c.why.c_str() : "its tokens or size disagree with the history");
      break;
    }
    f.kv += c.entry.payload;
    f.kv_tokens += n;
    if (n < ct) break;  // a partial chunk ends what was stored
  }
}

}  // namespace seer
