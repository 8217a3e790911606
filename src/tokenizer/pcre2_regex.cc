#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pcre2_regex.h"

#include <pcre2.h>

#include "common/error.h"

namespace seer {

struct Pcre2Regex::Impl {
  pcre2_code* code = nullptr;
  ~Impl() {
    if (code) pcre2_code_free(code);
  }
};

namespace {

std::string error_text(int code) {
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(code, msg, sizeof(msg));
  return reinterpret_cast<const char*>(msg);
}

struct MatchData {
  pcre2_match_data* md;
  explicit MatchData(const pcre2_code* c) : md(pcre2_match_data_create_from_pattern(c, nullptr)) {}
  ~MatchData() { pcre2_match_data_free(md); }
  MatchData(const MatchData&) = delete;
  MatchData& operator=(const MatchData&) = delete;
};

}  // namespace

Pcre2Regex::Pcre2Regex(const std::string& pattern) : pattern_(pattern), impl_(std::make_unique<Impl>()) {
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &err_offset, nullptr);
  if (!impl_->code) fail("regex /{}/: {} at offset {}", pattern, error_text(err), static_cast<size_t>(err_offset));
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);  // the interpreter is used when JIT is unavailable
}

Pcre2Regex::~Pcre2Regex() = default;

std::vector<std::pair<size_t, size_t>> Pcre2Regex::matches(std::string_view subject) const {
  std::vector<std::pair<size_t, size_t>> out;
  MatchData data(impl_->code);
  if (!data.md) fail("regex /{}/: out of memory for match data", pattern_);
  const auto* s = reinterpret_cast<PCRE2_SPTR>(subject.data());
  size_t pos = 0;
  uint32_t options = 0;  // the first call checks the subject is valid UTF-8
  while (pos <= subject.size()) {
    int rc = pcre2_match(impl_->code, s, subject.size(), pos, options, data.md, nullptr);
    // A long run can need more backtracking memory than the JIT's fixed stack; the
    // interpreter keeps its frames on the heap.
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(impl_->code, s, subject.size(), pos, options | PCRE2_NO_JIT, data.md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) fail("regex /{}/: matching failed: {}", pattern_, error_text(rc));
    options = PCRE2_NO_UTF_CHECK;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.md);
    if (ov[1] == ov[0]) {  // empty match: step over one character
      pos = ov[1] + 1;
      while (pos < subject.size() && (subject[pos] & 0xC0) == 0x80) ++pos;
      continue;
    }
    out.emplace_back(ov[0], ov[1]);
    pos = ov[1];
  }
  return out;
}

}  // namespace seer
