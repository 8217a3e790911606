// ShortestPredictedOrdering (parts/predicted_ordering.h): how `seer` uses a length
// predictor. Shortest predicted output first inside a deadline window, never past
// an earlier window, and without predictions exactly DeadlineOrdering's order.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "scheduler/parts/predicted_ordering.h"
#include "scheduler/request_queue.h"

namespace seer {
namespace {

Request make(RequestId id, double arrival, double ttft, std::optional<int32_t> predicted) {
  Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.slo.ttft_s = ttft;
  r.prompt_tokens = {1, 2, 3};
  r.sampling.max_tokens = 4096;
  r.predicted_output_len = predicted;
  return r;
}

std::vector<RequestId> order(const Ordering& o, std::vector<Request>& rs) {
  RequestQueue q;
  for (Request& r : rs) q.insert(r, o.key(r));
  std::vector<RequestId> ids;
  for (const auto& e : q) ids.push_back(e.request->id);
  return ids;
}

TEST(ShortestPredictedOrdering, ShortestFirstWithinAWindowDeadlineOrderAcross) {
  ShortestPredictedOrdering spf(1.0);
  std::vector<Request> rs = {
      make(0, 0.0, 2, 500),   // due 2.0: window 2
      make(1, 0.3, 2, 20),    // due 2.3: window 2, shorter: overtakes 0
      make(2, 0.1, 1, 900),   // due 1.1: window 1, ahead of both however long
      make(3, 1.2, 2, 5),     // due 3.2: window 3, after window 2 however short
      make(4, 0.9, 2, 20),    // due 2.9: window 2, ties 1 on length: by deadline
  };
  EXPECT_EQ(order(spf, rs), (std::vector<RequestId>{2, 1, 4, 0, 3}));
}

TEST(ShortestPredictedOrdering, RanksByTheOutputStillToCome) {
  ShortestPredictedOrdering spf(1.0);
  std::vector<Request> rs = {make(0, 0.0, 0, 100), make(1, 0.1, 0, 40)};
  // 0 was preempted after 80 of its predicted 100 tokens: 20 to come.
  rs[0].output_tokens.assign(80, 7);
  EXPECT_EQ(order(spf, rs), (std::vector<RequestId>{0, 1}));
  rs[0].output_tokens.assign(150, 7);  // outgrew its prediction: nothing predicted to come
  EXPECT_EQ(spf.key(rs[0]).k[1], 0);
}

TEST(ShortestPredictedOrdering, WithoutPredictionsIsDeadlineOrdering) {
  // Random arrivals and SLO classes: the same queue order as DeadlineOrdering.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> arrival(0, 30);
  const double ttfts[] = {0, 1, 2, 10};
  for (double window : {0.25, 1.0, 4.0}) {
    ShortestPredictedOrdering spf(window);
    DeadlineOrdering deadline;
    std::vector<Request> rs;
    for (RequestId id = 0; id < 300; ++id) rs.push_back(make(id, arrival(rng), ttfts[rng() % 4], std::nullopt));
    EXPECT_EQ(order(spf, rs), order(deadline, rs)) << "window " << window;
  }
}

TEST(ShortestPredictedOrdering, NeverOvertakesARequestDueMoreThanAWindowSooner) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> arrival(0, 20);
  const double window = 0.5;
  ShortestPredictedOrdering spf(window);
  std::vector<Request> rs;
  for (RequestId id = 0; id < 400; ++id)
    rs.push_back(make(id, arrival(rng), rng() % 2 ? 1.0 : 2.0, static_cast<int32_t>(rng() % 2000)));
  std::vector<RequestId> ids = order(spf, rs);
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t j = i + 1; j < ids.size(); ++j) {
      const Request& ahead = rs[static_cast<size_t>(ids[i])];
      const Request& behind = rs[static_cast<size_t>(ids[j])];
      const double due_ahead = ahead.arrival_s + ahead.slo.ttft_s, due_behind = behind.arrival_s + behind.slo.ttft_s;
      ASSERT_LT(due_ahead - due_behind, window) << ahead.id << " before " << behind.id;
      if (due_ahead > due_behind) {
        ASSERT_LE(*ahead.predicted_output_len, *behind.predicted_output_len);
      }
    }
}

TEST(ShortestPredictedOrdering, ByNameAndBadWindow) {
  EXPECT_EQ(make_ordering("deadline-spf")->name(), "deadline-spf");
  EXPECT_THROW(ShortestPredictedOrdering(0), Error);
  EXPECT_THROW(ShortestPredictedOrdering(-1), Error);
}

}  // namespace
}  // namespace seer
