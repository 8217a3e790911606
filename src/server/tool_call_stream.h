#pragma once
// Streaming a reply that may call tools: holds back text that may open a call and
// emits the rest as content; once a call opens, hands the call region to the
// format's scanner, which streams each call as deltas (its name, then its arguments
// piece by piece). The finished reply's parse decides whether it was a call.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/tool_formats/tool_format.h"

namespace seer::server {

class ToolCallStream {
 public:
  ToolCallStream(const ToolFormat& format, std::vector<ToolFunction> tools);
  // The Hermes / Llama 3.x / Mistral reading of functions known only by name.
  explicit ToolCallStream(const std::vector<std::string>& tool_names);

  ToolStreamOutput push(std::string_view text);
  // At the end, when the whole reply parses as calls (*called): the deltas not sent
  // yet (calls or arguments the scanner could not stream). Otherwise *content gets
  // the text still held, sent as content.
  std::vector<ToolCallDelta> finish(std::string* content, bool* called);

 private:
  std::string content_part(std::string_view text);
  // Whether `head` (the reply from its first non-space byte) opens a call; *maybe:
  // it may still, once more arrives.
  bool opens_call(std::string_view head, bool* maybe) const;

  const ToolFormat& format_;
  std::vector<ToolFunction> tools_;
  CallOpenings openings_;
  std::unique_ptr<CallRegionScanner> scanner_;
  std::string all_;       // every byte so far
  size_t emitted_ = 0;    // bytes of all_ sent as content
  bool in_call_ = false;  // a call began: everything from here on goes to the scanner
  size_t scanned_ = 0;    // bytes of all_ fed to the scanner
  bool text_ = false;     // the reply began as plain text
};

}  // namespace seer::server
