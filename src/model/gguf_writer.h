#pragma once
// Writer for GGUF v3 (or v2) files. Metadata and the tensor table are declared first;
// `begin` writes the header, metadata and tensor infos, then tensor data is streamed
// in declaration order, in chunks of any size, so a model never has to be held in
// memory whole. Offsets and padding follow the reader's rules (gguf_file.h).
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "model/ggml_types.h"
#include "model/gguf_value.h"

namespace seer {

// Convenience constructors for metadata values.
GgufValue gguf_u32(uint32_t v);
GgufValue gguf_i32(int32_t v);
GgufValue gguf_u64(uint64_t v);
GgufValue gguf_f32(float v);
GgufValue gguf_bool(bool v);
GgufValue gguf_string(std::string v);
GgufValue gguf_array(GgufType elem_type, std::vector<GgufValue> items);
GgufValue gguf_string_array(const std::vector<std::string>& items);
GgufValue gguf_f32_array(const std::vector<float>& items);
GgufValue gguf_i32_array(const std::vector<int32_t>& items);

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3, uint64_t alignment = 32);
  ~GgufWriter();
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  // Sets (or replaces) a metadata entry; entries are written in first-set order.
  // A non-default alignment is recorded as general.alignment automatically.
  void set(const std::string& key, GgufValue value);
  bool has(std::string_view key) const;
  // Declares a tensor; shape in GGML order (shape[0] contiguous). Returns its byte size.
  size_t add_tensor(const std::string& name, std::vector<int64_t> shape, GgmlType type);

  // Opens `path` and writes everything before the tensor data. The file is written
  // as `path`.partial and renamed by finish(), so a failed write leaves no broken model.
  void begin(const std::string& path);
  // Appends bytes of the current tensor (the first declared one not yet complete).
  void write_data(const void* data, size_t bytes);
  // Checks every tensor got exactly its bytes, flushes and closes the file.
  void finish();

  size_t tensor_count() const { return tensors_.size(); }
  // Total file size once finished (valid after every tensor is declared).
  uint64_t file_size() const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    GgmlType type;
    uint64_t offset;  // within the data section
    size_t bytes;
  };
  void put(const void* p, size_t n);
  void put_u32(uint32_t v) { put(&v, 4); }
  void put_u64(uint64_t v) { put(&v, 8); }
  void put_string(std::string_view s);
  void put_value(const GgufValue& v, const std::string& key);
  void pad_to_alignment();
  uint64_t header_bytes() const;

  uint32_t version_;
  uint64_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
  uint64_t data_bytes_ = 0;  // data section size, padded per tensor

  std::string path_, partial_path_;
  std::FILE* file_ = nullptr;
  uint64_t written_ = 0;  // bytes written to the file so far
  size_t current_ = 0;    // tensor receiving data
  size_t current_done_ = 0;
  bool data_started_ = false;
};

}  // namespace seer
