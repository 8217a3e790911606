#include "kv/kv_table.h"

#include <algorithm>

namespace seer {

bool KvTable::on_device(int32_t i) const {
  if (i < 0 || i >= logical_blocks()) return false;
  for (int32_t e = i * groups; e < (i + 1) * groups; ++e)
    if (!trimmed(e) && !entry_on_device(e)) return false;
  return true;
}

bool KvTable::on_host(int32_t i) const {
  if (i < 0 || i >= logical_blocks()) return false;
  for (int32_t e = i * groups; e < (i + 1) * groups; ++e)
    if (!trimmed(e) && !entry_on_host(e)) return false;
  return true;
}

int32_t KvTable::held_entries(int32_t i) const {
  if (i < 0 || i >= logical_blocks()) return 0;
  int32_t n = 0;
  for (int32_t e = i * groups; e < (i + 1) * groups; ++e) n += !trimmed(e);
  return n;
}

bool KvTable::recomputed(int32_t i) const {
  if (i < 0 || i >= logical_blocks()) return false;
  for (int32_t e = i * groups; e < (i + 1) * groups; ++e)
    if (!trimmed(e) && !entry_on_device(e) && !entry_on_host(e)) return true;
  return false;
}

bool KvTable::resident(int32_t logical) const {
  if (logical == 0) return true;
  if (logical_blocks() < logical) return false;
  return std::all_of(device.begin(), device.begin() + logical * groups, [](int32_t b) { return b >= 0 || b == kTrimmed; });
}

}  // namespace seer
