#include "sim/trace.h"

#include <sstream>

#include <gtest/gtest.h>

#include "sim/sim_test_util.h"

#include "common/error.h"

namespace seer {
namespace {

std::string parse_error(const std::string& line) {
  try {
    parse_trace_line(line, "t.jsonl", 7);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Trace, ParsesEveryField) {
  TraceEntry e = parse_trace_line(
      R"({"id":"r1","arrival_s":0.12,"prompt_tokens":512,"output_tokens":128,"conversation":"c7","turn":2,)"
      R"("think_s":3.5,"slo":{"ttft_s":2,"tbt_s":0.1,"deadline_s":30},"priority":-1})",
      "t.jsonl", 1);
  EXPECT_EQ(e.id, "r1");
  EXPECT_DOUBLE_EQ(e.arrival_s, 0.12);
  EXPECT_EQ(e.prompt_tokens, 512);
  EXPECT_EQ(e.prompt_len(), 512);
  EXPECT_EQ(e.output_tokens, 128);
  EXPECT_EQ(e.conversation, "c7");
  EXPECT_EQ(e.turn, 2);
  EXPECT_DOUBLE_EQ(e.think_s, 3.5);
  EXPECT_DOUBLE_EQ(e.slo.ttft_s, 2);
  EXPECT_DOUBLE_EQ(e.slo.tbt_s, 0.1);
  EXPECT_DOUBLE_EQ(e.slo.deadline_s, 30);
  EXPECT_EQ(e.priority, -1);
}

TEST(Trace, TextPromptsEstimateTheirTokens) {
  TraceEntry e = parse_trace_line(R"({"arrival_s":1,"prompt":"one two  three\nfour","output_tokens":5})", "t", 3);
  EXPECT_EQ(e.prompt_tokens, -1);
  EXPECT_EQ(e.prompt, "one two  three\nfour");
  EXPECT_EQ(e.prompt_len(), 6);  // ceil(4 words * 1.3)
  EXPECT_EQ(e.id, "line3");      // no id: named after its line
  EXPECT_EQ(estimate_tokens("   "), 1);
  EXPECT_EQ(estimate_tokens("a b c d e f g h i j"), 13);
}

TEST(Trace, BadLinesNameTheLineAndTheField) {
  struct Case {
    const char* line;
    const char* expect;
  };
  const Case cases[] = {
      {R"({"arrival_s":0.1,"prompt_tokens":5)", "t.jsonl:7: not valid JSON"},
      {R"([1,2])", "t.jsonl:7: expected a JSON object"},
      {R"({"prompt_tokens":5,"output_tokens":3})", "t.jsonl:7: field 'arrival_s': missing"},
      {R"({"arrival_s":-1,"prompt_tokens":5,"output_tokens":3})", "field 'arrival_s': expected a finite number >= 0"},
      {R"({"arrival_s":"soon","prompt_tokens":5,"output_tokens":3})", "field 'arrival_s': expected a number"},
      {R"({"arrival_s":0,"output_tokens":3})", "field 'prompt_tokens': missing"},
      {R"({"arrival_s":0,"prompt_tokens":0,"output_tokens":3})", "field 'prompt_tokens': expected an integer in [1,"},
      {R"({"arrival_s":0,"prompt_tokens":5.5,"output_tokens":3})", "field 'prompt_tokens': expected an integer"},
      {R"({"arrival_s":0,"prompt_tokens":99999999999,"output_tokens":3})", "field 'prompt_tokens'"},
      {R"({"arrival_s":0,"prompt_tokens":5})", "field 'output_tokens': missing"},
      {R"({"arrival_s":0,"prompt":"","output_tokens":3})", "field 'prompt': must not be empty"},
      {R"({"arrival_s":0,"prompt":7,"output_tokens":3})", "field 'prompt': expected a string"},
      {R"({"arrival_s":0,"prompt_tokens":5,"output_tokens":3,"slo":{"ttft":1}})", "field 'slo.ttft': unknown field"},
      {R"({"arrival_s":0,"prompt_tokens":5,"output_tokens":3,"slo":4})", "field 'slo': expected an object"},
      {R"({"arrival_s":0,"prompt_tokens":5,"output_tokens":3,"turn":-2})", "field 'turn'"},
      {R"({"arrival_s":0,"prompt_tokens":5,"output_tokens":3,"arival_s":1})", "field 'arival_s': unknown field"},
  };
  for (const auto& c : cases) {
    std::string msg = parse_error(c.line);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.line << "\n  got: " << msg;
  }
}

TEST(Trace, FileErrorsCountLinesIncludingBlankOnes) {
  std::istringstream in(
      "{\"arrival_s\":0,\"prompt_tokens\":5,\"output_tokens\":3}\n\n"
      "{\"arrival_s\":1,\"prompt_tokens\":5}\n");
  try {
    parse_trace(in, "x.jsonl");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.jsonl:3: field 'output_tokens'"), std::string::npos) << e.what();
  }
}

TEST(Trace, WriteThenParseRoundTrips) {
  std::vector<TraceEntry> in(3);
  in[0] = testing::entry("a", 0.5, 100, 20);
  in[1].id = "b";
  in[1].arrival_s = 1.25;
  in[1].prompt = "hello \"world\"\n";
  in[1].output_tokens = 7;
  in[1].conversation = "c1";
  in[1].turn = 1;
  in[1].think_s = 12.5;
  in[1].slo.tbt_s = 0.2;
  in[1].priority = 3;
  in[2] = testing::entry("c", 2.0, 9, 1);
  in[2].prompt = "a prompt with its token count";  // both: the count is the length
  std::stringstream s;
  write_trace(s, in);
  auto out = parse_trace(s, "mem");
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].id, in[i].id);
    EXPECT_DOUBLE_EQ(out[i].arrival_s, in[i].arrival_s);
    EXPECT_EQ(out[i].prompt_tokens, in[i].prompt_tokens);
    EXPECT_EQ(out[i].prompt, in[i].prompt);
    EXPECT_EQ(out[i].output_tokens, in[i].output_tokens);
    EXPECT_EQ(out[i].conversation, in[i].conversation);
    EXPECT_EQ(out[i].turn, in[i].turn);
    EXPECT_DOUBLE_EQ(out[i].think_s, in[i].think_s);
    EXPECT_DOUBLE_EQ(out[i].slo.tbt_s, in[i].slo.tbt_s);
    EXPECT_EQ(out[i].priority, in[i].priority);
  }
}

TEST(Trace, RescaleSetsTheMeanRateAndSorts) {
  std::vector<TraceEntry> t(5);
  double arrivals[] = {10, 12, 11, 14, 18};  // span 8 s, 4 gaps: 0.5 req/s
  for (int i = 0; i < 5; ++i) {
    t[i].arrival_s = arrivals[i];
    t[i].id = std::to_string(i);
  }
  EXPECT_DOUBLE_EQ(mean_arrival_rate(t), 0.5);
  rescale_arrivals(t, 2.0);
  EXPECT_DOUBLE_EQ(mean_arrival_rate(t), 2.0);
  EXPECT_EQ(t[0].id, "0");
  EXPECT_DOUBLE_EQ(t[0].arrival_s, 0);
  EXPECT_EQ(t[1].id, "2");
  EXPECT_DOUBLE_EQ(t[1].arrival_s, 0.25);
  EXPECT_DOUBLE_EQ(t[4].arrival_s, 2.0);
  EXPECT_THROW(rescale_arrivals(t, 0), Error);
}

}  // namespace
}  // namespace seer
