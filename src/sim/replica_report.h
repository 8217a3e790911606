#pragma once
// `seer sim --replicas`: its flags, and its table and JSON (docs/replicas.md).
#include <string>

#include <nlohmann/json.hpp>

#include "sim/replica_set.h"

namespace seer {

struct ReplicaFlags {
  int32_t replicas = 0;  // 0: a plain `seer sim`
  std::string routing = "round-robin";
  bool shared_tier = false;
  std::string shared_tier_spec = "redis-25GbE";  // hardware.json's shared_kv_tiers
  bool always_fetch = false;  // fetch even when recomputing would be faster
  bool evicted_only = false;  // shared tier gets only the chunks host tiers drop
  std::string fail;           // "I@T": replica I dies at T seconds
  int64_t shared_max_bytes = 0;  // the shared tier's byte cap (0: none)
  double shared_ttl_s = 0;       // the shared tier's idle TTL (0: none)
  bool any() const { return replicas > 0 || shared_tier || !fail.empty(); }
};

// Throws seer::Error naming the flag.
ReplicaSetOptions make_replica_options(const ReplicaFlags& f, const std::string& catalog_dir);
// Sets setup.shared_write_through from the flags.
void apply_replica_flags(const ReplicaFlags& f, SimSetup& setup);

nlohmann::ordered_json replica_set_json(const ReplicaSetOptions& o, const ReplicaSetResult& r);
std::string render_replica_table(const ReplicaSetOptions& o, const ReplicaSetResult& r);

}  // namespace seer
