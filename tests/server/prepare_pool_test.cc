// The workers that parse and compile request bodies off the I/O threads
// (server/prepare_pool.h): bounded, refusing at once when full, and not starting a
// job that waited past its budget.
#include "server/prepare_pool.h"

#include <condition_variable>
#include <future>
#include <mutex>

#include <gtest/gtest.h>

namespace seer::server {
namespace {

// A job that holds its worker until released.
class Gate {
 public:
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }
  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(PreparePool, RefusesAtOnceWhenFullAndCountsJobsUntilTheyEnd) {
  PreparePool pool(PrepareOptions{1, 2, 60});
  Gate gate;
  std::promise<void> first_started, second_ran;
  ASSERT_TRUE(pool.try_submit([&](bool expired) {
    EXPECT_FALSE(expired);
    first_started.set_value();
    gate.wait();
  }));
  first_started.get_future().wait();
  ASSERT_TRUE(pool.try_submit([&](bool expired) {
    EXPECT_FALSE(expired);
    second_ran.set_value();
  }));
  EXPECT_EQ(pool.pending(), 2u);
  EXPECT_FALSE(pool.try_submit([](bool) { ADD_FAILURE() << "a refused job ran"; }));
  EXPECT_EQ(pool.pending(), 2u) << "a refused job is not counted";
  gate.open();
  second_ran.get_future().wait();
}

TEST(PreparePool, AJobThatWaitedPastTheBudgetRunsExpired) {
  PreparePool pool(PrepareOptions{1, 4, 1e-9});
  Gate gate;
  std::promise<void> first_started;
  std::promise<bool> second;
  ASSERT_TRUE(pool.try_submit([&](bool) {
    first_started.set_value();
    gate.wait();
  }));
  first_started.get_future().wait();
  ASSERT_TRUE(pool.try_submit([&](bool expired) { second.set_value(expired); }));
  auto expired = second.get_future();
  gate.open();
  EXPECT_TRUE(expired.get());
}

}  // namespace
}  // namespace seer::server
