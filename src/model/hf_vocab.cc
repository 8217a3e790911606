#include "model/hf_vocab.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
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

bool is_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

// The chat template(s) as gguf-py's add_chat_template writes them: a string is the
// template; a list of {name, template} gives tokenizer.chat_template.NAME per name
// (characters other than letters and digits become '_'), their names in
// tokenizer.chat_templates, and "default" as the template.
void write_chat_templates(GgufWriter& w, const json& t) {
  if (t.is_string()) {
    w.set("tokenizer.chat_template", gguf_string(t.get<std::string>()));
    return;
  }
  if (!t.is_array()) return;
  std::vector<std::string> names;
  for (const json& choice : t) {
    if (!choice.is_object() || !choice.contains("template") || !choice["template"].is_string()) continue;
    std::string name = choice.value("name", "");
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    if (name.empty()) continue;
    const auto text = gguf_string(choice["template"].get<std::string>());
    if (name == "default") {
      w.set("tokenizer.chat_template", text);
    } else {
      w.set("tokenizer.chat_template." + name, text);
      names.push_back(name);
    }
  }
  if (!names.empty()) w.set("tokenizer.chat_templates", gguf_string_array(names));
}

// What gguf-py's SpecialVocab reads beside tokenizer.json: the BOS/EOS/padding ids
// from tokenizer_config.json, else config.json's *_token_id; whether BOS/EOS are
// added (tokenizer_config.json, else the post-processor's template); the chat
// template from tokenizer_config.json, else chat_template.jinja / .json.
void write_special(GgufWriter& w, const std::filesystem::path& dir, const json& tok,
                   const std::unordered_map<std::string, int32_t>& ids) {
  const auto config_path = dir / "tokenizer_config.json", model_config_path = dir / "config.json";
  const json cfg = is_file(config_path) ? read_json(config_path) : json::object();
  const json model_cfg = is_file(model_config_path) ? read_json(model_config_path) : json::object();
  for (const char* typ : {"bos", "eos", "pad"}) {
    const std::string gguf_key = std::string("tokenizer.ggml.") + (std::string(typ) == "pad" ? "padding" : typ) + "_token_id";
    std::optional<int64_t> id;
    if (auto text = token_text(cfg, (std::string(typ) + "_token").c_str()))
      if (auto it = ids.find(*text); it != ids.end()) id = it->second;
    const std::string id_key = std::string(typ) + "_token_id";
    if (!id && model_cfg.contains(id_key) && model_cfg[id_key].is_number_integer()) id = model_cfg[id_key].get<int64_t>();
    if (id && *id >= 0) w.set(gguf_key, gguf_u32(static_cast<uint32_t>(*id)));
  }
  const json& post = tok.value("post_processor", json());
  json single = post.is_object() && post.value("type", "") == "TemplateProcessing" ? post.value("single", json()) : json();
  const bool template_adds_bos = single.is_array() && single.size() > 1 && single.front().contains("SpecialToken");
  const bool template_adds_eos = single.is_array() && single.size() > 1 && single.back().contains("SpecialToken");
  for (auto [key, from_template] : {std::pair{"add_bos_token", template_adds_bos}, {"add_eos_token", template_adds_eos}}) {
    if (cfg.contains(key) && cfg[key].is_boolean()) {
      w.set(std::string("tokenizer.ggml.") + key, gguf_bool(cfg[key].get<bool>()));
    } else if (from_template) {
      w.set(std::string("tokenizer.ggml.") + key, gguf_bool(true));
    }
  }
  if (cfg.contains("chat_template")) {
    write_chat_templates(w, cfg["chat_template"]);
  } else if (is_file(dir / "chat_template.jinja")) {
    std::ifstream in(dir / "chat_template.jinja", std::ios::binary);
    write_chat_templates(w, std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  } else if (is_file(dir / "chat_template.json")) {
    write_chat_templates(w, read_json(dir / "chat_template.json").value("chat_template", json()));
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
    auto& slot = tokens[static_cast<size_t>(id)];
    if (auto old = ids.find(slot); old != ids.end() && old->second == id) ids.erase(old);
    slot = text;
    types[static_cast<size_t>(id)] = t;
    ids[text] = static_cast<int32_t>(id);
  };
  for (const auto& [text, id] : model.at("vocab").items()) put(id.get<int64_t>(), text, kNormal);
  const std::unordered_map<std::string, int32_t> vocab_ids = ids;
  for (const json& a : tok.value("added_tokens", json::array())) {
    const std::string text = a.at("content").get<std::string>();
    // An added token the vocabulary already has keeps the vocabulary's id, as the
    // tokenizers library does.
    const auto known = vocab_ids.find(text);
    const int64_t id = known != vocab_ids.end() ? known->second : a.at("id").get<int64_t>();
    if (a.value("special", false) || looks_special(text)) {
      put(id, text, kControl);
    } else {
      std::string spaced = text;  // llama.cpp expects user-defined tokens pre-normalized
      for (size_t p; (p = spaced.find("\u2581")) != std::string::npos;) spaced.replace(p, 3, " ");
      put(id, spaced, kUserDefined);
    }
  }
  if (tokens.empty()) fail("{}: the vocabulary is empty", src);

  if (!model.contains("merges") || !model["merges"].is_array() || model["merges"].empty())
    fail("{}: the BPE model has no merges (a merges.txt beside it is not read)", src);
  std::vector<std::string> merges;
  for (const json& m : model["merges"]) {
    if (m.is_string()) {
      merges.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2) {
      // As gguf-py: a space inside a piece becomes U+0120, the byte-level space.
      auto piece = [](std::string p) {
        for (size_t at; (at = p.find(' ')) != std::string::npos;) p.replace(at, 1, "\u0120");
        return p;
      };
      merges.push_back(piece(m[0].get<std::string>()) + " " + piece(m[1].get<std::string>()));
    } else {
      fail("{}: a merge that is neither \"a b\" nor [\"a\", \"b\"]", src);
    }
  }

  w.set("tokenizer.ggml.model", gguf_string("gpt2"));
  w.set("tokenizer.ggml.pre", gguf_string(opt.pre));
  w.set("tokenizer.ggml.tokens", gguf_string_array(tokens));
  w.set("tokenizer.ggml.token_type", gguf_i32_array(types));
  w.set("tokenizer.ggml.merges", gguf_string_array(merges));
  write_special(w, path.parent_path(), tok, ids);
  return static_cast<int>(tokens.size());
}

}  // namespace

int write_hf_vocab(GgufWriter& w, const HfVocabOptions& opt) {
  const json tok = read_json(opt.tokenizer_json);
  try {
    return write_vocab(w, opt, tok);
  } catch (const json::exception& e) {  // a field of another type than the format's
    fail("{} (or the tokenizer_config.json / config.json beside it): unexpected content: {}", opt.tokenizer_json,
         e.what());
  }
}

}  // namespace seer
