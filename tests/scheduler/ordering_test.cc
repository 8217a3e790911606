#include <gtest/gtest.h>

#include "common/error.h"
#include "scheduler/parts/ordering.h"
#include "scheduler/request_queue.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

Request make(RequestId id, double arrival, int32_t priority) {
  Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.priority = priority;
  r.prompt_tokens = {1, 2, 3};
  r.sampling.max_tokens = 4;
  return r;
}

TEST(RequestQueue, KeepsKeyOrderAndErasesById) {
  RequestQueue q;
  FcfsOrdering fcfs;
  Request a = make(0, 2.0, 0), b = make(1, 1.0, 0), c = make(2, 1.0, 0);
  q.insert(a, fcfs.key(a));
  q.insert(b, fcfs.key(b));
  q.insert(c, fcfs.key(c));
  EXPECT_EQ(q.front().id, 1);  // earliest arrival; ties by id
  EXPECT_EQ(q.back().id, 0);
  EXPECT_THROW(q.insert(a, fcfs.key(a)), std::logic_error);
  EXPECT_TRUE(q.erase(1));
  EXPECT_FALSE(q.erase(1));
  EXPECT_EQ(q.front().id, 2);
  EXPECT_EQ(q.size(), 2u);
  EXPECT_TRUE(q.contains(0));
  EXPECT_EQ(q.find(7), q.end());
}

TEST(Ordering, PriorityServesHigherPriorityFirst) {
  SchedulerConfig c;
  c.policy = "vllm";
  c.ordering = "priority";
  c.max_batch_size = 1;
  auto s = make_scheduler(c);
  RequestTable table;
  KvManager kv(KvConfig{4, 64, 0, 0});
  Request& low = table.add(make(0, 0.0, 0));
  Request& high = table.add(make(1, 5.0, 3));
  s->add(low);
  s->add(high);
  SchedulerContext ctx{table, kv, 0};
  StepPlan p = s->schedule(ctx);
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].request, high.id);
  EXPECT_THROW(make_ordering("random"), Error);
}

}  // namespace
}  // namespace seer
