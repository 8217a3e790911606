// One Scheduler::schedule() call with 1,000 running and 10,000 waiting requests, in
// a steady state: each timed call is followed by an (untimed) commit in which
// sampled requests get a token, finished requests leave and new ones arrive, so the
// queues stay at about 1,000 running and 10,000 waiting. Target: <= 100 us per call.
#include <chrono>
#include <ctime>
#include <random>

#include <benchmark/benchmark.h>

#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

constexpr int kRunning = 1000;
constexpr int kWaiting = 10000;

class SteadyState {
 public:
  // `eco_paper`: ecoserve with the paper's behaviours where seer's default differs
  // (docs/ecoserve.md).
  explicit SteadyState(const std::string& policy, bool eco_paper = false)
      : kv_(KvConfig{16, 60000, 0, 0}), rng_(42) {
    SchedulerConfig c;
    c.policy = policy;
    if (eco_paper) {
      c.eco_admission = "on-free";
      c.eco_overrun = "group-slack";
      c.eco_order = "kv-first";
      c.eco_pipelining = "paper";
    }
    c.max_batch_size = kRunning;
    c.token_budget = 2048;  // sarathi, ecoserve: room for every decode plus prefill chunks
    // Static batching forms a whole batch at once; a token cap would keep it small.
    c.max_num_batched_tokens = policy == "static" ? 0 : 4096;
    scheduler_ = make_scheduler(c);
    for (int i = 0; i < kRunning + kWaiting; ++i) arrive();
    // Fill the batch; from here on as many requests arrive as finish.
    for (int guard = 0; guard < 10000 && scheduler_->num_running() < kRunning; ++guard) step();
    chunks_ = 0;
    cpu_s_ = 0;
  }

  // One timed schedule() plus the commit; returns the wall seconds schedule() took
  // and adds its thread CPU time to cpu_s() (the figure that other processes on a
  // busy machine do not inflate).
  double step() {
    SchedulerContext ctx{requests_, kv_, now_};
    double c0 = thread_cpu_s();
    auto t0 = std::chrono::steady_clock::now();
    StepPlan plan = scheduler_->schedule(ctx);
    auto t1 = std::chrono::steady_clock::now();
    cpu_s_ += thread_cpu_s() - c0;
    chunks_ += plan.chunks.size();
    commit(plan);
    now_ += 0.02;
    return std::chrono::duration<double>(t1 - t0).count();
  }

  double cpu_s() const { return cpu_s_; }

  size_t running() const { return scheduler_->num_running(); }
  size_t waiting() const { return scheduler_->num_waiting(); }
  size_t chunks() const { return chunks_; }

 private:
  void arrive() {
    Request r;
    r.id = next_id_++;
    r.arrival_s = now_;
    r.prompt_tokens.assign(static_cast<size_t>(64 + rng_() % 192), 7);
    r.sampling.max_tokens = 256;
    r.forced_output_len = 1 + static_cast<int32_t>(rng_() % 256);
    r.predicted_output_len = r.forced_output_len;  // an oracle (read by ecoserve only)
    scheduler_->add(requests_.add(std::move(r)));
  }

  void commit(const StepPlan& plan) {
    int finished = 0;
    for (const ScheduledChunk& c : plan.chunks) {
      Request& r = requests_.get(c.request);
      r.num_computed_tokens = c.start + c.num_tokens;
      if (!c.sample) continue;
      r.output_tokens.push_back(7);
      if (r.num_output() >= r.forced_output_len) {
        scheduler_->remove(r.id);
        kv_.free(r.id);
        requests_.erase(r.id);
        ++finished;
      }
    }
    for (int i = 0; i < finished; ++i) arrive();
  }

  KvManager kv_;
  std::unique_ptr<Scheduler> scheduler_;
  RequestTable requests_;
  std::mt19937 rng_;
  RequestId next_id_ = 0;
  double now_ = 0;
  size_t chunks_ = 0;
  double cpu_s_ = 0;

  static double thread_cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  }
};

void BM_Schedule(benchmark::State& state, const std::string& policy, bool eco_paper = false) {
  SteadyState s(policy, eco_paper);
  size_t running = 0, waiting = 0;
  for (auto _ : state) {
    running += s.running();
    waiting += s.waiting();
    state.SetIterationTime(s.step());
  }
  double n = static_cast<double>(state.iterations());
  state.counters["running"] = running / n;
  state.counters["waiting"] = waiting / n;
  state.counters["chunks"] = s.chunks() / n;
  state.counters["schedule_cpu_us"] = s.cpu_s() / n * 1e6;
}

BENCHMARK_CAPTURE(BM_Schedule, static, std::string("static"))->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(2000);
BENCHMARK_CAPTURE(BM_Schedule, orca, std::string("orca"))->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(2000);
BENCHMARK_CAPTURE(BM_Schedule, vllm, std::string("vllm"))->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(2000);
BENCHMARK_CAPTURE(BM_Schedule, sarathi, std::string("sarathi"))->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(2000);
BENCHMARK_CAPTURE(BM_Schedule, ecoserve, std::string("ecoserve"))->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(2000);
BENCHMARK_CAPTURE(BM_Schedule, ecoserve_paper, std::string("ecoserve"), true)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(2000);

}  // namespace
}  // namespace seer

BENCHMARK_MAIN();
