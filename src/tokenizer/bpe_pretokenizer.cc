#include "tokenizer/bpe_pretokenizer.h"

#include <map>

#include "common/error.h"

namespace seer {

namespace {

// Regexes as in llama.cpp's llm_tokenizer_bpe (which took them from each model's
// tokenizer.json, rewriting case-insensitive groups as explicit classes).
const char* const kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
const char* const kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kCjk = "[一-龥ࠀ-一가-퟿]+";
const char* const kPoro = R"( ?[^(\s|.,!?…。，、।۔،)]+)";

std::vector<std::string> regexes_for(const std::string& type) {
  if (type == "default")
    return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  if (type == "llama3" || type == "dbrx" || type == "chatglm4") return {kLlama3};
  if (type == "deepseek-llm")
    return {
        "[\r\n]",
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        kCjk,
        "\\p{N}+",
    };
  if (type == "deepseek-v3")
    return {
        R"(\p{N}{1,3})",
        "[一-龥぀-ゟ゠-ヿ]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
        "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    };
  if (type == "deepseek-coder") return {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"};
  if (type == "falcon") return {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"};
  if (type == "starcoder") return {R"(\p{N})", kGpt2};
  if (type == "gpt2") return {kGpt2};
  if (type == "qwen2") return {kQwen2};
  if (type == "poro") return {kPoro};
  if (type == "viking") return {kPoro, R"(\p{N})"};
  if (type == "tekken")
    return {
        R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
  if (type == "chameleon")
    return {
        "<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", R"(\p{N})",
        R"([\p{P}!-/:-@\[-`{-~])", kGpt2,
    };
  fail("internal: no regexes for pre-tokenizer type '{}'", type);
}

struct Alias {
  const char* type;
  bool ignore_merges = false;
  bool add_bos = false;
};

// tokenizer.ggml.pre value -> llama.cpp pre-tokenizer type.
const std::map<std::string, Alias>& aliases() {
  static const std::map<std::string, Alias> m = {
      {"", {"default"}},
      {"default", {"default"}},
      {"llama3", {"llama3", true, true}},
      {"llama-v3", {"llama3", true, true}},
      {"llama-bpe", {"llama3", true, true}},
      {"falcon3", {"llama3", true, true}},
      {"dbrx", {"dbrx"}},
      {"smaug-bpe", {"dbrx"}},
      {"deepseek-llm", {"deepseek-llm"}},
      {"deepseek-coder", {"deepseek-coder"}},
      {"deepseek-v3", {"deepseek-v3"}},
      {"falcon", {"falcon"}},
      {"mpt", {"gpt2"}},
      {"olmo", {"gpt2"}},
      {"jais", {"gpt2"}},
      {"gpt-2", {"gpt2"}},
      {"phi-2", {"gpt2"}},
      {"jina-es", {"gpt2"}},
      {"jina-de", {"gpt2"}},
      {"gigachat", {"gpt2"}},
      {"jina-v1-en", {"gpt2"}},
      {"jina-v2-es", {"gpt2"}},
      {"jina-v2-de", {"gpt2"}},
      {"jina-v2-code", {"gpt2"}},
      {"roberta-bpe", {"gpt2"}},
      {"starcoder", {"starcoder"}},
      {"refact", {"starcoder"}},
      {"command-r", {"starcoder"}},
      {"smollm", {"starcoder"}},
      {"codeshell", {"starcoder"}},
      {"exaone", {"starcoder"}},
      {"minerva-7b", {"starcoder"}},
      {"qwen2", {"qwen2"}},
      {"deepseek-r1-qwen", {"qwen2"}},
      {"stablelm2", {"qwen2"}},
      {"megrez", {"qwen2"}},
      {"poro-chat", {"poro"}},
      {"bloom", {"poro"}},
      {"gpt3-finnish", {"poro"}},
      {"chatglm-bpe", {"chatglm4"}},
      {"viking", {"viking"}},
      {"tekken", {"tekken", true, true}},
      {"chameleon", {"chameleon", false, true}},
  };
  return m;
}

// Unicode White_Space, which is what llama.cpp's unicode tables call whitespace.
constexpr const char* kWhiteSpaceSet = R"(\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

}  // namespace

PreTokenizerSpec pretokenizer_spec(const std::string& pre) {
  const auto& m = aliases();
  auto it = m.find(pre);
  if (it == m.end()) fail("unsupported BPE pre-tokenizer type '{}' (tokenizer.ggml.pre)", pre);
  PreTokenizerSpec spec;
  spec.name = it->second.type;
  spec.regexes = regexes_for(spec.name);
  spec.ignore_merges = it->second.ignore_merges;
  spec.add_bos = it->second.add_bos;
  return spec;
}

std::vector<std::string> known_pretokenizers() {
  std::vector<std::string> out;
  for (const auto& [k, v] : aliases())
    if (!k.empty()) out.push_back(k);
  return out;
}

std::string with_unicode_whitespace(const std::string& p) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      ++i;
      if (e == 's') {
        out += in_class ? std::string(kWhiteSpaceSet) : std::string("[") + kWhiteSpaceSet + "]";
      } else if (e == 'S') {
        if (in_class) fail("regex /{}/: \\S inside a character class is not supported", p);
        out += std::string("[^") + kWhiteSpaceSet + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      // a ']' right after '[' or '[^' is a literal
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

BpePreTokenizer::BpePreTokenizer(const PreTokenizerSpec& spec) {
  for (const auto& re : spec.regexes) regexes_.push_back(std::make_unique<Pcre2Regex>(with_unicode_whitespace(re)));
}

std::vector<std::string> BpePreTokenizer::split(std::string_view text) const {
  struct Piece {
    size_t begin, length;
  };
  std::vector<Piece> pieces;
  if (!text.empty()) pieces.push_back({0, text.size()});
  std::vector<Piece> next;
  for (const auto& re : regexes_) {
    next.clear();
    for (const Piece& p : pieces) {
      size_t last = 0;  // relative to the piece: lookahead and $ see only the piece, as in llama.cpp
      for (auto [b, e] : re->matches(text.substr(p.begin, p.length))) {
        if (b > last) next.push_back({p.begin + last, b - last});
        next.push_back({p.begin + b, e - b});
        last = e;
      }
      if (last < p.length) next.push_back({p.begin + last, p.length - last});
    }
    pieces.swap(next);
  }
  std::vector<std::string> words;
  words.reserve(pieces.size());
  for (const Piece& p : pieces) words.emplace_back(text.substr(p.begin, p.length));
  return words;
}

}  // namespace seer
