// The engine's iteration log and the cost-model check built on it: what
// `seer serve --iteration-log` writes reads back as the same plan shapes, and the
// per-kind errors are those of the model against the logged times.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include <fstream>

#include "common/error.h"
#include "engine/iteration_log.h"
#include "scheduler/step_plan.h"
#include "sim/iteration_log_check.h"

namespace seer {
namespace {

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))).string();
}

StepPlan plan_of(std::initializer_list<ScheduledChunk> chunks) {
  StepPlan p;
  p.chunks = chunks;
  return p;
}

ScheduledChunk chunk(RequestId id, int32_t start, int32_t tokens, bool sample) {
  ScheduledChunk c;
  c.request = id;
  c.start = start;
  c.num_tokens = tokens;
  c.sample = sample;
  return c;
}

void log_iteration(IterationLog& log, const StepPlan& plan, double elapsed_s) {
  log.on_plan(plan);
  IterationStats st;
  st.elapsed_s = elapsed_s;
  log.on_iteration(st);
}

ModelSpec small_model() { return {"small", 12, 768, 12, 12, 64, 2048, 32000, 2048, true, false}; }

HardwareSpec cpu() {
  HardwareSpec h;
  h.name = "cpu";
  h.memory_bytes = int64_t{16} << 30;
  h.memory_bandwidth = 20e9;
  h.peak_flops = 200e9;
  h.host_link_bandwidth = h.interconnect_bandwidth = 20e9;
  h.efficiency = {0.7, 0.35, 0.25, 0.15, 1.0, 1.0};
  h.iteration_overhead_s = 3e-4;
  return h;
}

TEST(IterationLog, WritesPlanShapesThatReadBackWithTheirKind) {
  const std::string path = temp_file("seer-iteration-log");
  {
    IterationLog log(path, 4096);
    log_iteration(log, plan_of({chunk(1, 0, 64, true)}), 0.05);
    log_iteration(log, plan_of({chunk(1, 64, 1, true), chunk(2, 0, 30, false)}), 0.04);
    StepPlan decode = plan_of({chunk(1, 65, 1, true), chunk(3, 200, 1, true)});
    decode.kv_ops.push_back(KvOp{});
    decode.kv_ops.back().kind = KvOpKind::SwapIn;
    log_iteration(log, decode, 0.02);
  }
  const auto samples = read_iteration_log(path);
  std::filesystem::remove(path);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].label, "prefill");
  EXPECT_EQ(samples[1].label, "mixed");
  EXPECT_EQ(samples[2].label, "decode");
  EXPECT_DOUBLE_EQ(samples[1].seconds, 0.04);
  ASSERT_EQ(samples[1].shape.chunks.size(), 2u);
  EXPECT_EQ(samples[1].shape.chunks[1].query_tokens, 30);
  EXPECT_EQ(samples[1].shape.chunks[1].context_before, 0);
  EXPECT_FALSE(samples[1].shape.chunks[1].sample);
  EXPECT_EQ(samples[2].shape.chunks[1].context_before, 200);
  EXPECT_EQ(samples[2].shape.swap_bytes, 4096);
  EXPECT_EQ(samples[2].shape.copy_bytes, 0);
}

TEST(IterationLogCheck, ErrorsPerKindAreTheModelsAgainstTheLoggedTimes) {
  const CostModel model(small_model(), cpu(), CostModelOptions{});
  std::vector<MeasuredIteration> samples(2);
  samples[0].shape.chunks = {{1, 100, true}, {1, 300, true}};
  samples[0].label = "decode";
  samples[0].seconds = model.iteration_time(samples[0].shape);  // exact
  samples[1].shape.chunks = {{128, 0, true}};
  samples[1].label = "prefill";
  samples[1].seconds = 2 * model.iteration_time(samples[1].shape);  // the model is twice too fast

  const auto rows = check_iterations(model, samples);
  ASSERT_EQ(rows.size(), 3u);  // decode, prefill, all (no mixed iteration)
  EXPECT_EQ(rows[0].kind, "decode");
  EXPECT_NEAR(rows[0].mean_relative, 0.0, 1e-12);
  EXPECT_EQ(rows[1].kind, "prefill");
  EXPECT_NEAR(rows[1].mean_signed, -0.5, 1e-12);
  EXPECT_NEAR(rows[1].total_relative, -0.5, 1e-12);
  EXPECT_EQ(rows[2].kind, "all");
  EXPECT_EQ(rows[2].iterations, 2);
  EXPECT_NEAR(rows[2].mean_relative, 0.25, 1e-12);
  EXPECT_NE(render_iteration_check(rows).find("prefill"), std::string::npos);
  EXPECT_EQ(iteration_check_json(rows).size(), 3u);
}

TEST(IterationLogCheck, MalformedLinesNameFileAndLine) {
  const std::string path = temp_file("seer-iteration-log-bad");
  {
    std::ofstream f(path);
    f << R"({"elapsed_s":0.01,"chunks":[[1,5,1]]})" << "\n" << R"({"elapsed_s":0.01,"chunks":[[1,5]]})" << "\n";
  }
  try {
    (void)read_iteration_log(path);
    ADD_FAILURE() << "a chunk without its sampled flag was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
  }
  {
    std::ofstream f(path);
    f << "not json\n";
  }
  EXPECT_THROW((void)read_iteration_log(path), Error);
  std::filesystem::remove(path);
  EXPECT_THROW((void)read_iteration_log(path), Error);  // missing file
}

}  // namespace
}  // namespace seer
