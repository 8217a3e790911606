#pragma once
// A small fork-join pool for the forward pass: parallel_for hands out task indices
// dynamically (an atomic counter), so a core that is busy with something else on a
// shared machine simply takes fewer tasks. Workers spin briefly before sleeping
// because a decode step issues hundreds of short parallel regions.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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
  void run_tasks(int thread);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> busy_workers_{0};
  std::atomic<int64_t> next_task_{0};
  int64_t num_tasks_ = 0;
  const std::function<void(int64_t, int)>* fn_ = nullptr;
  bool stop_ = false;
  std::mutex error_mu_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

}  // namespace seer
