// Pipeline parallelism in the simulator (docs/simulator.md, "Pipeline parallelism"):
// the cost formula, the catalog's clusters, `--pp` on the command line, and that
// --pp 1 reproduces the simulator's results from before pipelines existed.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "sim/cost_model.h"
#include "sim/sim_options.h"
#include "sim/sim_test_util.h"
#include "support/test_paths.h"

namespace seer {
namespace {

class PipelineCost : public ::testing::Test {
 protected:
  Catalog catalog = Catalog::load(Catalog::default_dir());
  CostModel make(const char* model, const char* hw, int tp, int pp, int gpus_per_node = 0) {
    CostModelOptions o;
    o.tp = tp;
    o.pp = pp;
    o.gpus_per_node = gpus_per_node;
    return CostModel(catalog.model(model), catalog.hardware(hw), o);
  }
  static IterationShape chunks(std::initializer_list<ChunkShape> cs) {
    IterationShape s;
    s.chunks = cs;
    return s;
  }
};

TEST_F(PipelineCost, StageTimeIsTheBlocksOfLayersOverN) {
  CostModel one = make("Llama-2-70B", "A100-80GB", 4, 1);
  const std::vector<ChunkShape> batch{{512, 0, true}, {1, 900, true}, {1, 2000, true}};
  const double whole = one.stage_time(batch);  // pp = 1: the one stage is the whole model
  for (int pp : {2, 4, 8}) {
    CostModel m = make("Llama-2-70B", "A100-80GB", 4, pp, 32);
    EXPECT_EQ(m.layers_per_stage(), 80 / pp);
    EXPECT_NEAR(m.stage_time(batch), whole / pp, 1e-12 * whole) << pp;
  }
  // Uneven split: the slowest stage has ceil(layers / pp).
  EXPECT_EQ(make("Llama-2-70B", "A100-80GB", 4, 3, 16).layers_per_stage(), 27);
}

TEST_F(PipelineCost, OneMicroBatchLeavesABubbleNoFasterThanOneStage) {
  // A single chunk cannot be split: it goes through both stages one after the
  // other while the other stage idles, so the iteration is the whole model's time
  // plus the send between the stages.
  CostModel one = make("Llama-2-70B", "A40", 4, 1);
  CostModel two = make("Llama-2-70B", "A40", 4, 2);
  const IterationShape s = chunks({{1024, 0, true}});
  const CostBreakdown b = two.breakdown(s);
  EXPECT_NEAR(b.linear_s + b.attention_s + b.all_reduce_s, 2 * two.stage_time(s.chunks), 1e-12);
  EXPECT_NEAR(b.pipeline_s, two.send_recv_time(1024, 0), 1e-15);
  EXPECT_NEAR(two.iteration_time(s), one.iteration_time(s) + two.send_recv_time(1024, 0),
              1e-9 * one.iteration_time(s));
}

TEST_F(PipelineCost, NMicroBatchesFillThePipe) {
  // Two equal compute-bound prompts on two stages: each micro-batch takes half
  // the work through both stages, and they overlap, so the pair costs about what
  // one prompt costs without a pipeline, about half of the pair's time.
  CostModel one = make("Llama-2-70B", "A40", 4, 1);
  CostModel two = make("Llama-2-70B", "A40", 4, 2);
  const IterationShape pair = chunks({{1024, 0, true}, {1024, 0, true}});
  const IterationShape single = chunks({{1024, 0, true}});
  ASSERT_EQ(two.micro_batches(pair.chunks).size(), 2u);
  EXPECT_NEAR(two.iteration_time(pair), two.iteration_time(single), 1e-12 * two.iteration_time(single));
  EXPECT_LT(two.iteration_time(pair), 0.6 * one.iteration_time(pair));
  EXPECT_GT(two.iteration_time(pair), 0.45 * one.iteration_time(pair));
  // More chunks than stages: still pp micro-batches, balanced by tokens.
  const auto mbs = make("Llama-2-70B", "A40", 4, 2).micro_batches(
      {{1000, 0, true}, {1, 10, true}, {600, 0, true}, {400, 0, true}, {1, 20, true}});
  ASSERT_EQ(mbs.size(), 2u);
  auto tokens = [](const std::vector<ChunkShape>& mb) {
    int n = 0;
    for (const auto& c : mb) n += c.query_tokens;
    return n;
  };
  EXPECT_EQ(tokens(mbs[0]), 1001);
  EXPECT_EQ(tokens(mbs[1]), 1001);
}

TEST_F(PipelineCost, ThroughputIsBoundedByTheLastStage) {
  // Whatever the split, the last stage runs every micro-batch's blocks and LM
  // head: the iteration is never shorter than that.
  for (int pp : {2, 4}) {
    CostModel m = make("Llama-2-70B", "A100-80GB", 2, pp);
    std::vector<ChunkShape> decodes(64, ChunkShape{1, 1500, true});
    double busy = 0, slowest = 0;
    for (const auto& mb : m.micro_batches(decodes)) {
      busy += m.stage_time(mb);
      slowest = std::max(slowest, m.stage_time(mb));
    }
    IterationShape s;
    s.chunks = decodes;
    const CostBreakdown b = m.breakdown(s);
    EXPECT_GE(b.total() - b.overhead_s, busy * (1 - 1e-12)) << pp;
    EXPECT_GE(b.total() - b.overhead_s, pp * slowest * (1 - 1e-12)) << pp;  // and its path through every stage
  }
}

TEST_F(PipelineCost, SendRecvGrowsWithTokensAndIsSlowerAcrossNodes) {
  CostModel node = make("Falcon-180B", "A100-80GB", 4, 2, 8);   // both stages in one node
  CostModel nodes = make("Falcon-180B", "A100-80GB", 4, 2, 4);  // one stage per node
  EXPECT_FALSE(node.crosses_nodes(0));
  EXPECT_TRUE(nodes.crosses_nodes(0));
  EXPECT_EQ(node.send_recv_time(0, 0), 0);
  double prev = 0;
  for (double tokens : {1.0, 64.0, 512.0, 2048.0}) {
    const double t = nodes.send_recv_time(tokens, 0);
    EXPECT_GT(t, prev) << tokens;
    EXPECT_GT(t, node.send_recv_time(tokens, 0)) << tokens;
    prev = t;
  }
  // Linear in the activation bytes: hidden x tokens x 2 bytes at the link's bandwidth.
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  EXPECT_NEAR(nodes.send_recv_time(2048, 0) - nodes.send_recv_time(1024, 0), 1024.0 * 14848 * 2 / hw.network_bandwidth,
              1e-12);
  EXPECT_NEAR(node.send_recv_time(2048, 0) - node.send_recv_time(1024, 0),
              1024.0 * 14848 * 2 / hw.send_recv_bandwidth, 1e-12);
  // And the iteration pays it once per boundary.
  IterationShape s;
  s.chunks.push_back({512, 0, true});
  EXPECT_NEAR(nodes.iteration_time(s) - node.iteration_time(s),
              nodes.send_recv_time(512, 0) - node.send_recv_time(512, 0), 1e-12);
}

TEST_F(PipelineCost, StagesSplitWeightsAndKvOverTheDevices) {
  // Falcon-180B does not fit 4 A100s, but fits two stages of 4.
  EXPECT_THROW(make("Falcon-180B", "A100-80GB", 4, 1), Error);
  CostModel m = make("Falcon-180B", "A100-80GB", 4, 2, 4);
  CostModelOptions o;
  o.tp = 4;
  o.check_fits = false;
  CostModel tp4(catalog.model("Falcon-180B"), catalog.hardware("A100-80GB"), o);
  EXPECT_EQ(m.kv_bytes_per_token_per_device() * 2, tp4.kv_bytes_per_token_per_device());
  EXPECT_EQ(m.kv_bytes_per_token(), tp4.kv_bytes_per_token());
  EXPECT_LT(m.weight_bytes_per_device(), 0.51 * tp4.weight_bytes_per_device());
  EXPECT_GT(m.weight_bytes_per_device(), 0.49 * tp4.weight_bytes_per_device());
}

TEST_F(PipelineCost, RejectsPipelinesItCannotModel) {
  EXPECT_THROW(make("Llama-2-7B", "A100-80GB", 1, 0), Error);
  EXPECT_THROW(make("Llama-2-7B", "A100-80GB", 1, 33), Error);  // more stages than layers
  EXPECT_THROW(make("Llama-2-70B", "A100-80GB", 4, 2, 6), Error);  // a TP group across two nodes
  EXPECT_THROW(make("Llama-2-70B", "cpu", 4, 2, 4), Error);  // two nodes, no network in the entry
  EXPECT_NO_THROW(make("Llama-2-70B", "A40", 4, 2));
}

TEST(PipelineCatalog, NamesThePapersSetups) {
  Catalog c = Catalog::load(Catalog::default_dir());
  for (const char* m : {"Llama-2-70B", "Falcon-180B", "Yi-34B", "Mistral-7B"}) EXPECT_NO_THROW(c.model(m)) << m;
  const ClusterSpec& a40 = c.cluster("a40x8-tp4-pp2");
  EXPECT_EQ(a40.hardware, "A40");
  EXPECT_EQ(a40.tp * a40.pp, 8);
  const ClusterSpec& falcon = c.cluster("A100x8-2node-TP4-PP2");
  EXPECT_EQ(falcon.tp, 4);
  EXPECT_EQ(falcon.pp, 2);
  EXPECT_EQ(falcon.gpus_per_node, 4);
  for (const char* hw : {"A100-80GB", "H100-80GB", "H200", "A40"}) {
    EXPECT_GT(c.hardware(hw).send_recv_bandwidth, 0) << hw;
    EXPECT_GT(c.hardware(hw).network_bandwidth, 0) << hw;
    EXPECT_LT(c.hardware(hw).network_bandwidth, c.hardware(hw).send_recv_bandwidth) << hw;
  }
  EXPECT_THROW(c.cluster("no-such-cluster"), Error);
}

TEST(PipelineCatalog, ClusterEntriesAreChecked) {
  const std::string dir = testing::scratch_dir() + "/pp-catalog";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(Catalog::default_dir() + "/models.json", dir + "/models.json",
                             std::filesystem::copy_options::overwrite_existing);
  auto write = [&](const std::string& clusters) {
    std::ofstream(dir + "/hardware.json")
        << R"({"hardware": {"G": {"memory_bytes": 1e11, "memory_bandwidth": 1e12, "peak_flops": 1e14,
              "host_link_bandwidth": 1e10, "interconnect_bandwidth": 1e11}}, "clusters": )"
        << clusters << "}";
  };
  write(R"({"x": {"hardware": "G", "tp": 2, "pp": 2}})");
  Catalog ok = Catalog::load(dir);
  EXPECT_EQ(ok.cluster("x").pp, 2);
  EXPECT_EQ(ok.cluster("x").gpus_per_node, 0);
  EXPECT_EQ(ok.hardware("G").gpus_per_node, 8);
  write(R"({"x": {"hardware": "nope", "tp": 2}})");
  EXPECT_THROW(Catalog::load(dir), Error);
  write(R"({"x": {"hardware": "G", "pp": 0}})");
  EXPECT_THROW(Catalog::load(dir), Error);
  write(R"({"x": {"tp": 2}})");
  EXPECT_THROW(Catalog::load(dir), Error);
}

// Every metric but the scheduler's own wall time per iteration, which is measured,
// not simulated, and differs between any two runs.
constexpr const char* kMeasured = "scheduler_time_per_iteration_s";

TEST(PipelineSim, PpOneIsTheDefaultInEveryField) {
  auto trace = testing::synthetic_trace(80, 20.0, 5);
  for (const char* policy : {"vllm", "sarathi"}) {
    SimSetup base = testing::small_setup(policy, 12000);
    SimSetup explicit_one = base;
    explicit_one.cost.pp = 1;
    explicit_one.cost.gpus_per_node = 4;  // irrelevant with one stage
    SimResult a = run_simulation(base, trace), b = run_simulation(explicit_one, trace);
    auto ja = summary_json(a.summary), jb = summary_json(b.summary);
    ASSERT_TRUE(ja.contains(kMeasured));
    ja.erase(kMeasured);
    jb.erase(kMeasured);
    EXPECT_EQ(ja.dump(), jb.dump()) << policy;
    ASSERT_EQ(a.records.size(), b.records.size());
    for (size_t i = 0; i < a.records.size(); ++i) EXPECT_EQ(a.records[i].token_times_s, b.records[i].token_times_s);
  }
}

TEST(PipelineSim, TwoStagesHoldMoreKvAndFinishEveryRequest) {
  auto trace = testing::synthetic_trace(60, 4.0, 3);
  SimOptions o;
  o.model = "Llama-2-70B";
  o.hardware = "A100-80GB";
  o.policy = "sarathi";
  o.token_budget = 1024;
  o.tp = 4;
  o.progress = false;
  SimOptions two = o;
  two.pp = 2;
  SimResult a = run_simulation(make_sim_setup(o), trace), b = run_simulation(make_sim_setup(two), trace);
  ASSERT_EQ(b.records.size(), trace.size());
  EXPECT_GT(b.device_blocks, 2 * a.device_blocks);  // half the weights and half the layers' K/V per device
  SimOptions cluster = o;
  cluster.hardware = "ignored";
  cluster.cluster = "A40x8-TP4-PP2";
  SimSetup s = make_sim_setup(cluster);
  EXPECT_EQ(s.hardware.name, "A40");
  EXPECT_EQ(s.cost.tp, 4);
  EXPECT_EQ(s.cost.pp, 2);
  two.pp = 0;
  EXPECT_THROW(make_sim_setup(two), Error);
}

// `seer sim` as a user runs it.
struct Cli {
  int rc;
  std::string out, err;
};

Cli run_seer(const std::string& args) {
  const std::string err_path = testing::scratch_dir() + "/pp-stderr.txt";
  const std::string cmd = testing::seer_binary() + " " + args + " 2>" + err_path;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err.str()};
}

// tests/sim/data/pp1_golden.json holds `seer sim --json` of the trace
// tests/sim/data/pp1_trace.jsonl under several setups, printed by the simulator
// before pipeline parallelism existed (commit f623670). With --pp 1 every metric
// must come out the same, to the last bit (all but the measured scheduler time).
TEST(PipelineSim, PpOneReproducesTheResultsFromBeforePipelines) {
  const std::string data = testing::source_dir() + "/tests/sim/data";
  std::ifstream in(data + "/pp1_golden.json");
  ASSERT_TRUE(in) << data;
  const auto golden = nlohmann::json::parse(in);
  ASSERT_GE(golden.size(), 5u);
  for (const auto& g : golden) {
    const std::string args = g["args"].get<std::string>();
    Cli r = run_seer("sim --trace " + data + "/pp1_trace.jsonl " + args + " --pp 1 --quiet --json");
    ASSERT_EQ(r.rc, 0) << args << "\n" << r.err;
    const auto now = nlohmann::json::parse(r.out);
    const auto& before = g["result"];
    EXPECT_EQ(now.size(), before.size()) << args;
    for (const auto& [key, value] : before.items())
      if (key != kMeasured) {
        EXPECT_EQ(now[key], value) << args << ": " << key;
      }
    EXPECT_EQ(r.err.find("pp="), std::string::npos) << r.err;
  }
}

TEST(PipelineSim, CliTakesPpAndClusters) {
  const std::string trace = testing::source_dir() + "/tests/sim/data/pp1_trace.jsonl";
  Cli r = run_seer("sim --trace " + trace + " --num 30 --model Llama-2-70B --hardware A40 --tp 4 --pp 2 " +
                   "--policy sarathi --token-budget 1024 --quiet --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("(tp=4, pp=2)"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["requests"], 30);
  Cli c = run_seer("sim --trace " + trace + " --num 30 --model Falcon-180B --cluster A100x8-2node-TP4-PP2 " +
                   "--policy vllm --quiet");
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_NE(c.err.find("Falcon-180B on A100-80GB (tp=4, pp=2)"), std::string::npos) << c.err;
  Cli both = run_seer("sim --trace " + trace + " --model Falcon-180B --cluster A100x8-2node-TP4-PP2 --tp 8 --quiet");
  EXPECT_NE(both.rc, 0);
  Cli bad = run_seer("sim --trace " + trace + " --model Llama-2-7B --pp 64 --quiet");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("pipeline-parallel degree"), std::string::npos) << bad.err;
  EXPECT_NE(run_seer("sim capacity --help").out.find("--pp"), std::string::npos);
  EXPECT_NE(run_seer("sim sweep --help").out.find("--cluster"), std::string::npos);
}

}  // namespace
}  // namespace seer
