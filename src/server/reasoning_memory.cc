#include "server/reasoning_memory.h"

namespace seer::server {

namespace {

// Length-prefixed parts: no two different (tenant, content, ids) share a key.
std::string memory_key(const std::string& tenant, const std::string& content, const std::vector<std::string>& ids) {
  std::string key;
  auto add = [&key](const std::string& part) {
    key += std::to_string(part.size());
    key += ':';
    key += part;
  };
  add(tenant);
  add(content);
  for (const std::string& id : ids) add(id);
  return key;
}

std::vector<std::string> call_ids(const MessageToolInfo& info) {
  std::vector<std::string> ids;
  for (const ToolCall& c : info.tool_calls) ids.push_back(c.id);
  return ids;
}

}  // namespace

ReasoningMemory::ReasoningMemory(size_t max_entries, size_t max_bytes) : max_entries_(max_entries), max_bytes_(max_bytes) {}

void ReasoningMemory::remember(const std::string& tenant, const std::string& content,
                               const std::vector<std::string>& ids, const std::string& reasoning) {
  if (reasoning.empty() || (content.empty() && ids.empty())) return;
  std::string key = memory_key(tenant, content, ids);
  if (key.size() + reasoning.size() > max_bytes_) return;
  MutexLock lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) {
    bytes_ -= it->second->key.size() + it->second->reasoning.size();
    lru_.erase(it->second);
    index_.erase(it);
  }
  bytes_ += key.size() + reasoning.size();
  lru_.push_front({key, reasoning});
  index_.emplace(std::move(key), lru_.begin());
  evict();
}

void ReasoningMemory::evict() {
  while (!lru_.empty() && (lru_.size() > max_entries_ || bytes_ > max_bytes_)) {
    const Entry& last = lru_.back();
    bytes_ -= last.key.size() + last.reasoning.size();
    index_.erase(last.key);
    lru_.pop_back();
  }
}

std::optional<std::string> ReasoningMemory::recall(const std::string& tenant, const std::string& content,
                                                   const std::vector<std::string>& ids) {
  const std::string key = memory_key(tenant, content, ids);
  MutexLock lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->reasoning;
}

size_t ReasoningMemory::restore(const std::string& tenant, std::vector<ChatMessage>& messages,
                                const std::vector<MessageToolInfo>& info) {
  size_t restored = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    ChatMessage& m = messages[i];
    if (m.role != "assistant" || m.reasoning_content) continue;
    if (auto r = recall(tenant, m.content, i < info.size() ? call_ids(info[i]) : std::vector<std::string>{})) {
      m.reasoning_content = std::move(r);
      ++restored;
    }
  }
  return restored;
}

size_t ReasoningMemory::size() const {
  MutexLock lock(mutex_);
  return lru_.size();
}

}  // namespace seer::server
