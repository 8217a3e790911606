#include "server/output_text.h"

namespace seer::server {

OutputText::OutputText(const Tokenizer& tokenizer, std::vector<std::string> stops, bool logprobs)
    : tokenizer_(tokenizer), decoder_(tokenizer), stop_(std::move(stops)), logprobs_(logprobs) {}

bool OutputText::push(int32_t token, float logprob, std::span<const TopLogprob> top) {
  if (stopped_) return true;
  if (logprobs_) {
    TokenLogprob lp{tokenizer_.token_bytes(token), logprob, {}};
    for (const TopLogprob& t : top) lp.top.push_back({tokenizer_.token_bytes(t.token), t.logprob});
    pending_logprobs_.push_back(std::move(lp));
  }
  if (tokenizer_.is_end_of_generation(token)) return false;
  bool matched = false;
  text_ += stop_.push(decoder_.push(token), &matched);
  stopped_ = matched;
  return matched;
}

void OutputText::flush() {
  if (stopped_) return;
  bool matched = false;
  text_ += stop_.push(decoder_.flush(), &matched);
  if (!matched) text_ += stop_.flush();
  stopped_ = true;
}

std::string OutputText::take_text() { return std::exchange(text_, {}); }

std::vector<TokenLogprob> OutputText::take_logprobs() { return std::exchange(pending_logprobs_, {}); }

}  // namespace seer::server
