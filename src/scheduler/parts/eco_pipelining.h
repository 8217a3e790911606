#pragma once
// KV pipelining [EcoServe], a part of the EcoServe former (docs/ecoserve.md): a
// running generation task (host) lends the reservation it will not touch while it
// generates the first half of its remaining output to held generation tasks short
// enough to finish inside it. The part keeps the loan book and decides who lends to
// whom; the schedule session moves the blocks.
#include <cstdint>
#include <functional>

#include "kv/kv_loans.h"
#include "scheduler/parts/eco_ordering.h"
#include "scheduler/parts/schedule_session.h"

namespace seer {

class KvPipelining {
 public:
  // `buffer`: b, as a fraction of the host's predicted length.
  // `order`: the held queue's order (eco_ordering.h). `nest_now` (the paper's
  // nesting dolls): a GT admitted on a loan may host in the same call, and the
  // search for hosts and hosted GTs has no cap; otherwise it hosts from the next
  // call on, and the pass stops after a few idle hosts and candidates.
  explicit KvPipelining(double buffer, HeldOrder order = HeldOrder::LengthFirst, bool nest_now = false)
      : buffer_(buffer), order_(order), nest_now_(nest_now) {}

  // Per-request blocks a GT's reservation needs, and what becomes of a held GT
  // admitted on borrowed blocks (it leaves its group and runs as a GT).
  struct Hooks {
    std::function<int32_t(const Request&)> generation_blocks;
    std::function<void(Request&)> admitted;
  };
  // Hosts go longest first, each lending to the longest held GTs in `held` that
  // qualify; a hosted GT admitted here may itself host (from the next call on,
  // or at once with nest_now).
  void lend(ScheduleSession& s, RequestQueue& held, const Hooks& hooks);
  // Returns the blocks of finished or preempted GTs to their hosts (call first).
  void settle(ScheduleSession& s);
  // The hosted GT `id` left the device (preempted): its host gets the blocks back.
  void recall(ScheduleSession& s, RequestId id, RequestId host);
  // The host of `hosted`, or -1 when it runs on its own blocks.
  RequestId host_of(RequestId hosted) const;

  void on_remove(RequestId id) { loans_.on_remove(id); }
  void check_invariants(const KvManager& kv) const { loans_.check_invariants(kv); }
  const KvLoans& loans() const { return loans_; }

 private:
  Request* find_hosted(ScheduleSession& s, RequestQueue& held, double max_len, int32_t blocks,
                       const Hooks& hooks) const;
  // Blocks `host` can lend: its reservation past its tokens and the first half of
  // its remaining output.
  static int32_t lendable_blocks(const KvManager& kv, const Request& host);

  // The hosted GT's remaining length bound under `host` (<= 1: it hosts nobody).
  double max_hosted_len(const Request& host) const;
  // find_hosted's search in one key class: from `from`, at most `misses` entries
  // (or all with nest_now) checked.
  Request* scan_class(ScheduleSession& s, RequestQueue& held, RequestQueue::iterator from, double cls,
                      double max_len, int32_t blocks, const Hooks& hooks) const;

  double buffer_;
  HeldOrder order_;
  bool nest_now_;
  KvLoans loans_;
};

}  // namespace seer
