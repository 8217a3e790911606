#pragma once
// The bounded worker pool that turns a request body into engine requests: JSON
// parse, JSON Schema and GBNF compile, chat-template rendering, tokenization. These
// grow with the request (a 45,000-property schema, an 8 MiB prompt) and would stall
// every connection an I/O thread serves; here they cannot (docs/security.md,
// "Request data"). A full pool refuses at once (the caller answers 503), and a job
// that waited past the budget is not started.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace boost::asio {
class thread_pool;
}

namespace seer::server {

struct PrepareOptions {
  int threads = 2;                  // workers (--prepare-threads)
  size_t max_pending = 256;         // jobs queued or running; more get 503
  double queue_budget_s = 10;       // a job that waited longer is answered 503 unstarted
};

class PreparePool {
 public:
  explicit PreparePool(PrepareOptions opts);
  ~PreparePool();  // waits for running jobs; queued ones run with `expired` true
  PreparePool(const PreparePool&) = delete;
  PreparePool& operator=(const PreparePool&) = delete;

  // Queues `job` unless max_pending jobs are already pending (then false). The job
  // runs on a worker with `expired` true when it waited longer than the budget (or
  // the pool is stopping): it should then only answer that it did not run.
  [[nodiscard]] bool try_submit(std::function<void(bool expired)> job);

  // Jobs queued or running now (for /v1/state and tests).
  size_t pending() const { return pending_.load(); }
  size_t max_pending() const { return opts_.max_pending; }
  double queue_budget_s() const { return opts_.queue_budget_s; }

 private:
  // Set at construction.
  const PrepareOptions opts_;
  std::unique_ptr<boost::asio::thread_pool> pool_;
  // Shared with the workers.
  std::atomic<size_t> pending_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace seer::server
