#pragma once
// `seer bench capacity`: the highest request rate a live OpenAI-compatible server
// sustains under an SLO (P99 TBT <= X, median scheduling delay <= 2 s), found with
// the bisection of `seer sim capacity` (sim/capacity.h): every probe replays the
// trace with its arrivals rescaled to the probed rate and measures it with the load
// runner of `seer bench`.
//
// A client cannot see when the server first scheduled a request, so the scheduling
// delay is taken as the time to first token (an upper bound: scheduling plus the
// prefill). A probe in which any request failed misses the SLO.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/capacity.h"

namespace seer::bench {

struct CapacityCommandOptions {
  std::string url = "http://127.0.0.1:8080";
  std::string trace;               // JSONL trace (see `seer trace`)
  std::optional<int64_t> num;      // first N requests of the trace
  CapacityCriteria criteria;       // tbt_p99_s must be set
  double start_rate = 1.0;         // req/s of the first probe
  double tolerance = 0.1;          // stop when the bracket is this close (relative)
  int max_steps = 8;               // probes at most
  int max_concurrency = 0;
  std::string model;               // "" = the first of GET /v1/models
  std::string endpoint = "completions";
  double timeout_s = 120;
  std::string api_key;
  int32_t token_id_max = 256;
  uint64_t seed = 0;
  bool json = false;
  bool progress = true;
};

// One probe as reported: the rate and the measurements the SLO is judged on.
struct CapacityStep {
  double rate = 0;
  double tbt_p99_s = 0;
  double ttft_p50_s = 0;
  int64_t requests = 0;
  int64_t failed = 0;
  double wall_s = 0;
  bool passed = false;
};

// {"capacity_rps", "steps": [{"rate", "tbt_p99_s", "ttft_p50_s", "passed", ...}]}
nlohmann::ordered_json capacity_json(double capacity, const std::vector<CapacityStep>& steps);
std::string capacity_table(const std::vector<CapacityStep>& steps);

// Returns the process exit code. Throws seer::Error for bad options or inputs.
int run_capacity(const CapacityCommandOptions& opts);

}  // namespace seer::bench
