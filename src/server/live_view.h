#pragma once
// The live view: GET / serves one self-contained HTML page (no external resources,
// compiled into the binary) that polls GET /v1/state every second and draws queues,
// KV blocks per tier over time, tokens per iteration (prefill/decode) and TTFT/TBT
// percentiles.
#include <string>

#include "server/request_builder.h"
#include "server/router.h"
#include "server/server_metrics.h"

namespace seer::server {

// The page's HTML.
const std::string& live_view_html();

// Adds GET / and GET /v1/state to `router`.
void add_live_view_routes(Router& router, ServerMetrics& metrics, const ModelInfo& model, const std::string& policy);

}  // namespace seer::server
