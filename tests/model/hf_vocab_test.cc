// write_hf_vocab (seer make-vocab): a small tokenizer.json and tokenizer_config.json
// written here become the GGUF metadata llama.cpp's converter would write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "model/hf_vocab.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

namespace fs = std::filesystem;

// A byte-level BPE over "a", "b" and "Ġ" (the byte-level space) with id 5 unused.
constexpr const char* kTokenizer = R"({
  "model": {"type": "BPE", "byte_fallback": false,
            "vocab": {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "Ġab": 4, "aa": 6},
            "merges": ["a b", ["Ġ", "ab"], "a a"]},
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}]},
  "added_tokens": [
    {"id": 7, "content": "<|begin|>", "special": true},
    {"id": 8, "content": "<|looks_special|>", "special": false},
    {"id": 9, "content": "<tool>", "special": false},
    {"id": 10, "content": "\u2581x", "special": false}
  ]
})";

constexpr const char* kConfig = R"({
  "bos_token": {"content": "<|begin|>"}, "eos_token": "<|looks_special|>", "add_bos_token": true,
  "chat_template": [{"name": "default", "template": "{{ messages }}"}, {"name": "tool-use", "template": "T"},
                    {"template": "nameless: skipped"}]
})";

// A fresh folder holding tokenizer.json (and tokenizer_config.json when given).
// A fresh folder holding tokenizer.json and the other files given (name -> text).
std::string write_tokenizer(const std::string& name, const std::string& json,
                            const std::vector<std::pair<std::string, std::string>>& beside = {}) {
  const fs::path dir = fs::path(testing::scratch_dir()) / name;
  fs::create_directories(dir);
  std::ofstream(dir / "tokenizer.json") << json;
  for (const auto& [file, text] : beside) std::ofstream(dir / file) << text;
  return (dir / "tokenizer.json").string();
}

std::unique_ptr<GgufFile> convert(const std::string& json_path, const std::string& pre) {
  const std::string out = fs::path(json_path).parent_path() / "vocab.gguf";
  GgufWriter w;
  write_hf_vocab(w, {json_path, pre});
  w.begin(out);
  w.finish();
  return GgufFile::open(out);
}

std::string convert_error(const std::string& json, const std::string& pre = "gpt-2") {
  try {
    convert(write_tokenizer("bad", json), pre);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HfVocab, WritesTokensTypesMergesAndConfigAsLlamaCppDoes) {
  const auto f = convert(write_tokenizer("full", kTokenizer, {{"tokenizer_config.json", kConfig}}), "gpt-2");
  EXPECT_EQ(f->get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f->get_string("tokenizer.ggml.pre"), "gpt-2");

  std::vector<std::string> tokens;
  for (const auto& t : f->get_array("tokenizer.ggml.tokens")) tokens.push_back(t.as_string("token"));
  EXPECT_EQ(tokens, (std::vector<std::string>{"a", "b", "Ġ", "ab", "Ġab", "[PAD5]", "aa", "<|begin|>",
                                              "<|looks_special|>", "<tool>", " x"}));
  std::vector<int64_t> types;
  for (const auto& t : f->get_array("tokenizer.ggml.token_type")) types.push_back(t.as_int("type"));
  // normal; the gap unused; special and special-looking added tokens control; the
  // rest user-defined, with U+2581 turned into a space.
  EXPECT_EQ(types, (std::vector<int64_t>{1, 1, 1, 1, 1, 5, 1, 3, 3, 4, 4}));
  std::vector<std::string> merges;
  for (const auto& m : f->get_array("tokenizer.ggml.merges")) merges.push_back(m.as_string("merge"));
  EXPECT_EQ(merges, (std::vector<std::string>{"a b", "Ġ ab", "a a"}));

  EXPECT_EQ(f->get_int("tokenizer.ggml.bos_token_id"), 7);
  EXPECT_EQ(f->get_int("tokenizer.ggml.eos_token_id"), 8);
  ASSERT_TRUE(f->has("tokenizer.ggml.add_bos_token"));
  EXPECT_TRUE(f->find("tokenizer.ggml.add_bos_token")->as_bool("add_bos"));
  // Named templates as gguf-py writes them: the name made alphanumeric, listed.
  EXPECT_EQ(f->get_string("tokenizer.chat_template"), "{{ messages }}");
  EXPECT_EQ(f->get_string("tokenizer.chat_template.tool_use"), "T");
  ASSERT_EQ(f->get_array("tokenizer.chat_templates").size(), 1u);
  EXPECT_EQ(f->get_array("tokenizer.chat_templates")[0].as_string("name"), "tool_use");

  const auto tok = tokenizer_from_gguf(*f);
  EXPECT_EQ(tok->encode("ab ab", false), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(tok->encode("aa<tool>", false), (std::vector<int32_t>{6, 9}));
  EXPECT_EQ(tok->encode("<|begin|>", true, true), (std::vector<int32_t>{7, 7}));
}

TEST(HfVocab, WithoutAConfigThereAreNoSpecialIdsOrTemplate) {
  const auto f = convert(write_tokenizer("bare", kTokenizer), "llama-bpe");
  EXPECT_FALSE(f->has("tokenizer.ggml.bos_token_id"));
  EXPECT_FALSE(f->has("tokenizer.chat_template"));
  EXPECT_EQ(f->get_string("tokenizer.ggml.pre"), "llama-bpe");
}

// Where tokenizer_config.json is silent: config.json's ids, the post-processor's
// template for adding BOS, chat_template.jinja.
TEST(HfVocab, FallsBackToConfigJsonThePostProcessorAndChatTemplateJinja) {
  std::string tok = kTokenizer;
  tok.insert(tok.rfind('}'), R"(, "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<|begin|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]})");
  const auto f = convert(write_tokenizer("fallbacks", tok,
                                         {{"tokenizer_config.json", R"({"bos_token": null, "eos_token": "<tool>"})"},
                                          {"config.json", R"({"bos_token_id": 7, "eos_token_id": 1})"},
                                          {"chat_template.jinja", "{{ bos_token }}jinja file"}}),
                         "gpt-2");
  EXPECT_EQ(f->get_int("tokenizer.ggml.bos_token_id"), 7);  // config.json
  EXPECT_EQ(f->get_int("tokenizer.ggml.eos_token_id"), 9);  // tokenizer_config.json wins
  ASSERT_TRUE(f->has("tokenizer.ggml.add_bos_token"));
  EXPECT_TRUE(f->find("tokenizer.ggml.add_bos_token")->as_bool("add_bos"));
  EXPECT_FALSE(f->has("tokenizer.ggml.add_eos_token"));
  EXPECT_EQ(f->get_string("tokenizer.chat_template"), "{{ bos_token }}jinja file");
}

// An added token the vocabulary has keeps the vocabulary's id (the tokenizers
// library ignores the other); pieces of [a, b] merges have their spaces as U+0120.
TEST(HfVocab, AddedTokensInTheVocabularyKeepItsIdAndMergeSpacesBecomeByteLevel) {
  const std::string tok = R"({
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"], ["a b", "b"]]},
    "pre_tokenizer": {"type": "ByteLevel"},
    "added_tokens": [{"id": 5, "content": "ab", "special": true}]})";
  const auto f = convert(write_tokenizer("duplicate", tok), "gpt-2");
  EXPECT_EQ(f->get_array("tokenizer.ggml.tokens").size(), 3u);
  EXPECT_EQ(f->get_array("tokenizer.ggml.token_type")[2].as_int("type"), 3);
  EXPECT_EQ(f->get_array("tokenizer.ggml.merges")[1].as_string("merge"), "a\u0120b b");
}

TEST(HfVocab, RefusesWhatItCannotConvertWithTheReason) {
  EXPECT_NE(convert_error(R"({"model": {"type": "Unigram", "vocab": []}})").find("a Unigram model"), std::string::npos);
  const std::string spm = R"({"model": {"type": "BPE", "byte_fallback": true, "vocab": {"a": 0}, "merges": []},
                               "pre_tokenizer": {"type": "Metaspace"}})";
  EXPECT_NE(convert_error(spm).find("SentencePiece-style BPE"), std::string::npos);
  EXPECT_NE(convert_error(kTokenizer, "").find("name the pre-tokenizer"), std::string::npos);
  EXPECT_NE(convert_error("{\"model\": ").find("not JSON"), std::string::npos);
  EXPECT_NE(convert_error(R"({"vocab": {}})").find("no \"model\" object"), std::string::npos);
  const std::string bad_merge = R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]},
                                    "pre_tokenizer": {"type": "ByteLevel"}})";
  EXPECT_NE(convert_error(bad_merge).find("neither"), std::string::npos);
  const std::string bad_id = R"({"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []},
                                 "pre_tokenizer": {"type": "ByteLevel"}})";
  EXPECT_NE(convert_error(bad_id).find("unexpected content"), std::string::npos);
  const std::string no_merges = R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "pre_tokenizer": {"type": "ByteLevel"}})";
  EXPECT_NE(convert_error(no_merges).find("has no merges"), std::string::npos);
  try {
    GgufWriter w;
    write_hf_vocab(w, {testing::scratch_dir() + "/missing/tokenizer.json", "gpt-2"});
    ADD_FAILURE() << "a missing file must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seer
