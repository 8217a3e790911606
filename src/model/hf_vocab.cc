#include "model/hf_vocab.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "model/gguf_writer.h"

namespace seer {
namespace {

using nlohmann::json;

// GGUF token types (llama.cpp's llama_token_type).
constexpr int32_t kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5;

json read_json(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) fail("{}: cannot open", p.string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail("{}: not JSON: {}", p.string(), e.what());
  }
}

// convert_hf_to_gguf.py's does_token_look_special: added tokens some models forget
// to mark special.
bool looks_special(const std::string& t) {
  auto wrapped = [&](std::string_view open, std::string_view close) {
    return t.size() >= open.size() + close.size() && t.starts_with(open) && t.ends_with(close);
  };
  return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || wrapped("<|", "|>") ||
         wrapped("<\uFF5C", "\uFF5C>") || wrapped("<unused", ">");
}

bool has_byte_level(const json& pre) {
  if (!pre.is_object()) return false;
  if (pre.value("type", "") == "ByteLevel") return true;
  if (pre.contains("pretokenizers"))
    for (const json& p : pre["pretokenizers"])
      if (has_byte_level(p)) return true;
  return false;
}

// tokenizer_config.json names special tokens as a string or as {"content": ...}.
std::optional<std::string> token_text(const json& cfg, const char* key) {
  if (!cfg.contains(key)) return std::nullopt;
  const json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return std::nullopt;
}

void write_config(GgufWriter& w, const json& cfg, const std::unordered_map<std::string, int32_t>& ids) {
  auto set_id = [&](const char* key, const char* gguf_key) {
    if (auto t = token_text(cfg, key)) {
      auto it = ids.find(*t);
      if (it != ids.end()) w.set(gguf_key, gguf_u32(static_cast<uint32_t>(it->second)));
    }
  };
  set_id("bos_token", "tokenizer.ggml.bos_token_id");
  set_id("eos_token", "tokenizer.ggml.eos_token_id");
  set_id("pad_token", "tokenizer.ggml.padding_token_id");
  for (const char* key : {"add_bos_token", "add_eos_token"})
    if (cfg.contains(key) && cfg[key].is_boolean()) w.set(std::string("tokenizer.ggml.") + key, gguf_bool(cfg[key]));
  if (!cfg.contains("chat_template")) return;
  const json& t = cfg["chat_template"];
  if (t.is_string()) w.set("tokenizer.chat_template", gguf_string(t.get<std::string>()));
  if (t.is_array())  // [{"name": ..., "template": ...}]: "default" is the template
    for (const json& named : t) {
      const std::string name = named.value("name", "");
      const std::string text = named.value("template", "");
      w.set(name == "default" ? "tokenizer.chat_template" : "tokenizer.chat_template." + name, gguf_string(text));
    }
}

int write_vocab(GgufWriter& w, const HfVocabOptions& opt, const json& tok) {
  const std::filesystem::path path(opt.tokenizer_json);
  const std::string src = path.string();
  if (!tok.contains("model") || !tok["model"].is_object()) fail("{}: no \"model\" object", src);
  const json& model = tok["model"];
  const std::string type = model.value("type", "");
  if (type != "BPE")
    fail("{}: a {} model; only byte-level BPE vocabularies are converted (convert others with llama.cpp)", src,
         type.empty() ? "typeless" : type);
  if (model.value("byte_fallback", false) || !has_byte_level(tok.value("pre_tokenizer", json())))
    fail("{}: a SentencePiece-style BPE (byte fallback, no ByteLevel pre-tokenizer); only byte-level BPE "
         "vocabularies are converted (convert this one from tokenizer.model with llama.cpp)",
         src);
  if (opt.pre.empty()) fail("{}: name the pre-tokenizer (tokenizer.ggml.pre, e.g. llama-bpe or qwen2)", src);

  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::unordered_map<std::string, int32_t> ids;
  auto put = [&](int64_t id, const std::string& text, int32_t t) {
    if (id < 0 || id > (1 << 24)) fail("{}: token id {} out of range", src, id);
    if (static_cast<size_t>(id) >= tokens.size()) {
      for (size_t i = tokens.size(); i <= static_cast<size_t>(id); ++i)
        tokens.push_back("[PAD" + std::to_string(i) + "]");
      types.resize(tokens.size(), kUnused);
    }
    tokens[static_cast<size_t>(id)] = text;
    types[static_cast<size_t>(id)] = t;
    ids[text] = static_cast<int32_t>(id);
  };
  for (const auto& [text, id] : model.at("vocab").items()) put(id.get<int64_t>(), text, kNormal);
  for (const json& a : tok.value("added_tokens", json::array())) {
    const std::string text = a.at("content").get<std::string>();
    if (a.value("special", false) || looks_special(text)) {
      put(a.at("id").get<int64_t>(), text, kControl);
    } else {
      std::string spaced = text;  // llama.cpp expects user-defined tokens pre-normalized
      for (size_t p; (p = spaced.find("\u2581")) != std::string::npos;) spaced.replace(p, 3, " ");
      put(a.at("id").get<int64_t>(), spaced, kUserDefined);
    }
  }
  if (tokens.empty()) fail("{}: the vocabulary is empty", src);

  std::vector<std::string> merges;
  for (const json& m : model.value("merges", json::array())) {
    if (m.is_string()) {
      merges.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2) {
      merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    } else {
      fail("{}: a merge that is neither \"a b\" nor [\"a\", \"b\"]", src);
    }
  }

  w.set("tokenizer.ggml.model", gguf_string("gpt2"));
  w.set("tokenizer.ggml.pre", gguf_string(opt.pre));
  w.set("tokenizer.ggml.tokens", gguf_string_array(tokens));
  w.set("tokenizer.ggml.token_type", gguf_i32_array(types));
  w.set("tokenizer.ggml.merges", gguf_string_array(merges));
  const auto config = path.parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config)) write_config(w, read_json(config), ids);
  return static_cast<int>(tokens.size());
}

}  // namespace

int write_hf_vocab(GgufWriter& w, const HfVocabOptions& opt) {
  const json tok = read_json(opt.tokenizer_json);
  try {
    return write_vocab(w, opt, tok);
  } catch (const json::exception& e) {  // a field of another type than the format's
    fail("{}: unexpected content: {}", opt.tokenizer_json, e.what());
  }
}

}  // namespace seer
