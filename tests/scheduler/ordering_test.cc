#include <string>
#include <vector>

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

TEST(Ordering, DeadlineServesTheEarliestFirstTokenDeadlineFirst) {
  DeadlineOrdering deadline;
  RequestQueue q;
  Request loose = make(0, 0.0, 0), tight = make(1, 1.0, 0), none = make(2, 1.5, 0), tie = make(3, 1.0, 0);
  loose.slo.ttft_s = 10;  // due at 10 s
  tight.slo.ttft_s = 1;   // due at 2 s
  tie.slo.ttft_s = 1;     // due at 2 s too, arrived with `tight`: by id
  for (Request* r : {&loose, &tight, &none, &tie}) q.insert(*r, deadline.key(*r));
  std::vector<RequestId> order;
  for (const auto& e : q) order.push_back(e.request->id);
  EXPECT_EQ(order, (std::vector<RequestId>{2, 1, 3, 0}));  // no SLO: due at arrival (1.5 s)

  // One SLO for everyone is first come, first served.
  FcfsOrdering fcfs;
  Request a = make(4, 3.0, 0), b = make(5, 2.0, 0);
  a.slo.ttft_s = b.slo.ttft_s = 2;
  EXPECT_EQ(deadline.key(a) < deadline.key(b), fcfs.key(a) < fcfs.key(b));
  EXPECT_EQ(make_ordering("deadline")->name(), "deadline");
}

TEST(Ordering, SeerAdmitsByDeadlineAndOtherPresetsStayFcfs) {
  auto first_admitted = [&](const std::string& policy) {
    SchedulerConfig c;
    c.policy = policy;
    c.max_batch_size = 1;
    c.token_budget = 64;
    auto s = make_scheduler(c);
    RequestTable t;
    Request early = make(0, 0.0, 0), urgent = make(1, 0.5, 0);
    early.slo.ttft_s = 30;
    urgent.slo.ttft_s = 1;
    s->add(t.add(std::move(early)));
    s->add(t.add(std::move(urgent)));
    KvManager k(KvConfig{4, 64, 0, 0});
    SchedulerContext ctx{t, k, 1.0};
    StepPlan p = s->schedule(ctx);
    return p.chunks.empty() ? RequestId{-1} : p.chunks[0].request;
  };
  EXPECT_EQ(first_admitted("seer"), 1);
  EXPECT_EQ(first_admitted("sarathi"), 0);
}

}  // namespace
}  // namespace seer
