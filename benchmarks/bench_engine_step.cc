// bench_engine_step: the cost of one Engine::step() around the forward pass, in a
// steady decode state: B requests running (prompt 32 tokens, forced output 64..127),
// each finished request replaced by a new one, so plans carry new requests, finished
// ids and block-table growth at the rate a serving engine sees them. Two executors:
//   null  : returns a token per sampled chunk and touches nothing else, so a step is
//           the engine's own work (schedule, plan, commit);
//   plan  : the ModelExecutor's bookkeeping without the model: keeps its
//           ExecutorState from the plans and builds the ForwardBatch, then returns
//           a token per sampled chunk;
//   model : ModelExecutor on the random "tiny" model (2 layers, dim 64) on the CPU
//           backend, where a decode step's forward pass is as cheap as it gets.
// Reported per step (mean over --steps after --warmup steps): wall time, the
// executor's time (IterationStats::elapsed_s), the scheduler's, and the rest (the
// engine's bookkeeping: plan, commit), and the calling thread's CPU time per step
// (what other processes on a busy machine do not inflate; all of a step with the
// null executor). Usage:
//   bench_engine_step [--batches 8,32,128] [--steps 3000] [--warmup 300] [--threads 1] [--repeats 3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu_backend.h"
#include "engine/engine.h"
#include "kv/kv_manager.h"
#include "model/model_file.h"
#include "model/random_model.h"
#include "runtime/model_executor.h"
#include "scheduler/scheduler.h"

#include "bench_args.h"

namespace seer {
namespace {

constexpr int32_t kPrompt = 32;
constexpr int32_t kMaxOutput = 128;

class NullExecutor final : public Executor {
 public:
  StepResult execute(const StepPlan& plan) override {
    StepResult r;
    for (const ScheduledChunk& c : plan.chunks)
      if (c.sample) r.sampled.push_back({c.request, 7, 0.0f});
    return r;
  }
  bool simulated() const override { return false; }
};

double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

class PlanExecutor final : public Executor {
 public:
  explicit PlanExecutor(int32_t block_size) : state_(block_size) {}
  StepResult execute(const StepPlan& plan) override {
    state_.apply(plan);
    ForwardBatch b = build_forward_batch(plan, state_, &rows_);
    StepResult r;
    for (const ScheduledChunk& c : plan.chunks)
      if (c.sample) r.sampled.push_back({c.request, 7, 0.0f});
    for (const SampledToken& s : r.sampled) state_.append_sampled(s.request, s.token);
    tokens_ += b.size();
    return r;
  }
  bool simulated() const override { return false; }

 private:
  ExecutorState state_;
  std::vector<int32_t> rows_;
  size_t tokens_ = 0;
};

struct Totals {
  double wall = 0, executor = 0, scheduler = 0, cpu = 0;
  int64_t steps = 0, tokens = 0;
};

class Replacer final : public EngineObserver {
 public:
  void on_finished(const Request&) override { ++finished; }
  int finished = 0;
};

Totals run(Executor& executor, int32_t block_size, int32_t device_blocks, int batch, int warmup, int steps) {
  KvManager kv(KvConfig{block_size, device_blocks, 0, 0});
  SchedulerConfig sc;
  sc.policy = "vllm";
  sc.max_batch_size = batch;
  auto scheduler = make_scheduler(sc);
  WallClock clock;
  EngineConfig ec;
  ec.max_model_len = kPrompt + kMaxOutput;
  ec.check_invariants = false;
  Engine engine(*scheduler, executor, kv, clock, ec);
  Replacer replacer;
  engine.add_observer(&replacer);
  std::mt19937 rng(42);
  auto add = [&] {
    Request r;
    for (int32_t i = 0; i < kPrompt; ++i) r.prompt_tokens.push_back(static_cast<int32_t>(3 + rng() % 200));
    r.sampling.temperature = 0;
    r.sampling.max_tokens = kMaxOutput;
    r.sampling.ignore_eos = true;
    r.forced_output_len = 64 + static_cast<int32_t>(rng() % 64);
    engine.add_request(std::move(r));
  };
  for (int i = 0; i < batch; ++i) add();
  Totals t;
  for (int i = 0; i < warmup + steps; ++i) {
    const double c0 = thread_cpu_s();
    const auto t0 = std::chrono::steady_clock::now();
    IterationStats st = engine.step();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = thread_cpu_s() - c0;
    for (; replacer.finished > 0; --replacer.finished) add();
    if (i < warmup) continue;
    t.wall += wall;
    t.cpu += cpu;
    t.executor += st.elapsed_s;
    t.scheduler += st.scheduler_time_s;
    t.tokens += st.num_tokens;
    ++t.steps;
  }
  return t;
}

int main_impl(int argc, char** argv) {
  std::vector<int> batches = {8, 32, 128};
  int steps = 3000, warmup = 300, threads = 1, repeats = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--batches") {
      batches.clear();
      for (const auto& b : bench_args::split(next())) batches.push_back(std::stoi(b));
    } else if (a == "--steps") {
      steps = std::stoi(next());
    } else if (a == "--warmup") {
      warmup = std::stoi(next());
    } else if (a == "--threads") {
      threads = std::stoi(next());
    } else if (a == "--repeats") {
      repeats = std::stoi(next());
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  RandomModelOptions mo;
  mo.shape = *named_model_shape("tiny");
  mo.seed = 1;
  mo.progress = false;
  const std::string path = "/tmp/seer_bench_engine_step_tiny.gguf";
  write_random_model(path, mo);
  auto model = ModelFile::open(path);

  std::printf("%-6s %5s %10s %12s %12s %12s %10s  (us per step, mean of %d steps, best of %d runs)\n", "exec",
              "batch", "wall", "executor", "scheduler", "engine rest", "cpu", steps, repeats);
  for (int batch : batches) {
    const int32_t block_size = 16;
    const int32_t device_blocks = 2 * batch * ((kPrompt + kMaxOutput) / block_size) + 64;
    for (const char* kind : {"null", "plan", "model"}) {
      Totals best;
      for (int rep = 0; rep < repeats; ++rep) {
        Totals t;
        if (std::string(kind) == "null") {
          NullExecutor ex;
          t = run(ex, block_size, device_blocks, batch, warmup, steps);
        } else if (std::string(kind) == "plan") {
          PlanExecutor ex(block_size);
          t = run(ex, block_size, device_blocks, batch, warmup, steps);
        } else {
          CpuBackendOptions o;
          o.kv.block_size = block_size;
          o.kv.device_blocks = device_blocks;
          o.threads = threads;
          auto backend = make_cpu_backend(*model, o);
          ModelExecutor ex(*backend, 1);
          t = run(ex, block_size, device_blocks, batch, warmup, steps);
        }
        if (rep == 0 || t.wall < best.wall) best = t;
      }
      const double n = static_cast<double>(best.steps) / 1e6;
      std::printf("%-6s %5d %10.1f %12.1f %12.1f %12.1f %10.1f\n", kind, batch, best.wall / n, best.executor / n,
                  best.scheduler / n, (best.wall - best.executor - best.scheduler) / n, best.cpu / n);
    }
  }
  std::remove(path.c_str());
  return 0;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  try {
    return seer::main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_engine_step: %s\n", e.what());
    return 1;
  }
}
