#include "kernels/thread_pool.h"

#include <chrono>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/thread_name.h"

namespace seer {
namespace {

// How long a worker keeps polling for the next region before it sleeps.
constexpr auto kWorkerSpin = std::chrono::microseconds(100);
// Polls of the caller between yields while it waits for tasks running elsewhere.
constexpr int kCallerPollsPerYield = 256;

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
  for (int t = 1; t < threads; ++t)
    workers_.emplace_back([this, t] {
      set_thread_name("seer-compute-" + std::to_string(t));
      worker_main(t);
    });
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    region_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_tasks(uint32_t region, int64_t num_tasks, const std::function<void(int64_t, int)>* fn,
                           int thread) {
  uint64_t cur = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (static_cast<uint32_t>(cur >> 32) != region) return;
    const int64_t task = static_cast<int64_t>(cur & 0xffffffffu);
    if (task >= num_tasks) return;
    if (!claim_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    if (!failed_.load(std::memory_order_relaxed)) {
      try {
        (*fn)(task, thread);
      } catch (...) {
        MutexLock lock(error_mu_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true, std::memory_order_relaxed);
      }
    }
    done_.fetch_add(1, std::memory_order_acq_rel);
    cur = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::parallel_for(int64_t num_tasks, const std::function<void(int64_t, int)>& fn) {
  if (num_tasks <= 0) return;
  if (workers_.empty() || num_tasks == 1) {
    for (int64_t t = 0; t < num_tasks; ++t) fn(t, 0);
    return;
  }
  uint32_t region;
  {
    MutexLock lock(mu_);
    region = region_.load(std::memory_order_relaxed) + 1;
    fn_ = &fn;
    num_tasks_ = num_tasks;
    failed_.store(false, std::memory_order_relaxed);
    error_between_regions() = nullptr;
    done_.store(0, std::memory_order_relaxed);
    claim_.store(static_cast<uint64_t>(region) << 32, std::memory_order_release);
    region_.store(region, std::memory_order_release);
  }
  wake_.notify_all();
  run_tasks(region, num_tasks, &fn, 0);
  for (int polls = 1; done_.load(std::memory_order_acquire) != num_tasks; ++polls) {
    cpu_relax();
    if (polls % kCallerPollsPerYield == 0) std::this_thread::yield();
  }
  if (error_between_regions()) std::rethrow_exception(std::exchange(error_between_regions(), nullptr));
}

void ThreadPool::worker_main(int thread) {
  uint32_t seen = 0;
  for (;;) {
    auto spin_until = std::chrono::steady_clock::now() + kWorkerSpin;
    int polls = 0;
    while (region_.load(std::memory_order_acquire) == seen) {
      cpu_relax();
      if (++polls % 64 == 0 && std::chrono::steady_clock::now() > spin_until) {
        MutexLock lock(mu_);
        lock.wait(wake_, [&] { return region_.load(std::memory_order_acquire) != seen; });
        break;
      }
    }
    uint32_t region;
    int64_t num_tasks;
    const std::function<void(int64_t, int)>* fn;
    {
      MutexLock lock(mu_);
      if (stop_) return;
      region = seen = region_.load(std::memory_order_acquire);
      num_tasks = num_tasks_;
      fn = fn_;
    }
    run_tasks(region, num_tasks, fn, thread);
  }
}

}  // namespace seer
