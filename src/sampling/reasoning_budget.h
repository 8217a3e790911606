#pragma once
// A cap on a thinking model's reasoning (max_reasoning_tokens, --reasoning-budget):
// once the reasoning has run for max_tokens tokens without closing, the close tag's
// tokens are forced, one per position, and the model goes on with its answer. The
// tags are found in the output's bytes, however the model spelled them in tokens;
// the reasoning is recognised as the server's splitter does
// (server/reasoning_parser.h): it begins at the start of the output, or with an open
// tag before any other text.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace seer {

struct ReasoningBudget {
  int32_t max_tokens = -1;  // -1: no cap
  std::string open, close;  // the tags' text
  std::vector<int32_t> close_tokens;  // the close tag as tokens: what is forced
  bool starts_inside = false;  // the prompt opened the reasoning
  // The bytes of every token of the vocabulary (shared by all requests of a model).
  std::shared_ptr<const std::vector<std::string>> token_bytes;

  bool active() const { return max_tokens >= 0 && token_bytes && !close_tokens.empty() && !close.empty(); }
};

// One request's position in its reasoning, moved on by the output tokens.
class ReasoningBudgetTracker {
 public:
  explicit ReasoningBudgetTracker(const ReasoningBudget& budget);
  // Brings the tracker up to `output` (which only ever grows) and returns the token
  // the next position must be, or nullopt when the model chooses.
  std::optional<int32_t> forced(std::span<const int32_t> output);

 private:
  enum class State { Start, Inside, Done };
  void advance(int32_t token);
  void enter_reasoning();

  ReasoningBudget budget_;
  State state_;
  std::string text_;  // Start: the output so far; Inside: its tail (to find the close tag)
  int32_t reasoning_tokens_ = 0;
  int32_t forcing_ = -1;  // index of the close token to force next; -1: not forcing
  size_t synced_ = 0;
};

}  // namespace seer
