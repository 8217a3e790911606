#pragma once
// The paged KV cache as bookkeeping (docs/architecture.md §1.2, §1.6): block pools per tier, one
// block table per request, reservations, and the KV operations that move data
// between tiers. No tensors live here: the executor owns the storage and performs
// the KvOps that the scheduler puts into a StepPlan.
//
// A request's table is indexed by logical block (tokens [i*B, (i+1)*B) with B the
// block size). Each logical block is on the device tier, on the host tier, or
// nowhere (-1 in both: dropped, must be recomputed). Tables of requests that are
// running are fully on the device.
//
// Reservations (max- and exact-allocation) are promises: a request with a
// reservation of R blocks that holds H device blocks has R-H blocks
// "reserved-but-unused"; those stay free but nobody else may take them. Growth
// within the reservation therefore always succeeds.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kv/block_pool.h"
#include "kv/kv_types.h"

namespace seer {

struct KvConfig {
  int32_t block_size = 16;      // tokens per block
  int32_t device_blocks = 0;    // must be > 0
  int32_t host_blocks = 0;      // 0: no host tier (swap preemption impossible)
  int64_t bytes_per_block = 0;  // K+V bytes of one block over all layers (swap accounting)
};

class KvManager {
 public:
  explicit KvManager(const KvConfig& config);  // throws seer::Error for bad sizes

  const KvConfig& config() const { return config_; }
  int32_t block_size() const { return config_.block_size; }
  int64_t bytes_per_block() const { return config_.bytes_per_block; }
  int32_t blocks_for_tokens(int32_t tokens) const { return (tokens + config_.block_size - 1) / config_.block_size; }

  // ---- Pool accounting (device tier unless named).
  int32_t num_blocks(KvTier t = KvTier::Device) const { return pool(t).num_blocks(); }
  int32_t num_free_blocks(KvTier t = KvTier::Device) const { return pool(t).num_free(); }
  int32_t num_used_blocks(KvTier t = KvTier::Device) const { return pool(t).num_used(); }
  // Device blocks free but promised to requests by their reservations.
  int32_t num_reserved_unused_blocks() const { return reserved_unused_; }
  // Device blocks anyone may take without breaking a reservation.
  int32_t num_available_blocks() const { return pool(KvTier::Device).num_free() - reserved_unused_; }
  // Used device blocks / total.
  double kv_utilization() const;
  // Reserved-but-unused device blocks / total.
  double reserved_unused_fraction() const;
  // Used device blocks that no request references: what freeing every cache owner
  // would give back (blocks shared with a running request stay).
  int32_t num_cache_only_blocks() const { return cache_only_blocks_; }

  // ---- Per-owner state. Unknown owners have empty tables and no reservation.
  // Owners are requests (ids >= 0) or cache entries such as conversations (ids < 0,
  // see kv/conversation_cache.h); both use the same tables.
  static bool is_request_owner(RequestId id) { return id >= 0; }
  [[nodiscard]] bool has(RequestId id) const { return tables_.count(id) != 0; }
  // Tables owned by requests (cache owners are not counted).
  size_t num_requests() const { return tables_.size() - num_cache_tables_; }
  size_t num_cache_tables() const { return num_cache_tables_; }
  // Device block ids per logical block; -1 where the block is not on the device.
  const std::vector<int32_t>& block_table(RequestId id) const;
  // Host block ids per logical block (may be shorter than block_table; missing = -1).
  const std::vector<int32_t>& host_block_table(RequestId id) const;
  int32_t num_logical_blocks(RequestId id) const;
  int32_t num_device_blocks(RequestId id) const;
  int32_t num_host_blocks(RequestId id) const;
  int32_t reserved_blocks(RequestId id) const;
  // True when every logical block covering [0, num_tokens) is on the device.
  [[nodiscard]] bool resident(RequestId id, int32_t num_tokens) const;

  // ---- Reservation. Sets the request's reservation to `blocks` device blocks (its
  // total, counting blocks it already holds). Fails, changing nothing, when the
  // increase of its reserved-but-unused blocks exceeds num_available_blocks().
  [[nodiscard]] bool can_reserve(RequestId id, int32_t blocks) const;
  [[nodiscard]] bool reserve(RequestId id, int32_t blocks);

  // ---- Growth. Device blocks allocate(id, n) would take from the available pool
  // (beyond the request's own reservation) to cover tokens [0, n).
  int32_t blocks_needed(RequestId id, int32_t num_tokens) const;
  [[nodiscard]] bool can_allocate(RequestId id, int32_t num_tokens) const;
  // Appends device blocks until the table covers tokens [0, num_tokens). Uses the
  // request's reservation first. Returns false, changing nothing, when too few
  // blocks are available.
  [[nodiscard]] bool allocate(RequestId id, int32_t num_tokens);
  // Shortens the table to the blocks covering [0, num_tokens), releasing the blocks
  // past them on either tier (e.g. blocks allocated for a chunk that did not run).
  void truncate(RequestId id, int32_t num_tokens);

  // ---- Release and movement.
  // Releases every block on every tier and the reservation; forgets the request.
  void free(RequestId id);
  // Moves every device block of the request to newly allocated host blocks,
  // appending one SwapOut op per block, and releases the device blocks and the
  // reservation. Fails, changing nothing, when the host tier lacks room.
  [[nodiscard]] bool can_swap_out(RequestId id) const;
  [[nodiscard]] bool swap_out(RequestId id, std::vector<KvOp>& ops);
  // Moves every host block of the request back to newly allocated device blocks
  // (taken from its reservation first, then the available pool), appending SwapIn
  // ops. Fails, changing nothing, when too few device blocks are available.
  int32_t swap_in_blocks_needed(RequestId id) const;
  [[nodiscard]] bool can_swap_in(RequestId id) const;
  [[nodiscard]] bool swap_in(RequestId id, std::vector<KvOp>& ops);
  // Releases the first `num_blocks` logical blocks on whichever tier holds them
  // (Pensieve drops a conversation's leading end); the table keeps its length.
  void drop_leading(RequestId id, int32_t num_blocks);
  // Block-level prefix sharing: `dst` (holding nothing) gets the K/V of the first
  // `num_tokens` tokens of `src`. Full blocks src has on the device are shared by
  // reference; the rest become dst's own device blocks: a partial last block is
  // copied (copy-on-write ahead of the write, a Copy op), a host-only block is
  // copied up (a SwapIn op; src keeps it) and a block src lacks is fresh, its tokens
  // to be recomputed. False, changing nothing, when too few blocks are available.
  int32_t share_prefix_blocks_needed(RequestId src, int32_t num_tokens) const;
  [[nodiscard]] bool share_prefix(RequestId src, RequestId dst, int32_t num_tokens, std::vector<KvOp>& ops);
  // True when logical block i of `id` is on the device and some request references
  // that block (a cache owner's block shared with a running request: evicting it
  // frees nothing).
  [[nodiscard]] bool held_by_request(RequestId id, int32_t i) const;

  // ---- Cache owners (conversation cache, docs/pensieve.md).
  // Moves the whole table of `from` to `to` (which must hold nothing); the
  // reservation of `from` is released.
  void transfer(RequestId from, RequestId to);
  // Copies logical block i of cache owner `id` from the device to a new host block
  // (a SwapOut op); the device block stays as a clean copy until released. False,
  // changing nothing, when the host tier is full or the block is not device-only.
  [[nodiscard]] bool copy_block_to_host(RequestId id, int32_t i, std::vector<KvOp>& ops);
  // Releases the block that tier `t` holds for logical block i (no-op when none).
  // True when that freed the block (false when none was held or others share it).
  bool release_block(RequestId id, int32_t i, KvTier t);
  // Per logical block: is it on the device tier / the host tier?
  [[nodiscard]] bool on_device(RequestId id, int32_t i) const;
  [[nodiscard]] bool on_host(RequestId id, int32_t i) const;
  // Device blocks make_resident(id) takes from the available pool: host-only and
  // dropped logical blocks.
  int32_t blocks_to_make_resident(RequestId id) const;
  // Puts every logical block on the device: clean copies lose their host copy,
  // host-only blocks are swapped in (SwapIn ops) and dropped blocks get fresh device
  // blocks whose tokens the caller must recompute. False, changing nothing, when too
  // few blocks are available.
  [[nodiscard]] bool make_resident(RequestId id, std::vector<KvOp>& ops);
  // Gives logical block i (on no tier, or i == the table's length: appended) of
  // cache owner `id` a host block whose data arrives from outside (a shared tier
  // below the host, kv/shared_kv_tier.h). False, changing nothing, when the host
  // tier is full or the block is already held.
  [[nodiscard]] bool place_on_host(RequestId id, int32_t i);

  // Every block free or owned, ref counts equal owners, no block twice in one table,
  // per-request counts and reservation totals consistent. Throws std::logic_error
  // naming the first violation.
  void check_invariants() const;
  // Forgets every table: every block of both tiers is free again (an engine
  // recovering from a failure rebuilds its KV state with this).
  void reset();

 private:
  struct Table {
    std::vector<int32_t> device;  // one entry per logical block
    std::vector<int32_t> host;    // may be shorter than device; missing = -1
    int32_t num_device = 0;
    int32_t num_host = 0;
    int32_t reserved = 0;
    bool request = true;  // owned by a request (not a cache owner)
    int32_t unused_reservation() const { return reserved > num_device ? reserved - num_device : 0; }
  };

  const BlockPool& pool(KvTier t) const { return t == KvTier::Device ? device_ : host_; }
  const Table* find(RequestId id) const;
  Table& table(RequestId id);
  // Blocks of `n` new device blocks for `t` that come from the available pool.
  int32_t from_available(const Table& t, int32_t n) const;
  // Apply a change to t.num_device / t.reserved, keeping reserved_unused_ in step.
  template <typename F>
  void update(Table& t, F&& change);
  // Releases one device block of `t` (call inside update()); true when it became free.
  bool release_device(Table& t, int32_t block);
  // Every device reference is taken and dropped here (kv_manager.cc).
  bool cache_only(int32_t block) const;
  template <typename F>
  void reference(int32_t block, F&& change);
  int32_t take_device(const Table& t);
  void share_device(const Table& t, int32_t block);
  bool drop_device(const Table& t, int32_t block);

  KvConfig config_;
  BlockPool device_;
  BlockPool host_;
  std::vector<int32_t> request_refs_;  // per device block: references from requests
  int32_t cache_only_blocks_ = 0;
  std::unordered_map<RequestId, Table> tables_;
  int32_t reserved_unused_ = 0;
  size_t num_cache_tables_ = 0;
};

}  // namespace seer
