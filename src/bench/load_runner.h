#pragma once
// Drives the sessions against a server: each session starts at its time; its turns
// go one after another (the next one a think time after the previous answer, with
// the whole history for stateless servers or only the new message plus the
// conversation id with --stateful); at most --max-concurrency requests are in
// flight. Ends when every session has ended.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/streaming_client.h"
#include "bench/workload.h"
#include "common/clock.h"

namespace seer::bench {

struct RunnerOptions {
  ServerUrl url;
  Api api = Api::Completions;
  std::string model;
  std::string api_key;
  int max_concurrency = 0;  // 0: unlimited
  bool stateful = false;    // send conversation ids instead of the history
  double temperature = 0;
  double timeout_s = 600;
};

struct TurnResult {
  std::string id;
  std::string conversation;
  int32_t turn = 0;
  int32_t prompt_tokens_estimate = 0;
  int32_t expected_output_tokens = 0;
  Slo slo;
  ClientResult result;
  bool skipped = false;  // not sent because an earlier turn of its session failed
};

// `on_done(finished, total)` is called after every request (from worker threads,
// serialised). Results are in session order, turns in order.
std::vector<TurnResult> run_sessions(const std::vector<BenchSession>& sessions, const RunnerOptions& opts,
                                     const Clock& clock,
                                     const std::function<void(int64_t, int64_t)>& on_done = nullptr);

}  // namespace seer::bench
