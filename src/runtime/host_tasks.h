#pragma once
// A few threads for the executor's per-request host work: the grammar masks while
// the forward pass runs, the sampling after it (docs/structured-outputs.md, "Cost").
// A round is n jobs, the indices 0..n-1 of one function, claimed one at a time; the
// caller of wait() claims them too, so a descheduled worker (a busy 2-core machine)
// costs parallelism, never a wait for it to wake. Threads start on first use.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"

namespace seer {

class HostTasks {
 public:
  // `workers`: threads besides the caller (0: the caller does every job).
  explicit HostTasks(int workers);
  ~HostTasks();
  HostTasks(const HostTasks&) = delete;
  HostTasks& operator=(const HostTasks&) = delete;

  int workers() const { return num_workers_; }

  // Starts fn(0) .. fn(n - 1) on at most `max_workers` of the workers and returns at
  // once; fn and what it touches stay valid and otherwise untouched until wait().
  void start(size_t n, std::function<void(size_t)> fn, int max_workers);
  // Returns once every job of the last start() is done, running unclaimed ones
  // itself; rethrows the first exception a job threw.
  void wait();
  // start() on every worker, then wait(): the caller is one more thread.
  void run(size_t n, std::function<void(size_t)> fn);

 private:
  void worker_main(int index);
  // Claims and runs jobs of round `round` until none is left.
  void run_jobs(uint64_t round);

  const int num_workers_;
  Mutex mu_;
  std::condition_variable cv_;  // wakes the workers (a round, stop) and wait() (all done)
  std::function<void(size_t)> fn_ GUARDED_BY(mu_);
  size_t num_jobs_ GUARDED_BY(mu_) = 0;
  size_t next_ GUARDED_BY(mu_) = 0;
  size_t done_ GUARDED_BY(mu_) = 0;
  uint64_t round_ GUARDED_BY(mu_) = 0;
  int max_workers_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::exception_ptr error_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_;  // touched by the owner's thread only
};

}  // namespace seer
