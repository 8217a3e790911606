#pragma once
// The paged KV cache as bookkeeping (docs/architecture.md §1.2, §1.6): block pools per tier, one
// block table per owner (a request or a cache entry: KvOwner), reservations, and
// the KV operations that move data between tiers. No tensors live here: the
// executor owns the storage and performs the KvOps that the scheduler puts into a
// StepPlan. Readers see the pools through usage() and one table through table().
//
// A logical block is tokens [i*B, (i+1)*B) with B the block size. A model whose
// layers all attend to every position keeps all layers' K/V of a logical block in
// one pool block. A model with sliding-window layers splits its layers into groups
// (docs/models.md, "K/V of sliding-window layers"): one pool block per group and
// logical block, the table entry i*groups + g. Each entry is on the device tier, on
// the host tier, or nowhere (-1 in both: dropped, must be recomputed); an entry of a
// sliding-window group that no query can attend any more is trimmed (kTrimmed: freed,
// never read again). Tables of requests that are running are fully on the device,
// trimmed entries aside.
//
// Reservations (max- and exact-allocation) are promises: a request with a
// reservation of R blocks that holds H device blocks has R-H blocks
// "reserved-but-unused"; those stay free but nobody else may take them. Growth
// within the reservation therefore always succeeds.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kv/device_block_refs.h"
#include "kv/kv_config.h"
#include "kv/kv_table.h"
#include "kv/kv_types.h"

namespace seer {

class KvManager {
 public:
  explicit KvManager(const KvConfig& config);  // throws seer::Error for bad sizes

  const KvConfig& config() const { return config_; }
  KvUsage usage() const;

  // ---- Per-owner state. Unknown owners have empty tables and no reservation.
  [[nodiscard]] bool has(KvOwner owner) const { return tables_.count(owner) != 0; }
  const KvTable& table(KvOwner owner) const;

  // ---- Reservation. Sets the request's reservation to `blocks` device blocks (its
  // total, counting blocks it already holds). Fails, changing nothing, when the
  // increase of its reserved-but-unused blocks exceeds usage().available().
  [[nodiscard]] bool reserve(KvOwner owner, int32_t blocks);

  // Pool blocks the owner's table covers [0, num_tokens) with, less those trimmed:
  // what the scheduler reserves for it.
  int32_t blocks_for(KvOwner owner, int32_t num_tokens) const;
  // The tokens `blocks` pool blocks of the owner's table cover (blocks_for's inverse).
  int32_t tokens_for(KvOwner owner, int32_t blocks) const;

  // ---- Growth. Device blocks allocate(owner, n) would take from the available
  // pool (beyond the owner's own reservation) to cover tokens [0, n).
  int32_t blocks_needed(KvOwner owner, int32_t num_tokens) const;
  // Appends device blocks until the table covers tokens [0, num_tokens). Uses the
  // request's reservation first. Returns false, changing nothing, when too few
  // blocks are available.
  [[nodiscard]] bool allocate(KvOwner owner, int32_t num_tokens);
  // Shortens the table to the blocks covering [0, num_tokens), releasing the blocks
  // past them on either tier (e.g. blocks allocated for a chunk that did not run).
  void truncate(KvOwner owner, int32_t num_tokens);

  // Frees the sliding-window entries that no query can attend once `num_tokens`
  // tokens are computed (logical blocks before config().first_attended_block), on
  // both tiers, and lowers the reservation by as many: what is left of it still
  // covers every block the request will add. Pass only tokens that stay computed
  // (not speculative ones). No-op without sliding-window groups.
  void trim(KvOwner owner, int32_t num_tokens);
  // True when a sequence that has the first `num_tokens` tokens of `owner` can
  // continue from there: every sliding-window entry its next query attends to is
  // held or recomputed (not trimmed). A prefix of a trimmed table is usable only at
  // its end.
  [[nodiscard]] bool continuable(KvOwner owner, int32_t num_tokens) const;

  // ---- Release and movement.
  // Releases every block on every tier and the reservation; forgets the owner.
  void free(KvOwner owner);
  // Moves every device block of the request to newly allocated host blocks,
  // appending one SwapOut op per block, and releases the device blocks and the
  // reservation. Fails, changing nothing, when the host tier lacks room.
  [[nodiscard]] bool swap_out(KvOwner owner, std::vector<KvOp>& ops);
  // Moves every host block of the request back to newly allocated device blocks
  // (taken from its reservation first, then the available pool), appending SwapIn
  // ops. Fails, changing nothing, when too few device blocks are available.
  [[nodiscard]] bool swap_in(KvOwner owner, std::vector<KvOp>& ops);
  // Block-level prefix sharing: `dst` (holding nothing) gets the K/V of the first
  // `num_tokens` tokens of `src`. Full blocks src has on the device are shared by
  // reference; the rest become dst's own device blocks: a partial last block is
  // copied (copy-on-write ahead of the write, a Copy op), a host-only block is
  // copied up (a SwapIn op; src keeps it) and a block src lacks is fresh, its tokens
  // to be recomputed. False, changing nothing, when too few blocks are available
  // (share_copies says how many it takes).
  [[nodiscard]] bool share_prefix(KvOwner src, KvOwner dst, int32_t num_tokens, std::vector<KvOp>& ops);
  // Device blocks share_prefix(src, ., num_tokens) takes from the pool: every entry
  // but the full blocks' ones on the device and the trimmed ones.
  int32_t share_copies(KvOwner src, int32_t num_tokens) const;
  // True when logical block i of `owner` is on the device and some request
  // references one of its blocks (a cache owner's block shared with a running request:
  // evicting it frees nothing).
  [[nodiscard]] bool held_by_request(KvOwner owner, int32_t i) const;

  // ---- Cache owners (conversation cache, docs/pensieve.md).
  // Moves the whole table of `from` to `to` (which must hold nothing); the
  // reservation of `from` is released.
  void transfer(KvOwner from, KvOwner to);
  // Copies logical block i of cache owner `owner` from the device to new host
  // blocks (SwapOut ops); the device blocks stay as a clean copy until released.
  // False, changing nothing, when the host tier is full or the block is not
  // device-only.
  [[nodiscard]] bool copy_block_to_host(KvOwner owner, int32_t i, std::vector<KvOp>& ops);
  // Releases the blocks that tier `t` holds for logical block i (no-op when none).
  // Returns how many became free (not those others share).
  int32_t release_block(KvOwner owner, int32_t i, KvTier t);
  // Puts every logical block on the device: clean copies lose their host copy,
  // host-only blocks are swapped in (SwapIn ops) and dropped blocks get fresh device
  // blocks whose tokens the caller must recompute. False, changing nothing, when too
  // few blocks are available.
  [[nodiscard]] bool make_resident(KvOwner owner, std::vector<KvOp>& ops);
  // Gives logical block i (on no tier, or i == the table's length: appended) of
  // cache owner `owner` host blocks whose data arrives from outside (a shared tier
  // below the host, kv/shared_kv_tier.h). False, changing nothing, when the host
  // tier is full or the block is already held.
  [[nodiscard]] bool place_on_host(KvOwner owner, int32_t i);

  // Every block free or owned, ref counts equal owners, no block twice in one table,
  // per-owner counts and reservation totals consistent. Throws std::logic_error
  // naming the first violation.
  void check_invariants() const;
  // Forgets every table: every block of both tiers is free again (an engine
  // recovering from a failure rebuilds its KV state with this).
  void reset();

 private:
  using Table = KvTable;

  int32_t available() const { return device_.pool().num_free() - reserved_unused_; }
  const Table* find(KvOwner owner) const;
  Table& table_of(KvOwner owner);  // created empty when unknown
  // Tests of the mutators above: would they succeed?
  [[nodiscard]] bool can_reserve(KvOwner owner, int32_t blocks) const;
  [[nodiscard]] bool can_swap_out(KvOwner owner) const;
  [[nodiscard]] bool can_swap_in(KvOwner owner) const;
  int32_t blocks_to_make_resident(KvOwner owner) const;
  // Entry e of `t` needs a device block to be resident (trimmed ones only when recomputed).
  static bool needs_device(const Table& t, int32_t e);
  // Blocks of `n` new device blocks for `t` that come from the available pool.
  int32_t from_available(const Table& t, int32_t n) const;
  // Apply a change to t.num_device / t.reserved, keeping reserved_unused_ in step.
  template <typename F>
  void update(Table& t, F&& change) {
    const int32_t before = t.unused_reservation();
    change(t);
    reserved_unused_ += t.unused_reservation() - before;
  }
  // Releases one device block of `t` (call inside update()); true when it became free.
  bool release_device(Table& t, int32_t block);

  KvConfig config_;
  DeviceBlockRefs device_;  // every device reference is taken and dropped through it
  BlockPool host_;
  std::unordered_map<KvOwner, Table, KvOwnerHash> tables_;
  int32_t reserved_unused_ = 0;
  size_t num_cache_tables_ = 0;
};

}  // namespace seer
