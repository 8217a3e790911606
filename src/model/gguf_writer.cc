#include "model/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace seer {

GgufValue gguf_u32(uint32_t v) { return GgufValue{GgufType::UINT32, uint64_t{v}}; }
GgufValue gguf_i32(int32_t v) { return GgufValue{GgufType::INT32, int64_t{v}}; }
GgufValue gguf_u64(uint64_t v) { return GgufValue{GgufType::UINT64, v}; }
GgufValue gguf_f32(float v) { return GgufValue{GgufType::FLOAT32, double{v}}; }
GgufValue gguf_bool(bool v) { return GgufValue{GgufType::BOOL, uint64_t{v ? 1u : 0u}}; }
GgufValue gguf_string(std::string v) { return GgufValue{GgufType::STRING, std::move(v)}; }

GgufValue gguf_array(GgufType elem_type, std::vector<GgufValue> items) {
  GgufValue v{GgufType::ARRAY, std::move(items)};
  v.elem_type = elem_type;
  return v;
}

GgufValue gguf_string_array(const std::vector<std::string>& items) {
  std::vector<GgufValue> v;
  v.reserve(items.size());
  for (const auto& s : items) v.push_back(gguf_string(s));
  return gguf_array(GgufType::STRING, std::move(v));
}

GgufValue gguf_f32_array(const std::vector<float>& items) {
  std::vector<GgufValue> v;
  v.reserve(items.size());
  for (float f : items) v.push_back(gguf_f32(f));
  return gguf_array(GgufType::FLOAT32, std::move(v));
}

GgufValue gguf_i32_array(const std::vector<int32_t>& items) {
  std::vector<GgufValue> v;
  v.reserve(items.size());
  for (int32_t i : items) v.push_back(gguf_i32(i));
  return gguf_array(GgufType::INT32, std::move(v));
}

GgufWriter::GgufWriter(uint32_t version, uint64_t alignment) : version_(version), alignment_(alignment) {
  if (version != 2 && version != 3) fail("GGUF writer: version {} (expected 2 or 3)", version);
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    fail("GGUF writer: alignment {} is not a power of two", alignment);
  if (alignment != 32) set("general.alignment", gguf_u32(static_cast<uint32_t>(alignment)));
}

GgufWriter::~GgufWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(partial_path_.c_str());
  }
}

void GgufWriter::set(const std::string& key, GgufValue value) {
  if (file_) fail("GGUF writer: metadata '{}' set after the header was written", key);
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

bool GgufWriter::has(std::string_view key) const {
  for (const auto& kv : metadata_)
    if (kv.first == key) return true;
  return false;
}

size_t GgufWriter::add_tensor(const std::string& name, std::vector<int64_t> shape, GgmlType type) {
  if (file_) fail("GGUF writer: tensor '{}' declared after the header was written", name);
  auto info = ggml_type_info(static_cast<uint32_t>(type));
  if (!info) fail("GGUF writer: tensor '{}' has an unknown type", name);
  if (shape.empty() || shape.size() > 4) fail("GGUF writer: tensor '{}' has {} dimensions", name, shape.size());
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d <= 0) fail("GGUF writer: tensor '{}' has a dimension of {}", name, d);
    elements *= d;
  }
  if (shape[0] % info->block_elems != 0)
    fail("GGUF writer: tensor '{}': row length {} is not a multiple of the {} block size {}", name, shape[0],
         info->name, info->block_elems);
  for (const auto& t : tensors_)
    if (t.name == name) fail("GGUF writer: duplicate tensor name '{}'", name);
  size_t bytes = static_cast<size_t>(elements / info->block_elems * info->block_bytes);
  tensors_.push_back(Tensor{name, std::move(shape), type, data_bytes_, bytes});
  data_bytes_ += (bytes + alignment_ - 1) / alignment_ * alignment_;
  return bytes;
}

uint64_t GgufWriter::header_bytes() const {
  // Only needed for file_size(); computed by measuring what begin() would write.
  uint64_t n = 4 + 4 + 8 + 8;
  auto value_bytes = [](const GgufValue& v, auto&& self) -> uint64_t {
    switch (v.type) {
      case GgufType::UINT8:
      case GgufType::INT8:
      case GgufType::BOOL: return 1;
      case GgufType::UINT16:
      case GgufType::INT16: return 2;
      case GgufType::UINT32:
      case GgufType::INT32:
      case GgufType::FLOAT32: return 4;
      case GgufType::UINT64:
      case GgufType::INT64:
      case GgufType::FLOAT64: return 8;
      case GgufType::STRING: return 8 + std::get<std::string>(v.v).size();
      case GgufType::ARRAY: {
        uint64_t s = 4 + 8;
        for (const auto& item : std::get<std::vector<GgufValue>>(v.v)) s += self(item, self);
        return s;
      }
    }
    return 0;
  };
  for (const auto& [k, v] : metadata_) n += 8 + k.size() + 4 + value_bytes(v, value_bytes);
  for (const auto& t : tensors_) n += 8 + t.name.size() + 4 + 8 * t.shape.size() + 4 + 8;
  return n;
}

uint64_t GgufWriter::file_size() const {
  uint64_t h = header_bytes();
  return (h + alignment_ - 1) / alignment_ * alignment_ + data_bytes_;
}

void GgufWriter::put(const void* p, size_t n) {
  if (n == 0) return;
  if (std::fwrite(p, 1, n, file_) != n) fail("{}: write failed: {}", path_, std::strerror(errno));
  written_ += n;
}

void GgufWriter::put_string(std::string_view s) {
  put_u64(s.size());
  put(s.data(), s.size());
}

void GgufWriter::put_value(const GgufValue& v, const std::string& key) {
  auto int_of = [&]() -> uint64_t {
    if (auto* u = std::get_if<uint64_t>(&v.v)) return *u;
    if (auto* i = std::get_if<int64_t>(&v.v)) return static_cast<uint64_t>(*i);
    fail("GGUF writer: metadata '{}' of type {} holds no integer", key, gguf_type_name(v.type));
  };
  auto float_of = [&]() -> double {
    if (auto* d = std::get_if<double>(&v.v)) return *d;
    fail("GGUF writer: metadata '{}' of type {} holds no number", key, gguf_type_name(v.type));
  };
  switch (v.type) {
    case GgufType::UINT8:
    case GgufType::INT8:
    case GgufType::BOOL: {
      uint8_t b = static_cast<uint8_t>(int_of());
      put(&b, 1);
      break;
    }
    case GgufType::UINT16:
    case GgufType::INT16: {
      uint16_t s = static_cast<uint16_t>(int_of());
      put(&s, 2);
      break;
    }
    case GgufType::UINT32:
    case GgufType::INT32: put_u32(static_cast<uint32_t>(int_of())); break;
    case GgufType::UINT64:
    case GgufType::INT64: put_u64(int_of()); break;
    case GgufType::FLOAT32: {
      float f = static_cast<float>(float_of());
      put(&f, 4);
      break;
    }
    case GgufType::FLOAT64: {
      double d = float_of();
      put(&d, 8);
      break;
    }
    case GgufType::STRING: {
      auto* s = std::get_if<std::string>(&v.v);
      if (!s) fail("GGUF writer: metadata '{}' of type string holds no string", key);
      put_string(*s);
      break;
    }
    case GgufType::ARRAY: {
      auto* items = std::get_if<std::vector<GgufValue>>(&v.v);
      if (!items) fail("GGUF writer: metadata '{}' of type array holds no items", key);
      put_u32(static_cast<uint32_t>(v.elem_type));
      put_u64(items->size());
      for (const auto& item : *items) {
        if (item.type != v.elem_type)
          fail("GGUF writer: metadata '{}': array of {} holds a {}", key, gguf_type_name(v.elem_type),
               gguf_type_name(item.type));
        put_value(item, key);
      }
      break;
    }
  }
}

void GgufWriter::pad_to_alignment() {
  static const uint8_t zeros[256] = {};
  uint64_t pad = (alignment_ - written_ % alignment_) % alignment_;
  while (pad > 0) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(pad, sizeof(zeros)));
    put(zeros, n);
    pad -= n;
  }
}

void GgufWriter::begin(const std::string& path) {
  if (file_) fail("GGUF writer: begin called twice");
  path_ = path;
  partial_path_ = path + ".partial";
  file_ = std::fopen(partial_path_.c_str(), "wb");
  if (!file_) fail("{}: cannot create: {}", partial_path_, std::strerror(errno));
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  put("GGUF", 4);
  put_u32(version_);
  put_u64(tensors_.size());
  put_u64(metadata_.size());
  for (const auto& [k, v] : metadata_) {
    put_string(k);
    put_u32(static_cast<uint32_t>(v.type));
    put_value(v, k);
  }
  for (const auto& t : tensors_) {
    put_string(t.name);
    put_u32(static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) put_u64(static_cast<uint64_t>(d));
    put_u32(static_cast<uint32_t>(t.type));
    put_u64(t.offset);
  }
  pad_to_alignment();
  data_started_ = true;
}

void GgufWriter::write_data(const void* data, size_t bytes) {
  if (!file_ || !data_started_) fail("GGUF writer: write_data before begin");
  const auto* p = static_cast<const uint8_t*>(data);
  while (bytes > 0) {
    if (current_ >= tensors_.size()) fail("{}: more tensor data written than declared", path_);
    Tensor& t = tensors_[current_];
    size_t n = std::min(bytes, t.bytes - current_done_);
    put(p, n);
    p += n;
    bytes -= n;
    current_done_ += n;
    if (current_done_ == t.bytes) {
      pad_to_alignment();
      ++current_;
      current_done_ = 0;
    }
  }
}

void GgufWriter::finish() {
  if (!file_) fail("GGUF writer: finish before begin");
  if (current_ != tensors_.size())
    fail("{}: tensor '{}' got {} of its {} bytes", path_, tensors_[current_].name, current_done_,
         tensors_[current_].bytes);
  int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) {
    int err = errno;
    std::remove(partial_path_.c_str());
    fail("{}: closing failed: {}", partial_path_, std::strerror(err));
  }
  if (std::rename(partial_path_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    std::remove(partial_path_.c_str());
    fail("{}: cannot rename to {}: {}", partial_path_, path_, std::strerror(err));
  }
}

}  // namespace seer
