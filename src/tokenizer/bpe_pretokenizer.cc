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
const char* const kCjk = "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";
const char* const kPoro = R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)";

std::vector<std::string> regexes_for(const std::string& type) {
  if (type == "default")
    return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  if (type == "llama3" || type == "dbrx" || type == "chatglm4") return {kLlama3};
  if (type == "deepseek-llm")
    return {
        "[\r\n]",
        // Cased letters (Lu, Ll, Lt) of the Unicode version DeepSeek used, as code points.
        "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",

        "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
        "\\s+$",
        kCjk,
        "\\p{N}+",
    };
  if (type == "deepseek-v3")
    return {
        R"(\p{N}{1,3})",
        "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
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
    // llama.cpp's "((?=[\p{L}])([^a-z]))*" (a letter that is not a-z) written as the
    // equivalent class [^\P{L}a-z], which needs no backtracking stack on long words.
    return {
        R"([^\r\n\p{L}\p{N}]?[^\P{L}a-z]*[^\P{L}A-Z]+|[^\r\n\p{L}\p{N}]?[^\P{L}a-z]+[^\P{L}A-Z]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
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
