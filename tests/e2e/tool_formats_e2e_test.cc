// Forced tool calls in the model's own format through a real `seer serve`: tiny
// random models carrying the Qwen3-Coder template fixture and the pythonic Llama 3.2
// template (tests/data/tool_templates/). With tool_choice "required" (and a named
// function) the grammar makes the model write a call its family's way; the response's
// tool_calls must parse and satisfy the tool's schema, streamed and not.
#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

std::string model_with_template(const std::string& name, const std::string& template_path) {
  const std::string path = seer::testing::scratch_dir() + "/tiny-tools-" + name + ".gguf";
  int status = 0;
  run_command(seer::testing::seer_binary() + " make-model --shape tiny --type f32 --quiet --context 4096 --chat-template " +
                  seer::testing::source_dir() + "/" + template_path + " --out " + path,
              &status);
  return status == 0 ? path : "";
}

const json kTools = json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {
      "city": {"type": "string", "enum": ["Paris", "Rome", "Oslo"]},
      "days": {"type": "integer", "minimum": 1, "maximum": 7},
      "metric": {"type": "boolean"}},
     "required": ["city", "days"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {
      "host": {"type": "string", "enum": ["a.example", "b.example"]}}, "required": ["host"]}}}])");

// Whether `args` (the call's arguments text) satisfies the schema of `name` above.
::testing::AssertionResult satisfies_schema(const std::string& name, const std::string& args) {
  const json a = json::parse(args, nullptr, false);
  if (!a.is_object()) return ::testing::AssertionFailure() << "arguments are not a JSON object: " << args;
  if (name == "ping") {
    if (a.size() == 1 && a.contains("host") && (a["host"] == "a.example" || a["host"] == "b.example"))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "ping arguments " << args;
  }
  const json cities = {"Paris", "Rome", "Oslo"};
  const bool ok = name == "get_weather" && a.contains("city") && std::find(cities.begin(), cities.end(), a["city"]) != cities.end() &&
                  a.contains("days") && a["days"].is_number_integer() && a["days"] >= 1 && a["days"] <= 7 &&
                  (!a.contains("metric") || a["metric"].is_boolean()) &&
                  a.size() == 2u + (a.contains("metric") ? 1 : 0);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << " arguments " << args;
}

struct Reply {
  std::string finish;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
};

Reply whole(int port, const json& body) {
  HttpResult r = http_post(port, "/v1/chat/completions", body.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  Reply out;
  const json j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.contains("choices")) return out;
  const json& c = j["choices"][0];
  out.finish = c.value("finish_reason", "");
  if (c["message"].contains("tool_calls") && c["message"]["tool_calls"].is_array())
    for (const json& call : c["message"]["tool_calls"])
      out.calls.emplace_back(call["function"]["name"], call["function"]["arguments"]);
  return out;
}

Reply streamed(int port, json body) {
  body["stream"] = true;
  HttpResult r = http_post(port, "/v1/chat/completions", body.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  Reply out;
  for (const std::string& d : sse_data(r.body)) {
    if (d == "[DONE]") continue;
    const json c = json::parse(d)["choices"][0];
    if (c["finish_reason"].is_string()) out.finish = c["finish_reason"];
    if (!c["delta"].contains("tool_calls")) continue;
    for (const json& t : c["delta"]["tool_calls"]) {
      const size_t i = t["index"];
      if (i == out.calls.size()) out.calls.emplace_back(t["function"].value("name", ""), "");
      if (i < out.calls.size() && t["function"].contains("arguments"))
        out.calls[i].second += t["function"]["arguments"].get<std::string>();
    }
  }
  return out;
}

void expect_forced_calls(const std::string& template_path, const std::string& format) {
  const std::string model = model_with_template(format, template_path);
  ASSERT_FALSE(model.empty()) << "seer make-model failed";
  ServerProcess s(model);
  ASSERT_TRUE(s.up());
  EXPECT_NE(s.stderr_text().find("tool calls " + format), std::string::npos) << s.stderr_text();
  const json messages = {{{"role", "user"}, {"content", "What is the weather in Paris for three days?"}}};
  for (const json& choice : {json("required"), json{{"type", "function"}, {"function", {{"name", "ping"}}}}}) {
    json body = {{"messages", messages}, {"tools", kTools}, {"tool_choice", choice}, {"parallel_tool_calls", false},
                 {"temperature", 0}, {"max_tokens", 300}};
    for (const Reply& r : {whole(s.port(), body), streamed(s.port(), body)}) {
      EXPECT_EQ(r.finish, "tool_calls") << format << " " << choice;
      ASSERT_EQ(r.calls.size(), 1u) << format << " " << choice;
      if (choice.is_object()) {
        EXPECT_EQ(r.calls[0].first, "ping");
      }
      EXPECT_TRUE(satisfies_schema(r.calls[0].first, r.calls[0].second)) << format;
    }
    // Greedy decoding: the same call streamed and not.
    EXPECT_EQ(json::parse(whole(s.port(), body).calls.at(0).second), json::parse(streamed(s.port(), body).calls.at(0).second));
  }
}

TEST(ToolFormatsServe, Qwen3CoderWritesForcedCallsInItsXml) {
  expect_forced_calls("tests/data/chat_templates/qwen3-coder/template.jinja", "qwen3_coder");
}

TEST(ToolFormatsServe, Llama32PythonicWritesForcedCallsAsPython) {
  expect_forced_calls("tests/data/tool_templates/llama-3.2-pythonic.jinja", "pythonic");
}

TEST(ToolFormatsServe, UnknownFormatAndUncompilableSchemaAreRefused) {
  const std::string model = model_with_template("qwen3_coder", "tests/data/chat_templates/qwen3-coder/template.jinja");
  ASSERT_FALSE(model.empty()) << "seer make-model failed";
  int status = 0;
  const std::string out = run_command("timeout 60 " + seer::testing::seer_binary() + " serve --model " + model +
                                          " --port 0 --tool-call-format nope 2>&1",
                                      &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("--tool-call-format: no format is called 'nope'"), std::string::npos) << out;

  ServerProcess s(model, {"--tool-call-format", "pythonic"});
  ASSERT_TRUE(s.up());
  EXPECT_NE(s.stderr_text().find("tool calls pythonic"), std::string::npos) << s.stderr_text();
  const json tools = json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
      "properties": {"p": {"type": "string", "pattern": "(a)\\1"}}}}}])");
  const json body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"tools", tools}, {"tool_choice", "required"}};
  HttpResult r = http_post(s.port(), "/v1/chat/completions", body.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(json::parse(r.body)["error"]["param"], "tools[0].function.parameters") << r.body;
  EXPECT_EQ(http_get(s.port(), "/health").status, 200);
}

}  // namespace
}  // namespace seer::e2e
