#include "backend/paged_kv_storage.h"

#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace seer {

void PagedKvStorage::FreeDeleter::operator()(float* p) const { std::free(p); }

PagedKvStorage::PagedKvStorage(const KvShape& shape, int device_blocks, int host_blocks)
    : shape_(shape), device_blocks_(device_blocks), host_blocks_(host_blocks) {
  if (shape.block_size <= 0 || shape.block_size > 4096) fail("KV block size {} out of range (1..4096)", shape.block_size);
  if (device_blocks < 0 || host_blocks < 0) fail("KV block counts must not be negative");
  block_floats_ = 2 * static_cast<size_t>(shape.n_layers) * shape.n_kv_heads * head_floats();
  auto alloc = [&](int blocks, const char* tier) -> float* {
    if (blocks == 0) return nullptr;
    auto* p = static_cast<float*>(std::calloc(static_cast<size_t>(blocks) * block_floats_, sizeof(float)));
    if (!p) fail("cannot allocate {} {} KV blocks of {} bytes", blocks, tier, block_bytes());
    return p;
  };
  device_.reset(alloc(device_blocks, "device"));
  host_.reset(alloc(host_blocks, "host"));
}

void PagedKvStorage::check_device(int32_t b, const char* what) const {
  if (b < 0 || b >= device_blocks_) fail("{}: device KV block {} out of range (0..{})", what, b, device_blocks_ - 1);
}

void PagedKvStorage::check_host(int32_t b, const char* what) const {
  if (b < 0 || b >= host_blocks_) fail("{}: host KV block {} out of range (0..{})", what, b, host_blocks_ - 1);
}

void PagedKvStorage::write(int32_t block, int slot, int layer, const float* k, const float* v) {
  const int hd = shape_.head_dim, bs = shape_.block_size;
  for (int h = 0; h < shape_.n_kv_heads; ++h) {
    float* kt = head_base(block, layer, h);
    float* vb = kt + head_floats();
    const float* kh = k + h * hd;
    for (int d = 0; d < hd; ++d) kt[d * bs + slot] = kh[d];
    std::memcpy(vb + static_cast<size_t>(slot) * hd, v + h * hd, sizeof(float) * hd);
  }
}

void PagedKvStorage::copy_device_block(int32_t src, int32_t dst) {
  check_device(src, "copy");
  check_device(dst, "copy");
  if (src != dst) std::memcpy(device_.get() + dst * block_floats_, device_.get() + src * block_floats_, block_bytes());
}

void PagedKvStorage::swap_out(int32_t device_block, int32_t host_block) {
  check_device(device_block, "swap out");
  check_host(host_block, "swap out");
  std::memcpy(host_.get() + host_block * block_floats_, device_.get() + device_block * block_floats_, block_bytes());
}

void PagedKvStorage::swap_in(int32_t host_block, int32_t device_block) {
  check_host(host_block, "swap in");
  check_device(device_block, "swap in");
  std::memcpy(device_.get() + device_block * block_floats_, host_.get() + host_block * block_floats_, block_bytes());
}

}  // namespace seer
