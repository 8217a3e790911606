// bench_attention: paged attention alone (backend/paged_attention.h) for each K/V type,
// decode shape: `seqs` sequences of one new token each at context `ctx`, llama-125m's
// heads by default (12 query heads and 12 KV heads of 64). Reports the best of
// --repeats runs (the least disturbed on a shared machine) in microseconds per call
// and in K/V GB/s read.
// Usage: bench_attention [--kv-types f16,q8_0] [--contexts 1024,4096] [--seqs 1,8]
//                        [--heads 12] [--kv-heads 12] [--head-dim 64] [--threads 1] [--repeats 200]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/paged_attention.h"
#include "backend/paged_kv_storage.h"
#include "common/error.h"
#include "kernels/kernel_level.h"
#include "model/kv_type.h"

#include "bench_args.h"

namespace seer {
namespace {

using bench_args::split;

struct Options {
  std::vector<std::string> kv_types = {"f16", "q8_0"};
  std::vector<std::string> contexts = {"1024", "4096"};
  std::vector<std::string> seqs = {"1", "8"};
  int heads = 12, kv_heads = 12, head_dim = 64, threads = 1, repeats = 200;
};

double run_case(const Options& o, KvType type, int ctx, int nseq) {
  constexpr int kBlock = 16;
  const int blocks_per_seq = (ctx + kBlock - 1) / kBlock;
  PagedKvStorage kv(KvShape{1, o.kv_heads, o.head_dim, kBlock, type}, blocks_per_seq * nseq, 0);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> k(static_cast<size_t>(o.kv_heads) * o.head_dim), v(k.size());
  std::vector<int32_t> order(static_cast<size_t>(blocks_per_seq) * nseq);
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::shuffle(order.begin(), order.end(), rng);  // blocks scattered over the pool, as in serving
  ForwardBatch batch;
  for (int s = 0; s < nseq; ++s) {
    std::vector<int32_t> table(order.begin() + s * blocks_per_seq, order.begin() + (s + 1) * blocks_per_seq);
    for (int p = 0; p < ctx; ++p) {
      for (float& f : k) f = nd(rng);
      for (float& f : v) f = nd(rng);
      kv.write(table[p / kBlock], p % kBlock, 0, k.data(), v.data());
    }
    batch.sequences.push_back({table});
    batch.add(s, 0, ctx - 1, true);
  }
  std::vector<float> q(static_cast<size_t>(nseq) * o.heads * o.head_dim), out(q.size());
  for (float& f : q) f = nd(rng);
  ThreadPool pool(o.threads);
  PagedAttention attn(o.heads, o.kv_heads, o.head_dim, pool.size());
  double best = 1e30;
  for (int r = 0; r < o.repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    attn.run(pool, batch, kv, 0, q.data(), out.data());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

int run(const Options& o) {
  std::printf("cpu: %s\n", cpu_summary_line().c_str());
  std::printf("%-6s %7s %5s %12s %10s\n", "kv", "context", "seqs", "best us", "K/V GB/s");
  for (const auto& c : o.contexts)
    for (const auto& s : o.seqs)
      for (const auto& name : o.kv_types) {
        const KvType t = parse_kv_type(name, "--kv-types");
        const int ctx = std::stoi(c), nseq = std::stoi(s);
        const double sec = run_case(o, t, ctx, nseq);
        const double bytes = static_cast<double>(ctx) * nseq * kv_bytes_per_token(1, o.kv_heads, o.head_dim, t);
        std::printf("%-6s %7d %5d %12.1f %10.2f\n", name.c_str(), ctx, nseq, sec * 1e6, bytes / sec / 1e9);
      }
  return 0;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  seer::Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--kv-types") o.kv_types = seer::split(v);
    else if (a == "--contexts") o.contexts = seer::split(v);
    else if (a == "--seqs") o.seqs = seer::split(v);
    else if (a == "--heads") o.heads = std::stoi(v);
    else if (a == "--kv-heads") o.kv_heads = std::stoi(v);
    else if (a == "--head-dim") o.head_dim = std::stoi(v);
    else if (a == "--threads") o.threads = std::stoi(v);
    else if (a == "--repeats") o.repeats = std::stoi(v);
    else {
      std::fprintf(stderr, "bench_attention: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  try {
    return seer::run(o);
  } catch (const seer::Error& e) {
    std::fprintf(stderr, "bench_attention: %s\n", e.what());
    return 1;
  }
}
