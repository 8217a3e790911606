#include "sim/sim_runner.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "kv/kv_layer_groups.h"
#include "kv/kv_manager.h"
#include "sim/replica_set.h"

namespace seer {

KvConfig sim_kv_config(const SimSetup& s, const CostModel& cost) {
  if (!(s.kv_fraction > 0 && s.kv_fraction <= 1)) fail("--kv-fraction must be in (0, 1], got {}", s.kv_fraction);
  if (s.block_size < 1 || s.block_size > 4096) fail("--block-size must be in [1, 4096], got {}", s.block_size);
  if (!(s.swap_space_gib >= 0)) fail("--swap-space must be >= 0 GiB, got {}", s.swap_space_gib);
  const double usable = static_cast<double>(s.hardware.memory_bytes) * s.kv_fraction;
  const double weights = static_cast<double>(cost.weight_bytes_per_device());
  if (s.kv_memory_bytes > 0 && s.kv_memory_bytes + weights > s.hardware.memory_bytes)
    fail("--kv-memory {:.1f} GiB plus {:.1f} GiB of weights exceed the {:.1f} GiB of {}", s.kv_memory_bytes / 1073741824.0,
         weights / 1073741824.0, s.hardware.memory_bytes / 1073741824.0, s.hardware.name);
  const double kv_bytes = s.kv_memory_bytes > 0 ? static_cast<double>(s.kv_memory_bytes) : usable - weights;
  // One pool block holds a layer group's K/V (kv/kv_layer_groups.h).
  std::vector<bool> local(static_cast<size_t>(s.model.layers), false);
  std::fill_n(local.begin(), std::min(s.model.local_layers, s.model.layers), true);
  const KvLayerGroups groups = kv_layer_groups(local, !s.swa_full);
  const double block_bytes_device = double(s.block_size) * groups.block_share(double(cost.kv_bytes_per_token_per_device()));
  if (kv_bytes < block_bytes_device)
    fail("{} on {} (tp={}{}) leaves no memory for the KV cache: {:.1f} GiB usable, {:.1f} GiB of weights per device",
         s.model.name, s.hardware.name, s.cost.tp, s.cost.pp > 1 ? fmt::format(", pp={}", s.cost.pp) : "",
         usable / 1073741824.0,
         cost.weight_bytes_per_device() / 1073741824.0);
  KvConfig kv;
  kv.block_size = s.block_size;
  kv.device_blocks = static_cast<int32_t>(std::min(kv_bytes / block_bytes_device, 1e9));
  kv.host_blocks = static_cast<int32_t>(std::min(s.swap_space_gib * 1073741824.0 / block_bytes_device, 1e9));
  kv.bytes_per_block = int64_t{s.block_size} * groups.block_share(cost.kv_bytes_per_token());
  groups.apply(kv, s.model.sliding_window);
  return kv;
}

SimResult run_simulation(const SimSetup& setup, const std::vector<TraceEntry>& trace, EngineObserver* observer) {
  ReplicaSetOptions one;  // one replica: the router and the shared tier do nothing
  return run_replica_set(setup, one, trace, [observer](size_t) { return observer; }).sim;
}

}  // namespace seer
