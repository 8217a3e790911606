#include "bench/load_runner.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common/thread_annotations.h"

namespace seer::bench {

namespace {

class Limiter {  // a counting semaphore with a runtime bound; 0 = unbounded
 public:
  explicit Limiter(int max) : max_(max) {}
  void acquire() {
    if (max_ <= 0) return;
    MutexLock lock(m_);
    lock.wait(cv_, [&]() REQUIRES(m_) { return in_use_ < max_; });
    ++in_use_;
  }
  void release() {
    if (max_ <= 0) return;
    {
      MutexLock lock(m_);
      --in_use_;
    }
    cv_.notify_one();
  }

 private:
  int max_;
  Mutex m_;
  int in_use_ GUARDED_BY(m_) = 0;
  std::condition_variable cv_;
};

void sleep_until(const Clock& clock, double t) {
  double wait = t - clock.now();
  if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

// `conversation`: the id the server issued for the session ("" before its first turn).
ClientRequest turn_request(const BenchSession& s, size_t k, const RunnerOptions& opts,
                           const std::vector<std::pair<std::string, std::string>>& history,
                           const std::string& conversation) {
  const BenchTurn& t = s.turns[k];
  ClientRequest r;
  r.api = opts.api;
  r.model = opts.model;
  r.api_key = opts.api_key;
  r.max_tokens = t.output_tokens;
  r.ignore_eos = true;
  r.temperature = opts.temperature;
  r.timeout_s = opts.timeout_s;
  if (opts.api == Api::Completions) {
    if (!t.prompt_text.empty()) r.prompt = t.prompt_text;
    else r.prompt = t.prompt_ids;
    return r;
  }
  if (opts.stateful && !s.conversation.empty()) {
    // A conversation starts under an id the server issues (docs/security.md); servers
    // that issue none keep the trace's name.
    r.conversation = k == 0 ? "new" : (conversation.empty() ? s.conversation : conversation);
  } else {
    r.messages = history;
  }
  r.messages.emplace_back("user", t.prompt_text);
  return r;
}

}  // namespace

std::vector<TurnResult> run_sessions(const std::vector<BenchSession>& sessions, const RunnerOptions& opts,
                                     const Clock& clock, const std::function<void(int64_t, int64_t)>& on_done) {
  std::vector<std::vector<TurnResult>> per_session(sessions.size());
  Limiter limiter(opts.max_concurrency);
  std::mutex done_mutex;
  int64_t done = 0, total = count_turns(sessions);
  const double t0 = clock.now();

  auto run_one = [&](size_t i) {
    const BenchSession& s = sessions[i];
    std::vector<std::pair<std::string, std::string>> history;
    std::string conversation;  // as the server issued it
    bool failed = false;
    for (size_t k = 0; k < s.turns.size(); ++k) {
      const BenchTurn& t = s.turns[k];
      TurnResult tr{t.id, s.conversation, static_cast<int32_t>(k), t.prompt_tokens, t.output_tokens, t.slo, {}, failed};
      if (!failed) {
        if (k > 0) std::this_thread::sleep_for(std::chrono::duration<double>(t.think_s));
        ClientRequest req = turn_request(s, k, opts, history, conversation);
        limiter.acquire();
        tr.result = send_streaming(opts.url, req, clock);
        limiter.release();
        if (k == 0) conversation = tr.result.conversation;
        failed = !tr.result.ok;
        history.emplace_back("user", t.prompt_text);
        history.emplace_back("assistant", tr.result.text);
      } else {
        tr.result.error = "not sent: an earlier turn of the conversation failed";
      }
      per_session[i].push_back(std::move(tr));
      std::lock_guard lock(done_mutex);
      ++done;
      if (on_done) on_done(done, total);
    }
  };

  // A pool that grows while every worker is busy: sessions start on time without a
  // thread per session. Single-turn sessions never need more workers than the
  // concurrency bound.
  const bool single_turn = std::all_of(sessions.begin(), sessions.end(), [](const auto& s) { return s.turns.size() == 1; });
  const size_t cap = single_turn && opts.max_concurrency > 0 ? static_cast<size_t>(opts.max_concurrency) : 4096;
  std::mutex qm;
  std::condition_variable qcv;
  std::deque<size_t> ready;
  size_t idle = 0;
  bool all_queued = false;
  std::vector<std::thread> workers;
  // idle: workers not running a session (counted from their creation).
  auto worker = [&] {
    std::unique_lock lock(qm);
    for (;;) {
      qcv.wait(lock, [&] { return !ready.empty() || all_queued; });
      if (ready.empty()) return;
      --idle;
      size_t i = ready.front();
      ready.pop_front();
      lock.unlock();
      run_one(i);
      lock.lock();
      ++idle;
    }
  };
  for (size_t i = 0; i < sessions.size(); ++i) {
    sleep_until(clock, t0 + sessions[i].start_s);
    std::lock_guard lock(qm);
    ready.push_back(i);
    if (ready.size() > idle && workers.size() < cap) {
      ++idle;
      workers.emplace_back(worker);
    }
    qcv.notify_one();
  }
  {
    std::lock_guard lock(qm);
    all_queued = true;
  }
  qcv.notify_all();
  for (auto& th : workers) th.join();

  std::vector<TurnResult> out;
  out.reserve(static_cast<size_t>(total));
  for (auto& v : per_session)
    for (auto& r : v) out.push_back(std::move(r));
  return out;
}

}  // namespace seer::bench
