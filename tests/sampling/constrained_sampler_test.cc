// Property tests of constrained decoding: with random logits (what a random-weight
// model produces: an unconstrained sample is garbage) and every sampler setting,
// every output a grammar lets end parses as JSON and validates against its schema,
// and every output cut short by max_tokens is still a live prefix of the grammar.
#include <cstdio>

#include <gtest/gtest.h>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_cache.h"
#include "grammar/json_schema_to_gbnf.h"
#include "model/gguf_file.h"
#include "sampling/sampler.h"
#include "support/json_schema_check.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Deeply nested, enum-heavy, recursive, arrays with bounds, anyOf, $defs.
const char* kSchemas[] = {
    R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
        "ok": {"type": "boolean"}}, "required": ["name", "age", "ok"], "additionalProperties": false})",
    R"({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object",
        "properties": {"c": {"type": "object", "properties": {"d": {"type": "object", "properties":
        {"e": {"type": "array", "items": {"type": "number"}, "maxItems": 3}}, "required": ["e"],
        "additionalProperties": false}}, "required": ["d"], "additionalProperties": false}}, "required": ["c"],
        "additionalProperties": false}}, "required": ["b"], "additionalProperties": false}}, "required": ["a"],
        "additionalProperties": false})",
    R"({"type": "object", "properties": {
        "color": {"enum": ["red", "green", "blue", "cyan", "magenta", "yellow", "black", "white"]},
        "size": {"enum": ["S", "M", "L", "XL", 1, 2, 3, null, true]}, "mode": {"const": "strict"},
        "tags": {"type": "array", "items": {"enum": ["x", "y", "z"]}, "minItems": 1, "maxItems": 4}},
        "required": ["color", "size", "mode", "tags"], "additionalProperties": false})",
    R"({"$ref": "#/$defs/list", "$defs": {"list": {"type": "object", "properties": {"v": {"type": "integer"},
        "next": {"anyOf": [{"$ref": "#/$defs/list"}, {"type": "null"}]}}, "required": ["v", "next"],
        "additionalProperties": false}}})",
    R"({"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"},
        "label": {"type": ["string", "null"]}}, "required": ["id"], "additionalProperties": false},
        "minItems": 2, "maxItems": 5})",
    R"({"type": "object", "properties": {"x": {"anyOf": [{"type": "number"}, {"type": "boolean"},
        {"type": "array", "items": {"type": "integer"}, "maxItems": 2}]}, "opt": {"type": "string"}},
        "required": ["x"], "additionalProperties": false})",
};

std::unique_ptr<Tokenizer> stories_tokenizer() {
  return tokenizer_from_gguf(*GgufFile::open(seer::testing::source_dir() + "/models/stories260K.gguf"));
}

std::shared_ptr<grammar::GrammarCache> cache_for(const Tokenizer& tok) {
  return std::make_shared<grammar::GrammarCache>([&tok] {
    std::vector<std::string> bytes(static_cast<size_t>(tok.vocab_size()));
    for (int32_t id = 0; id < tok.vocab_size(); ++id) bytes[id] = tok.token_bytes(id);
    return std::make_shared<const grammar::TokenTrie>(bytes, tok.end_of_generation_ids());
  });
}

// A sampler setting per seed: greedy, plain, and each truncation and penalty.
SamplingParams setting(uint64_t seed) {
  SamplingParams p;
  switch (seed % 6) {
    case 0: p.temperature = 0.0f; break;
    case 1: p.temperature = 1.0f; break;
    case 2: p.temperature = 0.8f; p.top_k = 5; break;
    case 3: p.temperature = 1.3f; p.top_p = 0.9f; break;
    case 4: p.temperature = 1.0f; p.min_p = 0.05f; p.repetition_penalty = 1.3f; break;
    case 5: p.temperature = 0.9f; p.frequency_penalty = 1.0f; p.presence_penalty = 0.5f; break;
  }
  p.seed = seed;
  return p;
}

struct Outcome {
  int complete = 0, truncated = 0;
};

// Generates with random logits until an end-of-generation token or max_tokens.
Outcome run_schema(const Tokenizer& tok, grammar::GrammarCache& cache, const char* schema_text, int seeds,
                   int max_tokens) {
  const ordered_json schema = ordered_json::parse(schema_text);
  const std::string gbnf = grammar::json_schema_to_gbnf(schema);
  const grammar::Grammar g = grammar::parse_gbnf(gbnf);
  Outcome o;
  for (int seed = 0; seed < seeds; ++seed) {
    SamplingParams p = setting(static_cast<uint64_t>(seed));
    p.grammar = cache.get(gbnf);
    Sampler sampler(p, 0);
    Rng logit_rng(static_cast<uint64_t>(seed) * 7919 + 1);
    std::vector<float> logits(static_cast<size_t>(tok.vocab_size()));
    std::vector<int32_t> prompt = {1}, out;
    bool ended = false;
    while (static_cast<int>(out.size()) < max_tokens) {
      for (float& l : logits) l = static_cast<float>(logit_rng.uniform() * 8.0 - 4.0);
      const int32_t t = sampler.sample(logits, prompt, out).token;
      if (tok.is_end_of_generation(t)) {
        ended = true;
        break;
      }
      out.push_back(t);
    }
    std::string text;
    for (int32_t t : out) text += tok.token_bytes(t);
    if (ended) {
      ++o.complete;
      json v = json::parse(text, nullptr, false);
      EXPECT_FALSE(v.is_discarded()) << "seed " << seed << ": not JSON: " << text;
      if (v.is_discarded()) continue;
      const json plain = json::parse(schema_text);
      EXPECT_EQ(seer::testing::schema_violation(v, plain, plain), "") << "seed " << seed << ": " << text;
    } else {
      ++o.truncated;
      grammar::StackMachine m(g);
      grammar::MatchState s = m.initial();
      EXPECT_TRUE(m.accept(s, text)) << "seed " << seed << ": not a prefix: " << text;
    }
  }
  return o;
}

TEST(ConstrainedSampler, EveryFinishedOutputValidatesAgainstItsSchema) {
  auto tok = stories_tokenizer();
  auto cache = cache_for(*tok);
  for (size_t i = 0; i < std::size(kSchemas); ++i) {
    SCOPED_TRACE("schema " + std::to_string(i));
    Outcome o = run_schema(*tok, *cache, kSchemas[i], /*seeds=*/120, /*max_tokens=*/1500);
    // Random logits may ramble inside a string past max_tokens; most runs end.
    std::printf("schema %zu: %d complete and valid, %d cut by max_tokens (live prefixes)\n", i, o.complete, o.truncated);
    EXPECT_GE(o.complete, 110) << "truncated " << o.truncated;
  }
}

TEST(ConstrainedSampler, LlamaVocabularyJsonObject) {
  SEER_REQUIRE_SHARED_FILE(path, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  auto tok = tokenizer_from_gguf(*GgufFile::open(path));
  auto cache = cache_for(*tok);
  Outcome o = run_schema(*tok, *cache, kSchemas[2], /*seeds=*/30, /*max_tokens=*/400);
  EXPECT_GE(o.complete, 15);
}

TEST(ConstrainedSampler, GreedyPicksTheBestAllowedToken) {
  auto tok = stories_tokenizer();
  auto cache = cache_for(*tok);
  SamplingParams p;
  p.temperature = 0.0f;
  p.grammar = cache->get(R"(root ::= "{" [a-z]+ "}")");
  Sampler s(p, 0);
  std::vector<float> logits(static_cast<size_t>(tok->vocab_size()), 0.0f);
  int32_t brace = -1;  // stories260K spells '{' with its byte token
  for (int32_t t = 0; t < tok->vocab_size() && brace < 0; ++t)
    if (tok->token_bytes(t) == "{") brace = t;
  ASSERT_GE(brace, 0);
  logits[tok->eos_id()] = 100.0f;  // the model wants to stop: not allowed yet
  logits[brace] = 1.0f;
  std::vector<int32_t> out;
  EXPECT_EQ(s.sample(logits, {}, out).token, brace);
  out.push_back(brace);
  const auto c = s.candidates(logits, {}, out);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].token, tok->eos_id());
  EXPECT_EQ(tok->token_bytes(c[0].token).find_first_not_of("abcdefghijklmnopqrstuvwxyz"), std::string::npos);
}

}  // namespace
}  // namespace seer
