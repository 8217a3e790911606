#pragma once
// Separates what a thinking model writes into its reasoning and its answer, for every
// wire API (chat completions today; the Responses and Messages routes read the same
// split). The tags come from the model's chat template: <think>...</think> (Qwen3,
// QwQ, DeepSeek-R1 distills, GLM, SmolLM3, Nemotron, Granite 3.3) or Command R7B's
// <|START_THINKING|>...<|END_THINKING|>. One reasoning block, at the start of the
// reply: an open tag is recognised only before any other text (whitespace aside), or
// the reply starts inside when the rendered prompt ends in an open tag (DeepSeek-R1's
// generation prompt opens <think>). Tags later in the answer are answer text.
//
// Text arrives in chunks (one token's text each when streamed); a tag split across
// chunks is held back until it is known to be one. Reasoning is returned without the
// whitespace that surrounds it inside the tags, and the answer without the whitespace
// after the close tag, as the templates write them back (Qwen3: '<think>\n' +
// reasoning + '\n</think>\n\n' + content), so a re-sent turn renders the same text.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace seer::server {

struct ReasoningTags {
  std::string open;
  std::string close;
};

// The tags a chat template's source prints; nullopt when it has none (the model
// does not think, or thinks in a format seer does not separate, e.g. gpt-oss's
// channels).
std::optional<ReasoningTags> reasoning_tags_of(std::string_view template_source);

// Whether `prompt` leaves the model inside its reasoning: an open tag after the last
// close tag, followed by whitespace only.
bool prompt_opens_reasoning(std::string_view prompt, const ReasoningTags& tags);

struct ReasoningSplit {
  std::string reasoning;
  std::string content;
};

class ReasoningSplitter {
 public:
  ReasoningSplitter(ReasoningTags tags, bool starts_inside);

  // The next chunk of the reply and the number of generated tokens behind it.
  // Returns what is now known to be reasoning or content.
  ReasoningSplit push(std::string_view text, int32_t tokens = 0);
  // The end of the reply: what was held back (an unfinished tag is text).
  ReasoningSplit finish();

  // Tokens whose text holds reasoning or a tag (the chunk that closes the reasoning
  // included): usage.completion_tokens_details.reasoning_tokens.
  int32_t reasoning_tokens() const { return reasoning_tokens_; }
  bool in_reasoning() const { return state_ == State::Inside; }

 private:
  enum class State { Start, Inside, After, Content };
  void start(ReasoningSplit& out);
  void inside(ReasoningSplit& out);
  void after(ReasoningSplit& out);
  void emit_reasoning(ReasoningSplit& out, std::string_view text);

  ReasoningTags tags_;
  State state_;
  std::string held_;  // text not yet known to be reasoning or content
  bool reasoning_begun_ = false;  // leading whitespace of the reasoning was dropped
  int32_t reasoning_tokens_ = 0;
  int32_t undecided_tokens_ = 0;  // tokens behind held_ while it may still become a tag
};

// The whole reply at once.
ReasoningSplit split_reasoning(std::string_view text, const ReasoningTags& tags, bool starts_inside);

}  // namespace seer::server
