// n choices against `seer serve` (issue 51): a client that disconnects from a
// streamed n = 4 response has every choice aborted and their KV freed.
#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/raw_http.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

TEST(ServeChoices, DisconnectAbortsEveryChoice) {
  ASSERT_FALSE(tiny_long_context_model().empty());
  ServerProcess s(tiny_long_context_model());
  ASSERT_TRUE(s.up());
  {
    RawConnection c(s.port());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.send_all(request_bytes(
        s.port(), "POST", "/v1/completions",
        R"({"prompt": "Hello", "max_tokens": 12000, "ignore_eos": true, "n": 4, "stream": true})")));
    ASSERT_EQ(wait_for_metric_eq(s.port(), "seer_requests_running", 4), 4);
  }  // closed here
  EXPECT_EQ(wait_for_metric(s.port(), "seer_requests_finished_total{reason=\"abort\"}", [](double v) { return v >= 4; }),
            4);
  EXPECT_TRUE(wait_until([&] {
    json h = json::parse(http_get(s.port(), "/health").body, nullptr, false);
    return !h.is_discarded() && h.value("requests_in_flight", -1) == 0;
  }));
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
}

}  // namespace
}  // namespace seer::e2e
