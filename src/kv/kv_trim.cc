// KvManager's sliding-window trimmer (docs/models.md, "K/V of sliding-window
// layers"): frees the entries of sliding-window groups that no query attends any
// more, and tells whether a prefix of a trimmed table can still be continued.
#include <algorithm>

#include "kv/kv_manager.h"

namespace seer {

void KvManager::trim(KvOwner owner, int32_t num_tokens) {
  if (config_.local_groups == 0) return;
  auto it = tables_.find(owner);
  if (it == tables_.end()) return;
  const int32_t until = std::min(config_.first_attended_block(num_tokens), it->second.logical_blocks());
  if (it->second.trimmed_below >= until) return;
  update(it->second, [&](Table& t) {
    for (int32_t i = t.trimmed_below; i < until; ++i) {
      for (int32_t g = config_.groups - config_.local_groups; g < config_.groups; ++g) {
        const auto e = static_cast<size_t>(i * config_.groups + g);
        if (t.device[e] == KvTable::kTrimmed) continue;
        if (t.device[e] >= 0) {
          // The reservation shrinks with the blocks it no longer has to cover.
          device_.drop(t.device[e], t.request);
          --t.num_device;
          if (t.reserved > 0) --t.reserved;
        }
        if (t.entry_on_host(static_cast<int32_t>(e))) {
          host_.release(t.host[e]);
          t.host[e] = -1;
          --t.num_host;
        }
        t.device[e] = KvTable::kTrimmed;
        ++t.num_trimmed;
      }
    }
    t.trimmed_below = until;
  });
}

bool KvManager::continuable(KvOwner owner, int32_t num_tokens) const {
  const Table* t = find(owner);
  if (config_.local_groups == 0 || !t) return true;
  const int32_t end = std::min(config_.logical_blocks_for(num_tokens), t->logical_blocks());
  for (int32_t i = config_.first_attended_block(num_tokens); i < end; ++i) {
    if (t->recomputed(i)) continue;
    for (int32_t e = i * t->groups; e < (i + 1) * t->groups; ++e)
      if (t->trimmed(e)) return false;
  }
  return true;
}

}  // namespace seer
