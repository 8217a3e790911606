#pragma once
// The reasoning seer generated for an assistant turn, kept so that a client that
// sends the history back without it (most OpenAI clients drop reasoning_content)
// still gets the prompt whose K/V is cached: the template is given the reasoning
// it wrote the first time. Keyed by tenant, the turn's content and its tool-call ids
// (ids seer made up, so an agent's turns are told apart even when their content is
// empty); a turn with neither content nor calls is not kept. Bounded: least recently
// used entries go first past max_entries or max_bytes. Thread-safe.
#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "server/tool_calls.h"
#include "tokenizer/chat_template.h"

namespace seer::server {

class ReasoningMemory {
 public:
  explicit ReasoningMemory(size_t max_entries = 4096, size_t max_bytes = size_t{64} << 20);
  ReasoningMemory(const ReasoningMemory&) = delete;
  ReasoningMemory& operator=(const ReasoningMemory&) = delete;

  void remember(const std::string& tenant, const std::string& content, const std::vector<std::string>& call_ids,
                const std::string& reasoning);
  [[nodiscard]] std::optional<std::string> recall(const std::string& tenant, const std::string& content,
                                                  const std::vector<std::string>& call_ids);
  // Gives each assistant message of `messages` that came without reasoning_content
  // the reasoning remembered for it; returns how many it restored.
  size_t restore(const std::string& tenant, std::vector<ChatMessage>& messages, const std::vector<MessageToolInfo>& info);

  size_t size() const;

 private:
  struct Entry {
    std::string key;
    std::string reasoning;
  };
  void evict() REQUIRES(mutex_);

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable Mutex mutex_;
  std::list<Entry> lru_ GUARDED_BY(mutex_);  // most recent first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_ GUARDED_BY(mutex_);
  size_t bytes_ GUARDED_BY(mutex_) = 0;
};

}  // namespace seer::server
