#pragma once
// The running generation tasks of EcoServe by the *admission group* they started
// in (docs/ecoserve.md): the GTs of one held group admitted in the same schedule()
// call form a time-synced group while they run. The former uses it for the
// paper's first step on under-prediction (EcoServeSettings::group_slack): a member
// past its reservation takes the group's reserved slack, the padding its other
// running members reserved past their predicted lengths, before giving way; and
// for the paper's admission trigger (a group completes: admit_on_free).
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kv/kv_manager.h"
#include "scheduler/request.h"

namespace seer {

class GtCohorts {
 public:
  // (schedule() call, key class, remaining-length bucket); class -1: a GT that
  // started outside a held group (resumed after a swap).
  using CohortId = std::tuple<int64_t, int32_t, int32_t>;

  void join(RequestId id, const CohortId& cohort);
  // `id` stopped running as a GT (finished, preempted or held again).
  void leave(RequestId id);
  size_t num_running() const { return cohort_of_.size(); }
  bool contains(RequestId id) const { return cohort_of_.count(id) != 0; }
  // The other members of id's cohort (empty when id is in none).
  std::vector<RequestId> others(RequestId id) const;

  // Blocks of `donor`'s reservation past what it needs for its tokens and its
  // predicted remaining output, unpadded (never below its device blocks).
  static int32_t slack_blocks(const KvManager& kv, const Request& donor);
  // Moves up to `want` blocks of reservation from the donors' slack to r (total
  // promised KV unchanged); returns the blocks moved. `may_donate` filters donors.
  static int32_t take_slack(KvManager& kv, Request& r, int32_t want, const std::vector<Request*>& donors);

  // Every member is in exactly one cohort, and `running(id)` holds for each.
  void check_invariants(const std::function<bool(RequestId)>& running) const;

 private:
  std::unordered_map<RequestId, CohortId> cohort_of_;
  std::map<CohortId, std::vector<RequestId>> members_;
};

}  // namespace seer
