#include "kv/kv_layer_groups.h"

#include <algorithm>

namespace seer {

KvLayerGroups kv_layer_groups(const std::vector<bool>& local, bool split) {
  KvLayerGroups g;
  const auto layers = static_cast<int32_t>(local.size());
  const auto n_local = static_cast<int32_t>(std::count(local.begin(), local.end(), true));
  const int32_t n_global = layers - n_local;
  g.group.assign(local.size(), 0);
  g.slot.assign(local.size(), 0);
  if (!split || n_local == 0 || n_global == 0) {
    g.layers_per_block = layers;
    for (int32_t l = 0; l < layers; ++l) g.slot[static_cast<size_t>(l)] = l;
    return g;
  }
  g.layers_per_block = n_global;
  g.local_groups = (n_local + n_global - 1) / n_global;
  g.groups = 1 + g.local_groups;
  int32_t globals = 0, locals = 0;
  for (int32_t l = 0; l < layers; ++l) {
    const auto i = static_cast<size_t>(l);
    if (local[i]) {
      g.group[i] = 1 + locals / n_global;
      g.slot[i] = locals++ % n_global;
    } else {
      g.slot[i] = globals++;
    }
  }
  return g;
}

void KvLayerGroups::apply(KvConfig& kv, int32_t window) const {
  kv.groups = groups;
  kv.local_groups = local_groups;
  kv.window = local_groups > 0 ? window : 0;
}

}  // namespace seer
