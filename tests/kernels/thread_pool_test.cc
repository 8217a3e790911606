#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "kernels/thread_pool.h"

namespace seer {
namespace {

TEST(ThreadPool, RunsEveryTaskOnceAcrossManyRegions) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.size(), 2);
  for (int region = 0; region < 2000; ++region) {
    const int n = 1 + region % 37;
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, [&](int64_t t, int thread) {
      ASSERT_GE(thread, 0);
      ASSERT_LT(thread, 2);
      hits[t].fetch_add(1);
    });
    for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << region;
  }
}

TEST(ThreadPool, PropagatesTheFirstException) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(100, [](int64_t t, int) {
    if (t == 42) throw std::runtime_error("task 42");
  }), std::runtime_error);
  std::atomic<int> count{0};
  pool.parallel_for(10, [&](int64_t, int) { count++; });  // still usable
  EXPECT_EQ(count.load(), 10);
}

TEST(ThreadPool, SingleThreadRunsInline) {
  ThreadPool pool(1);
  int sum = 0;
  pool.parallel_for(5, [&](int64_t t, int thread) {
    EXPECT_EQ(thread, 0);
    sum += static_cast<int>(t);
  });
  EXPECT_EQ(sum, 10);
}

}  // namespace
}  // namespace seer
