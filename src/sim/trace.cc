#include "sim/trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <istream>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace seer {
namespace {

using nlohmann::json;

constexpr int64_t kMaxTokens = int64_t{1} << 24;

struct LineContext {
  const std::string& source;
  int64_t line;
  [[noreturn]] void error(const std::string& field, const std::string& what) const {
    fail("{}:{}: field '{}': {}", source, line, field, what);
  }
};

double nonneg_number(const json& v, const std::string& field, const LineContext& ctx) {
  if (!v.is_number()) ctx.error(field, fmt::format("expected a number, got {}", v.dump()));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) ctx.error(field, fmt::format("expected a finite number >= 0, got {}", v.dump()));
  return d;
}

int64_t integer(const json& v, const std::string& field, const LineContext& ctx, int64_t lo, int64_t hi) {
  bool ok = v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (!ok) ctx.error(field, fmt::format("expected an integer, got {}", v.dump()));
  double d = v.get<double>();
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
    ctx.error(field, fmt::format("expected an integer in [{}, {}], got {}", lo, hi, v.dump()));
  return static_cast<int64_t>(d);
}

std::string text(const json& v, const std::string& field, const LineContext& ctx) {
  if (!v.is_string()) ctx.error(field, fmt::format("expected a string, got {}", v.dump()));
  return v.get<std::string>();
}

void parse_slo(const json& v, Slo& slo, const LineContext& ctx) {
  if (!v.is_object()) ctx.error("slo", fmt::format("expected an object, got {}", v.dump()));
  for (const auto& [key, val] : v.items()) {
    if (key == "ttft_s")
      slo.ttft_s = nonneg_number(val, "slo.ttft_s", ctx);
    else if (key == "tbt_s")
      slo.tbt_s = nonneg_number(val, "slo.tbt_s", ctx);
    else if (key == "deadline_s")
      slo.deadline_s = nonneg_number(val, "slo.deadline_s", ctx);
    else
      ctx.error("slo." + key, "unknown field (expected ttft_s, tbt_s, deadline_s)");
  }
}

}  // namespace

int32_t estimate_tokens(std::string_view s) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : s) {
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  double tokens = std::ceil(static_cast<double>(words) * 1.3);
  return static_cast<int32_t>(std::clamp<double>(tokens, 1, static_cast<double>(kMaxTokens)));
}

int32_t TraceEntry::prompt_len() const { return prompt_tokens >= 0 ? prompt_tokens : estimate_tokens(prompt); }

TraceEntry parse_trace_line(std::string_view line, const std::string& source, int64_t line_no) {
  LineContext ctx{source, line_no};
  json j;
  try {
    j = json::parse(line);
  } catch (const json::parse_error& e) {
    fail("{}:{}: not valid JSON: {}", source, line_no, e.what());
  }
  if (!j.is_object()) fail("{}:{}: expected a JSON object, got {}", source, line_no, j.type_name());

  TraceEntry e;
  bool has_arrival = false, has_output = false, has_prompt_tokens = false, has_prompt = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "id") {
      if (v.is_number_integer()) e.id = v.dump();
      else e.id = text(v, key, ctx);
    } else if (key == "arrival_s") {
      e.arrival_s = nonneg_number(v, key, ctx);
      has_arrival = true;
    } else if (key == "prompt_tokens") {
      e.prompt_tokens = static_cast<int32_t>(integer(v, key, ctx, 1, kMaxTokens));
      has_prompt_tokens = true;
    } else if (key == "prompt") {
      e.prompt = text(v, key, ctx);
      if (e.prompt.empty()) ctx.error(key, "must not be empty");
      has_prompt = true;
    } else if (key == "output_tokens") {
      e.output_tokens = static_cast<int32_t>(integer(v, key, ctx, 1, kMaxTokens));
      has_output = true;
    } else if (key == "conversation") {
      e.conversation = v.is_number_integer() ? v.dump() : text(v, key, ctx);
    } else if (key == "turn") {
      e.turn = static_cast<int32_t>(integer(v, key, ctx, 0, 1 << 20));
    } else if (key == "think_s") {
      e.think_s = nonneg_number(v, key, ctx);
    } else if (key == "slo") {
      parse_slo(v, e.slo, ctx);
    } else if (key == "priority") {
      e.priority = static_cast<int32_t>(integer(v, key, ctx, -1000000, 1000000));
    } else if (key == "class") {
      e.workload_class = text(v, key, ctx);
    } else {
      ctx.error(key,
                "unknown field (expected id, arrival_s, prompt_tokens or prompt, output_tokens, "
                "conversation, turn, think_s, slo, priority, class)");
    }
  }
  if (!has_arrival) ctx.error("arrival_s", "missing (seconds since the start of the trace)");
  if (!has_output) ctx.error("output_tokens", "missing (the true output length in tokens)");
  if (!has_prompt && !has_prompt_tokens) ctx.error("prompt_tokens", "missing (give prompt_tokens or prompt)");
  if (e.id.empty()) e.id = fmt::format("line{}", line_no);
  return e;
}

std::vector<TraceEntry> parse_trace(std::istream& in, const std::string& source) {
  std::vector<TraceEntry> out;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    out.push_back(parse_trace_line(line, source, line_no));
  }
  if (in.bad()) fail("{}: read error after line {}", source, line_no);
  return out;
}

std::vector<TraceEntry> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open trace file {}", path);
  auto entries = parse_trace(in, path);
  if (entries.empty()) fail("{}: the trace holds no requests", path);
  return entries;
}

std::string trace_line(const TraceEntry& e) {
  nlohmann::ordered_json j;
  j["id"] = e.id;
  j["arrival_s"] = std::round(e.arrival_s * 1e6) / 1e6;
  if (e.prompt_tokens >= 0) j["prompt_tokens"] = e.prompt_tokens;
  if (!e.prompt.empty()) j["prompt"] = e.prompt;
  j["output_tokens"] = e.output_tokens;
  if (!e.conversation.empty()) {
    j["conversation"] = e.conversation;
    j["turn"] = e.turn;
  }
  if (e.think_s >= 0) j["think_s"] = std::round(e.think_s * 1e3) / 1e3;
  if (e.slo.ttft_s > 0 || e.slo.tbt_s > 0 || e.slo.deadline_s > 0) {
    nlohmann::ordered_json slo = nlohmann::ordered_json::object();
    if (e.slo.ttft_s > 0) slo["ttft_s"] = e.slo.ttft_s;
    if (e.slo.tbt_s > 0) slo["tbt_s"] = e.slo.tbt_s;
    if (e.slo.deadline_s > 0) slo["deadline_s"] = e.slo.deadline_s;
    j["slo"] = slo;
  }
  if (e.priority != 0) j["priority"] = e.priority;
  if (!e.workload_class.empty()) j["class"] = e.workload_class;
  // Replace invalid UTF-8 (dataset text) rather than throwing.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void write_trace(std::ostream& out, const std::vector<TraceEntry>& entries) {
  for (const auto& e : entries) out << trace_line(e) << '\n';
}

void write_trace_file(const std::string& path, const std::vector<TraceEntry>& entries) {
  std::ofstream out(path);
  if (!out) fail("cannot write trace file {}", path);
  write_trace(out, entries);
  out.flush();
  if (!out) fail("error writing trace file {}", path);
}

double mean_arrival_rate(const std::vector<TraceEntry>& entries) {
  if (entries.size() < 2) return 0;
  auto [lo, hi] = std::minmax_element(entries.begin(), entries.end(),
                                      [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  double span = hi->arrival_s - lo->arrival_s;
  return span > 0 ? static_cast<double>(entries.size() - 1) / span : 0;
}

void rescale_arrivals(std::vector<TraceEntry>& entries, double rate) {
  if (!(rate > 0) || !std::isfinite(rate)) fail("request rate must be a positive number, got {}", rate);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  double current = mean_arrival_rate(entries);
  if (current <= 0) return;  // all at one instant: nothing to stretch
  double first = entries.front().arrival_s;
  double scale = current / rate;
  for (auto& e : entries) e.arrival_s = (e.arrival_s - first) * scale;
}

}  // namespace seer
