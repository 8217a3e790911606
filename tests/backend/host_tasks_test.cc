// HostTasks: every job of a round runs exactly once, whoever claims it (a worker or
// the waiting caller), across many rounds of different sizes; a job's exception
// reaches wait() and the next round still runs.
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/host_tasks.h"
#include "sampling/rng.h"

namespace seer {
namespace {

TEST(HostTasks, EveryJobRunsExactlyOnceInEveryRound) {
  HostTasks tasks(3);
  Rng rng(5);
  for (int round = 0; round < 500; ++round) {
    const size_t n = rng.next() % 41;
    std::vector<std::atomic<int>> runs(n);
    auto fn = [&](size_t i) { runs[i].fetch_add(1); };
    if (round % 2) {
      tasks.run(n, fn);
    } else {
      tasks.start(n, fn, 1 + round % 3);
      tasks.wait();
    }
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(runs[i].load(), 1) << "round " << round << " job " << i;
  }
}

TEST(HostTasks, NoWorkersMeansTheCallerRunsEveryJob) {
  for (int workers : {0, 2}) {
    HostTasks tasks(workers);
    std::vector<std::thread::id> who(16);
    tasks.start(who.size(), [&](size_t i) { who[i] = std::this_thread::get_id(); }, workers == 0 ? 4 : 0);
    tasks.wait();
    for (const auto& id : who) EXPECT_EQ(id, std::this_thread::get_id()) << workers << " workers";
  }
}

TEST(HostTasks, AJobsExceptionReachesWaitAndTheNextRoundRuns) {
  HostTasks tasks(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(tasks.run(20,
                         [&](size_t i) {
                           ran.fetch_add(1);
                           if (i == 7) throw std::runtime_error("job 7");
                         }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 20);  // the other jobs still ran
  std::atomic<int> next{0};
  tasks.run(10, [&](size_t) { next.fetch_add(1); });
  EXPECT_EQ(next.load(), 10);
}

}  // namespace
}  // namespace seer
