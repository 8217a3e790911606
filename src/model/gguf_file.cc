#include "model/gguf_file.h"

#include <cstring>
#include <limits>

#include "common/error.h"

namespace seer {
namespace {

constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;

// Bounds-checked little-endian reader over the file bytes.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const std::string& name) : data_(data), size_(size), name_(name) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  template <typename T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(std::string_view what) {
    uint64_t len = read<uint64_t>(what);
    if (len > remaining())
      fail("{}: offset {}: {} has length {} but only {} bytes remain (truncated or corrupt file)", name_,
           pos_ - 8, what, len, remaining());
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

  void need(size_t n, std::string_view what) const {
    if (n > remaining())
      fail("{}: offset {}: expected {} ({} bytes) but the file ends after {} bytes (truncated?)", name_, pos_,
           what, n, remaining());
  }

  [[noreturn]] void error(std::string_view msg) const { fail("{}: offset {}: {}", name_, pos_, msg); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& name_;
};

// Smallest encoding of one element of `t`, used to bound element counts.
size_t min_value_bytes(GgufType t) {
  switch (t) {
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
    case GgufType::FLOAT64:
    case GgufType::STRING: return 8;
    case GgufType::ARRAY: return 12;
  }
  return 1;
}

GgufValue read_value(Cursor& c, uint32_t raw_type, const std::string& key, int depth) {
  if (raw_type > static_cast<uint32_t>(GgufType::FLOAT64))
    c.error(fmt::format("metadata '{}': unknown value type {} (expected 0..12)", key, raw_type));
  GgufValue val;
  val.type = static_cast<GgufType>(raw_type);
  switch (val.type) {
    case GgufType::UINT8: val.v = uint64_t{c.read<uint8_t>(key)}; break;
    case GgufType::INT8: val.v = int64_t{c.read<int8_t>(key)}; break;
    case GgufType::UINT16: val.v = uint64_t{c.read<uint16_t>(key)}; break;
    case GgufType::INT16: val.v = int64_t{c.read<int16_t>(key)}; break;
    case GgufType::UINT32: val.v = uint64_t{c.read<uint32_t>(key)}; break;
    case GgufType::INT32: val.v = int64_t{c.read<int32_t>(key)}; break;
    case GgufType::UINT64: val.v = c.read<uint64_t>(key); break;
    case GgufType::INT64: val.v = c.read<int64_t>(key); break;
    case GgufType::FLOAT32: val.v = double{c.read<float>(key)}; break;
    case GgufType::FLOAT64: val.v = c.read<double>(key); break;
    case GgufType::BOOL: {
      uint8_t b = c.read<uint8_t>(key);
      if (b > 1) c.error(fmt::format("metadata '{}': bool value {} (expected 0 or 1)", key, b));
      val.v = uint64_t{b};
      break;
    }
    case GgufType::STRING: val.v = c.read_string(key); break;
    case GgufType::ARRAY: {
      if (depth >= kMaxArrayDepth)
        c.error(fmt::format("metadata '{}': arrays nested deeper than {}", key, kMaxArrayDepth));
      uint32_t elem = c.read<uint32_t>(key);
      uint64_t n = c.read<uint64_t>(key);
      if (elem > static_cast<uint32_t>(GgufType::FLOAT64))
        c.error(fmt::format("metadata '{}': unknown array element type {}", key, elem));
      size_t min_bytes = min_value_bytes(static_cast<GgufType>(elem));
      if (n > c.remaining() / min_bytes)
        c.error(fmt::format("metadata '{}': array of {} elements cannot fit in the {} bytes that remain", key,
                            n, c.remaining()));
      val.elem_type = static_cast<GgufType>(elem);
      std::vector<GgufValue> items;
      items.reserve(static_cast<size_t>(n));
      for (uint64_t i = 0; i < n; ++i) items.push_back(read_value(c, elem, key, depth + 1));
      val.v = std::move(items);
      break;
    }
  }
  return val;
}

}  // namespace

int64_t GgufTensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  auto mapping = std::make_unique<MappedFile>(path);
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  f->base_ = mapping->data();
  f->size_ = mapping->size();
  f->mapping_ = std::move(mapping);
  f->parse_all();
  return f;
}

std::unique_ptr<GgufFile> GgufFile::parse(const uint8_t* data, size_t size, const std::string& name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = name;
  f->base_ = data;
  f->size_ = size;
  f->parse_all();
  return f;
}

void GgufFile::parse_all() {
  Cursor c(base_, size_, path_);
  if (size_ < 4 || std::memcmp(base_, "GGUF", 4) != 0)
    fail("{}: offset 0: not a GGUF file (expected magic 'GGUF')", path_);
  c.read<uint32_t>("magic");
  version_ = c.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3)
    fail("{}: offset 4: GGUF version {} is not supported (expected 2 or 3)", path_, version_);
  uint64_t n_tensors = c.read<uint64_t>("tensor count");
  uint64_t n_kv = c.read<uint64_t>("metadata count");
  // Each metadata entry takes at least 8 (key length) + 4 (type) + 1 bytes; each tensor
  // info at least 8 + 4 + 4 + 8.
  if (n_kv > c.remaining() / 13)
    fail("{}: offset 16: metadata count {} cannot fit in a file of {} bytes", path_, n_kv, size_);
  if (n_tensors > c.remaining() / 24)
    fail("{}: offset 8: tensor count {} cannot fit in a file of {} bytes", path_, n_tensors, size_);

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.read_string("metadata key");
    uint32_t type = c.read<uint32_t>("metadata value type");
    GgufValue val = read_value(c, type, key, 0);
    if (metadata_.count(key)) fail("{}: offset {}: duplicate metadata key '{}'", path_, c.pos(), key);
    metadata_.emplace(std::move(key), std::move(val));
  }
  if (find("general.alignment")) {
    int64_t al = get_int("general.alignment");
    if (al <= 0 || al > (1 << 20) || (al & (al - 1)) != 0)
      fail("{}: metadata 'general.alignment' = {} (expected a power of two)", path_, al);
    alignment_ = static_cast<uint64_t>(al);
  }

  tensors_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = c.read_string("tensor name");
    uint32_t n_dims = c.read<uint32_t>("tensor dimension count");
    if (n_dims == 0 || n_dims > kMaxDims)
      c.error(fmt::format("tensor '{}': {} dimensions (expected 1..{})", t.name, n_dims, kMaxDims));
    int64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne = c.read<uint64_t>("tensor dimension");
      if (ne == 0 || ne > (uint64_t{1} << 40) ||
          static_cast<uint64_t>(elements) > (uint64_t{1} << 50) / ne)
        c.error(fmt::format("tensor '{}': dimension {} = {} is out of range", t.name, d, ne));
      elements *= static_cast<int64_t>(ne);
      t.shape.push_back(static_cast<int64_t>(ne));
    }
    uint32_t type = c.read<uint32_t>("tensor type");
    auto info = ggml_type_info(type);
    if (!info) c.error(fmt::format("tensor '{}': unknown tensor type {}", t.name, type));
    t.type = static_cast<GgmlType>(type);
    if (t.shape[0] % info->block_elems != 0)
      c.error(fmt::format("tensor '{}': row length {} is not a multiple of the {} block size {}", t.name,
                          t.shape[0], info->name, info->block_elems));
    t.bytes = static_cast<size_t>(elements / info->block_elems * info->block_bytes);
    t.offset = c.read<uint64_t>("tensor data offset");
    if (t.offset % alignment_ != 0)
      c.error(fmt::format("tensor '{}': data offset {} is not aligned to {}", t.name, t.offset, alignment_));
    if (tensor_index_.count(t.name)) c.error(fmt::format("duplicate tensor name '{}'", t.name));
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
  }

  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  for (auto& t : tensors_) {
    if (data_offset_ > size_ || t.offset > size_ - data_offset_ || t.bytes > size_ - data_offset_ - t.offset)
      fail("{}: tensor '{}' data [{}, {}) lies beyond the end of the file ({} bytes; truncated?)", path_, t.name,
           data_offset_ + t.offset, data_offset_ + t.offset + t.bytes, size_);
    t.data = base_ + data_offset_ + t.offset;
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = metadata_.find(std::string(key));
  return it == metadata_.end() ? nullptr : &it->second;
}

namespace {
const GgufValue& require(const GgufFile& f, std::string_view key) {
  const GgufValue* v = f.find(key);
  if (!v) fail("{}: missing metadata '{}'", f.path(), key);
  return *v;
}

// Runs a typed conversion; a type mismatch is reported with the file's name.
template <typename F>
auto in_file(const GgufFile& f, F&& convert) -> decltype(convert()) {
  try {
    return convert();
  } catch (const Error& e) {
    throw Error(f.path() + ": " + e.what());
  }
}
}  // namespace

int64_t GgufFile::get_int(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  return in_file(*this, [&] { return v.as_int(key); });
}
double GgufFile::get_float(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  return in_file(*this, [&] { return v.as_float(key); });
}
const std::string& GgufFile::get_string(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  return in_file(*this, [&]() -> const std::string& { return v.as_string(key); });
}
const std::vector<GgufValue>& GgufFile::get_array(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  return in_file(*this, [&]() -> const std::vector<GgufValue>& { return v.as_array(key); });
}

std::optional<int64_t> GgufFile::find_int(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::optional<int64_t>(in_file(*this, [&] { return v->as_int(key); })) : std::nullopt;
}
std::optional<double> GgufFile::find_float(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::optional<double>(in_file(*this, [&] { return v->as_float(key); })) : std::nullopt;
}
std::optional<std::string> GgufFile::find_string(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::optional<std::string>(in_file(*this, [&] { return v->as_string(key); })) : std::nullopt;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace seer
