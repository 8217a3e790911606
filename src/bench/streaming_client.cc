#include "bench/streaming_client.h"

#include <regex>

#include <httplib.h>

#include "bench/sse_parser.h"
#include "common/error.h"

namespace seer::bench {

using nlohmann::json;

ServerUrl parse_server_url(const std::string& url) {
  static const std::regex re(R"(^(https?://[^/\s]+)(/[^\s]*)?$)");
  std::smatch m;
  if (!std::regex_match(url, m, re)) fail("--url '{}' is not an http(s)://host[:port][/path] address", url);
  ServerUrl u{m[1].str(), m[2].str()};
  while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
  if (u.prefix.size() >= 3 && u.prefix.compare(u.prefix.size() - 3, 3, "/v1") == 0)
    u.prefix.resize(u.prefix.size() - 3);
  return u;
}

json request_body(const ClientRequest& r) {
  json b;
  if (!r.model.empty()) b["model"] = r.model;
  if (r.api == Api::Completions) {
    b["prompt"] = r.prompt;
  } else {
    json msgs = json::array();
    for (const auto& [role, content] : r.messages) msgs.push_back({{"role", role}, {"content", content}});
    b["messages"] = msgs;
  }
  b["max_tokens"] = r.max_tokens;
  b["temperature"] = r.temperature;
  b["stream"] = true;
  b["stream_options"] = {{"include_usage", true}};
  if (r.ignore_eos) b["ignore_eos"] = true;
  if (!r.conversation.empty()) b["conversation"] = r.conversation;
  return b;
}

bool apply_stream_event(const std::string& data, Api api, double now, ClientResult& out) {
  if (data == "[DONE]") return false;
  json ev = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (ev.is_discarded() || !ev.is_object()) {
    out.error = "unparsable stream event: " + data.substr(0, 200);
    return true;
  }
  if (ev.contains("error")) {
    const json& e = ev["error"];
    out.error = e.is_object() && e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>()
                                                                                    : e.dump();
    return true;
  }
  if (auto c = ev.find("conversation"); c != ev.end() && c->is_string()) out.conversation = c->get<std::string>();
  if (auto u = ev.find("usage"); u != ev.end() && u->is_object()) {
    if (u->contains("prompt_tokens") && (*u)["prompt_tokens"].is_number_integer())
      out.prompt_tokens = (*u)["prompt_tokens"].get<int32_t>();
    if (u->contains("completion_tokens") && (*u)["completion_tokens"].is_number_integer())
      out.completion_tokens = (*u)["completion_tokens"].get<int32_t>();
  }
  auto choices = ev.find("choices");
  if (choices == ev.end() || !choices->is_array() || choices->empty()) return true;
  const json& c = (*choices)[0];
  std::string piece;
  if (api == Api::Completions) {
    if (c.contains("text") && c["text"].is_string()) piece = c["text"].get<std::string>();
  } else if (c.contains("delta") && c["delta"].is_object()) {
    const json& d = c["delta"];
    if (d.contains("content") && d["content"].is_string()) piece = d["content"].get<std::string>();
  }
  if (!piece.empty()) {
    if (out.first_token_s < 0) out.first_token_s = now;
    // Events read together share `now`: one delivery whose tokens cannot be timed
    // apart, so no TBT samples of 0 between them.
    if (out.chunk_times_s.empty() || now > out.chunk_times_s.back()) out.chunk_times_s.push_back(now);
    ++out.text_chunks;
    out.text += piece;
  }
  if (c.contains("finish_reason") && c["finish_reason"].is_string()) out.finish_reason = c["finish_reason"];
  return true;
}

ClientResult send_streaming(const ServerUrl& url, const ClientRequest& r, const Clock& clock) {
  ClientResult out;
  httplib::Client cli(url.scheme_host_port);
  cli.set_connection_timeout(10, 0);
  const auto timeout_us = static_cast<int64_t>(r.timeout_s * 1e6);
  cli.set_read_timeout(timeout_us / 1000000, timeout_us % 1000000);
  cli.set_write_timeout(30, 0);

  httplib::Request req;
  req.method = "POST";
  req.path = url.prefix + (r.api == Api::Completions ? "/v1/completions" : "/v1/chat/completions");
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  if (!r.api_key.empty()) req.set_header("Authorization", "Bearer " + r.api_key);
  // Also in the body; the header lets a load balancer route by conversation (docs/deploy.md).
  if (!r.conversation.empty() && r.conversation != "new") req.set_header("X-Conversation-Id", r.conversation);
  req.body = request_body(r).dump();

  SseParser parser;
  std::string error_body;
  bool done = false;
  req.response_handler = [&](const httplib::Response& res) {
    out.http_status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (out.http_status != 200) {
      if (error_body.size() < 4096) error_body.append(data, std::min<size_t>(len, 4096));
      return true;
    }
    const double now = clock.now();
    for (const auto& ev : parser.feed(std::string_view(data, len))) {
      if (done) break;
      done = !apply_stream_event(ev, r.api, now, out);
    }
    return out.error.empty() && parser.buffered() < (16u << 20);
  };

  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  out.send_s = clock.now();
  bool sent = cli.send(req, res, err);
  out.finish_s = clock.now();
  if (out.http_status != 200 && out.http_status != 0) {
    json e = json::parse(error_body, nullptr, false);
    std::string msg = !e.is_discarded() && e.contains("error") && e["error"].is_object() && e["error"].contains("message")
                          ? e["error"]["message"].dump()
                          : error_body.substr(0, 300);
    out.error = fmt::format("HTTP {}: {}", out.http_status, msg);
  } else if (!sent && out.error.empty()) {
    out.error = fmt::format("request failed: {}", httplib::to_string(err));
  } else if (out.error.empty() && !done) {
    out.error = "the stream ended without data: [DONE]";
  }
  out.ok = out.error.empty();
  return out;
}

}  // namespace seer::bench
