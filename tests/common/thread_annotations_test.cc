// The annotated mutex types lock as the std types they wrap: a MutexLock holds its
// Mutex for its scope, unlock()/lock() release and retake it, waits return on the
// predicate or the deadline; readers share a SharedMutex, a writer excludes them.
#include "common/thread_annotations.h"

#include <thread>

#include <gtest/gtest.h>

namespace seer {
namespace {

// Whether another thread can take `mu` now (a thread may not try a std::mutex it holds).
bool free_elsewhere(Mutex& mu) NO_THREAD_SAFETY_ANALYSIS {
  bool got = false;
  std::thread([&]() NO_THREAD_SAFETY_ANALYSIS {
    got = mu.try_lock();
    if (got) mu.unlock();
  }).join();
  return got;
}

TEST(ThreadAnnotations, AMutexLockHoldsItsMutexForItsScope) {
  Mutex mu;
  {
    MutexLock lock(mu);
    EXPECT_FALSE(free_elsewhere(mu));
  }
  EXPECT_TRUE(free_elsewhere(mu));
}

TEST(ThreadAnnotations, UnlockReleasesAndLockRetakesInsideTheScope) {
  Mutex mu;
  MutexLock lock(mu);
  lock.unlock();
  EXPECT_TRUE(free_elsewhere(mu));
  lock.lock();
  EXPECT_FALSE(free_elsewhere(mu));
}

TEST(ThreadAnnotations, WaitReturnsOnceAnotherThreadMakesThePredicateTrue) {
  Mutex mu;
  std::condition_variable cv;
  bool ready = false;  // guarded by mu (GUARDED_BY is for members)
  std::thread producer([&] {
    {
      MutexLock lock(mu);
      ready = true;
    }
    cv.notify_one();
  });
  {
    MutexLock lock(mu);
    lock.wait(cv, [&]() REQUIRES(mu) { return ready; });
    EXPECT_TRUE(ready);
  }
  producer.join();
}

TEST(ThreadAnnotations, WaitForAnswersFalseAtTheDeadlineAndTrueWhenThePredicateHolds) {
  Mutex mu;
  std::condition_variable cv;
  MutexLock lock(mu);
  EXPECT_FALSE(lock.wait_for(cv, std::chrono::milliseconds(1), [] { return false; }));
  EXPECT_TRUE(lock.wait_for(cv, std::chrono::milliseconds(1), [] { return true; }));
}

TEST(ThreadAnnotations, ReadersShareASharedMutexAndAWriterExcludesThem) {
  SharedMutex mu;
  auto try_elsewhere = [&](bool shared) NO_THREAD_SAFETY_ANALYSIS {
    bool got = false;
    std::thread([&]() NO_THREAD_SAFETY_ANALYSIS {
      got = shared ? mu.try_lock_shared() : mu.try_lock();
      if (got && shared) mu.unlock_shared();
      if (got && !shared) mu.unlock();
    }).join();
    return got;
  };
  {
    ReaderLock lock(mu);
    EXPECT_TRUE(try_elsewhere(/*shared=*/true));
    EXPECT_FALSE(try_elsewhere(/*shared=*/false));
  }
  {
    WriterLock lock(mu);
    EXPECT_FALSE(try_elsewhere(/*shared=*/true));
  }
  EXPECT_TRUE(try_elsewhere(/*shared=*/false));
}

}  // namespace
}  // namespace seer
