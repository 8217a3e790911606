#pragma once
// One streaming request to an OpenAI-compatible server (seer, llama.cpp's
// llama-server, vLLM), timed on the client: send, first token, every chunk, end.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.h"

namespace seer::bench {

// "http://host:port" plus the path prefix in front of /v1/... ("" usually).
struct ServerUrl {
  std::string scheme_host_port;
  std::string prefix;
};
// Accepts http(s)://host[:port][/prefix][/v1][/]; throws seer::Error otherwise.
ServerUrl parse_server_url(const std::string& url);

enum class Api { Completions, Chat };

struct ClientRequest {
  Api api = Api::Completions;
  std::string model;                  // "" leaves the field out
  nlohmann::json prompt;              // completions: a string or an array of token ids
  std::vector<std::pair<std::string, std::string>> messages;  // chat: (role, content)
  int32_t max_tokens = 16;
  bool ignore_eos = true;             // every server then does the same work
  double temperature = 0;
  // seer's stateful multi-turn id (body field and X-Conversation-Id header); "" leaves
  // it out; "new" asks the server to issue one (body only: a load balancer hashing the
  // header would send every new conversation to one replica).
  std::string conversation;
  std::string api_key;                // sent as a bearer token when set
  double timeout_s = 600;
};

struct ClientResult {
  bool ok = false;
  std::string error;
  int http_status = 0;
  double send_s = 0;
  double first_token_s = -1;
  // Arrival of every read that carried text; chunks read at once count once (the
  // gaps between these times are the client's TBT samples).
  std::vector<double> chunk_times_s;
  int32_t text_chunks = 0;            // SSE chunks that carried text
  double finish_s = -1;
  std::string text;
  int32_t prompt_tokens = -1;         // from the usage chunk; -1 when not reported
  int32_t completion_tokens = -1;
  std::string finish_reason;
  std::string conversation;           // the id the server returned (seer's extension); "" when none
};

// The JSON body for `r` (stream on, usage requested).
nlohmann::json request_body(const ClientRequest& r);

// Sends `r` and reads the stream to its end; times come from `clock`. Never throws
// for server or network failures (they are reported in the result).
ClientResult send_streaming(const ServerUrl& url, const ClientRequest& r, const Clock& clock);

// Folds one SSE data payload into `out`; returns false at "[DONE]".
bool apply_stream_event(const std::string& data, Api api, double now, ClientResult& out);

}  // namespace seer::bench
