#include "sim/replica_report.h"

#include <fmt/format.h>

#include "common/error.h"

namespace seer {

ReplicaSetOptions make_replica_options(const ReplicaFlags& f, const std::string& catalog_dir) {
  ReplicaSetOptions o;
  o.replicas = f.replicas > 0 ? f.replicas : 1;
  o.routing = f.routing;
  o.fetch_only_if_faster = !f.always_fetch;
  if (f.shared_max_bytes < 0) fail("--shared-tier-max-bytes must be >= 0 (got {})", f.shared_max_bytes);
  o.shared_limits.max_bytes = f.shared_max_bytes;
  if (!(f.shared_ttl_s >= 0)) fail("--shared-tier-ttl must be >= 0 seconds (got {})", f.shared_ttl_s);
  o.shared_limits.ttl_s = f.shared_ttl_s;
  if (f.shared_tier) o.shared_tier = Catalog::load(catalog_dir.empty() ? Catalog::default_dir() : catalog_dir).shared_tier(f.shared_tier_spec);
  if (!f.fail.empty()) {
    const auto at = f.fail.find('@');
    try {
      if (at == std::string::npos) throw std::invalid_argument(f.fail);
      size_t used = 0;
      o.fail_replica = std::stoi(f.fail.substr(0, at), &used);
      if (used != at) throw std::invalid_argument(f.fail);
      const std::string t = f.fail.substr(at + 1);
      o.fail_at_s = std::stod(t, &used);
      if (used != t.size()) throw std::invalid_argument(f.fail);
    } catch (const std::exception&) {
      fail("--fail-replica: expected REPLICA@SECONDS (e.g. 3@120), got '{}'", f.fail);
    }
    if (o.fail_replica < 0) fail("--fail-replica: the replica must be >= 0, got {}", o.fail_replica);
  }
  return o;
}

void apply_replica_flags(const ReplicaFlags& f, SimSetup& setup) { setup.shared_write_through = !f.evicted_only; }

nlohmann::ordered_json replica_set_json(const ReplicaSetOptions& o, const ReplicaSetResult& r) {
  nlohmann::ordered_json j = summary_json(r.sim.summary);
  j["slo_attainment"] = r.sim.slo_attainment ? nlohmann::ordered_json(*r.sim.slo_attainment) : nlohmann::ordered_json();
  j["routing"] = o.routing;
  j["replicas"] = o.replicas;
  j["rejected"] = r.sim.rejected;
  j["failed"] = r.failed;
  if (o.fail_replica >= 0) j["fail"] = {{"replica", o.fail_replica}, {"at_s", o.fail_at_s}};
  if (r.shared) {
    j["shared_tier"] = {{"name", o.shared_tier->name},
                        {"stored_chunks", r.shared->stored_chunks},
                        {"stored_bytes", r.shared->stored_bytes},
                        {"fetches", r.shared->fetches},
                        {"fetched_tokens", r.shared->fetched_tokens},
                        {"fetched_bytes", r.shared->fetched_bytes},
                        {"misses", r.shared->misses},
                        {"declined", r.fetches_declined},
                        {"fetch_wait_s", r.shared_fetch_s}};
  }
  auto per = nlohmann::ordered_json::array();
  for (const auto& rep : r.replicas)
    per.push_back({{"alive", rep.alive},
                   {"routed", rep.routed},
                   {"finished", rep.finished},
                   {"failed", rep.failed},
                   {"rejected", rep.rejected},
                   {"preemptions", rep.preemptions},
                   {"cache_hit_tokens", rep.cache.hit_tokens_device + rep.cache.hit_tokens_host}});
  j["per_replica"] = per;
  return j;
}

std::string render_replica_table(const ReplicaSetOptions& o, const ReplicaSetResult& r) {
  std::string out = render_summary_table(r.sim.summary);
  out += fmt::format("replicas: {} ({}), failed requests: {}, rejected: {}\n", o.replicas, o.routing, r.failed,
                     r.sim.rejected);
  if (r.shared)
    out += fmt::format(
        "shared tier {}: {} fetches ({} tokens, {:.2f} GB, {:.1f} s waited), {} declined (recompute faster), "
        "{} misses, {:.2f} GB stored\n",
        o.shared_tier->name, r.shared->fetches, r.shared->fetched_tokens, r.shared->fetched_bytes / 1e9,
        r.shared_fetch_s, r.fetches_declined, r.shared->misses, r.shared->stored_bytes / 1e9);
  out += fmt::format("{:>7} {:>5} {:>8} {:>8} {:>6} {:>8} {:>12}\n", "replica", "alive", "routed", "finished", "failed",
                     "preempt", "cache hits");
  for (size_t i = 0; i < r.replicas.size(); ++i) {
    const ReplicaReport& rep = r.replicas[i];
    out += fmt::format("{:>7} {:>5} {:>8} {:>8} {:>6} {:>8} {:>12}\n", i, rep.alive ? "yes" : "no", rep.routed,
                       rep.finished, rep.failed, rep.preemptions, rep.cache.hit_tokens_device + rep.cache.hit_tokens_host);
  }
  return out;
}

}  // namespace seer
