#pragma once
// Test doubles for the server's unit tests: a character tokenizer and an executor
// that "generates" a fixed cycle of tokens (optionally slowly).
#include <chrono>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/executor.h"
#include "tokenizer/tokenizer.h"

namespace seer::server::testing {

// Token 0 is EOS, 1 is BOS, 2 + c is the byte c (so every text round-trips).
class CharTokenizer final : public Tokenizer {
 public:
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool = false) const override {
    std::vector<int32_t> ids;
    if (add_special) ids.push_back(1);
    for (unsigned char c : text) ids.push_back(2 + c);
    return ids;
  }
  std::string token_bytes(int32_t id) const override {
    return id >= 2 ? std::string(1, static_cast<char>(id - 2)) : std::string();
  }
  std::string token_text(int32_t id) const override { return token_bytes(id); }
  int32_t find_token(std::string_view text) const override {
    return text.size() == 1 ? 2 + static_cast<unsigned char>(text[0]) : -1;
  }
  TokenType token_type(int32_t id) const override { return id >= 2 ? TokenType::Byte : TokenType::Control; }
  std::vector<int32_t> end_of_generation_ids() const override { return {0}; }
  int32_t vocab_size() const override { return 258; }
  int32_t bos_id() const override { return 1; }
  int32_t eos_id() const override { return 0; }
  bool add_bos() const override { return true; }
  bool is_end_of_generation(int32_t id) const override { return id == 0; }
  std::string type_name() const override { return "char (test)"; }
};

inline int32_t tok(char c) { return 2 + static_cast<unsigned char>(c); }

// Samples the tokens of `text` in a cycle, sleeping `step` per iteration.
class ScriptedExecutor final : public Executor {
 public:
  explicit ScriptedExecutor(std::string text, std::chrono::microseconds step = {})
      : text_(std::move(text)), step_(step) {}
  StepResult execute(const StepPlan& plan) override {
    if (step_.count() > 0) std::this_thread::sleep_for(step_);
    for (RequestId id : plan.finished) outputs_.erase(id);
    for (const auto& n : plan.new_requests) outputs_[n.request] = n.output_tokens.size();
    for (const auto& a : plan.appended_tokens) outputs_[a.request] += a.tokens.size();
    StepResult r;
    for (const auto& c : plan.chunks) {
      if (!c.sample) continue;
      char ch = text_[outputs_.at(c.request)++ % text_.size()];
      r.sampled.push_back({c.request, ch == '$' ? 0 : tok(ch), -0.5f});
    }
    return r;
  }
  bool simulated() const override { return false; }

 private:
  std::string text_;  // '$' stands for EOS
  std::chrono::microseconds step_;
  std::unordered_map<RequestId, size_t> outputs_;  // output tokens per request, from the plans
};

}  // namespace seer::server::testing
