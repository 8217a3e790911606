#include "runtime/host_tasks.h"

#include <string>

#include "common/thread_name.h"

namespace seer {

HostTasks::HostTasks(int workers) : num_workers_(workers > 0 ? workers : 0) {}

HostTasks::~HostTasks() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void HostTasks::start(size_t n, std::function<void(size_t)> fn, int max_workers) {
  {
    MutexLock lock(mu_);
    fn_ = std::move(fn);
    num_jobs_ = n;
    next_ = done_ = 0;
    max_workers_ = max_workers;
    ++round_;
  }
  if (n <= 1 || max_workers <= 0 || num_workers_ == 0) return;  // the caller's own job
  while (static_cast<int>(threads_.size()) < num_workers_) {
    const int index = static_cast<int>(threads_.size());
    threads_.emplace_back([this, index] {
      set_thread_name("seer-sample-" + std::to_string(index + 1));
      worker_main(index);
    });
  }
  cv_.notify_all();
}

void HostTasks::run_jobs(uint64_t round) {
  MutexLock lock(mu_);
  while (round_ == round && next_ < num_jobs_) {
    const size_t job = next_++;
    const std::function<void(size_t)>* fn = &fn_;  // not reassigned before this round's wait() returns
    lock.unlock();
    std::exception_ptr error;
    try {
      (*fn)(job);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (++done_ == num_jobs_) cv_.notify_all();
  }
}

void HostTasks::worker_main(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t round;
    {
      MutexLock lock(mu_);
      lock.wait(cv_, [&]() REQUIRES(mu_) { return stop_ || (round_ != seen && index < max_workers_); });
      if (stop_) return;
      seen = round = round_;
    }
    run_jobs(round);
  }
}

void HostTasks::wait() {
  uint64_t round;
  {
    MutexLock lock(mu_);
    round = round_;
  }
  run_jobs(round);
  std::exception_ptr error;
  {
    MutexLock lock(mu_);
    lock.wait(cv_, [&]() REQUIRES(mu_) { return done_ == num_jobs_; });
    std::swap(error, error_);
    fn_ = nullptr;
    num_jobs_ = next_ = done_ = 0;
  }
  if (error) std::rethrow_exception(error);
}

void HostTasks::run(size_t n, std::function<void(size_t)> fn) {
  start(n, std::move(fn), num_workers_);
  wait();
}

}  // namespace seer
