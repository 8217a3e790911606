// Issue 53, "No request can take the server down": request bodies whose structure
// drove an unbounded recursion (GBNF groups, `$ref` chains in a response_format or a
// tool's parameters, JSON nested inside strings) each get a 400 naming the limit and
// the field, and the server goes on answering /health and ordinary completions.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/server_process.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

struct Hostile {
  std::string name;
  std::string path;
  std::string body;
  std::string param;    // expected error.param ("" for null)
  std::string message;  // a part of error.message: the limit it names
};

// {"$defs": {"d0": LINK(d1), ..., "d{n-1}": {"type": "string"}}, "$ref": "#/$defs/d0"}
json ref_chain(int n, const std::function<json(const std::string&)>& link) {
  json defs = json::object();
  for (int i = 0; i + 1 < n; ++i) defs["d" + std::to_string(i)] = link("#/$defs/d" + std::to_string(i + 1));
  defs["d" + std::to_string(n - 1)] = {{"type", "string"}};
  return {{"$defs", defs}, {"$ref", "#/$defs/d0"}};
}

json plain_ref(const std::string& target) { return {{"$ref", target}}; }

std::string with_schema(const json& schema) {
  return json{{"messages", {{{"role", "user"}, {"content", "hi"}}}},
              {"max_tokens", 2},
              {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "s"}, {"schema", schema}}}}}}
      .dump();
}

std::string with_tool(const json& parameters) {
  json tool = {{"type", "function"}, {"function", {{"name", "f"}, {"parameters", parameters}}}};
  return json{{"messages", {{{"role", "user"}, {"content", "hi"}}}},
              {"max_tokens", 2},
              {"tools", {tool}},
              {"tool_choice", "required"}}
      .dump();
}

std::string with_grammar(const std::string& gbnf) {
  return json{{"prompt", "a"}, {"max_tokens", 2}, {"grammar", gbnf}}.dump();
}

std::vector<Hostile> hostile_requests() {
  const std::string chat = "/v1/chat/completions", completions = "/v1/completions";
  // The three bodies of the issue that took `seer serve` down.
  const std::string parens = "root ::= " + std::string(17500, '(') + "\"a\"" + std::string(17500, ')');
  const json defs_chain = ref_chain(20000, plain_ref);
  // Their siblings.
  std::string rule_chain = "root ::= r0\n";
  for (int i = 0; i < 20000; ++i) rule_chain += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + "\n";
  rule_chain += "r20000 ::= \"a\"\n";
  const std::string huge_repetition = "root ::= \"" + std::string(2000, 'a') + "\"{10000}";
  const json any_of_chain = ref_chain(20000, [](const std::string& t) { return json{{"anyOf", {plain_ref(t)}}}; });
  const json items_chain =
      ref_chain(20000, [](const std::string& t) { return json{{"type", "array"}, {"items", plain_ref(t)}}; });
  const json all_of_chain = ref_chain(20000, [](const std::string& t) { return json{{"allOf", {plain_ref(t)}}}; });
  const std::string deep_body = R"({"prompt": "a", "x": )" + std::string(33, '[') + std::string(33, ']') + "}";
  const std::string deep_arguments = std::string(200000, '[') + std::string(200000, ']');
  const std::string tool_reply =
      json{{"messages",
            {{{"role", "user"}, {"content", "hi"}},
             {{"role", "assistant"},
              {"content", nullptr},
              {"tool_calls", {{{"id", "c1"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", deep_arguments}}}}}}},
             {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "ok"}}}},
           {"max_tokens", 2}}
          .dump();
  const std::string schema_param = "response_format.json_schema.schema";
  return {
      {"gbnf_17500_nested_parens", completions, with_grammar(parens), "grammar", "nest deeper than 64 levels"},
      {"response_format_20000_ref_chain", chat, with_schema(defs_chain), schema_param, "deeper than 64 levels"},
      {"tool_parameters_20000_ref_chain", chat, with_tool(defs_chain), "tools[0].function.parameters",
       "deeper than 64 levels"},
      {"gbnf_20000_rule_chain", completions, with_grammar(rule_chain), "grammar", "more than 1000 rules"},
      {"gbnf_huge_repetition", completions, with_grammar(huge_repetition), "grammar", "more than 1048576 elements"},
      {"schema_any_of_ref_chain", chat, with_schema(any_of_chain), schema_param, "deeper than 64 levels"},
      {"schema_items_ref_chain", chat, with_schema(items_chain), schema_param, "deeper than 64 levels"},
      {"schema_all_of_ref_chain", chat, with_schema(all_of_chain), schema_param, "deeper than 64 levels"},
      {"json_body_33_deep", completions, deep_body, "", "deeper than 32 levels"},
      {"tool_call_arguments_200000_deep", chat, tool_reply, "messages[1].tool_calls[0].function.arguments",
       "deeper than 32 levels"},
  };
}

TEST(ServeRequestLimits, DeepStructureGets400NamingTheLimitAndTheServerLives) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--served-model-name", "tiny"});
  ASSERT_TRUE(s.up());
  for (const Hostile& h : hostile_requests()) {
    SCOPED_TRACE(h.name);
    HttpResult r = http_post(s.port(), h.path, h.body);
    EXPECT_EQ(r.status, 400) << r.body.substr(0, 500);
    json j = json::parse(r.body, nullptr, false);
    if (!j.is_discarded() && j.contains("error")) {
      const json& e = j["error"];
      EXPECT_EQ(e["type"], "invalid_request_error");
      EXPECT_EQ(h.param.empty() ? json(nullptr) : json(h.param), e["param"]) << e.dump();
      EXPECT_NE(e.value("message", "").find(h.message), std::string::npos) << e.dump();
    }
    // Checked after each one, so a failure names the body that took it down.
    ASSERT_EQ(http_get(s.port(), "/health").status, 200) << "the server is gone after " << h.name << "\n"
                                                         << s.stderr_text();
  }
  HttpResult done = http_post(s.port(), "/v1/completions", R"({"prompt": "Hello", "max_tokens": 4, "ignore_eos": true})");
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(json::parse(done.body)["usage"]["completion_tokens"], 4);
  HttpResult constrained = http_post(s.port(), "/v1/completions", with_grammar("root ::= (\"a\" | \"b\"){4}"));
  EXPECT_EQ(constrained.status, 200) << constrained.body;
}

// An object schema of N required integer properties (40,000 reach the GBNF size limit).
std::string wide_schema_body(int n) {
  json props = json::object(), required = json::array();
  for (int i = 0; i < n; ++i) {
    props["p" + std::to_string(i)] = {{"type", "integer"}};
    required.push_back("p" + std::to_string(i));
  }
  return with_schema({{"type", "object"}, {"properties", props}, {"required", required}});
}

// Compiles run on the prepare workers: with one I/O thread, /health answers while
// three of the largest schema compiles are in flight, each probe far quicker than a
// compile measured in the same run (before, the I/O thread compiled and /health
// waited for all three).
TEST(ServeRequestLimits, CompilesRunOffTheIoThreads) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--http-threads", "1", "--prepare-threads", "2"});
  ASSERT_TRUE(s.up());
  const std::string body = wide_schema_body(40000);
  using Clock = std::chrono::steady_clock;
  std::atomic<int> compiling{3};
  std::vector<double> compile_s(3);
  std::vector<std::thread> clients;
  for (int i = 0; i < 3; ++i)
    clients.emplace_back([&, i] {
      const auto t0 = Clock::now();
      HttpResult r = http_post(s.port(), "/v1/chat/completions", body);
      compile_s[i] = std::chrono::duration<double>(Clock::now() - t0).count();
      // Compiled and served, or refused at the grammar's size limit once compiled.
      EXPECT_TRUE(r.status == 200 || r.status == 400) << r.status << " " << r.body.substr(0, 300);
      compiling.fetch_sub(1);
    });
  std::vector<double> probes;  // /health latencies while compiles were in flight
  while (compiling.load() > 0) {
    const auto t0 = Clock::now();
    ASSERT_EQ(http_get(s.port(), "/health").status, 200);
    if (compiling.load() > 0) probes.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  for (auto& c : clients) c.join();
  ASSERT_GE(probes.size(), 3u) << "/health did not answer while the compiles ran";
  const double slowest_probe = *std::max_element(probes.begin(), probes.end());
  const double quickest_compile = *std::min_element(compile_s.begin(), compile_s.end());
  EXPECT_LT(slowest_probe, quickest_compile / 2) << probes.size() << " probes; compiles took " << compile_s[0]
                                                 << ", " << compile_s[1] << ", " << compile_s[2] << " s";
}

}  // namespace
}  // namespace seer::e2e
