#pragma once
// KV pipelining loans [EcoServe] (docs/ecoserve.md): a running generation task (the
// host) lends part of its reserved-but-unused KV, the second half of its
// reservation that it will not touch before it is halfway done, to a shorter
// generation task (the hosted one). Built on KvManager's reservations: lending
// moves `blocks` of promise from the host's reservation to the hosted one's, so the
// pool's totals never change. Loans nest (a hosted task may host others).
//
// Settlement: when the hosted task finishes its blocks return to the pool and, at
// the next schedule(), the promise returns to the host (settle_returned). Recall:
// when the host needs its blocks back, the caller preempts the hosted task (swap)
// and calls recall() to restore the host's promise.
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "kv/kv_manager.h"

namespace seer {

class KvLoans {
 public:
  struct Loan {
    RequestId host = -1;
    int32_t blocks = 0;
  };

  // Moves `blocks` of the host's reserved-but-unused promise to `hosted`. Fails,
  // changing nothing, when the host's unused reservation is smaller, `hosted`
  // already borrows, or the loan would close a cycle.
  [[nodiscard]] bool lend(KvManager& kv, RequestId host, RequestId hosted, int32_t blocks);
  // Blocks `host` has lent out (all loans).
  int32_t lent_by(RequestId host) const;
  // The loan `hosted` holds, if any.
  const Loan* loan_of(RequestId hosted) const;
  // Requests that borrow from `host`.
  std::vector<RequestId> hosted_by(RequestId host) const;
  size_t size() const { return loans_.size(); }

  // `id` leaves (finished or aborted). Loans it gave out of borrowed blocks now
  // borrow from its host (nesting dolls), the rest of its own loan is settled at
  // the next settle_returned(); other loans it gave are forgiven (their blocks
  // stay with the borrowers as ordinary reservations).
  void on_remove(RequestId id);
  // Returns the promises of finished borrowers to hosts that still hold device KV.
  // Call at the start of schedule(), after the borrowers' KV was freed.
  void settle_returned(KvManager& kv, const std::function<bool(RequestId)>& host_running);
  // `hosted` was preempted (its blocks are back in the pool): loans it gave out of
  // borrowed blocks pass to its host, which gets the rest of its promise back now
  // (if `host_running`); other loans `hosted` gave are forgiven.
  void recall(KvManager& kv, RequestId hosted, bool host_running);
  // Forgets loans `host` gave (its borrowers keep the blocks as their own).
  void forgive_hosted_by(RequestId host);

  // Every borrower and host is known to the KV manager, no request borrows twice
  // or from itself, no cycle of loans, every borrower's reservation plus what it
  // lent on covers its loan.
  // Throws std::logic_error naming the first violation.
  void check_invariants(const KvManager& kv) const;

 private:
  void give_back(KvManager& kv, RequestId host, int32_t blocks);
  // Nesting dolls: `id`, which borrowed `own`, leaves; the loans it gave out of
  // those blocks (up to own.blocks) pass to its host. Returns the blocks passed.
  int32_t pass_up(RequestId id, const Loan& own);

  std::unordered_map<RequestId, Loan> loans_;  // by hosted request
  std::vector<Loan> returned_;                 // host and blocks of finished borrowers
};

}  // namespace seer
