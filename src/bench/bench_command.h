#pragma once
// `seer bench`: load a trace or dataset, drive the server, print the summary.
#include <cstdint>
#include <optional>
#include <string>

#include "bench/streaming_client.h"
#include "scheduler/request.h"

namespace seer::bench {

struct BenchCommandOptions {
  std::string url = "http://127.0.0.1:8080";
  std::string trace;      // JSONL trace file, or
  std::string dataset;    // a name of sim/datasets.h (or "synthetic") with data_dir
  std::string data_dir;
  std::string rate;       // requests/s, "inf" (all at once); "" = as the trace says
  std::optional<int64_t> num;
  std::optional<double> burstiness;
  int max_concurrency = 0;
  std::string model;      // "" = the first of GET /v1/models
  std::string endpoint = "completions";  // or "chat"
  bool multi_turn = false;
  std::optional<double> think_time_s;
  bool stateful = false;
  double temperature = 0;
  double timeout_s = 600;
  std::string api_key;
  std::string label;      // the summary's "policy"; "" = the server's seer_info policy, else "bench"
  Slo slo;                // for requests whose trace line has none
  int32_t token_id_max = 256;
  uint64_t seed = 0;
  bool json = false;
  std::string plot;       // SVG path
  bool progress = true;
};

// The first model GET /v1/models lists, "" when it lists none. Throws seer::Error
// when the server cannot be reached.
std::string first_model(const ServerUrl& url, const std::string& api_key);

// Returns the process exit code (0 when at least one request succeeded). Throws
// seer::Error for bad options or unreadable inputs.
int run_bench(const BenchCommandOptions& opts);

}  // namespace seer::bench
