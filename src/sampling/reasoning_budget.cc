#include "sampling/reasoning_budget.h"

#include <string_view>

namespace seer {

namespace {
constexpr std::string_view kSpace = " \t\r\n";
}  // namespace

ReasoningBudgetTracker::ReasoningBudgetTracker(const ReasoningBudget& budget)
    : budget_(budget), state_(budget.active() ? State::Start : State::Done) {
  if (state_ == State::Start && budget_.starts_inside) enter_reasoning();
}

void ReasoningBudgetTracker::enter_reasoning() {
  state_ = State::Inside;
  text_.clear();
  if (budget_.max_tokens == 0) forcing_ = 0;
}

std::optional<int32_t> ReasoningBudgetTracker::forced(std::span<const int32_t> output) {
  for (; synced_ < output.size(); ++synced_) advance(output[synced_]);
  if (state_ != State::Inside || forcing_ < 0) return std::nullopt;
  return budget_.close_tokens[static_cast<size_t>(forcing_)];
}

void ReasoningBudgetTracker::advance(int32_t token) {
  if (state_ == State::Done) return;
  const auto& bytes = *budget_.token_bytes;
  if (token >= 0 && static_cast<size_t>(token) < bytes.size()) text_ += bytes[static_cast<size_t>(token)];
  if (state_ == State::Start) {
    const size_t first = text_.find_first_not_of(kSpace);
    const std::string_view rest = first == std::string::npos ? std::string_view() : std::string_view(text_).substr(first);
    if (rest.starts_with(budget_.open)) {
      const std::string after(rest.substr(budget_.open.size()));
      enter_reasoning();
      text_ = after;
    } else if (!std::string_view(budget_.open).starts_with(rest)) {
      state_ = State::Done;  // the answer began without reasoning
    }
    return;
  }
  if (text_.find(budget_.close) != std::string::npos) {
    state_ = State::Done;
    return;
  }
  if (text_.size() > budget_.close.size()) text_.erase(0, text_.size() - budget_.close.size());
  if (forcing_ >= 0) {
    // A forced token that did not complete the tag (a model's half-written tag
    // before it): the whole sequence is out, so the reasoning is over.
    if (++forcing_ >= static_cast<int32_t>(budget_.close_tokens.size())) state_ = State::Done;
    return;
  }
  if (++reasoning_tokens_ >= budget_.max_tokens) forcing_ = 0;
}

}  // namespace seer
