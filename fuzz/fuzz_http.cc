// libFuzzer entry point for what a client controls before the engine sees a request:
// the input is the bytes of one keep-alive HTTP/1.1 connection. Every complete request
// in it goes through the request guard (open, and with API keys), and a POST to a
// completions endpoint through the OpenAI body reader and the conversation-id rules
// (as does a DELETE of a conversation).
// Rejections are seer::server::ApiError; any other exception, a crash or a sanitizer
// report is a finding.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/api_error.h"
#include "server/api_keys.h"
#include "server/conversation_id.h"
#include "server/http_request_reader.h"
#include "server/openai_request.h"
#include "server/request_guard.h"

namespace {

using namespace seer::server;

// Half of -max_len in .ci/run, so both a parsed body and a 413 are reachable.
constexpr size_t kMaxBodyBytes = 8 << 10;

// The server without keys (listening on loopback) and with two keys.
struct Guards {
  ApiKeys keys{{"sk-fuzz-alpha-0123456789", "sk-fuzz-beta-9876543210"}, ""};
  RequestGuard open{AccessOptions{}, "127.0.0.1"};
  RequestGuard keyed{AccessOptions{&keys, {}, false}, "127.0.0.1"};
};

const Guards& guards() {
  static const Guards g;
  return g;
}

// An error answered to the client must serialise, whatever client bytes it quotes.
void answer(const ApiError& e) { (void)e.body(); }

void admit(const RequestGuard& guard, HttpRequest req) {
  try {
    guard.admit(req);
  } catch (const ApiError& e) {
    answer(e);
  }
}

std::optional<Endpoint> completion_endpoint(const HttpRequest& req) {
  if (req.method != "POST") return std::nullopt;
  if (req.path == "/v1/completions") return Endpoint::Completions;
  if (req.path == "/v1/chat/completions") return Endpoint::ChatCompletions;
  return std::nullopt;
}

// Without keys, untrusted clients: only issued ids.
constexpr ConversationIdRules kRules{128, false};

void read_completion(const HttpRequest& req, Endpoint endpoint) {
  ParseLimits limits;
  limits.vocab_size = 32000;
  try {
    const ApiRequest api = parse_api_request(req.body, endpoint, limits);
    (void)resolve_conversation_id(api.conversation, req.get_header_value(kConversationHeader), kRules);
  } catch (const ApiError& e) {
    answer(e);
  }
}

// DELETE /v1/conversations/{id}, as the router matches it.
void read_conversation_delete(const HttpRequest& req) {
  constexpr std::string_view kPrefix = "/v1/conversations/";
  if (req.method != "DELETE" || !req.path.starts_with(kPrefix)) return;
  const std::string id = req.path.substr(kPrefix.size());
  if (id.empty() || id.find('/') != std::string::npos) return;
  try {
    (void)resolve_existing_conversation_id(id, req.get_header_value(kConversationHeader), kRules);
  } catch (const ApiError& e) {
    answer(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const ParsedRequests parsed = parse_http_requests(bytes, kMaxBodyBytes);
  for (const HttpRequest& req : parsed.requests) {
    admit(guards().open, req);
    admit(guards().keyed, req);
    if (auto endpoint = completion_endpoint(req)) read_completion(req, *endpoint);
    read_conversation_delete(req);
  }
  return 0;
}
