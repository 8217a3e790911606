// RedisKvStore's I/O thread (server/redis_kv_store.h, "Threads"): it takes the
// queued jobs one at a time and runs them against Redis (writes, TTL refreshes,
// deletions, reads, erasures with a SCAN), each call timed, counted and bounded by
// the client's timeout; an outage is warned about once.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "kv/kv_chunk_codec.h"
#include "server/redis_kv_store.h"

namespace seer {

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
      if (job.fetch->erased) job.fetch->forget();
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
  const int32_t b = options_.block_size, ct = chunk_blocks_ * b;
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
