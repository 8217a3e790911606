#include "server/backend_profile.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/progress.h"

namespace seer::server {

namespace {

using Clock = std::chrono::steady_clock;

// A batch of `tokens` tokens spread over as many sequences as the pool and the
// batch-size cap allow, each continuing at position `context` or lower (so that no
// sequence passes `longest`). K/V below it are whatever the pool holds: only the
// time matters. nullopt when the pool cannot hold such a batch.
std::optional<ForwardBatch> shape_batch(int32_t tokens, int32_t context, int32_t longest, const KvConfig& kv,
                                        int32_t max_batch_size) {
  auto blocks_for = [&](int32_t n) { return kv.blocks_for(n); };
  const int32_t pool_blocks = kv.device_blocks;
  int32_t seqs = std::max(1, std::min({tokens, max_batch_size, pool_blocks / std::max(blocks_for(context + 1), 1)}));
  const int32_t per_seq = (tokens + seqs - 1) / seqs;
  if (per_seq > longest) return std::nullopt;
  context = std::min(context, longest - per_seq);
  if (static_cast<int64_t>(seqs) * blocks_for(context + per_seq) > pool_blocks) return std::nullopt;
  ForwardBatch b;
  int32_t next_block = 0;
  int32_t left = tokens;
  for (int32_t s = 0; s < seqs; ++s) {
    const int32_t n = left / (seqs - s);
    left -= n;
    ForwardSequence seq;
    for (int32_t i = 0; i < blocks_for(context + n); ++i) seq.block_table.push_back(next_block++);
    b.sequences.push_back(std::move(seq));
    for (int32_t i = 0; i < n; ++i) b.add(s, 1, context + i, i + 1 == n);
  }
  return b;
}

double median_time(Backend& backend, const ForwardBatch& b, int repeats, std::vector<float>& logits) {
  backend.forward(b, logits);  // warm-up
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    backend.forward(b, logits);
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

void warm_up_backend(Backend& backend, int32_t max_model_len) {
  const int32_t tokens = std::min(32, std::max(1, max_model_len - 1));
  std::vector<float> logits;
  for (const auto& [n, context] : {std::pair{tokens, 0}, std::pair{1, tokens}}) {
    auto b = shape_batch(n, context, max_model_len, backend.kv_config(), 1);
    if (b) backend.forward(*b, logits);
  }
}

namespace {

// Token counts: tile, 2 tile, 4 tile, ... up to max_tokens.
std::vector<int32_t> token_grid(const BackendProfileOptions& o) {
  std::vector<int32_t> g;
  for (int64_t t = o.tile; t <= o.max_tokens; t *= 2) g.push_back(static_cast<int32_t>(t));
  if (g.empty()) g.push_back(o.tile);
  return g;
}

}  // namespace

IterationProfile profile_backend(Backend& backend, const BackendProfileOptions& o) {
  if (o.tile < 1 || o.max_model_len < 1 || !(o.slo_s > 0)) fail("backend profile: bad options");
  const KvConfig kv = backend.kv_config();
  const int64_t pool_tokens = kv.tokens_for(kv.device_blocks);
  const std::vector<int32_t> grid = token_grid(o);
  // Short, half and full contexts (as far as one sequence fits the pool).
  const int32_t longest = static_cast<int32_t>(std::min<int64_t>(o.max_model_len, pool_tokens));
  const std::vector<int32_t> contexts = {0, longest / 2, longest};

  IterationProfile profile;
  std::vector<float> logits;
  ProgressBar bar("profiling iteration time", static_cast<int64_t>(grid.size()), o.progress);
  const auto start = Clock::now();
  int64_t done = 0;
  for (int32_t tokens : grid) {
    double worst = 0;
    for (int32_t ctx : contexts) {
      auto batch = shape_batch(tokens, ctx, longest, kv, o.max_batch_size);
      if (batch) worst = std::max(worst, median_time(backend, *batch, o.repeats, logits));
    }
    if (worst <= 0) break;  // the pool cannot hold this many tokens
    profile.add(tokens, worst);
    bar.update(++done, fmt::format("{} tokens: {:.1f} ms", tokens, worst * 1e3));
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (worst > 2 * o.slo_s || elapsed > o.time_limit_s) break;
  }
  bar.finish();
  if (profile.empty()) fail("backend profile: the KV pool cannot hold even {} tokens", o.tile);
  return profile;
}

std::string profile_cache_key(const std::string& model_path, const std::string& model_shape, int threads,
                              const BackendProfileOptions& o, int32_t pool_tokens) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(model_path, ec);
  std::string cpu = "unknown-cpu";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  return fmt::format("{}|{}|{}|{}|threads={}|tile={}|max_tokens={}|ctx={}|batch={}|pool={}|slo={}",
                     std::filesystem::path(model_path).filename().string(), ec ? 0 : size, model_shape, cpu, threads,
                     o.tile, o.max_tokens, o.max_model_len, o.max_batch_size, pool_tokens, o.slo_s);
}

namespace {

constexpr const char* kCacheFormat = "seer-iteration-profile/1";

// A profile's points as stored: [[tokens, seconds], ...] with tokens > 0, seconds >= 0
// and each token count once (what IterationProfile::add accepts).
bool valid_points(const nlohmann::json& pts) {
  if (!pts.is_array() || pts.empty()) return false;
  IterationProfile p;
  for (const auto& pt : pts) {
    if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number_integer() || !pt[1].is_number()) return false;
    const int64_t tokens = pt[0].get<int64_t>();
    const double seconds = pt[1].get<double>();
    if (tokens <= 0 || tokens > INT32_MAX || !(seconds >= 0) || seconds > 1e6) return false;
    try {
      p.add(static_cast<int32_t>(tokens), seconds);
    } catch (const Error&) {
      return false;  // a token count twice
    }
  }
  return true;
}

// The cache in `path`: an empty cache when there is no file; nullopt (and *problem
// says why) when the file is not a seer profile cache this version can use.
std::optional<nlohmann::json> read_cache(const std::string& path, std::string* problem) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || status.type() == std::filesystem::file_type::not_found) return nlohmann::json::object();
  if (status.type() != std::filesystem::file_type::regular) {
    *problem = "it is not a regular file";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) {
    *problem = "it cannot be read";
    return std::nullopt;
  }
  const std::string text = ss.str();
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) *problem = "it is empty";
  else if (j.is_discarded()) *problem = "it is not JSON (truncated?)";
  else if (!j.is_object() || !j.contains("format") || j["format"] != kCacheFormat)
    *problem = fmt::format("it is not a {} object", kCacheFormat);
  else if (!j.contains("profiles") || !j["profiles"].is_object()) *problem = "its 'profiles' is not an object";
  else
    for (const auto& [key, pts] : j["profiles"].items())
      if (!valid_points(pts)) {
        *problem = "a profile in it is not a list of [tokens, seconds] points";
        break;
      }
  if (!problem->empty()) return std::nullopt;
  return j;
}

}  // namespace

CachedProfile load_cached_profile(const std::string& path, const std::string& key) {
  CachedProfile out;
  std::optional<nlohmann::json> j = read_cache(path, &out.problem);
  if (!j || !j->contains("profiles") || !(*j)["profiles"].contains(key)) return out;
  for (const auto& pt : (*j)["profiles"][key]) out.profile.add(pt[0].get<int32_t>(), pt[1].get<double>());
  return out;
}

void store_cached_profile(const std::string& path, const std::string& key, const IterationProfile& p) {
  std::string problem;
  nlohmann::json j = read_cache(path, &problem).value_or(nlohmann::json::object());  // an unusable file is replaced
  j["format"] = kCacheFormat;
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& [t, s] : p.points()) pts.push_back({t, s});
  j["profiles"][key] = pts;
  // Servers starting together may store at once: each writes its own file and the
  // rename is atomic (one of them wins; a cache may forget a key). A reader never
  // sees a half-written file.
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  const std::string tmp = fmt::format("{}.{}.tmp", path, ::getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(2) << '\n';
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      fail("--profile-cache {}: cannot write", path);
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    fail("--profile-cache {}: cannot write: {}", path, ec.message());
  }
}

}  // namespace seer::server
