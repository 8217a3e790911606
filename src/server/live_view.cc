#include "server/live_view.h"

#include <chrono>

#include "server/openai_response.h"

namespace seer::server {

namespace {

const char* const kPage = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>seer live view</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px system-ui,sans-serif;margin:16px;background:#fafafa;color:#222}
h1{font-size:18px;margin:0 0 4px}
.sub{color:#666;margin-bottom:12px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px}
.card h2{font-size:14px;margin:0 0 6px;color:#444}
table{border-collapse:collapse;width:100%}td{padding:2px 6px}td.n{text-align:right;font-variant-numeric:tabular-nums}
svg{width:100%;height:120px;background:#fcfcfc;border:1px solid #eee}
.k{display:inline-block;width:10px;height:10px;margin-right:4px}
</style></head><body>
<h1>seer live view</h1>
<div class="sub">model <b id="model">-</b>, policy <b id="policy">-</b>, token budget <b id="budget">-</b>;
updated <span id="updates">0</span> times, every second from <code>/v1/state</code> <span id="err"></span></div>
<div class="grid">
<div class="card"><h2>Queues</h2><table>
<tr><td>waiting</td><td class="n" id="waiting">-</td></tr>
<tr><td>running</td><td class="n" id="running">-</td></tr>
<tr><td>swapped</td><td class="n" id="swapped">-</td></tr></table>
<svg id="qchart" viewBox="0 0 300 100" preserveAspectRatio="none"></svg>
<div><span class="k" style="background:#d62728"></span>waiting <span class="k" style="background:#1f77b4"></span>running
<span class="k" style="background:#9467bd"></span>swapped</div></div>
<div class="card"><h2>KV blocks per tier</h2><table>
<tr><td>device</td><td class="n" id="kv-device">-</td></tr>
<tr><td>host</td><td class="n" id="kv-host">-</td></tr></table>
<svg id="kvchart" viewBox="0 0 300 100" preserveAspectRatio="none"></svg>
<div><span class="k" style="background:#2ca02c"></span>device used % <span class="k" style="background:#ff7f0e"></span>host used %</div></div>
<div class="card"><h2>Tokens per iteration (last second)</h2><table>
<tr><td>prefill</td><td class="n" id="tok-prefill">-</td></tr>
<tr><td>decode</td><td class="n" id="tok-decode">-</td></tr>
<tr><td>iterations</td><td class="n" id="iterations">-</td></tr>
<tr><td>iterations in all</td><td class="n" id="it-total">-</td></tr></table>
<svg id="tokchart" viewBox="0 0 300 100" preserveAspectRatio="none"></svg>
<div><span class="k" style="background:#17becf"></span>prefill <span class="k" style="background:#bcbd22"></span>decode (stacked)</div></div>
<div class="card"><h2>Latency (recent requests)</h2><table>
<tr><td></td><td class="n">p50</td><td class="n">p90</td><td class="n">p99</td></tr>
<tr><td>TTFT</td><td class="n" id="ttft-p50">-</td><td class="n" id="ttft-p90">-</td><td class="n" id="ttft-p99">-</td></tr>
<tr><td>TBT</td><td class="n" id="tbt-p50">-</td><td class="n" id="tbt-p90">-</td><td class="n" id="tbt-p99">-</td></tr></table>
<div class="sub" id="samples"></div></div>
</div>
<script>
"use strict";
const N = 120, hist = [];
let prev = null, updates = 0;
const $ = id => document.getElementById(id);
const ms = s => (s * 1000).toFixed(1) + " ms";
function line(svg, series, max, colors, stacked) {
  let out = "", base = new Array(hist.length).fill(0);
  series.forEach((key, i) => {
    const pts = hist.map((h, j) => {
      const v = h[key] + (stacked ? base[j] : 0);
      if (stacked) base[j] = v;
      return (j * 300 / (N - 1)).toFixed(1) + "," + (100 - 100 * v / (max || 1)).toFixed(1);
    });
    out += '<polyline fill="none" stroke-width="2" stroke="' + colors[i] + '" points="' + pts.join(" ") + '"/>';
  });
  $(svg).innerHTML = out;
}
function draw(s) {
  $("model").textContent = s.model; $("policy").textContent = s.policy; $("budget").textContent = s.token_budget;
  const q = s.queues, kv = s.kv, it = s.iterations;
  $("waiting").textContent = q.waiting; $("running").textContent = q.running; $("swapped").textContent = q.swapped;
  $("kv-device").textContent = kv.device.used + " / " + kv.device.total;
  $("kv-host").textContent = kv.host.used + " / " + kv.host.total;
  let pf = 0, dc = 0, n = 0;
  if (prev) {
    n = it.count - prev.iterations.count;
    if (n > 0) { pf = (it.prefill_tokens - prev.iterations.prefill_tokens) / n; dc = (it.decode_tokens - prev.iterations.decode_tokens) / n; }
  }
  $("tok-prefill").textContent = pf.toFixed(1); $("tok-decode").textContent = dc.toFixed(1); $("iterations").textContent = n; $("it-total").textContent = it.count;
  for (const k of ["ttft", "tbt"]) for (const p of ["p50", "p90", "p99"]) $(k + "-" + p).textContent = ms(s[k + "_s"][p]);
  $("samples").textContent = s.ttft_s.count + " TTFT and " + s.tbt_s.count + " TBT samples";
  hist.push({w: q.waiting, r: q.running, s: q.swapped,
             dev: 100 * kv.device.used / Math.max(kv.device.total, 1), host: 100 * kv.host.used / Math.max(kv.host.total, 1),
             pf: pf, dc: dc});
  if (hist.length > N) hist.shift();
  const qmax = Math.max(1, ...hist.map(h => Math.max(h.w, h.r, h.s)));
  line("qchart", ["w", "r", "s"], qmax, ["#d62728", "#1f77b4", "#9467bd"], false);
  line("kvchart", ["dev", "host"], 100, ["#2ca02c", "#ff7f0e"], false);
  line("tokchart", ["pf", "dc"], Math.max(1, ...hist.map(h => h.pf + h.dc)), ["#17becf", "#bcbd22"], true);
  prev = s;
  $("updates").textContent = ++updates;
}
async function poll() {
  try {
    // A server with API keys: open the page as /#key=KEY (the fragment stays in the browser).
    const key = new URLSearchParams(location.hash.slice(1)).get("key");
    const r = await fetch("/v1/state", {cache: "no-store", headers: key ? {Authorization: "Bearer " + key} : {}});
    if (!r.ok) throw new Error("HTTP " + r.status + (r.status === 401 ? ": open this page as /#key=YOUR_API_KEY" : ""));
    draw(await r.json());
    $("err").textContent = "";
  } catch (e) { $("err").textContent = "(" + e + ")"; }
}
poll();
setInterval(poll, 1000);
</script></body></html>
)HTML";

}  // namespace

const std::string& live_view_html() {
  static const std::string page(kPage);
  return page;
}

void add_live_view_routes(Router& router, ServerMetrics& metrics, const ModelInfo& model, const std::string& policy) {
  router.Get("/", [](const HttpRequest&, HttpResponse& res) {
    res.set_header("Cache-Control", "no-cache");
    res.set_content(live_view_html(), "text/html; charset=utf-8");
  });
  const auto started = std::chrono::steady_clock::now();
  router.Get("/v1/state", [&metrics, &model, policy, started](const HttpRequest&, HttpResponse& res) {
    nlohmann::json j = metrics.live().snapshot();
    j["model"] = model.served_name;
    j["policy"] = policy;
    j["token_budget"] = metrics.token_budget();
    j["uptime_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    res.set_header("Cache-Control", "no-cache");
    res.set_content(dump_json(j), "application/json");
  });
}

}  // namespace seer::server
