#include "predict/predictor_file.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/error.h"

namespace seer {
namespace {

using nlohmann::json;
constexpr char kMagic[8] = {'S', 'E', 'E', 'R', 'L', 'E', 'N', 'P'};
// The tokenizer that counted the training labels; a model trained on other token
// counts would predict lengths in another unit, so loading one is refused.
constexpr const char* kLabelTokenizer = "llama-2 SentencePiece (ggml-vocab-llama-spm.gguf)";

template <typename T>
void put(std::string& out, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

json header_of(const PredictorFile& f) {
  const LengthModel& m = f.model;
  return json{{"kind", model_kind_name(m.kind)},
              {"features",
               {{"hash_bits", m.features.hash_bits},
                {"word_bigrams", m.features.word_bigrams},
                {"char_ngram", m.features.char_ngram},
                {"length_bins", m.features.length_bins}}},
              {"buckets", {{"count", m.buckets.count}, {"width", m.buckets.width}}},
              {"max_len", m.max_len},
              {"class_edges", m.class_edges},
              {"class_bucket", m.class_bucket},
              {"first_bucket_margin", m.first_bucket_margin},
              {"weights", m.weights.size()},
              {"label_tokenizer", kLabelTokenizer},
              {"notes", f.notes}};
}

class Reader {
 public:
  Reader(const std::string& path, const std::string& bytes) : path_(path), b_(bytes) {}
  template <typename T>
  T get(const char* what) {
    if (pos_ + sizeof(T) > b_.size()) fail("{}: truncated predictor file (ends inside the {})", path_, what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string_view take(size_t n, const char* what) {
    if (n > b_.size() - pos_) fail("{}: truncated predictor file (ends inside the {})", path_, what);
    std::string_view s(b_.data() + pos_, n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }
  const std::string& bytes() const { return b_; }

 private:
  const std::string& path_;
  const std::string& b_;
  size_t pos_ = 0;
};

LengthModel model_of(const json& h, const std::string& path, uint64_t& num_weights) {
  LengthModel m;
  try {
    m.kind = parse_model_kind(h.at("kind").get<std::string>(), "model kind");
    const json& f = h.at("features");
    m.features.hash_bits = f.at("hash_bits").get<int32_t>();
    m.features.word_bigrams = f.at("word_bigrams").get<bool>();
    m.features.char_ngram = f.at("char_ngram").get<int32_t>();
    m.features.length_bins = f.at("length_bins").get<bool>();
    m.buckets.count = h.at("buckets").at("count").get<int32_t>();
    m.buckets.width = h.at("buckets").at("width").get<int32_t>();
    m.max_len = h.at("max_len").get<int32_t>();
    m.class_edges = h.at("class_edges").get<std::vector<int32_t>>();
    m.class_bucket = h.at("class_bucket").get<std::vector<float>>();
    m.first_bucket_margin = h.at("first_bucket_margin").get<float>();
    num_weights = h.at("weights").get<uint64_t>();
    const std::string labels = h.at("label_tokenizer").get<std::string>();
    if (labels != kLabelTokenizer)
      fail("its lengths were counted with '{}', this seer counts '{}'; retrain it with `seer predict train`", labels,
           kLabelTokenizer);
  } catch (const json::exception& e) {
    fail("{}: bad predictor header: {}", path, e.what());
  } catch (const Error& e) {
    fail("{}: bad predictor header: {}", path, e.what());
  }
  return m;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open predictor file {}", path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

void save_predictor_file(const std::string& path, const PredictorFile& f) {
  f.model.check(path);
  std::string out(kMagic, sizeof(kMagic));
  put<uint32_t>(out, kPredictorFileVersion);
  const std::string header = header_of(f).dump();
  put<uint32_t>(out, static_cast<uint32_t>(header.size()));
  out += header;
  out.append(reinterpret_cast<const char*>(f.model.weights.data()), f.model.weights.size() * sizeof(float));
  put<uint64_t>(out, fnv1a64(out));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) fail("cannot write predictor file {}", path);
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.flush();
  if (!file) fail("error writing predictor file {}", path);
}

bool looks_like_predictor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof(kMagic)] = {};
  return in.read(magic, sizeof(magic)) && std::memcmp(magic, kMagic, sizeof(kMagic)) == 0;
}

PredictorFile load_predictor_file(const std::string& path) {
  const std::string bytes = read_all(path);
  Reader r(path, bytes);
  std::string_view magic = r.take(sizeof(kMagic), "magic");
  if (std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0)
    fail("{}: not a seer length predictor file (wrong magic; train one with `seer predict train`)", path);
  const uint32_t version = r.get<uint32_t>("version");
  if (version != kPredictorFileVersion)
    fail("{}: predictor file version {} is not supported (this seer reads version {}); retrain it", path, version,
         kPredictorFileVersion);
  const uint32_t header_len = r.get<uint32_t>("header length");
  std::string_view header_text = r.take(header_len, "header");
  json header;
  try {
    header = json::parse(header_text);
  } catch (const json::parse_error& e) {
    fail("{}: predictor header is not valid JSON: {}", path, e.what());
  }
  PredictorFile f;
  uint64_t n = 0;
  f.model = model_of(header, path, n);
  if (header.contains("notes")) f.notes = header["notes"];
  if (n > (r.bytes().size() - r.pos()) / sizeof(float)) fail("{}: truncated predictor file (ends inside the weights)", path);
  std::string_view w = r.take(n * sizeof(float), "weights");
  f.model.weights.resize(n);
  std::memcpy(f.model.weights.data(), w.data(), w.size());
  const size_t body = r.pos();
  const uint64_t sum = r.get<uint64_t>("checksum");
  if (r.pos() != r.bytes().size()) fail("{}: {} unexpected bytes after the checksum", path, r.bytes().size() - r.pos());
  if (sum != fnv1a64(std::string_view(r.bytes().data(), body)))
    fail("{}: predictor file is corrupt (checksum mismatch)", path);
  f.model.check(path);
  return f;
}

}  // namespace seer
