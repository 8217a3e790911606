#include "sim/iteration_log_check.h"

#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "common/error.h"

namespace seer {
namespace {

std::string kind_of(const IterationShape& s) {
  bool decode = false, prefill = false;
  for (const ChunkShape& c : s.chunks) (c.query_tokens == 1 && c.context_before > 0 ? decode : prefill) = true;
  return decode && prefill ? "mixed" : decode ? "decode" : "prefill";
}

MeasuredIteration parse_line(const std::string& line) {
  const auto j = nlohmann::json::parse(line);
  MeasuredIteration m;
  m.seconds = j.at("elapsed_s").get<double>();
  m.shape.swap_bytes = j.value("swap_bytes", int64_t{0});
  m.shape.copy_bytes = j.value("copy_bytes", int64_t{0});
  for (const auto& c : j.at("chunks")) {
    if (!c.is_array() || c.size() != 3) fail("a chunk must be [tokens, context, sampled]");
    m.shape.chunks.push_back({c[0].get<int32_t>(), c[1].get<int32_t>(), c[2].get<int>() != 0});
  }
  if (m.shape.chunks.empty()) fail("an iteration without chunks");
  if (!(m.seconds > 0)) fail("elapsed_s must be positive");
  m.label = kind_of(m.shape);
  return m;
}

}  // namespace

std::vector<MeasuredIteration> read_iteration_log(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("--iteration-log: cannot read {}", path);
  std::vector<MeasuredIteration> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    try {
      out.push_back(parse_line(line));
    } catch (const nlohmann::json::exception& e) {
      fail("{}:{}: not an iteration record: {}", path, n, e.what());
    } catch (const Error& e) {
      fail("{}:{}: {}", path, n, e.what());
    }
  }
  if (out.empty()) fail("{}: no iterations logged", path);
  return out;
}

std::vector<IterationKindError> check_iterations(const CostModel& cost, const std::vector<MeasuredIteration>& samples) {
  std::vector<IterationKindError> rows;
  for (const char* kind : {"decode", "prefill", "mixed", "all"}) {
    IterationKindError r;
    r.kind = kind;
    double measured = 0, model = 0;
    for (const auto& s : samples) {
      if (r.kind != "all" && s.label != r.kind) continue;
      const double p = cost.iteration_time(s.shape);
      ++r.iterations;
      measured += s.seconds;
      model += p;
      r.mean_relative += std::fabs(p - s.seconds) / s.seconds;
      r.mean_signed += (p - s.seconds) / s.seconds;
    }
    if (r.iterations == 0) continue;
    const auto n = static_cast<double>(r.iterations);
    r.measured_mean_s = measured / n;
    r.model_mean_s = model / n;
    r.mean_relative /= n;
    r.mean_signed /= n;
    r.total_relative = (model - measured) / measured;
    rows.push_back(r);
  }
  return rows;
}

std::string render_iteration_check(const std::vector<IterationKindError>& rows) {
  std::string out = fmt::format("{:<8} {:>10} {:>12} {:>12} {:>9} {:>9} {:>10}\n", "kind", "iterations",
                                "measured ms", "model ms", "mean err", "bias", "total err");
  for (const auto& r : rows)
    out += fmt::format("{:<8} {:>10} {:>12.3f} {:>12.3f} {:>8.1f}% {:>+8.1f}% {:>+9.1f}%\n", r.kind, r.iterations,
                       1e3 * r.measured_mean_s, 1e3 * r.model_mean_s, 100 * r.mean_relative, 100 * r.mean_signed,
                       100 * r.total_relative);
  return out;
}

nlohmann::ordered_json iteration_check_json(const std::vector<IterationKindError>& rows) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    j.push_back({{"kind", r.kind}, {"iterations", r.iterations}, {"measured_mean_s", r.measured_mean_s},
                 {"model_mean_s", r.model_mean_s}, {"mean_relative_error", r.mean_relative},
                 {"mean_signed_error", r.mean_signed}, {"total_relative_error", r.total_relative}});
  return j;
}

}  // namespace seer
