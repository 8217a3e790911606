#include "server/tool_formats/scanned_format.h"

#include "server/json_fields.h"
#include "server/tool_calls.h"
#include "server/tool_formats/legacy_format.h"

namespace seer::server {
namespace {

// Streams what successive scans of the growing region add: a call's name once it is
// whole, then each extension of its settled arguments text. A scan reads the whole
// region, so a long one is rescanned only once it grew by a 128th (a delta at least
// every 160 bytes of a 20 KB call): the work stays O(n log n), not O(n^2).
class RescanScanner : public CallRegionScanner {
 public:
  RescanScanner(const ScannedFormat& format, const std::vector<ToolFunction>& tools) : format_(format), tools_(tools) {}

  std::vector<ToolCallDelta> feed(std::string_view text) override {
    region_ += text;
    if (region_.size() - scanned_ < region_.size() / 128) return {};
    return rescan();
  }
  std::vector<ToolCallDelta> flush() override { return rescan(); }
  int32_t calls_started() const override { return static_cast<int32_t>(sent_.size()); }
  bool arguments_started(int32_t i) const override { return !sent_[static_cast<size_t>(i)].empty(); }

 private:
  std::vector<ToolCallDelta> rescan() {
    std::vector<ToolCallDelta> out;
    scanned_ = region_.size();
    if (stopped_) return out;
    const CallScan scan = format_.scan(region_, tools_);
    for (size_t i = 0; i < scan.calls.size() && !scan.calls[i].name.empty(); ++i) {
      const ScannedCall& c = scan.calls[i];
      const auto index = static_cast<int32_t>(i);
      if (i == sent_.size()) {
        out.push_back({index, new_tool_call_id(), c.name, ""});
        sent_.emplace_back();
      }
      if (c.arguments.compare(0, sent_[i].size(), sent_[i]) != 0) {  // a scan must not take back text
        stopped_ = true;
        return out;
      }
      if (c.arguments.size() > sent_[i].size()) {
        out.push_back({index, "", "", c.arguments.substr(sent_[i].size())});
        sent_[i] = c.arguments;
      }
    }
    stopped_ = scan.malformed;
    return out;
  }

  const ScannedFormat& format_;
  const std::vector<ToolFunction>& tools_;
  std::string region_;
  size_t scanned_ = 0;             // region_'s size at the last scan
  std::vector<std::string> sent_;  // per call: the arguments text sent so far
  bool stopped_ = false;
};

size_t own_call_start(std::string_view text, const CallOpenings& own) {
  size_t best = std::string_view::npos;
  for (auto m : own.markers) best = std::min(best, text.find(m));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && own.reply_openers.find(text[first]) != std::string_view::npos)
    best = std::min(best, first);
  return best;
}

// The scanned calls when the scan read whole calls only; arguments as compact JSON.
std::optional<std::vector<ToolCall>> whole_calls(const CallScan& scan) {
  if (scan.malformed || scan.calls.empty()) return std::nullopt;
  std::vector<ToolCall> calls;
  for (const ScannedCall& c : scan.calls) {
    if (!c.complete || c.name.empty()) return std::nullopt;
    auto args = parse_json_within_depth<nlohmann::ordered_json>(c.arguments.empty() ? "{}" : c.arguments, kMaxJsonDepth);
    if (!args.is_object()) return std::nullopt;
    calls.push_back({new_tool_call_id(), c.name, args.dump()});
  }
  return calls;
}

}  // namespace

CallOpenings ScannedFormat::openings() const {
  CallOpenings own = own_openings(), legacy = legacy_call_openings();
  own.markers.insert(own.markers.end(), legacy.markers.begin(), legacy.markers.end());
  own.reply_openers += legacy.reply_openers;
  return own;
}

std::optional<std::vector<ToolCall>> ScannedFormat::parse(std::string_view text, const std::vector<ToolFunction>& tools,
                                                          std::string* content) const {
  const size_t start = own_call_start(text, own_openings());
  if (start != std::string_view::npos)
    if (auto calls = whole_calls(scan(text.substr(start), tools))) {
      if (content) *content = trim_space(text.substr(0, start));
      return calls;
    }
  return parse_tool_calls(text, tool_names(tools), content);
}

std::unique_ptr<CallRegionScanner> ScannedFormat::scanner(const std::vector<ToolFunction>& tools) const {
  return std::make_unique<RescanScanner>(*this, tools);
}

}  // namespace seer::server
