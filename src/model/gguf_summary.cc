#include "model/gguf_summary.h"

#include "model/gguf_file.h"

namespace seer {

int64_t token_id_or_none(int64_t id) { return id < 0 || id == 0xFFFFFFFF ? -1 : id; }

TokenizerSummary summarize_tokenizer(const GgufFile& f) {
  TokenizerSummary s;
  s.model = f.find_string("tokenizer.ggml.model").value_or("");
  s.pre = f.find_string("tokenizer.ggml.pre").value_or("");
  const std::vector<GgufValue>* tokens = nullptr;
  if (const GgufValue* v = f.find("tokenizer.ggml.tokens")) {
    tokens = &v->as_array("tokenizer.ggml.tokens");
    s.vocab_size = static_cast<int64_t>(tokens->size());
  }
  if (const GgufValue* v = f.find("tokenizer.ggml.merges"))
    s.merges = static_cast<int64_t>(v->as_array("tokenizer.ggml.merges").size());
  auto id = [&](const char* key) { return token_id_or_none(f.find_int(key).value_or(-1)); };
  s.bos_id = id("tokenizer.ggml.bos_token_id");
  s.eos_id = id("tokenizer.ggml.eos_token_id");
  s.unk_id = id("tokenizer.ggml.unknown_token_id");
  s.pad_id = id("tokenizer.ggml.padding_token_id");
  auto text = [&](int64_t i) -> std::string {
    if (!tokens || i < 0 || i >= s.vocab_size || !(*tokens)[static_cast<size_t>(i)].is_string()) return "";
    return (*tokens)[static_cast<size_t>(i)].as_string("tokenizer.ggml.tokens");
  };
  s.bos_text = text(s.bos_id);
  s.eos_text = text(s.eos_id);
  if (const GgufValue* v = f.find("tokenizer.ggml.add_bos_token")) s.add_bos = v->as_bool("tokenizer.ggml.add_bos_token");
  if (const GgufValue* v = f.find("tokenizer.ggml.add_eos_token")) s.add_eos = v->as_bool("tokenizer.ggml.add_eos_token");
  if (auto tmpl = f.find_string("tokenizer.chat_template")) {
    size_t start = tmpl->find_first_not_of(" \t\r\n");
    if (start != std::string::npos) {
      size_t end = tmpl->find('\n', start);
      s.chat_template_first_line = tmpl->substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
    s.chat_template_lines = 1;
    for (char c : *tmpl) s.chat_template_lines += c == '\n';
  }
  return s;
}

}  // namespace seer
