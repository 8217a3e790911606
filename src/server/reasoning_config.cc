#include "server/reasoning_config.h"

#include "common/error.h"
#include "server/api_error.h"

namespace seer::server {

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
  c.close_tokens = tokenizer.encode(c.tags->close, /*add_special=*/false, /*parse_special=*/true);
  auto bytes = std::make_shared<std::vector<std::string>>(static_cast<size_t>(tokenizer.vocab_size()));
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) (*bytes)[static_cast<size_t>(id)] = tokenizer.token_bytes(id);
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
