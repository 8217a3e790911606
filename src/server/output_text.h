#pragma once
// Turns one request's output tokens into the text a client sees: whole UTF-8
// characters only (StreamDecoder), nothing at or past a stop string (StopMatcher),
// no text for end-of-generation tokens. Runs on the engine thread.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sampling/stop_matcher.h"
#include "server/openai_response.h"
#include "tokenizer/tokenizer.h"

namespace seer::server {

class OutputText {
 public:
  OutputText(const Tokenizer& tokenizer, std::vector<std::string> stops, bool logprobs);

  // Feeds one generated token. Returns true when a stop string has just matched:
  // the request must end now (its text stops before the stop string).
  // `top`: the most likely tokens at its position (top_logprobs), kept with its logprob.
  [[nodiscard]] bool push(int32_t token, float logprob, std::span<const TopLogprob> top = {});
  // At the end without a stop match: releases text held back by the decoder and the
  // stop matcher.
  void flush();

  // Text and logprobs produced since the last call.
  std::string take_text();
  std::vector<TokenLogprob> take_logprobs();

 private:
  const Tokenizer& tokenizer_;
  StreamDecoder decoder_;
  StopMatcher stop_;
  bool logprobs_;
  bool stopped_ = false;
  std::string text_;
  std::vector<TokenLogprob> pending_logprobs_;
};

}  // namespace seer::server
