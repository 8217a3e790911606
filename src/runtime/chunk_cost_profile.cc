#include "runtime/chunk_cost_profile.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "common/error.h"
#include "kv/chunk_cost.h"

namespace seer {
namespace {

using Clock = std::chrono::steady_clock;

// One sequence whose tokens [l, l + chunk) are computed over blocks 0, 1, ... (the
// K/V below l are whatever the pool holds: only the time matters).
ForwardBatch chunk_batch(int32_t l, int32_t chunk, const KvConfig& kv, int32_t vocab) {
  ForwardBatch b;
  ForwardSequence seq;
  for (int32_t i = 0; i < kv.blocks_for(l + chunk); ++i) seq.block_table.push_back(i);
  b.sequences.push_back(std::move(seq));
  for (int32_t p = l; p < l + chunk; ++p) b.add(0, p % std::max(vocab, 1), p, false);
  return b;
}

double fastest_run(Backend& backend, const ForwardBatch& b, int repeats, std::vector<float>& logits) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    backend.forward(b, logits);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

std::vector<std::pair<int32_t, double>> profile_chunk_cost(Backend& backend, const ChunkCostProfileOptions& o) {
  if (o.chunk_tokens < 1) fail("chunk cost profile: chunk of {} tokens", o.chunk_tokens);
  if (o.max_context < 1) fail("chunk cost profile: max context {} must be > 0", o.max_context);
  if (o.repeats < 1) fail("chunk cost profile: repeats {} must be >= 1", o.repeats);
  const KvConfig kv = backend.kv_config();
  const int64_t pool_tokens = kv.tokens_for(kv.device_blocks);
  const int64_t room = std::min<int64_t>(pool_tokens, o.max_context);
  if (room < o.chunk_tokens)
    fail("chunk cost profile: the device pool ({} tokens) cannot hold a chunk of {} tokens", room, o.chunk_tokens);
  const auto longest = static_cast<int32_t>(room - o.chunk_tokens);  // last chunk start that fits

  std::vector<int32_t> positions{0};
  for (int64_t l = o.chunk_tokens; l < longest; l *= 2) positions.push_back(static_cast<int32_t>(l));
  if (longest > 0) positions.push_back(longest);

  std::vector<float> logits;
  auto measure = [&](int32_t l) {
    return fastest_run(backend, chunk_batch(l, o.chunk_tokens, kv, backend.vocab_size()), o.repeats,
                       logits);
  };
  measure(0);  // warm-up
  const auto start = Clock::now();
  std::vector<std::pair<int32_t, double>> points{{0, measure(0)}};
  if (longest > 0) points.emplace_back(longest, measure(longest));
  for (size_t i = 1; i + 1 < positions.size(); ++i) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > o.time_limit_s) break;
    points.emplace_back(positions[i], measure(positions[i]));
  }
  std::sort(points.begin(), points.end());
  for (size_t i = 1; i < points.size(); ++i) points[i].second = std::max(points[i].second, points[i - 1].second);
  return points;
}

ChunkCostFn measured_chunk_cost(Backend& backend, const ChunkCostProfileOptions& o) {
  return interpolated_chunk_cost(profile_chunk_cost(backend, o));
}

}  // namespace seer
