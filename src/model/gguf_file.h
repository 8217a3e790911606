#pragma once
// Reader for GGUF v2/v3 files: header, metadata (all value types, nested arrays),
// tensor infos and tensor data through mmap. Every count and offset read from the
// file is checked against the bytes that remain before anything is allocated, so a
// corrupt or truncated file gives a seer::Error naming the file, the byte offset and
// what was expected.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/ggml_types.h"
#include "model/gguf_value.h"
#include "model/mapped_file.h"

namespace seer {

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> shape;  // GGML order: shape[0] is the contiguous (row) dimension
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;  // relative to the start of the data section
  size_t bytes = 0;
  const uint8_t* data = nullptr;  // into the mapping
  int64_t elements() const;
};

class GgufFile {
 public:
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Parses an in-memory buffer (used by the fuzzer); `name` labels error messages.
  static std::unique_ptr<GgufFile> parse(const uint8_t* data, size_t size, const std::string& name);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  size_t data_offset() const { return data_offset_; }
  size_t file_size() const { return size_; }

  const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // Typed getters: throw seer::Error when the key is missing or has the wrong type.
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  const std::vector<GgufValue>& get_array(std::string_view key) const;
  std::optional<int64_t> find_int(std::string_view key) const;
  std::optional<double> find_float(std::string_view key) const;
  std::optional<std::string> find_string(std::string_view key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;

 private:
  GgufFile() = default;
  void parse_all();

  std::string path_;
  std::unique_ptr<MappedFile> mapping_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  size_t data_offset_ = 0;
  std::map<std::string, GgufValue> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace seer
