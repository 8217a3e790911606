#pragma once
// The mixed workload (`seer trace --lengths mixed`, docs/seer-policy.md): multi-turn
// ShareGPT conversations ("chat"), single-shot Alpaca questions ("qa") and
// long-prompt arXiv summarization requests ("long") arriving together, each request
// tagged with its class and the class's SLO (TTFT and TBT).
#include <string>
#include <vector>

#include "sim/trace_generator.h"

namespace seer {

struct WorkloadClass {
  std::string name;     // the trace's "class"
  std::string dataset;  // a name from dataset_names()
  double share = 0;     // of the requests (turns, for chat)
  Slo slo;
};

// chat 40 % (TTFT 2 s, TBT 0.2 s), qa 40 % (TTFT 1 s, TBT 0.2 s), long 20 %
// (TTFT 10 s, TBT 0.5 s).
const std::vector<WorkloadClass>& mixed_workload_classes();

// `o.num` requests split by the classes' shares, each class drawn from its dataset
// with its own seed derived from o.seed, over the same span of time (o.num / rate
// seconds). A TTFT or TBT given in o.slo replaces that bound for every class.
std::vector<TraceEntry> generate_mixed_trace(const TraceGeneratorOptions& o);

}  // namespace seer
