#include "server/async_engine.h"

#include <utility>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/error.h"
#include "common/thread_name.h"
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"
#include "server/api_error.h"
#include "server/cache_metrics.h"
#include "server/spec_metrics.h"
#include "server/shared_kv_metrics.h"

namespace seer::server {

AsyncEngine::AsyncEngine(Engine& engine, const Tokenizer& tokenizer, ServerMetrics& metrics, AsyncEngineOptions opts)
    : engine_(engine), tokenizer_(tokenizer), metrics_(metrics), opts_(opts) {
  engine_.add_observer(this);
  if (opts_.shared_kv)
    opts_.shared_kv->set_wake([this] {
      {
        MutexLock lock(mutex_);
        wake_ = true;
      }
      cv_.notify_one();
    });
  publish_engine_state();
  thread_ = std::thread([this] {
    set_thread_name("seer-engine");
    run();
  });
}

AsyncEngine::~AsyncEngine() { shutdown(std::chrono::milliseconds(0)); }

size_t AsyncEngine::num_waiting() const {
  MutexLock lock(mutex_);
  return pending_.size() + engine_waiting_.load();
}

std::shared_ptr<RequestStream> AsyncEngine::submit(Request r) {
  if (!accepting_.load() || failed_.load()) throw shutting_down_error();
  auto stream = std::make_shared<RequestStream>();
  {
    MutexLock lock(mutex_);
    if (pending_.size() + engine_waiting_.load() >= opts_.max_waiting) throw queue_full_error(opts_.max_waiting);
    r.arrival_s = engine_.clock().now();
    pending_.push_back({std::move(r), stream});
    wake_ = true;
    in_flight_.fetch_add(1);
  }
  cv_.notify_one();
  return stream;
}

void AsyncEngine::cancel(const std::shared_ptr<RequestStream>& stream) {
  if (!stream || stream->closed() || stream->cancel_requested()) return;
  stream->request_cancel();
  cancels_.fetch_add(1);
  {
    MutexLock lock(mutex_);
    wake_ = true;
  }
  cv_.notify_one();
}

size_t AsyncEngine::shutdown(std::chrono::milliseconds grace) {
  accepting_.store(false);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline && thread_.joinable())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  size_t aborted = in_flight_.load();
  abort_everything_.store(true);
  {
    MutexLock lock(mutex_);
    stop_ = true;
    wake_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (opts_.shared_kv) opts_.shared_kv->set_wake(nullptr);
  return aborted;
}

void AsyncEngine::run() {
  for (;;) {
    {
      MutexLock lock(mutex_);
      lock.wait(cv_,
                [&]() REQUIRES(mutex_) { return wake_ || stop_ || (!failed_.load() && engine_.has_unfinished()); });
      wake_ = false;
      if (stop_) break;
    }
    if (failed_.load()) {
      admit_pending();  // rejects them
      deliver();
      continue;
    }
    process_deletions();
    admit_pending();
    if (!fetching_.empty()) admit_fetched();
    if (cancels_.load() > 0) process_cancellations();
    admit_released();  // choices of a shared prefill that was aborted just now
    if (!engine_.has_unfinished()) {
      deliver();
      continue;
    }
    bool idle = false;
    try {
      const int64_t prompt_before = engine_.counters().prompt_tokens;
      IterationStats st = engine_.step();
      idle = st.idle;
      if (!st.idle) {
        metrics_.observe_iteration(st.elapsed_s, st.scheduler_time_s, st.batch_size, st.num_tokens);
        const auto prefill = static_cast<int32_t>(
            std::clamp<int64_t>(engine_.counters().prompt_tokens - prompt_before, 0, st.num_tokens));
        metrics_.live().record_iteration(prefill, st.num_tokens - prefill);
      }
    } catch (const std::exception& e) {
      recover(e.what());
    }
    admit_released();
    deliver();
    // Nothing runnable (e.g. waiting for memory another request frees): do not spin.
    if (idle) {
      MutexLock lock(mutex_);
      // Woken or timed out, the loop looks again: the result says nothing more.
      (void)lock.wait_for(cv_, std::chrono::milliseconds(2), [&]() REQUIRES(mutex_) { return wake_ || stop_; });
    }
  }
  // Shutting down: everything still queued or running ends now.
  admit_pending();
  admit_fetched(/*all=*/true);
  process_deletions();
  abort_all(FinishReason::Abort, "the server is shutting down");
  admit_released();  // refused: shutting down
  deliver();
}

bool AsyncEngine::delete_conversation(const std::string& id) {
  auto done = std::make_shared<std::promise<bool>>();
  std::future<bool> answer = done->get_future();
  {
    MutexLock lock(mutex_);
    if (stop_) return false;
    deletions_.emplace_back(id, done);
    wake_ = true;
  }
  cv_.notify_one();
  if (answer.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return false;
  return answer.get();
}

void AsyncEngine::process_deletions() {
  decltype(deletions_) batch;
  {
    MutexLock lock(mutex_);
    batch.swap(deletions_);
  }
  for (auto& [id, done] : batch) done->set_value(engine_.delete_conversation(id));
}

void AsyncEngine::admit_pending() {
  std::deque<Pending> batch;
  {
    MutexLock lock(mutex_);
    batch.swap(pending_);
  }
  for (auto& p : batch) admit(p);
}

void AsyncEngine::admit_fetched(bool all) {
  std::vector<Fetching> waiting;
  waiting.swap(fetching_);
  for (Fetching& f : waiting) {
    if (!all && !f.fetch->done.load()) {
      fetching_.push_back(std::move(f));
      continue;
    }
    if (f.fetch->done.load() && !failed_.load() && !abort_everything_.load()) {
      try {
        restore_from_shared(f.pending.request, f.fetch);
      } catch (const std::exception& e) {
        recover(e.what());
      }
    }
    admit(f.pending);
  }
}

// The history and K/V read from the shared tier become this replica's cache entry
// (the host tier gets the blocks; the scheduler then attaches them as a cache hit).
void AsyncEngine::restore_from_shared(const Request& r, const std::shared_ptr<const SharedFetch>& f) {
  if (!opts_.shared_kv) return;
  opts_.shared_kv->stage(f);
  (void)engine_.conversations().restore_shared(r, f->history, engine_.clock().now());
  opts_.shared_kv->unstage(r.conversation);
}

void AsyncEngine::admit(Pending& p) {
  if (!p.choices.empty()) return admit_group(p);
  {
    auto reject = [&](int status, const std::string& message, const std::string& code = "") {
      StreamEvent e;
      e.kind = StreamEvent::Kind::Rejected;
      e.status = status;
      e.message = message;
      e.code = code;
      send(p.stream, std::move(e), /*ends_request=*/true);
    };
    if (failed_.load() || abort_everything_.load()) {
      reject(503, "the server is shutting down");
      return;
    }
    if (p.stream->cancel_requested()) {
      reject(499, "cancelled by the client");
      return;
    }
    if (opts_.shared_kv && !p.looked_up &&
        engine_.conversations().wants_shared(p.request.conversation, engine_.clock().now())) {
      p.looked_up = true;
      std::shared_ptr<const SharedFetch> fetch = opts_.shared_kv->fetch(p.request.conversation);
      fetching_.push_back({std::move(p), std::move(fetch)});
      return;
    }
    const double arrival = p.request.arrival_s;
    const bool logprobs = p.request.sampling.logprobs;
    std::vector<std::string> stops = p.request.sampling.stop;
    try {
      RequestId id = engine_.add_request(std::move(p.request));
      Live live{p.stream, OutputText(tokenizer_, std::move(stops), logprobs), arrival};
      live.prefill_cached = p.prefill_cached;
      live_.emplace(id, std::move(live));
      StreamEvent accepted;
      accepted.kind = StreamEvent::Kind::Accepted;
      send(p.stream, std::move(accepted));
    } catch (const Error& e) {
      reject(e.code() == "conversation_not_found" ? 404 : 400, e.what(), e.code());
    } catch (const std::exception& e) {
      reject(500, std::string("internal error: ") + e.what());
    }
  }
}

void AsyncEngine::process_cancellations() {
  std::vector<RequestId> ids;
  auto all_cancelled = [](const Live& live) {
    return std::all_of(live.choices.begin(), live.choices.end(),
                       [](const Pending& c) { return c.stream->cancel_requested(); });
  };
  for (const auto& [id, live] : live_)
    if (live.prefill_only ? all_cancelled(live) : live.stream->cancel_requested()) ids.push_back(id);
  cancels_.store(0);
  for (RequestId id : ids) {
    // abort_request reports through on_finished; finish here if it did not (an id the
    // engine no longer knows: false).
    (void)engine_.abort_request(id);
    if (auto it = live_.find(id); it != live_.end()) {
      if (it->second.prefill_only) {
        end_choices(it->second, FinishReason::Abort, "cancelled by the client");
      } else {
        StreamEvent e;
        e.kind = StreamEvent::Kind::Finished;
        e.finish_reason = FinishReason::Abort;
        send(it->second.stream, std::move(e), /*ends_request=*/true);
      }
      live_.erase(it);
    }
  }
}

void AsyncEngine::abort_all(FinishReason reason, const std::string& why) {
  std::vector<RequestId> ids;
  for (const auto& [id, live] : live_) ids.push_back(id);
  for (RequestId id : ids) {
    if (!failed_.load()) {
      try {
        (void)engine_.abort_request(id);  // the stream is finished below either way
      } catch (const std::exception& e) {
        std::fprintf(stderr, "seer serve: aborting request %lld failed: %s\n", static_cast<long long>(id), e.what());
      }
    }
    if (auto it = live_.find(id); it != live_.end()) {
      if (it->second.prefill_only) {
        end_choices(it->second, reason, why);
      } else {
        StreamEvent e;
        e.kind = StreamEvent::Kind::Finished;
        e.finish_reason = reason;
        e.message = why;
        send(it->second.stream, std::move(e), /*ends_request=*/true);
      }
      live_.erase(it);
    }
  }
}

void AsyncEngine::recover(const std::string& what) {
  std::fprintf(stderr, "seer serve: engine failure: %s\n%s", what.c_str(), engine_.state_dump().c_str());
  try {
    const size_t ended = engine_.recover("engine failure: " + what + " (this request was ended; the server recovered)");
    std::fprintf(stderr, "seer serve: ended %zu requests and rebuilt the KV state; serving again\n", ended);
  } catch (const std::exception& e) {
    fail(what + "; recovery failed: " + e.what());
    return;
  }
  abort_all(FinishReason::Error, "engine failure: " + what);  // streams the engine no longer knows
  publish_engine_state();
}

void AsyncEngine::fail(const std::string& what) {
  std::fprintf(stderr, "seer serve: engine failure: %s; failing all requests\n", what.c_str());
  failed_.store(true);
  accepting_.store(false);
  abort_all(FinishReason::Error, "engine failure: " + what);
}

void AsyncEngine::publish_engine_state() {
  const KvUsage kv = engine_.kv().usage();
  const EngineCounters& c = engine_.counters();
  EngineGaugeValues v;
  v.requests_running = static_cast<double>(engine_.num_running());
  v.requests_waiting = static_cast<double>(engine_.num_waiting());  // includes the swapped
  v.requests_swapped = static_cast<double>(engine_.num_swapped());
  // Blocks requests hold; the conversation/prefix cache's are seer_kv_blocks_cached
  // (free for the asking: evicted when a request needs them).
  const ConversationCache* cache = engine_.scheduler().conversations().cache();
  v.kv_host_blocks_used = kv.host.used() - (cache ? cache->blocks(KvTier::Host) : 0);
  v.kv_host_blocks_total = kv.host.total;
  v.kv_blocks_used = kv.device.used() - (cache ? cache->blocks(KvTier::Device) : 0);
  v.kv_blocks_total = kv.device.total;
  v.kv_utilization = kv.utilization();
  v.preemptions = static_cast<double>(c.preemptions);
  v.allocation_failures = static_cast<double>(c.allocation_failures);
  v.prompt_tokens = static_cast<double>(c.prompt_tokens);
  v.generation_tokens = static_cast<double>(c.generation_tokens);
  v.swapped_bytes = static_cast<double>(c.swapped_bytes);
  v.recomputed_tokens = static_cast<double>(c.recomputed_tokens);
  v.reservation_growths = static_cast<double>(c.reservation_growths);
  v.supervisor_preemptions = static_cast<double>(c.supervisor_preemptions);
  v.engine_recoveries = static_cast<double>(c.recoveries);
  engine_waiting_.store(engine_.num_waiting());
  metrics_.publish_engine(v);
  publish_cache_metrics(metrics_.registry(), engine_.kv(), engine_.scheduler().conversations().cache());
  if (engine_.config().drafter) publish_spec_metrics(metrics_.registry(), c);
  if (opts_.shared_kv) publish_shared_kv_metrics(metrics_.registry(), opts_.shared_kv->counters());
}

bool AsyncEngine::on_token(const Request& r, const SampledToken& sampled) {
  auto it = live_.find(r.id);
  if (it == live_.end()) return false;
  Live& live = it->second;
  if (live.prefill_only) return false;  // its one token is dropped
  const double now = engine_.clock().now();
  if (live.last_token_s < 0) {
    metrics_.observe_ttft(now - live.arrival_s);
    if (r.first_scheduled_s >= 0) metrics_.observe_queue_time(r.first_scheduled_s - live.arrival_s);
  } else {
    metrics_.observe_tbt(now - live.last_token_s);
  }
  live.last_token_s = now;
  bool stop = live.text.push(sampled.token, sampled.logprob, sampled.top_logprobs);
  ++live.untold_tokens;
  StreamEvent e;
  e.text = live.text.take_text();
  e.logprobs = live.text.take_logprobs();
  if (!e.text.empty() || !e.logprobs.empty()) {
    e.tokens = std::exchange(live.untold_tokens, 0);
    send(live.stream, std::move(e));
  }
  return stop;
}

void AsyncEngine::on_finished(const Request& r) {
  auto it = live_.find(r.id);
  if (it == live_.end()) return;
  Live& live = it->second;
  if (live.prefill_only) {  // its KV is now the cached prefix the choices share
    for (Pending& c : live.choices) {
      c.prefill_cached = r.cached_prompt_tokens;
      released_.push_back(std::move(c));
    }
    live_.erase(it);
    return;
  }
  live.text.flush();
  StreamEvent e;
  e.kind = StreamEvent::Kind::Finished;
  e.text = live.text.take_text();
  e.tokens = live.untold_tokens;
  e.logprobs = live.text.take_logprobs();
  e.finish_reason = r.finish_reason;
  e.message = r.error;
  e.usage = {r.prompt_len(), r.num_output(), live.prefill_cached.value_or(r.cached_prompt_tokens), 0};
  if (r.finish_reason == FinishReason::Stop || r.finish_reason == FinishReason::Length) metrics_.observe_prediction(r);
  send(live.stream, std::move(e), /*ends_request=*/true, engine_.clock().now() - live.arrival_s);
  live_.erase(it);
}

void AsyncEngine::send(const std::shared_ptr<RequestStream>& stream, StreamEvent e, bool ends_request,
                       std::optional<double> finished_e2e_s) {
  outbox_.push_back({stream, std::move(e), ends_request, finished_e2e_s});
}

void AsyncEngine::deliver() {
  publish_engine_state();
  std::vector<Outgoing> batch;
  batch.swap(outbox_);
  for (Outgoing& o : batch) {
    if (o.finished_e2e_s) {
      metrics_.observe_e2e(*o.finished_e2e_s);
      metrics_.count_finished(o.event.finish_reason);
    }
    if (o.ends_request) in_flight_.fetch_sub(1);  // before the push: a consumer that sees the end sees the count
    o.stream->push(std::move(o.event));
  }
}

}  // namespace seer::server
