#include "server/reasoning_parser.h"

#include <algorithm>

namespace seer::server {

namespace {

constexpr std::string_view kSpace = " \t\r\n";

// The pairs seer separates, most specific first (a template may print both).
const ReasoningTags kTagPairs[] = {
    {"<|START_THINKING|>", "<|END_THINKING|>"},  // Command R7B
    {"<think>", "</think>"},
};

size_t first_non_space(std::string_view s) {
  const size_t i = s.find_first_not_of(kSpace);
  return i == std::string_view::npos ? s.size() : i;
}

std::string_view trim_right(std::string_view s) {
  const size_t e = s.find_last_not_of(kSpace);
  return e == std::string_view::npos ? std::string_view() : s.substr(0, e + 1);
}

// Length of the longest proper prefix of `tag` that `s` ends with.
size_t partial_tag_at_end(std::string_view s, std::string_view tag) {
  for (size_t k = std::min(s.size(), tag.size() - 1); k > 0; --k)
    if (s.substr(s.size() - k) == tag.substr(0, k)) return k;
  return 0;
}

}  // namespace

std::optional<ReasoningTags> reasoning_tags_of(std::string_view source) {
  for (const ReasoningTags& t : kTagPairs)
    if (source.find(t.open) != std::string_view::npos && source.find(t.close) != std::string_view::npos) return t;
  return std::nullopt;
}

bool prompt_opens_reasoning(std::string_view prompt, const ReasoningTags& tags) {
  const size_t open = prompt.rfind(tags.open);
  if (open == std::string_view::npos) return false;
  const std::string_view rest = prompt.substr(open + tags.open.size());
  return rest.find_first_not_of(kSpace) == std::string_view::npos;
}

ReasoningSplitter::ReasoningSplitter(ReasoningTags tags, bool starts_inside)
    : tags_(std::move(tags)), state_(starts_inside ? State::Inside : State::Start) {}

ReasoningSplit ReasoningSplitter::push(std::string_view text, int32_t tokens) {
  const State before = state_;
  ReasoningSplit out;
  if (state_ == State::Content) {
    out.content = text;
    return out;
  }
  held_ += text;
  if (state_ == State::Start) start(out);
  else if (state_ == State::Inside) inside(out);
  else after(out);
  if (before == State::Inside) {
    reasoning_tokens_ += tokens;  // the chunk that closes the reasoning is part of it
  } else if (before == State::Start) {
    if (state_ == State::Start) {
      undecided_tokens_ += tokens;
    } else {
      if (state_ != State::Content) reasoning_tokens_ += undecided_tokens_ + tokens;
      undecided_tokens_ = 0;
    }
  }
  return out;
}

// Before any text: whitespace and (a prefix of) the open tag are held.
void ReasoningSplitter::start(ReasoningSplit& out) {
  const std::string_view rest = std::string_view(held_).substr(first_non_space(held_));
  if (rest.starts_with(tags_.open)) {
    held_ = std::string(rest.substr(tags_.open.size()));
    state_ = State::Inside;
    return inside(out);
  }
  if (std::string_view(tags_.open).starts_with(rest)) return;  // empty, or a tag's beginning
  state_ = State::Content;
  out.content += held_;
  held_.clear();
}

void ReasoningSplitter::inside(ReasoningSplit& out) {
  if (!reasoning_begun_) {
    // Past leading whitespace, a repeated open tag (a prompt that opened one already).
    held_.erase(0, first_non_space(held_));
    if (held_.starts_with(tags_.open)) held_.erase(0, tags_.open.size());
    else if (std::string_view(tags_.open).starts_with(held_) && !std::string_view(tags_.close).starts_with(held_)) return;
  }
  const size_t close = held_.find(tags_.close);
  if (close != std::string::npos) {
    emit_reasoning(out, trim_right(std::string_view(held_).substr(0, close)));
    held_.erase(0, close + tags_.close.size());
    state_ = State::After;
    return after(out);
  }
  // Hold a possible close tag at the end and the whitespace before it (dropped if the
  // tag follows).
  const size_t tag = partial_tag_at_end(held_, tags_.close);
  const std::string_view body = trim_right(std::string_view(held_).substr(0, held_.size() - tag));
  emit_reasoning(out, body);
  held_.erase(0, body.size());
}

void ReasoningSplitter::after(ReasoningSplit& out) {
  held_.erase(0, first_non_space(held_));
  if (held_.empty()) return;
  state_ = State::Content;
  out.content += held_;
  held_.clear();
}

void ReasoningSplitter::emit_reasoning(ReasoningSplit& out, std::string_view text) {
  if (!reasoning_begun_) text.remove_prefix(first_non_space(text));
  if (text.empty()) return;
  reasoning_begun_ = true;
  out.reasoning += text;
}

ReasoningSplit ReasoningSplitter::finish() {
  ReasoningSplit out;
  if (state_ == State::Start) out.content = std::move(held_);
  else if (state_ == State::Inside) emit_reasoning(out, trim_right(held_));
  held_.clear();
  return out;
}

ReasoningSplit split_reasoning(std::string_view text, const ReasoningTags& tags, bool starts_inside) {
  ReasoningSplitter s(tags, starts_inside);
  ReasoningSplit out = s.push(text);
  ReasoningSplit rest = s.finish();
  out.reasoning += rest.reasoning;
  out.content += rest.content;
  return out;
}

}  // namespace seer::server
