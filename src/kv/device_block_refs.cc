#include "kv/device_block_refs.h"

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace seer {

DeviceBlockRefs::DeviceBlockRefs(int32_t num_blocks)
    : pool_(KvTier::Device, num_blocks), request_refs_(static_cast<size_t>(num_blocks), 0) {}

bool DeviceBlockRefs::cache_only(int32_t block) const {
  return pool_.ref_count(block) > 0 && request_refs_[static_cast<size_t>(block)] == 0;
}

bool DeviceBlockRefs::pinned(int32_t block) const {
  const int32_t requests = request_refs_[static_cast<size_t>(block)];
  return requests > 0 && pool_.ref_count(block) > requests;
}

template <typename F>
void DeviceBlockRefs::reference(int32_t block, F&& change) {
  const bool was_cache_only = cache_only(block), was_pinned = pinned(block);
  change(request_refs_[static_cast<size_t>(block)]);
  cache_only_blocks_ += static_cast<int32_t>(cache_only(block)) - static_cast<int32_t>(was_cache_only);
  pinned_blocks_ += static_cast<int32_t>(pinned(block)) - static_cast<int32_t>(was_pinned);
}

int32_t DeviceBlockRefs::take(bool request) {
  const int32_t b = pool_.allocate();
  if (b < 0) return b;
  request_refs_[static_cast<size_t>(b)] = request;  // a free block was counted nowhere
  cache_only_blocks_ += !request;
  return b;
}

void DeviceBlockRefs::share(int32_t block, bool request) {
  reference(block, [&](int32_t& requests) {
    pool_.retain(block);
    requests += request;
  });
}

bool DeviceBlockRefs::drop(int32_t block, bool request) {
  bool freed = false;
  reference(block, [&](int32_t& requests) {
    freed = pool_.release(block);
    requests -= request;
  });
  return freed;
}

void DeviceBlockRefs::retarget(int32_t block, int32_t delta) {
  reference(block, [&](int32_t& requests) { requests += delta; });
}

void DeviceBlockRefs::check_invariants(const std::vector<int32_t>& owners,
                                       const std::vector<int32_t>& request_owners) const {
  auto violated = [](const std::string& what) { throw std::logic_error("kv invariant violated: " + what); };
  int32_t cache_only = 0, pinned = 0;
  for (size_t b = 0; b < owners.size(); ++b) {
    pinned += request_owners[b] > 0 && owners[b] > request_owners[b];
    if (request_refs_[b] != request_owners[b])
      violated(fmt::format("device block {} counts {} request reference(s) but {} request(s) hold it", b,
                           request_refs_[b], request_owners[b]));
    cache_only += owners[b] > 0 && request_owners[b] == 0;
  }
  if (pinned != pinned_blocks_)
    violated(fmt::format("{} device blocks are shared by a request and a cache owner but {} are counted", pinned,
                         pinned_blocks_));
  if (cache_only != cache_only_blocks_)
    violated(fmt::format("{} device blocks are held by cache owners only but {} are counted", cache_only,
                         cache_only_blocks_));
}

}  // namespace seer
