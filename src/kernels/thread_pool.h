#pragma once
// A small fork-join pool for the forward pass. parallel_for hands out task indices
// dynamically, and the caller waits for *tasks*, not for workers: a worker that is
// descheduled (a shared 2-core machine) simply takes no task, and the caller does
// the work itself instead of waiting for it to wake up. Workers spin briefly before
// sleeping because a decode step issues hundreds of short parallel regions.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"

namespace seer {

class ThreadPool {
 public:
  // threads <= 0: one per hardware thread. The calling thread is one of them.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(task, thread) for task in [0, num_tasks), thread in [0, size()). Returns
  // when all tasks are done; the first exception a task threw is rethrown here (the
  // remaining tasks are skipped). Not reentrant: fn must not call parallel_for.
  void parallel_for(int64_t num_tasks, const std::function<void(int64_t task, int thread)>& fn);

 private:
  void worker_main(int thread);
  // Claims and runs tasks of region `region` until none is left.
  void run_tasks(uint32_t region, int64_t num_tasks, const std::function<void(int64_t, int)>* fn, int thread);
  // error_ as the caller of parallel_for sees it between regions: no task runs then
  // (done_ orders the tasks' writes before the caller's read), so no lock is taken.
  std::exception_ptr& error_between_regions() NO_THREAD_SAFETY_ANALYSIS { return error_; }

  std::vector<std::thread> workers_;
  Mutex mu_;
  std::condition_variable wake_;
  // (region << 32) | next task index: a claim fails once the region has moved on,
  // so a late worker never runs a task of a region that already returned. Each hot
  // atomic has its own cache line: idle workers poll region_ while the others change.
  alignas(64) std::atomic<uint64_t> claim_{0};
  alignas(64) std::atomic<int64_t> done_{0};
  alignas(64) std::atomic<uint32_t> region_{0};
  alignas(64) char pad_[1] = {};
  int64_t num_tasks_ GUARDED_BY(mu_) = 0;
  const std::function<void(int64_t, int)>* fn_ GUARDED_BY(mu_) = nullptr;
  bool stop_ GUARDED_BY(mu_) = false;
  Mutex error_mu_;
  std::exception_ptr error_ GUARDED_BY(error_mu_);  // while tasks run; see error_between_regions()
  std::atomic<bool> failed_{false};
};

}  // namespace seer
