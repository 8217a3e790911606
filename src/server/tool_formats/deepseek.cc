// DeepSeek, in the two layouts its templates show:
//   R1 and its Qwen / Llama distills
//     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{...}\n```<｜tool▁call▁end｜>
//     (further calls after "\n"), then <｜tool▁calls▁end｜>
//   V3.1
//     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
// Either layout is read whichever template the model has.
#include <fmt/format.h>

#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_formats/forced_grammar.h"
#include "server/tool_formats/registry.h"
#include "server/tool_formats/scanned_format.h"

namespace seer::server {
namespace {

constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>", kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>", kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>", kFence = "```json", kFenceEnd = "```";

// Past an optional `lit` at s[i] (after spaces); kNotYet when the text ends inside it.
size_t skip_optional(std::string_view s, size_t i, std::string_view lit) {
  i = skip_space(s, i);
  switch (match_at(s, i, lit)) {
    case Match::Yes: return i + lit.size();
    case Match::Partial: return kNotYet;
    case Match::No: return i;
  }
  return i;
}

// One call from s[i] (past <｜tool▁call▁begin｜>); returns past it, kNotYet, or sets *bad.
size_t scan_call(std::string_view s, size_t i, const std::vector<ToolFunction>& tools, CallScan* scan, bool* bad) {
  const size_t sep = s.find(kSep, i);
  if (sep == std::string_view::npos) return kNotYet;
  std::string_view head = s.substr(i, sep - i);
  i = sep + kSep.size();
  const bool r1 = head == "function";
  if (r1) {  // the name runs to the end of the line
    const size_t nl = s.find('\n', i);
    if (nl == std::string_view::npos) return kNotYet;
    head = s.substr(i, nl - i);
    if ((i = skip_optional(s, nl, kFence)) == kNotYet) return kNotYet;
  }
  if (!find_tool(tools, head)) return *bad = true, kNotYet;
  ScannedCall& call = scan->calls.emplace_back();
  call.name = std::string(head);
  i = skip_space(s, i);
  if (i >= s.size()) return kNotYet;
  if (s[i] != '{') return *bad = true, kNotYet;
  const size_t end = json_value_end(s, i);
  call.arguments = std::string(s.substr(i, end == kNotYet ? kNotYet : end - i));
  if (end == kNotYet) return kNotYet;
  call.complete = true;
  i = end;
  if (r1 && (i = skip_optional(s, i, kFenceEnd)) == kNotYet) return kNotYet;
  i = skip_space(s, i);
  const Match m = match_at(s, i, kCallEnd);
  if (m == Match::No) *bad = true;
  return m == Match::Yes ? i + kCallEnd.size() : kNotYet;
}

class DeepSeekFormat : public ScannedFormat {
 public:
  explicit DeepSeekFormat(bool r1) : r1_(r1) {}
  std::string_view name() const override { return r1_ ? "deepseek_r1" : "deepseek_v3"; }
  bool written_by(std::string_view source) const override {
    return source.find(kCallBegin) != std::string_view::npos && (source.find(kFence) != std::string_view::npos) == r1_;
  }
  CallScan scan(std::string_view region, const std::vector<ToolFunction>& tools) const override {
    CallScan scan;
    size_t i = skip_optional(region, 0, kCallsBegin);
    while (i != kNotYet) {
      i = skip_space(region, i);
      if (i >= region.size() || match_at(region, i, kCallsEnd) != Match::No) break;
      const Match m = match_at(region, i, kCallBegin);
      if (m == Match::Partial) break;
      if (m == Match::No) {
        scan.malformed = scan.calls.empty();  // text after the calls is not read
        break;
      }
      bool bad = false;
      i = scan_call(region, i + kCallBegin.size(), tools, &scan, &bad);
      if (bad) scan.malformed = true;
    }
    return scan;
  }
  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                                  grammar::JsonWhitespace ws) const override {
    const ForcedTools forced = forced_tools(tools, choice);
    std::string alts;
    for (const ForcedTool& f : forced.tools)
      alts += (alts.empty() ? "" : " | ") +
              (r1_ ? grammar::gbnf_literal("function" + std::string(kSep) + f.tool->name + "\n" + std::string(kFence) + "\n") +
                         " " + f.args_rule + " " + grammar::gbnf_literal("\n" + std::string(kFenceEnd))
                   : grammar::gbnf_literal(f.tool->name + std::string(kSep)) + " " + f.args_rule);
    return root_rule(kCallsBegin, r1_ ? "\n" : "", kCallsEnd, parallel) + "call ::= " +
           grammar::gbnf_literal(std::string(kCallBegin)) + " ( " + alts + " ) " +
           grammar::gbnf_literal(std::string(kCallEnd)) + "\n" + forced.rules + grammar::json_common_gbnf(ws);
  }

 protected:
  CallOpenings own_openings() const override { return {{kCallsBegin, kCallBegin}, ""}; }

 private:
  bool r1_;
};

}  // namespace

const ToolFormat& deepseek_r1_tool_format() {
  static const DeepSeekFormat f(true);
  return f;
}

const ToolFormat& deepseek_v3_tool_format() {
  static const DeepSeekFormat f(false);
  return f;
}

}  // namespace seer::server
