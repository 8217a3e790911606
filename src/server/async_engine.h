#pragma once
// The engine on its own thread (docs/architecture.md §2: HTTP threads only parse, enqueue and
// stream). Requests arrive through a bounded, thread-safe submission queue; each
// gets a RequestStream for its output; a consumer may cancel at any time and the
// engine thread then aborts the request, freeing its KV, before its next step.
//
// What a client sees is never ahead of /metrics: the events of a step (tokens,
// finishes) are held in an outbox and delivered only after the engine's state
// after that step (KV blocks used, running requests, token counters, finished
// counts) is published. A client that has its last chunk reads the KV as freed.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "engine/engine.h"
#include "server/redis_kv_store.h"
#include "server/output_text.h"
#include "server/request_stream.h"
#include "server/server_metrics.h"
#include "tokenizer/tokenizer.h"

namespace seer::server {

struct AsyncEngineOptions {
  // Requests waiting (queued here or in the scheduler's waiting queue) beyond which
  // submit() answers 429.
  size_t max_waiting = 1024;
  // The shared KV tier (`--shared-kv`, docs/deploy.md): a request of a conversation
  // whose KV this replica lacks waits (off the engine loop) for a read of its
  // history and stored K/V before it is admitted. Not owned; nullptr: none.
  RedisKvStore* shared_kv = nullptr;
};

class AsyncEngine final : private EngineObserver {
 public:
  // `engine`, `tokenizer` and `metrics` must outlive this object. Starts the thread.
  AsyncEngine(Engine& engine, const Tokenizer& tokenizer, ServerMetrics& metrics, AsyncEngineOptions opts = {});
  ~AsyncEngine() override;  // aborts whatever is left and joins the thread

  // Queues a request (its arrival_s is set here). Throws ApiError: 429 when the
  // queue is full, 503 when shutting down or after an engine failure.
  std::shared_ptr<RequestStream> submit(Request r);
  // Queues the n choices of one prompt (build_choice_requests), one stream each.
  // With prefix reuse the prompt is prefilled once: a prefill of the prompt alone
  // runs first (one token, discarded; no stream, no metrics) and when it ends its KV
  // is the cached prefix every choice then shares (docs/serving.md, n). Without
  // prefix reuse each choice prefills its own copy.
  std::vector<std::shared_ptr<RequestStream>> submit_choices(std::vector<Request> choices);
  // Forgets a conversation (Engine::delete_conversation) on the engine thread. False
  // when there is no such conversation, it expired, or the engine did not answer in
  // time.
  [[nodiscard]] bool delete_conversation(const std::string& id);
  // Asks the engine thread to abort the request of `stream` (no-op once finished).
  void cancel(const std::shared_ptr<RequestStream>& stream);

  // Stops accepting, lets in-flight requests finish until `grace` has passed, then
  // aborts the rest and stops the thread. Returns the number of requests aborted.
  size_t shutdown(std::chrono::milliseconds grace);

  bool accepting() const { return accepting_.load(); }
  bool failed() const { return failed_.load(); }
  // Submitted and not yet finished.
  size_t num_in_flight() const { return in_flight_.load(); }
  size_t num_waiting() const;

 private:
  struct Pending {
    Request request;
    std::shared_ptr<RequestStream> stream;
    bool looked_up = false;  // the shared tier was asked already
    // Non-empty: this is the shared prefill of these choices (admitted when it ends).
    std::vector<Pending> choices{};
    // A choice admitted after its group's prefill: the prompt tokens that prefill reused.
    std::optional<int32_t> prefill_cached{};
  };
  struct Fetching {
    Pending pending;
    std::shared_ptr<const SharedFetch> fetch;
  };
  // An event held until the engine state that produced it is published.
  struct Outgoing {
    std::shared_ptr<RequestStream> stream;
    StreamEvent event;
    bool ends_request = false;  // in_flight_ drops on delivery (before the push)
    // A request the engine finished: its latency and finish reason are counted on
    // delivery, together with the published state.
    std::optional<double> finished_e2e_s;
  };
  struct Live {
    std::shared_ptr<RequestStream> stream;
    OutputText text;
    double arrival_s = 0;
    double last_token_s = -1;
    int32_t untold_tokens = 0;  // generated since the last event (StreamEvent::tokens)
    std::optional<int32_t> prefill_cached{};  // Pending::prefill_cached
    // A group's shared prefill: the choices waiting for it (no client of its own).
    bool prefill_only = false;
    std::vector<Pending> choices{};
  };

  void run();
  void admit_pending();
  void admit(Pending& p);
  // A group of choices: its shared prefill first when prefix reuse can serve them.
  void admit_group(Pending& p);
  // Admits the choices whose shared prefill ended in the last step.
  void admit_released();
  // Ends the choices still waiting for the shared prefill `live`.
  void end_choices(Live& live, FinishReason reason, const std::string& why);
  // Admits the requests whose shared-tier read finished (all of them when `all`).
  void admit_fetched(bool all = false);
  void restore_from_shared(const Request& r, const std::shared_ptr<const SharedFetch>& f);
  void process_deletions();
  void process_cancellations();
  void abort_all(FinishReason reason, const std::string& why);
  void publish_engine_state();
  // Queues `e` for `stream`; deliver() hands it over.
  void send(const std::shared_ptr<RequestStream>& stream, StreamEvent e, bool ends_request = false,
            std::optional<double> finished_e2e_s = std::nullopt);
  // Publishes the engine state, then pushes every queued event in order.
  void deliver();
  // An exception inside a step: logs the state, ends the requests in flight with an
  // error and rebuilds the engine's KV state (Engine::recover); fail() only when
  // that recovery itself fails.
  void recover(const std::string& what);
  // Stops admitting for good: every request, now and later, is refused.
  void fail(const std::string& what);
  bool on_token(const Request& r, const SampledToken& sampled) override;
  void on_finished(const Request& r) override;

  Engine& engine_;
  const Tokenizer& tokenizer_;
  ServerMetrics& metrics_;
  AsyncEngineOptions opts_;

  mutable Mutex mutex_;
  std::condition_variable cv_;
  std::deque<Pending> pending_ GUARDED_BY(mutex_);
  std::deque<std::pair<std::string, std::shared_ptr<std::promise<bool>>>> deletions_ GUARDED_BY(mutex_);
  bool wake_ GUARDED_BY(mutex_) = false;
  bool stop_ GUARDED_BY(mutex_) = false;
  std::atomic<bool> accepting_{true};
  std::atomic<bool> failed_{false};
  std::atomic<bool> abort_everything_{false};
  std::atomic<size_t> in_flight_{0};
  std::atomic<size_t> engine_waiting_{0};
  std::atomic<size_t> cancels_{0};  // cancellations not yet seen by the engine thread

  // Engine thread only.
  std::unordered_map<RequestId, Live> live_;
  std::vector<Outgoing> outbox_;
  std::vector<Fetching> fetching_;  // waiting for the shared tier
  std::vector<Pending> released_;   // choices whose shared prefill just ended

  std::thread thread_;
};

}  // namespace seer::server
