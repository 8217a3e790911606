#include "server/reasoning_config.h"

#include "common/error.h"
#include "server/api_error.h"

namespace seer::server {

namespace {

// Tokens that spell `text` exactly: the tokenizer's own encoding when its bytes are
// the text (a special token, a BPE merge), else the longest vocabulary entry at each
// position (an SPM vocabulary puts a word-start marker before text it encodes alone).
std::vector<int32_t> spelling_tokens(const std::string& text, const Tokenizer& tokenizer,
                                     const std::vector<std::string>& bytes) {
  std::vector<int32_t> ids = tokenizer.encode(text, /*add_special=*/false, /*parse_special=*/true);
  std::string spelled;
  for (int32_t id : ids) spelled += bytes[static_cast<size_t>(id)];
  if (spelled == text) return ids;
  ids.clear();
  for (size_t pos = 0; pos < text.size();) {
    int32_t best = -1;
    size_t best_len = 0;
    for (size_t id = 0; id < bytes.size(); ++id) {
      const std::string& b = bytes[id];
      if (b.size() > best_len && text.compare(pos, b.size(), b) == 0) best = static_cast<int32_t>(id), best_len = b.size();
    }
    if (best < 0) fail("no token of the vocabulary spells '{}' of the reasoning tag '{}'", text.substr(pos, 1), text);
    ids.push_back(best);
    pos += best_len;
  }
  return ids;
}

}  // namespace

ReasoningFormat parse_reasoning_format(const std::string& name) {
  if (name == "separate") return ReasoningFormat::Separate;
  if (name == "none") return ReasoningFormat::None;
  fail("--reasoning-format must be 'separate' or 'none', not '{}'", name);
}

ReasoningConfig make_reasoning_config(const ChatTemplate& chat_template, const Tokenizer& tokenizer,
                                      ReasoningFormat format, int32_t default_budget) {
  ReasoningConfig c;
  c.format = format;
  c.default_budget = default_budget;
  c.tags = reasoning_tags_of(chat_template.source());
  if (!c.tags) return c;
  auto bytes = std::make_shared<std::vector<std::string>>(static_cast<size_t>(tokenizer.vocab_size()));
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) (*bytes)[static_cast<size_t>(id)] = tokenizer.token_bytes(id);
  c.close_tokens = spelling_tokens(c.tags->close, tokenizer, *bytes);
  c.token_bytes = std::move(bytes);
  return c;
}

ReasoningBudget reasoning_budget_for(const ReasoningConfig& config, std::optional<int32_t> requested,
                                     bool constrained, const std::string& prompt) {
  ReasoningBudget b;
  if (requested && !config.tags)
    bad_request("max_reasoning_tokens", "'max_reasoning_tokens' needs a model whose chat template thinks (<think> tags)");
  if (requested && constrained)
    bad_request("max_reasoning_tokens",
                "'max_reasoning_tokens' cannot be combined with a grammar (grammar, response_format, forced tools)");
  const int32_t cap = requested.value_or(config.default_budget);
  if (cap < 0 || !config.tags || constrained) return b;
  b.max_tokens = cap;
  b.open = config.tags->open;
  b.close = config.tags->close;
  b.close_tokens = config.close_tokens;
  b.starts_inside = prompt_opens_reasoning(prompt, *config.tags);
  b.token_bytes = config.token_bytes;
  return b;
}

}  // namespace seer::server
