#include "backend/paged_kv_storage.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "kernels/convert.h"
#include "model/quant.h"

namespace seer {

PagedKvStorage::Mapping::Mapping(size_t n, const char* tier) : bytes(n) {
  if (n == 0) return;
  void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) fail("cannot map {} bytes for the {} KV pool", n, tier);
#ifdef MADV_HUGEPAGE
  ::madvise(p, n, MADV_HUGEPAGE);  // a hint; ignored where THP is off
#endif
  data = static_cast<uint8_t*>(p);
}

PagedKvStorage::Mapping& PagedKvStorage::Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (data) ::munmap(data, bytes);
    data = std::exchange(o.data, nullptr);
    bytes = o.bytes;
  }
  return *this;
}

PagedKvStorage::Mapping::~Mapping() {
  if (data) ::munmap(data, bytes);
}

PagedKvStorage::PagedKvStorage(const KvShape& shape, int device_blocks, int host_blocks)
    : shape_(shape), device_blocks_(device_blocks), host_blocks_(host_blocks) {
  if (shape.block_size <= 0 || shape.block_size > 4096) fail("KV block size {} out of range (1..4096)", shape.block_size);
  if (device_blocks < 0 || host_blocks < 0) fail("KV block counts must not be negative");
  check_kv_head_dim(shape.type, shape.head_dim);
  KvLayerGroups& g = shape_.layer_groups;
  if (g.group.empty()) g = kv_layer_groups(std::vector<bool>(static_cast<size_t>(shape.n_layers), false));
  if (g.group.size() != static_cast<size_t>(shape.n_layers) || g.slot.size() != g.group.size())
    fail("KV layer groups cover {} layers, the model has {}", g.group.size(), shape.n_layers);
  first_in_slot_.assign(g.slot.size(), 0);
  std::vector<char> seen(static_cast<size_t>(g.layers_per_block), 0);
  for (size_t l = 0; l < g.slot.size(); ++l) {
    const auto s = static_cast<size_t>(g.slot[l]);
    if (s >= seen.size() || g.group[l] < 0 || g.group[l] >= g.groups)
      fail("KV layer groups: layer {} in group {} slot {} (blocks of {} layers, {} groups)", l, g.group[l], s,
           g.layers_per_block, g.groups);
    first_in_slot_[l] = !seen[s];
    seen[s] = 1;
  }
  block_bytes_ = 2 * static_cast<size_t>(g.layers_per_block) * shape.n_kv_heads * head_bytes();
  device_ = Mapping(static_cast<size_t>(device_blocks) * block_bytes(), "device");
  host_ = Mapping(static_cast<size_t>(host_blocks) * block_bytes(), "host");
}

void PagedKvStorage::check_device(int32_t b, const char* what) const {
  if (b < 0 || b >= device_blocks_) fail("{}: device KV block {} out of range (0..{})", what, b, device_blocks_ - 1);
}

void PagedKvStorage::check_host(int32_t b, const char* what) const {
  if (b < 0 || b >= host_blocks_) fail("{}: host KV block {} out of range (0..{})", what, b, host_blocks_ - 1);
}

namespace {

// conv rounds f32 to the storage element (nearest even).
template <class T>
void write_head(const float* kh, const float* vh, int hd, int bs, int slot, T* kt, T* vb, T (*conv)(float)) {
  for (int d = 0; d < hd; ++d) kt[d * bs + slot] = conv(kh[d]);
  T* vrow = vb + static_cast<size_t>(slot) * hd;
  for (int d = 0; d < hd; ++d) vrow[d] = conv(vh[d]);
}

float keep_f32(float f) { return f; }

// write_head for f16, converting whole rows at once (the per-element conversion was
// ~5 % of a prefill).
void write_head_f16(const float* kh, const float* vh, int hd, int bs, int slot, uint16_t* kt, uint16_t* vb) {
  constexpr int kRowOnStack = 1024;  // head dimensions in use are 64-256
  if (hd > kRowOnStack) return write_head(kh, vh, hd, bs, slot, kt, vb, fp32_to_fp16);
  uint16_t k16[kRowOnStack];
  f32_to_f16_row(kh, k16, hd);
  for (int d = 0; d < hd; ++d) kt[d * bs + slot] = k16[d];  // K is stored transposed
  f32_to_f16_row(vh, vb + static_cast<size_t>(slot) * hd, hd);
}

// K and V rows of one slot as 32-element blocks (the model's quantizers, as
// llama.cpp's --cache-type-k/v store them).
template <class B>
void write_head_blocks(const float* kh, const float* vh, int hd, int slot, uint8_t* kb, uint8_t* vb,
                       void (*quantize)(const float*, B*, int64_t)) {
  const size_t row = static_cast<size_t>(hd / kQK) * slot;
  quantize(kh, reinterpret_cast<B*>(kb) + row, hd);
  quantize(vh, reinterpret_cast<B*>(vb) + row, hd);
}

}  // namespace

void PagedKvStorage::write(int32_t block, int slot, int layer, const float* k, const float* v) {
  const int hd = shape_.head_dim, bs = shape_.block_size;
  for (int h = 0; h < shape_.n_kv_heads; ++h) {
    uint8_t* kt = head_base(block, layer, h);
    uint8_t* vb = kt + head_bytes();
    const float* kh = k + h * hd;
    const float* vh = v + h * hd;
    switch (shape_.type) {
      case KvType::F32:
        write_head(kh, vh, hd, bs, slot, reinterpret_cast<float*>(kt), reinterpret_cast<float*>(vb), keep_f32);
        break;
      case KvType::F16:
        write_head_f16(kh, vh, hd, bs, slot, reinterpret_cast<uint16_t*>(kt), reinterpret_cast<uint16_t*>(vb));
        break;
      case KvType::BF16:
        write_head(kh, vh, hd, bs, slot, reinterpret_cast<uint16_t*>(kt), reinterpret_cast<uint16_t*>(vb),
                   fp32_to_bf16);
        break;
      case KvType::Q8_0: write_head_blocks<BlockQ8_0>(kh, vh, hd, slot, kt, vb, quantize_row_q8_0); break;
      case KvType::Q4_0: write_head_blocks<BlockQ4_0>(kh, vh, hd, slot, kt, vb, quantize_row_q4_0); break;
    }
  }
}

void PagedKvStorage::copy_device_block(int32_t src, int32_t dst) {
  check_device(src, "copy");
  check_device(dst, "copy");
  if (src != dst) std::memcpy(device_.get() + static_cast<size_t>(dst) * block_bytes_, device_.get() + static_cast<size_t>(src) * block_bytes_, block_bytes());
}

void PagedKvStorage::swap_out(int32_t device_block, int32_t host_block) {
  check_device(device_block, "swap out");
  check_host(host_block, "swap out");
  std::memcpy(host_.get() + static_cast<size_t>(host_block) * block_bytes_,
              device_.get() + static_cast<size_t>(device_block) * block_bytes_, block_bytes());
}

void PagedKvStorage::read_block(bool host, int32_t block, void* dst) const {
  if (host) check_host(block, "read");
  else check_device(block, "read");
  std::memcpy(dst, (host ? host_ : device_).get() + static_cast<size_t>(block) * block_bytes_, block_bytes());
}

void PagedKvStorage::write_host_block(int32_t block, const void* src) {
  check_host(block, "write");
  std::memcpy(host_.get() + static_cast<size_t>(block) * block_bytes_, src, block_bytes());
}

void PagedKvStorage::swap_in(int32_t host_block, int32_t device_block) {
  check_host(host_block, "swap in");
  check_device(device_block, "swap in");
  std::memcpy(device_.get() + static_cast<size_t>(device_block) * block_bytes_,
              host_.get() + static_cast<size_t>(host_block) * block_bytes_, block_bytes());
}

void PagedKvStorage::check(const KvOp& op) const {
  switch (op.kind) {
    case KvOpKind::SwapOut:
      check_device(op.src, "swap out");
      check_host(op.dst, "swap out");
      break;
    case KvOpKind::SwapIn:
      check_host(op.src, "swap in");
      check_device(op.dst, "swap in");
      break;
    case KvOpKind::Copy:
      check_device(op.src, "copy");
      check_device(op.dst, "copy");
      break;
  }
}

void PagedKvStorage::run_layer(const KvOp& op, int layer) {
  check(op);
  if (layer < 0 || layer >= shape_.n_layers) fail("KV op: layer {} out of range (0..{})", layer, shape_.n_layers - 1);
  const Mapping& from = op.kind == KvOpKind::SwapIn ? host_ : device_;
  const Mapping& to = op.kind == KvOpKind::SwapOut ? host_ : device_;
  if ((op.kind == KvOpKind::Copy && op.src == op.dst) || !first_in_slot_[static_cast<size_t>(layer)]) return;
  std::memcpy(layer_of(to, op.dst, layer), layer_of(from, op.src, layer), layer_bytes());
}

}  // namespace seer
