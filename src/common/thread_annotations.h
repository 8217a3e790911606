#pragma once
// Clang thread-safety annotations (-Wthread-safety) and the annotated mutex types
// they check, in the style of LevelDB and Abseil. Under Clang the macros expand to
// the analysis attributes; under GCC to nothing. The analysis sees only locks taken
// through these types (libstdc++'s std::mutex is not annotated), so shared state is
// guarded by a seer::Mutex and locked with a seer::MutexLock.
//
// Waiting on a condition variable: MutexLock::wait(cv, pred). The predicate runs
// with the lock held but is analysed as its own function, so a predicate that reads
// guarded members says so: `lock.wait(cv_, [&]() REQUIRES(mutex_) { return stop_; })`.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define SEER_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SEER_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) SEER_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY SEER_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) SEER_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) SEER_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) SEER_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) SEER_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) SEER_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) SEER_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) SEER_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) SEER_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) SEER_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) SEER_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) SEER_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) SEER_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) SEER_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) SEER_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) SEER_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS SEER_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace seer {

// std::mutex as a capability the analysis tracks.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  [[nodiscard]] bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope (std::unique_lock underneath, so condition variables
// can wait on it); unlock()/lock() release and retake it inside the scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() RELEASE() { lock_.unlock(); }
  void lock() ACQUIRE() { lock_.lock(); }

  template <class Pred>
  void wait(std::condition_variable& cv, Pred pred) {
    cv.wait(lock_, std::move(pred));
  }
  template <class Rep, class Period, class Pred>
  [[nodiscard]] bool wait_for(std::condition_variable& cv, std::chrono::duration<Rep, Period> timeout, Pred pred) {
    return cv.wait_for(lock_, timeout, std::move(pred));
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// std::shared_mutex as a capability: many readers or one writer.
class CAPABILITY("mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  [[nodiscard]] bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  [[nodiscard]] bool try_lock_shared() TRY_ACQUIRE_SHARED(true) { return mu_.try_lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterLock() RELEASE() { mu_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds a SharedMutex shared (as a reader) for its scope.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() RELEASE() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace seer
