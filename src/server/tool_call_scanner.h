#pragma once
// Streams tool calls as the model writes them: the call's name once it is complete,
// then its arguments object piece by piece, in the OpenAI delta shape (a first delta
// with index, id and name; then argument fragments). Reads the three formats of
// tool_calls.h from the text of the call region (everything from the first marker or
// `{` on); the end-of-reply parse (parse_tool_calls) still decides whether the reply
// was a call.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/tool_types.h"

namespace seer::server {

// What ToolCallStream needs of whatever reads the call region as it arrives.
class CallRegionScanner {
 public:
  virtual ~CallRegionScanner() = default;
  // More text of the call region; returns the deltas it completes.
  virtual std::vector<ToolCallDelta> feed(std::string_view text) = 0;
  // At the end of the reply: the deltas of text fed but not read yet.
  virtual std::vector<ToolCallDelta> flush() { return {}; }
  // Calls whose name was sent; of those, whether call i's arguments began.
  virtual int32_t calls_started() const = 0;
  virtual bool arguments_started(int32_t i) const = 0;
};

// The scanner of the Hermes, Llama 3.x JSON and Mistral formats.
class ToolCallScanner : public CallRegionScanner {
 public:
  explicit ToolCallScanner(std::vector<std::string> tool_names) : names_(std::move(tool_names)) {}
  std::vector<ToolCallDelta> feed(std::string_view text) override;

  int32_t calls_started() const override { return static_cast<int32_t>(args_state_.size()); }
  bool arguments_started(int32_t i) const override { return args_state_[static_cast<size_t>(i)] != Args::None; }
  bool arguments_complete(int32_t i) const { return args_state_[static_cast<size_t>(i)] == Args::Complete; }
  // The text stopped looking like a call this scanner can stream (an unknown name,
  // arguments that are not an object): nothing more is sent until the end.
  bool stopped() const { return stopped_; }

 private:
  enum class Phase { Name, Arguments, InArguments };
  enum class Args { None, Started, Complete };
  // Phase Name: a complete `"name": "..."` or `[TOOL_CALLS]name[ARGS]` from pos_.
  bool find_name(std::vector<ToolCallDelta>& out);
  // Phase Arguments: `"arguments":` or `"parameters":` then `{`.
  bool find_arguments();
  void begin_arguments();
  // Phase InArguments: as much of the object as has arrived.
  void stream_arguments(std::vector<ToolCallDelta>& out);

  std::vector<std::string> names_;
  std::string buf_;
  size_t pos_ = 0;
  Phase phase_ = Phase::Name;
  std::vector<Args> args_state_;
  int32_t depth_ = 0;
  bool in_string_ = false, escaped_ = false;
  bool stopped_ = false;
};

}  // namespace seer::server
