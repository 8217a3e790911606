#include <gtest/gtest.h>

#include "common/error.h"
#include "tokenizer/bpe_pretokenizer.h"

namespace seer {
namespace {

using Words = std::vector<std::string>;

Words split(const std::string& pre, const std::string& text) {
  return BpePreTokenizer(pretokenizer_spec(pre)).split(text);
}

TEST(BpePreTokenizer, Gpt2SplitsWordsContractionsAndSpaces) {
  EXPECT_EQ(split("gpt-2", "Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(split("gpt-2", "I've  been"), (Words{"I", "'ve", " ", " been"}));
  EXPECT_EQ(split("gpt-2", "a   "), (Words{"a", "   "}));
  // A lone newline before a letter matches nothing and stays a piece of its own.
  EXPECT_EQ(split("gpt-2", "a\n\nb"), (Words{"a", "\n", "\n", "b"}));
  EXPECT_EQ(split("gpt-2", "x = 42!!"), (Words{"x", " =", " 42", "!!"}));
  EXPECT_TRUE(split("gpt-2", "").empty());
}

TEST(BpePreTokenizer, Llama3GroupsDigitsByThreeAndIgnoresCase) {
  EXPECT_EQ(split("llama-bpe", "12345"), (Words{"123", "45"}));
  EXPECT_EQ(split("llama-bpe", "I'VE"), (Words{"I", "'VE"}));
  EXPECT_EQ(split("llama-bpe", "hi\n\n  there"), (Words{"hi", "\n\n", " ", " there"}));
  const auto spec = pretokenizer_spec("llama-bpe");
  EXPECT_EQ(spec.name, "llama3");
  EXPECT_TRUE(spec.ignore_merges);
  EXPECT_TRUE(spec.add_bos);
}

TEST(BpePreTokenizer, Qwen2SplitsSingleDigits) { EXPECT_EQ(split("qwen2", "x 123"), (Words{"x", " ", "1", "2", "3"})); }

TEST(BpePreTokenizer, SequentialRegexesSplitEachOthersPieces) {
  // deepseek-coder: letters, then punctuation, then CJK, then single digits.
  EXPECT_EQ(split("deepseek-coder", "a1b22"), (Words{"a", "1", "b", "2", "2"}));
  EXPECT_EQ(split("deepseek-coder", "x\ny"), (Words{"x", "\n", "y"}));
  // falcon: the gpt-2 regex, then runs of three ASCII digits.
  EXPECT_EQ(split("falcon", "1234567"), (Words{"123", "456", "7"}));
  // deepseek-llm: trailing whitespace of a piece is split off by "\s+$".
  EXPECT_EQ(split("deepseek-llm", "ab  "), (Words{"ab", "  "}));
  EXPECT_EQ(split("deepseek-llm", "你好abc"), (Words{"你好", "abc"}));
}

TEST(BpePreTokenizer, DollarMatchesOnlyAtTheVeryEnd) {
  Pcre2Regex re("a$");
  EXPECT_TRUE(re.matches("a\n").empty());  // PCRE2 alone would match before the final newline
  EXPECT_EQ(re.matches("ba").size(), 1u);
}

TEST(BpePreTokenizer, WhitespaceIsUnicodeWhiteSpace) {
  // U+180E is whitespace to PCRE2 but not to Unicode's White_Space (nor llama.cpp).
  EXPECT_EQ(split("gpt-2", "a\u180E\u180Eb"), (Words{"a", "\u180E\u180E", "b"}));
  // U+3000 (ideographic space) is whitespace.
  EXPECT_EQ(split("gpt-2", "a\u3000\u3000b"), (Words{"a", "\u3000", "\u3000", "b"}));
  EXPECT_EQ(with_unicode_whitespace(R"([^\s\p{L}])"),
            R"([^\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\p{L}])");
}

TEST(BpePreTokenizer, UnicodeLettersAndNumbers) {
  EXPECT_EQ(split("gpt-2", "ied 4 ½ months"), (Words{"ied", " 4", " ½", " months"}));
  EXPECT_EQ(split("gpt-2", "Führer"), (Words{"Führer"}));
}

TEST(BpePreTokenizer, EveryKnownTypeCompilesAndCoversTheText) {
  const std::string text = "Hello, y'all! 3.14 \t\n 你好 Привет 🙂 <sentinel:1> IMGIMGAZ ‘quoted’ ½";
  for (const auto& pre : known_pretokenizers()) {
    std::string joined;
    for (const auto& w : split(pre, text)) {
      EXPECT_FALSE(w.empty()) << pre;
      joined += w;
    }
    EXPECT_EQ(joined, text) << pre;  // splitting never drops or repeats text
  }
}

TEST(BpePreTokenizer, LongRunsDoNotExhaustTheMatcher) {
  std::string text = std::string(20000, ' ') + std::string(20000, 'a') + std::string(20000, '7') +
                     std::string(10000, '\n') + std::string(10000, '!');
  for (int i = 0; i < 5000; ++i) text += " \n";
  for (const auto& pre : known_pretokenizers()) {
    size_t total = 0;
    for (const auto& w : split(pre, text)) total += w.size();
    EXPECT_EQ(total, text.size()) << pre;
  }
}

TEST(BpePreTokenizer, TekkenClassesEqualLlamaCppLookaheads) {
  // llama.cpp's form of the tekken regex, with lookahead groups instead of classes.
  const Pcre2Regex original(with_unicode_whitespace(
      R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"));
  const Pcre2Regex rewritten(with_unicode_whitespace(pretokenizer_spec("tekken").regexes.at(0)));
  for (const std::string text : {"Hello WORLD mixedCase camelCaseWord ÉCOLE École x1y2 ' s\n\n  ok", "İstanbul ǅemal ß ΣΑΣ",
                                 "a/b\n//c", "  \t x"})
    EXPECT_EQ(original.matches(text), rewritten.matches(text)) << text;
  // A 20k-letter word overflows the JIT stack of the original; the interpreter takes over.
  const std::string word(20000, 'a');
  EXPECT_EQ(original.matches(word), rewritten.matches(word));
}

TEST(BpePreTokenizer, UnknownTypeIsRejectedByName) {
  try {
    pretokenizer_spec("no-such-pre");
    FAIL() << "expected seer::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-pre"), std::string::npos);
  }
}

TEST(BpePreTokenizer, RejectsInvalidUtf8) {
  EXPECT_THROW(split("gpt-2", "bad \xFF byte"), Error);
}

}  // namespace
}  // namespace seer
