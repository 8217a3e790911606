#include "kv/kv_loans.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

namespace seer {

namespace {
template <typename... Args>
[[noreturn]] void violated(fmt::format_string<Args...> f, Args&&... args) {
  throw std::logic_error("kv loan invariant violated: " + fmt::format(f, std::forward<Args>(args)...));
}
}  // namespace

bool KvLoans::lend(KvManager& kv, RequestId host, RequestId hosted, int32_t blocks) {
  if (blocks <= 0 || host == hosted || loans_.count(hosted)) return false;
  for (auto up = loans_.find(host); up != loans_.end(); up = loans_.find(up->second.host))
    if (up->second.host == hosted) return false;  // would close a cycle
  const int32_t host_reserved = kv.table(host).reserved;
  if (host_reserved - kv.table(host).num_device < blocks) return false;
  if (!kv.reserve(host, host_reserved - blocks)) return false;
  const int32_t hosted_promise = std::max(kv.table(hosted).reserved, kv.table(hosted).num_device);
  if (!kv.reserve(hosted, hosted_promise + blocks))
    throw std::logic_error(fmt::format("kv: lent blocks of request {} vanished before request {} took them", host,
                                       hosted));
  loans_[hosted] = Loan{host, blocks};
  return true;
}

int32_t KvLoans::lent_by(RequestId host) const {
  int32_t n = 0;
  for (const auto& [hosted, loan] : loans_)
    if (loan.host == host) n += loan.blocks;
  return n;
}

const KvLoans::Loan* KvLoans::loan_of(RequestId hosted) const {
  auto it = loans_.find(hosted);
  return it == loans_.end() ? nullptr : &it->second;
}

std::vector<RequestId> KvLoans::hosted_by(RequestId host) const {
  std::vector<RequestId> out;
  for (const auto& [hosted, loan] : loans_)
    if (loan.host == host) out.push_back(hosted);
  std::sort(out.begin(), out.end());
  return out;
}

void KvLoans::forgive_hosted_by(RequestId host) {
  std::erase_if(loans_, [&](const auto& e) { return e.second.host == host; });
  std::erase_if(returned_, [&](const Loan& l) { return l.host == host; });
}

int32_t KvLoans::pass_up(RequestId id, const Loan& own) {
  int32_t passed = 0;
  for (RequestId hosted : hosted_by(id)) {
    Loan& l = loans_.at(hosted);
    const int32_t n = std::min(l.blocks, own.blocks - passed);
    if (n <= 0) continue;
    l = Loan{own.host, n};
    passed += n;
  }
  return passed;
}

void KvLoans::on_remove(RequestId id) {
  auto it = loans_.find(id);
  if (it != loans_.end()) {
    const Loan own = it->second;
    loans_.erase(it);
    const int32_t passed = pass_up(id, own);
    if (own.blocks > passed) returned_.push_back(Loan{own.host, own.blocks - passed});
  }
  forgive_hosted_by(id);
}

void KvLoans::give_back(KvManager& kv, RequestId host, int32_t blocks) {
  // The borrower's blocks are back in the pool, so they are available unless a
  // shared block kept one: return what is there.
  const int32_t n = std::min(blocks, kv.usage().available());
  if (n > 0 && !kv.reserve(host, kv.table(host).reserved + n))
    throw std::logic_error(fmt::format("kv: cannot return {} lent blocks to request {}", n, host));
}

void KvLoans::settle_returned(KvManager& kv, const std::function<bool(RequestId)>& host_running) {
  for (const Loan& l : returned_)
    if (host_running(l.host)) give_back(kv, l.host, l.blocks);
  returned_.clear();
}

void KvLoans::recall(KvManager& kv, RequestId hosted, bool host_running) {
  auto it = loans_.find(hosted);
  if (it == loans_.end()) {
    forgive_hosted_by(hosted);
    return;
  }
  const Loan l = it->second;
  loans_.erase(it);
  // With the host gone the nested loans would have no one to return to.
  const int32_t passed = host_running ? pass_up(hosted, l) : 0;
  forgive_hosted_by(hosted);
  if (host_running && l.blocks > passed) give_back(kv, l.host, l.blocks - passed);
}

void KvLoans::check_invariants(const KvManager& kv) const {
  for (const auto& [hosted, loan] : loans_) {
    if (loan.blocks <= 0) violated("request {} borrows {} blocks", hosted, loan.blocks);
    if (loan.host == hosted) violated("request {} borrows from itself", hosted);
    if (!kv.has(hosted)) violated("borrower {} holds no KV", hosted);
    if (!kv.has(loan.host)) violated("host {} of borrower {} holds no KV", loan.host, hosted);
    if (kv.table(loan.host).num_device == 0) violated("host {} of borrower {} is not on the device", loan.host, hosted);
    // What it borrowed it reserves, or lent on (nesting dolls; a loan it gave whose
    // borrower finished is on its way back).
    int32_t lent_on = lent_by(hosted);
    for (const Loan& r : returned_)
      if (r.host == hosted) lent_on += r.blocks;
    if (kv.table(hosted).reserved + lent_on < loan.blocks)
      violated("borrower {} reserves {} blocks and lent on {} but borrowed {}", hosted, kv.table(hosted).reserved,
               lent_on, loan.blocks);
    // Following hosts upward must end: a cycle would let a promise lend itself.
    std::unordered_set<RequestId> seen{hosted};
    for (RequestId up = loan.host;;) {
      if (!seen.insert(up).second) violated("loans form a cycle through request {}", up);
      auto next = loans_.find(up);
      if (next == loans_.end()) break;
      up = next->second.host;
    }
  }
  for (const Loan& l : returned_)
    if (l.blocks <= 0) violated("a returned loan of host {} has {} blocks", l.host, l.blocks);
}

}  // namespace seer
