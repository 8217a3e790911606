#pragma once
// The supervisor [S3] (docs/s3.md): what happens when a running request reaches its
// KV reservation without finishing. Without a supervisor a request grows past its
// reservation block by block from the free pool (vLLM-style). With one, the
// reservation itself is grown, or the request gives way (the session preempts the
// victim its VictimPolicy names and re-queues it).
#include <cstdint>
#include <memory>
#include <string_view>

#include "kv/kv_manager.h"
#include "scheduler/request.h"

namespace seer {

class Supervisor {
 public:
  virtual ~Supervisor() = default;
  virtual std::string_view name() const = 0;
  // Called when running request r needs KV for `tokens` tokens, more than its
  // reservation. Grows the reservation to cover them and returns true, or returns
  // false when memory does not allow it (leaving the KV manager unchanged).
  [[nodiscard]] virtual bool extend(KvManager& kv, Request& r, int32_t tokens) const = 0;
};

// S3: double the output part of the reservation (again until it covers `tokens`),
// at most prompt + max_tokens. When the doubled reservation does not fit, the
// request keeps it as Request::scheduling.min_reservation_tokens, so it is
// re-queued with the doubled reservation.
class DoublingSupervisor final : public Supervisor {
 public:
  std::string_view name() const override { return "doubling"; }
  [[nodiscard]] bool extend(KvManager& kv, Request& r, int32_t tokens) const override;
  // The reservation (tokens) doubling gives r when it needs `tokens`.
  static int32_t doubled_reservation(const Request& r, int32_t tokens);
};

// EcoServe: a generation task that used up its slack is not extended. Its
// prediction becomes generated + L_new, L_new = predicted - generated but at least
// the padding's share of the prediction (the prediction was short) and one block,
// and it gives way (with Held preemption: keeping its KV, re-queued in the group
// of L_new ahead of new ones; the former places it, BatchFormer::place_held).
class RepredictSupervisor final : public Supervisor {
 public:
  explicit RepredictSupervisor(double padding) : padding_(padding) {}
  std::string_view name() const override { return "repredict"; }
  [[nodiscard]] bool extend(KvManager& kv, Request& r, int32_t tokens) const override;

 private:
  double padding_;
};

}  // namespace seer
