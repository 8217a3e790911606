#pragma once
// A format read by one scan function over the call region: the finished reply's
// parse and the streaming scanner both come from it, so streamed and unstreamed
// calls are the same by construction. A reply that this scan cannot read is still
// read as Hermes / Llama 3.x / Mistral (legacy_format.h), so a model that writes
// another family's calls loses nothing.
#include "server/tool_formats/call_text.h"
#include "server/tool_formats/tool_format.h"

namespace seer::server {

class ScannedFormat : public ToolFormat {
 public:
  CallOpenings openings() const override;  // the format's own and the legacy ones
  std::optional<std::vector<ToolCall>> parse(std::string_view text, const std::vector<ToolFunction>& tools,
                                             std::string* content) const override;
  std::unique_ptr<CallRegionScanner> scanner(const std::vector<ToolFunction>& tools) const override;

  // Reads `region` (the reply from where a call opens, possibly after spaces) as far
  // as it has arrived. A ScannedCall's arguments must only grow as more arrives.
  virtual CallScan scan(std::string_view region, const std::vector<ToolFunction>& tools) const = 0;

 protected:
  virtual CallOpenings own_openings() const = 0;
};

}  // namespace seer::server
