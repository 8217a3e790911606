#pragma once
// KvTable: the block table of one owner of the KV manager (kv/kv_manager.h).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace seer {

// One owner's block table. Only KvManager changes it; everyone else reads it
// through KvManager::table(). Entries are pool blocks (entry i*groups + g: logical
// block i, group g); the per-logical-block queries below look at every group.
struct KvTable {
  static constexpr int32_t kTrimmed = -2;  // device entry of a trimmed sliding-window block

  std::vector<int32_t> device;  // device block per entry; -1 where not on the device, kTrimmed
  std::vector<int32_t> host;    // host block per entry; may be shorter; missing = -1
  int32_t num_device = 0;
  int32_t num_host = 0;
  int32_t num_trimmed = 0;  // kTrimmed entries
  int32_t trimmed_below = 0;  // where trim() resumes: no logical block before it holds a local entry to free
  int32_t reserved = 0;  // the reservation, in device blocks (counting those held)
  int32_t groups = 1;
  bool request = true;   // owned by a request (not a cache entry)

  int32_t entries() const { return static_cast<int32_t>(device.size()); }
  int32_t logical_blocks() const { return entries() / groups; }
  bool trimmed(int32_t e) const { return device[static_cast<size_t>(e)] == kTrimmed; }
  bool entry_on_device(int32_t e) const { return e >= 0 && e < entries() && device[static_cast<size_t>(e)] >= 0; }
  bool entry_on_host(int32_t e) const {
    return e >= 0 && e < static_cast<int32_t>(host.size()) && host[static_cast<size_t>(e)] >= 0;
  }
  // Every entry of logical block i that is not trimmed is on the device (host).
  bool on_device(int32_t i) const;
  bool on_host(int32_t i) const;
  // Entries of logical block i that are not trimmed.
  int32_t held_entries(int32_t i) const;
  // Logical block i has an entry that is neither trimmed nor on any tier: its tokens
  // are recomputed, so every one of its entries needs a device block again.
  bool recomputed(int32_t i) const;
  // True when the first `logical` logical blocks are on the device, trimmed entries aside.
  [[nodiscard]] bool resident(int32_t logical) const;
  int32_t unused_reservation() const { return reserved > num_device ? reserved - num_device : 0; }
};

}  // namespace seer
