#include "server/tokenize_handler.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/completion_handler.h"
#include "server/json_fields.h"
#include "server/openai_request.h"
#include "server/openai_response.h"
#include "tokenizer/utf8.h"

namespace seer::server {

namespace {

using nlohmann::json;

HttpResponse json_response(const json& body) {
  HttpResponse res;
  res.set_content(dump_json(body), "application/json");
  return res;
}

// A token's piece: its text when that is valid UTF-8 (a byte token alone often is
// not), else its bytes, as llama-server answers.
json piece_of(const Tokenizer& tok, int32_t id) {
  const std::string bytes = tok.token_bytes(id);
  if (utf8::is_valid(bytes)) return bytes;
  json arr = json::array();
  for (unsigned char c : bytes) arr.push_back(c);
  return arr;
}

}  // namespace

void TokenizeHandler::on_worker(HttpResponse& res, std::function<HttpResponse()> work) {
  std::shared_ptr<ResponseChannel> channel = res.defer();
  auto answer = [this, channel](HttpResponse r) {
    auto shared = std::make_shared<HttpResponse>(std::move(r));
    channel->post([channel, shared] { channel->respond(std::move(*shared)); });
  };
  auto fail = [this, answer](const ApiError& e) {
    metrics_.count_rejected(e.status());
    HttpResponse r;
    send_error(r, e);
    answer(std::move(r));
  };
  const bool queued = workers_.try_submit([this, work = std::move(work), answer, fail](bool expired) {
    try {
      if (expired) throw prepare_budget_error(workers_.queue_budget_s());
      answer(work());
    } catch (const ApiError& e) {
      fail(e);
    } catch (const std::exception& e) {
      fail(internal_error(e.what()));
    }
  });
  if (!queued) {
    const ApiError e = prepare_queue_full_error(workers_.max_pending());
    metrics_.count_rejected(e.status());
    HttpResponse r;
    send_error(r, e);
    channel->respond(std::move(r));
  }
}

void TokenizeHandler::tokenize(const HttpRequest& req, HttpResponse& res) {
  on_worker(res, [this, body = req.body] {
    ParseLimits limits;
    limits.vocab_size = model_.vocab_size;
    const json j = parse_json_object(body, limits.max_json_depth);
    const bool with_pieces = read_bool(j, "with_pieces", "with_pieces").value_or(false);
    std::vector<int32_t> ids;
    if (j.contains("messages") && !j["messages"].is_null()) {
      if (j.contains("content") || j.contains("prompt"))
        bad_request("messages", "give 'messages' or 'content'/'prompt', not both");
      ids = prompt_tokens_of(parse_api_request(body, Endpoint::ChatCompletions, limits), model_);
    } else {
      const char* field = j.contains("content") ? "content" : "prompt";
      std::optional<std::string> text = read_string(j, field, field, limits.max_string_bytes);
      if (!text) bad_request("content", "'content' (or 'prompt', or 'messages') is required");
      // llama-server's content: no BOS unless add_special; vLLM's prompt: add_special_tokens defaults true.
      const bool vllm = std::string(field) == "prompt";
      std::optional<bool> add = read_bool(j, vllm ? "add_special_tokens" : "add_special",
                                          vllm ? "add_special_tokens" : "add_special");
      const bool parse_special = read_bool(j, "parse_special", "parse_special").value_or(true);
      ids = model_.tokenizer->encode(*text, add.value_or(vllm), parse_special);
    }
    json tokens = json::array();
    for (int32_t id : ids) {
      if (with_pieces) tokens.push_back({{"id", id}, {"piece", piece_of(*model_.tokenizer, id)}});
      else tokens.push_back(id);
    }
    return json_response({{"tokens", tokens}, {"count", ids.size()}, {"max_model_len", model_.max_model_len}});
  });
}

void TokenizeHandler::detokenize(const HttpRequest& req, HttpResponse& res) {
  on_worker(res, [this, body = req.body] {
    ParseLimits limits;
    limits.vocab_size = model_.vocab_size;
    const json j = parse_json_object(body, limits.max_json_depth);
    if (!j.contains("tokens") || !j["tokens"].is_array())
      bad_request("tokens", "'tokens' must be an array of token ids");
    std::vector<int32_t> ids;
    if (!j["tokens"].empty()) ids = read_token_ids(j["tokens"], "tokens", limits);
    const std::string text = model_.tokenizer->decode(ids);
    return json_response({{"content", text}, {"prompt", text}});
  });
}

}  // namespace seer::server
