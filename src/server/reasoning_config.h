#pragma once
// How a served model's reasoning is handled: the tags its chat template prints
// (server/reasoning_parser.h), whether replies are split into reasoning_content and
// content (--reasoning-format), and the cap on reasoning tokens (--reasoning-budget,
// a request's max_reasoning_tokens; sampling/reasoning_budget.h).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sampling/reasoning_budget.h"
#include "server/reasoning_parser.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace seer::server {

enum class ReasoningFormat {
  Separate,  // reasoning_content apart from content
  None,      // the reply as the model wrote it, tags and all, in content
};

// "separate" or "none"; throws seer::Error naming the flag otherwise.
ReasoningFormat parse_reasoning_format(const std::string& name);

struct ReasoningConfig {
  std::optional<ReasoningTags> tags;  // nullopt: the template does not think
  ReasoningFormat format = ReasoningFormat::Separate;
  int32_t default_budget = -1;  // -1: no cap
  // Assistant turns whose reasoning is kept for clients that drop it
  // (server/reasoning_memory.h; --reasoning-memory, 0: none).
  size_t memory_entries = 4096;
  std::vector<int32_t> close_tokens;  // tokens whose bytes are tags->close
  std::shared_ptr<const std::vector<std::string>> token_bytes;

  bool separates() const { return tags.has_value() && format == ReasoningFormat::Separate; }
};

ReasoningConfig make_reasoning_config(const ChatTemplate& chat_template, const Tokenizer& tokenizer,
                                      ReasoningFormat format, int32_t default_budget);

// One chat request's cap: `requested` (max_reasoning_tokens) or the default, from
// where `prompt` leaves the model. Throws ApiError naming max_reasoning_tokens when
// the request asks for a cap the model cannot have (no tags; a grammar decides the
// output instead).
ReasoningBudget reasoning_budget_for(const ReasoningConfig& config, std::optional<int32_t> requested,
                                     bool constrained, const std::string& prompt);

}  // namespace seer::server
