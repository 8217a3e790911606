#include "grammar/grammar_matcher.h"

#include <algorithm>
#include <cstring>

namespace seer::grammar {

std::string MatchState::key() const {
  std::string k;
  k.reserve(8 + 4 * (stacks.data.size() + stacks.offsets.size()));
  auto put = [&](uint32_t v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(partial);
  put(partial_left | (uint32_t{partial_len} << 8));
  for (uint32_t o : stacks.offsets) put(o);
  for (uint32_t v : stacks.data) put(v);
  return k;
}

void StackMachine::add_unique(StackSet& out) {
  const size_t n = scratch_.size();
  for (size_t i = 0; i < out.size(); ++i) {
    const uint32_t b = out.offsets[i], e = out.offsets[i + 1];
    if (e - b == n && std::equal(scratch_.begin(), scratch_.end(), out.data.begin() + b)) return;
  }
  if (out.size() >= kMaxStacks) return;
  out.data.insert(out.data.end(), scratch_.begin(), scratch_.end());
  out.offsets.push_back(static_cast<uint32_t>(out.data.size()));
}

// scratch_ holds a stack whose top may be a rule reference; add every stack it
// expands to. scratch_ is restored before returning.
void StackMachine::expand(StackSet& out) {
  steps_left_ = kMaxExpansionSteps;
  expand_within(out, 0);
}

void StackMachine::expand_within(StackSet& out, int depth) {
  if (scratch_.empty() || g_.at(scratch_.back()).kind == ElementKind::Chars) return add_unique(out);
  if (depth >= kMaxExpansionDepth || --steps_left_ < 0) return;
  const uint32_t pos = scratch_.back();
  const uint32_t rule = g_.at(pos).index;
  scratch_.pop_back();
  const bool more = g_.at(pos + 1).kind != ElementKind::End;
  if (more) scratch_.push_back(pos + 1);
  const size_t base = scratch_.size();
  for (uint32_t alt : g_.rule_alternatives[rule]) {
    if (g_.at(alt).kind != ElementKind::End) scratch_.push_back(alt);
    expand_within(out, depth + 1);
    scratch_.resize(base);
  }
  if (more) scratch_.pop_back();
  scratch_.push_back(pos);
}

MatchState StackMachine::initial() {
  MatchState s;
  scratch_.clear();
  for (uint32_t alt : g_.rule_alternatives[g_.root]) {
    scratch_.clear();
    if (g_.at(alt).kind != ElementKind::End) scratch_.push_back(alt);
    expand(s.stacks);
  }
  return s;
}

void StackMachine::advance_code_point(const StackSet& in, uint32_t cp, StackSet& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t b = in.offsets[i], e = in.offsets[i + 1];
    if (b == e) continue;  // complete: nothing more may follow
    const uint32_t top = in.data[e - 1];
    if (!g_.classes[g_.at(top).index].contains(cp)) continue;
    scratch_.assign(in.data.begin() + b, in.data.begin() + e - 1);
    if (g_.at(top + 1).kind != ElementKind::End) scratch_.push_back(top + 1);
    expand(out);
  }
}

namespace {
// The code points a UTF-8 sequence of `len` bytes may encode (shorter forms are overlong).
constexpr uint32_t kMinOfLength[5] = {0, 0, 0x80, 0x800, 0x10000};
constexpr uint32_t kMaxCodePoint = 0x10FFFF;
}  // namespace

bool StackMachine::viable_partial(const StackSet& stacks, uint32_t partial, uint8_t left, uint8_t len) const {
  const uint32_t lo = std::max(partial << (6 * left), kMinOfLength[len]);
  const uint32_t hi = std::min((partial << (6 * left)) | ((1u << (6 * left)) - 1), kMaxCodePoint);
  if (lo > hi) return false;
  // Surrogates (U+D800-DFFF) are not code points: check the parts of [lo, hi] around them.
  struct Piece {
    uint32_t lo, hi;
  };
  Piece pieces[2];
  int n = 0;
  if (lo < 0xD800) pieces[n++] = {lo, std::min(hi, 0xD7FFu)};
  if (hi > 0xDFFF) pieces[n++] = {std::max(lo, 0xE000u), hi};
  for (size_t i = 0; i < stacks.size(); ++i) {
    const uint32_t b = stacks.offsets[i], e = stacks.offsets[i + 1];
    if (b == e) continue;
    const CharClass& c = g_.classes[g_.at(stacks.data[e - 1]).index];
    for (int k = 0; k < n; ++k)
      if (c.intersects(pieces[k].lo, pieces[k].hi)) return true;
  }
  return false;
}

void StackMachine::advance(const MatchState& in, uint8_t byte, MatchState& out) {
  out.stacks.clear();
  out.partial = 0;
  out.partial_left = 0;
  out.partial_len = 0;
  uint32_t value;
  uint8_t left, len;
  if (in.partial_left > 0) {
    if ((byte & 0xC0) != 0x80) return;
    value = (in.partial << 6) | (byte & 0x3F);
    left = in.partial_left - 1;
    len = in.partial_len;
  } else if (byte < 0x80) {
    value = byte;
    left = 0;
    len = 1;
  } else if ((byte & 0xE0) == 0xC0) {
    value = byte & 0x1F;
    left = 1;
    len = 2;
  } else if ((byte & 0xF0) == 0xE0) {
    value = byte & 0x0F;
    left = 2;
    len = 3;
  } else if ((byte & 0xF8) == 0xF0) {
    value = byte & 0x07;
    left = 3;
    len = 4;
  } else {
    return;  // not a UTF-8 lead byte
  }
  if (left == 0) {
    if (value < kMinOfLength[len] || value > kMaxCodePoint || (value >= 0xD800 && value <= 0xDFFF)) return;
    return advance_code_point(in.stacks, value, out.stacks);
  }
  if (!viable_partial(in.stacks, value, left, len)) return;
  out.stacks = in.stacks;
  out.partial = value;
  out.partial_left = left;
  out.partial_len = len;
}

bool StackMachine::can_end(const MatchState& s) {
  if (s.partial_left) return false;
  for (size_t i = 0; i < s.stacks.size(); ++i)
    if (s.stacks.offsets[i] == s.stacks.offsets[i + 1]) return true;
  return false;
}

bool StackMachine::accept(MatchState& s, std::string_view bytes) {
  for (char c : bytes) {
    advance(s, static_cast<uint8_t>(c), tmp_);
    if (tmp_.dead()) return false;
    std::swap(s, tmp_);
  }
  return true;
}

}  // namespace seer::grammar
