#include "sim/trace_generator.h"

#include <cmath>
#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "predict/length_trainer.h"
#include "sim/datasets.h"
#include "sim/labeled_datasets.h"
#include "sim/trace_rng.h"
#include "tokenizer/tokenizer.h"
#include "support/test_paths.h"

namespace seer {
namespace {

std::string shared_data_dir() {
  std::string f = testing::shared_data_file("README.md");
  return f.empty() ? "" : f.substr(0, f.size() - std::string("/README.md").size());
}

double mean_gap(const std::vector<double>& a) { return a.back() / static_cast<double>(a.size()); }

double gap_cv2(const std::vector<double>& a) {
  double mean = mean_gap(a), var = 0, prev = 0;
  for (double t : a) {
    var += (t - prev - mean) * (t - prev - mean);
    prev = t;
  }
  var /= static_cast<double>(a.size());
  return var / (mean * mean);
}

TEST(TraceGenerator, PoissonArrivalsHaveTheRequestedRate) {
  TraceRng rng(1);
  auto a = generate_arrivals(20000, {5.0, ArrivalProcess::Poisson, 1.0}, rng);
  EXPECT_NEAR(mean_gap(a), 0.2, 0.2 * 0.03);
  EXPECT_NEAR(gap_cv2(a), 1.0, 0.06);  // exponential gaps
  for (size_t i = 1; i < a.size(); ++i) ASSERT_GE(a[i], a[i - 1]);
}

TEST(TraceGenerator, GammaArrivalsKeepTheRateAndSetTheBurstiness) {
  TraceRng rng(2);
  auto bursty = generate_arrivals(40000, {10.0, ArrivalProcess::Gamma, 0.25}, rng);
  EXPECT_NEAR(mean_gap(bursty), 0.1, 0.1 * 0.05);
  EXPECT_NEAR(gap_cv2(bursty), 4.0, 0.5);  // CV^2 = 1 / burstiness
  auto smooth = generate_arrivals(40000, {10.0, ArrivalProcess::Gamma, 4.0}, rng);
  EXPECT_NEAR(mean_gap(smooth), 0.1, 0.1 * 0.03);
  EXPECT_NEAR(gap_cv2(smooth), 0.25, 0.03);
}

TEST(TraceGenerator, SyntheticLengthsFollowTheirMeansAndBounds) {
  TraceGeneratorOptions o;
  o.num = 20000;
  o.arrivals.rate = 100;
  o.synthetic.prompt_mean = 600;
  o.synthetic.output_mean = 150;
  o.synthetic.prompt_max = 1 << 20;
  o.synthetic.output_max = 1 << 20;
  auto t = generate_trace(o);
  ASSERT_EQ(t.size(), 20000u);
  double p = 0, q = 0;
  for (const auto& e : t) {
    p += e.prompt_tokens;
    q += e.output_tokens;
    ASSERT_GE(e.prompt_tokens, 1);
  }
  EXPECT_NEAR(p / 20000, 600, 600 * 0.05);
  EXPECT_NEAR(q / 20000, 150, 150 * 0.05);
  EXPECT_EQ(t.front().id, "r0");
  EXPECT_EQ(t.back().id, "r19999");

  o.num = 2000;
  o.synthetic.dist = LengthDistribution::Uniform;
  o.synthetic.output_max = 200;
  for (const auto& e : generate_trace(o)) {
    ASSERT_GE(e.prompt_tokens, 1);
    ASSERT_LE(e.prompt_tokens, 1199);
    ASSERT_LE(e.output_tokens, 200);
  }
  o.synthetic.dist = LengthDistribution::Constant;
  for (const auto& e : generate_trace(o)) ASSERT_EQ(e.prompt_tokens, 600);
}

TEST(TraceGenerator, SameSeedSameTraceOtherSeedOtherTrace) {
  TraceGeneratorOptions o;
  o.num = 200;
  o.arrivals = {3.0, ArrivalProcess::Gamma, 0.5};
  o.seed = 42;
  auto a = generate_trace(o), b = generate_trace(o);
  o.seed = 43;
  auto c = generate_trace(o);
  int same = 0, differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(trace_line(a[i]), trace_line(b[i]));
    (trace_line(a[i]) == trace_line(c[i]) ? same : differ)++;
  }
  EXPECT_GT(differ, 190);
}

TEST(TraceGenerator, BadOptionsNameTheFlag) {
  TraceGeneratorOptions o;
  o.arrivals.rate = 0;
  EXPECT_THROW(generate_trace(o), Error);
  o.arrivals.rate = 1;
  o.lengths = "sharegpt";
  try {
    generate_trace(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--data-dir"), std::string::npos) << e.what();
  }
  o.data_dir = "/nonexistent";
  o.lengths = "wikipedia";
  try {
    generate_trace(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("splitwise-conv"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_arrival_process("uniform"), Error);
}

TEST(TraceGenerator, LengthTablesGiveTheirRecordedCounts) {
  SEER_REQUIRE_SHARED_FILE(csv, "length-traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv");
  auto rows = read_length_csv(csv);
  EXPECT_EQ(rows.size(), 30731u);
  std::set<std::pair<int, int>> known;
  for (const auto& r : rows) known.insert({r.prompt_tokens, r.output_tokens});
  TraceGeneratorOptions o;
  o.num = 500;
  o.arrivals.rate = 4;
  o.lengths = "sharegpt";
  o.data_dir = shared_data_dir();
  auto t = generate_trace(o);
  ASSERT_EQ(t.size(), 500u);
  for (const auto& e : t) ASSERT_TRUE(known.count({e.prompt_tokens, e.output_tokens}));
  EXPECT_NEAR(mean_arrival_rate(t), 4, 4 * 0.15);
}

TEST(TraceGenerator, SplitwiseKeepsItsRealArrivals) {
  SEER_REQUIRE_SHARED_FILE(csv, "length-traces/splitwise_conv.csv");
  TraceGeneratorOptions o;
  o.num = 50;
  o.arrivals.rate = 0;  // the recorded times
  o.lengths = "splitwise-conv";
  o.data_dir = shared_data_dir();
  auto t = generate_trace(o);
  auto rows = read_length_csv(csv);
  ASSERT_EQ(t.size(), 50u);
  EXPECT_DOUBLE_EQ(t[0].arrival_s, 0.0);
  EXPECT_DOUBLE_EQ(t[1].arrival_s, rows[1].arrival_s - rows[0].arrival_s);
  EXPECT_EQ(t[1].prompt_tokens, rows[1].prompt_tokens);
  o.arrivals.rate = 20;  // rescaled
  EXPECT_NEAR(mean_arrival_rate(generate_trace(o)), 20, 1e-9);
}

TEST(TraceGenerator, AlpacaGivesTextPromptsAndTrueTokenCounts) {
  SEER_REQUIRE_SHARED_FILE(json, "alpaca/alpaca_data.json");
  SEER_REQUIRE_SHARED_FILE(gguf, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  TraceGeneratorOptions o;
  o.num = 300;
  o.arrivals.rate = 2;
  o.lengths = "alpaca";
  o.data_dir = shared_data_dir();
  auto t = generate_trace(o);
  std::map<std::string, std::string> answer_of;
  for (const auto& rec : read_alpaca(json)) answer_of[rec.prompt] = rec.answer;
  auto tok = load_llama2_tokenizer(o.data_dir);
  double tokens = 0;
  for (const auto& e : t) {
    ASSERT_FALSE(e.prompt.empty());
    EXPECT_EQ(e.prompt_tokens, static_cast<int32_t>(tok->encode(e.prompt, true).size()));
    ASSERT_TRUE(answer_of.count(e.prompt));
    EXPECT_EQ(e.output_tokens, std::max<int32_t>(1, static_cast<int32_t>(tok->encode(answer_of[e.prompt], false).size())));
    tokens += e.output_tokens;
  }
  const double mean = tokens / 300;  // README: answers of 44 words on average
  EXPECT_GT(mean, 44 * 1.1);
  EXPECT_LT(mean, 44 * 2.0);
}

TEST(TraceGenerator, ShareGptChatIsEachConversationsFirstTurnWithTrueTokenCounts) {
  SEER_REQUIRE_SHARED_FILE(json, "sharegpt/sharegpt_sample_1000_plain.json");
  SEER_REQUIRE_SHARED_FILE(gguf, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  TraceGeneratorOptions o;
  o.num = 200;
  o.arrivals.rate = 2;
  o.lengths = "sharegpt-chat";
  o.data_dir = shared_data_dir();
  auto t = generate_trace(o);
  ASSERT_EQ(t.size(), 200u);
  // Some conversations open with the same message (and different answers).
  std::map<std::string, std::vector<std::string>> first_answers;
  for (const auto& c : read_sharegpt_conversations(json))
    first_answers[c.turns.front().prompt].push_back(c.turns.front().answer);
  auto tok = load_llama2_tokenizer(o.data_dir);
  for (const auto& e : t) {
    ASSERT_TRUE(first_answers.count(e.prompt)) << "not a first turn: " << e.prompt.substr(0, 80);
    EXPECT_TRUE(e.conversation.empty());
    EXPECT_EQ(e.prompt_tokens, static_cast<int32_t>(tok->encode(e.prompt, true).size()));
    std::set<int32_t> counts;
    for (const auto& a : first_answers[e.prompt])
      counts.insert(std::max<int32_t>(1, static_cast<int32_t>(tok->encode(a, false).size())));
    EXPECT_TRUE(counts.count(e.output_tokens)) << e.output_tokens << " tokens: no answer to this prompt has that many";
  }
  EXPECT_NEAR(mean_arrival_rate(t), 2, 0.5);
}

// A trained predictor is measured on prompts it never saw: with the split seed of
// `seer predict train`, the trace draws only from that split's test examples.
TEST(TraceGenerator, HeldOutTracesDrawOnlyTheTestSplitOfTheLabeledDataset) {
  SEER_REQUIRE_SHARED_FILE(json, "sharegpt/sharegpt_sample_1000_plain.json");
  SEER_REQUIRE_SHARED_FILE(alpaca, "alpaca/alpaca_data.json");
  SEER_REQUIRE_SHARED_FILE(gguf, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  for (const auto& [lengths, dataset] : {std::pair{"sharegpt-chat", "sharegpt"}, std::pair{"alpaca", "alpaca"}}) {
    SCOPED_TRACE(lengths);
    TraceGeneratorOptions o;
    o.num = 400;
    o.arrivals.rate = 2;
    o.lengths = lengths;
    o.data_dir = shared_data_dir();
    o.held_out_split_seed = 5;
    const auto records = read_text_dataset(o.data_dir, dataset);
    std::set<std::string> test_prompts, train_only;
    const auto test = test_split(records.size(), 5);
    for (size_t i : test) test_prompts.insert(records[i].prompt);
    for (size_t i = 0; i < records.size(); ++i)
      if (!std::binary_search(test.begin(), test.end(), i) && !test_prompts.count(records[i].prompt))
        train_only.insert(records[i].prompt);
    std::set<std::string> drawn;
    for (const auto& e : generate_trace(o)) {
      EXPECT_TRUE(test_prompts.count(e.prompt)) << "a training prompt: " << e.prompt.substr(0, 80);
      drawn.insert(e.prompt);
    }
    EXPECT_GT(drawn.size(), 20u);
    // Without the seed the same draw reaches training prompts.
    o.held_out_split_seed.reset();
    bool seen_train = false;
    for (const auto& e : generate_trace(o)) seen_train |= train_only.count(e.prompt) > 0;
    EXPECT_TRUE(seen_train);
  }
  TraceGeneratorOptions o;
  o.lengths = "sharegpt";
  o.data_dir = shared_data_dir();
  o.held_out_split_seed = 5;
  EXPECT_THROW(generate_trace(o), Error);
}

TEST(TraceGenerator, ShareGptConversationsBecomeNumberedTurnsWithThinkTimes) {
  SEER_REQUIRE_SHARED_FILE(json, "sharegpt/sharegpt_sample_1000_plain.json");
  TraceGeneratorOptions o;
  o.num = 400;
  o.arrivals.rate = 0.5;
  o.lengths = "sharegpt-multiturn";
  o.data_dir = shared_data_dir();
  o.think_mean_s = 60;
  auto t = generate_trace(o);
  ASSERT_EQ(t.size(), 400u);
  std::map<std::string, std::vector<const TraceEntry*>> convs;
  double think = 0;
  int thinks = 0;
  for (const auto& e : t) convs[e.conversation].push_back(&e);
  for (const auto& [id, turns] : convs) {
    for (size_t k = 0; k < turns.size(); ++k) {
      ASSERT_EQ(turns[k]->turn, static_cast<int>(k)) << id;
      if (k == 0) {
        ASSERT_LT(turns[k]->think_s, 0);
      } else {
        ASSERT_NEAR(turns[k]->arrival_s, turns[k - 1]->arrival_s + turns[k]->think_s, 1e-9);
        think += turns[k]->think_s;
        ++thinks;
      }
    }
  }
  EXPECT_LT(convs.size(), 400u);
  ASSERT_GT(thinks, 50);
  EXPECT_NEAR(think / thinks, 60, 20);
}

TEST(TraceGenerator, ConversationsArriveForTheWholeDurationAndLaterTurnsAreCut) {
  SEER_REQUIRE_SHARED_FILE(json, "sharegpt/sharegpt_sample_1000_plain.json");
  TraceGeneratorOptions o;
  o.num = 100000;  // only a cap: the duration decides
  o.arrivals.rate = 2;
  o.lengths = "sharegpt-multiturn";
  o.data_dir = shared_data_dir();
  o.think_mean_s = 60;
  o.duration_s = 600;
  auto t = generate_trace(o);
  std::map<std::string, int> turns;
  double first_turns_late = 0;
  for (const auto& e : t) {
    ASSERT_LE(e.arrival_s, 600.0);
    ++turns[e.conversation];
    if (e.turn == 0 && e.arrival_s > 500) ++first_turns_late;
  }
  // About 2 conversations/s for 600 s, still arriving in the last 100 s.
  EXPECT_GT(turns.size(), 1000u);
  EXPECT_LT(turns.size(), 1400u);
  EXPECT_GT(first_turns_late, 150);
  // A conversation keeps its turns in order from turn 0 (only the end is cut).
  for (const auto& e : t) EXPECT_LT(e.turn, turns[e.conversation]);

  o.lengths = "sharegpt";
  EXPECT_THROW(generate_trace(o), Error);
}

}  // namespace
}  // namespace seer
