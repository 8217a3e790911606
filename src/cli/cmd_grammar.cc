// seer grammar check: a JSON Schema (or GBNF) and JSON instances in, accept/reject per
// instance out, so a schema can be tried before it is served. With --expect the exit
// status is 1 when any instance is not as expected; with --time it measures the
// schema's compile time and, over a vocabulary, the per-token mask time along each
// instance (docs/structured-outputs.md, "Cost").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_check.h"
#include "grammar/token_mask.h"
#include "model/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace seer::cli {
namespace {

struct GrammarCheckOptions {
  std::string schema, gbnf, expect, whitespace = "compact", vocab;
  std::vector<std::string> instances;
  bool reserialize = false, time = false;
  int repeats = 20;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using Clock = std::chrono::steady_clock;
double micros_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

std::string grammar_text(const GrammarCheckOptions& o) {
  if (!o.gbnf.empty()) return read_file(o.gbnf);
  const auto ws = o.whitespace == "flexible" ? grammar::JsonWhitespace::Flexible : grammar::JsonWhitespace::Compact;
  return grammar::json_schema_to_gbnf(nlohmann::ordered_json::parse(read_file(o.schema)), ws);
}

// Mask time per token along `text`, tokenized by greedy longest match.
void time_masks(const grammar::Grammar& g, const grammar::TokenTrie& trie, const std::vector<std::string>& bytes,
                const std::string& text, std::vector<double>& out) {
  std::unordered_map<std::string, int32_t> ids;
  size_t longest = 0;
  for (size_t id = 0; id < bytes.size(); ++id)
    if (!bytes[id].empty()) ids.emplace(bytes[id], static_cast<int32_t>(id)), longest = std::max(longest, bytes[id].size());
  grammar::StackMachine m(g);
  grammar::MatchState s = m.initial();
  grammar::TokenMask mask;
  for (size_t pos = 0; pos < text.size();) {
    const auto t = Clock::now();
    grammar::compute_token_mask(m, s, trie, mask);
    out.push_back(micros_since(t));
    size_t len = std::min(longest, text.size() - pos);
    while (len > 0 && !ids.count(text.substr(pos, len))) --len;
    if (len == 0) fail("the vocabulary cannot spell the instance at byte {}", pos);
    if (!m.accept(s, text.substr(pos, len))) return;
    pos += len;
  }
}

int run_check(const GrammarCheckOptions& o) {
  if (o.schema.empty() == o.gbnf.empty()) fail("give one of --schema FILE or --gbnf FILE");
  if (!o.expect.empty() && o.expect != "accept" && o.expect != "reject") fail("--expect takes accept or reject");
  std::vector<double> compile_us;
  const auto t0 = Clock::now();
  const grammar::GrammarChecker check(grammar_text(o));
  compile_us.push_back(micros_since(t0));
  for (int i = 1; o.time && i < o.repeats; ++i) {
    const auto t = Clock::now();
    (void)grammar::GrammarChecker(grammar_text(o));
    compile_us.push_back(micros_since(t));
  }
  std::vector<std::string> texts;
  int failures = 0;
  for (const std::string& path : o.instances) {
    std::istringstream lines(read_file(path));
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      std::string text = line;
      if (o.reserialize) text = nlohmann::ordered_json::parse(line).dump();
      const bool ok = check.accepts(text);
      const bool as_expected = o.expect.empty() || ok == (o.expect == "accept");
      failures += !as_expected;
      std::printf("%s:%d: %s%s\n", path.c_str(), n, ok ? "accept" : "reject", as_expected ? "" : " (not as expected)");
      texts.push_back(text);
    }
  }
  if (o.time) {
    std::printf("compile: p50 %.0f us, p99 %.0f us over %zu compiles (%zu grammar elements)\n", percentile(compile_us, 0.5),
                percentile(compile_us, 0.99), compile_us.size(), check.grammar().elements.size());
    if (!o.vocab.empty()) {
      auto tok = tokenizer_from_gguf(*GgufFile::open(o.vocab));
      std::vector<std::string> bytes;
      for (int32_t id = 0; id < tok->vocab_size(); ++id) bytes.push_back(tok->token_bytes(id));
      const grammar::TokenTrie trie(bytes, {});
      std::vector<double> mask_us;
      for (const std::string& t : texts) time_masks(check.grammar(), trie, bytes, t, mask_us);
      std::printf("mask: p50 %.0f us, p99 %.0f us over %zu tokens (%d-token vocabulary, uncached trie walks)\n",
                  percentile(mask_us, 0.5), percentile(mask_us, 0.99), mask_us.size(), tok->vocab_size());
    }
  }
  return failures ? 1 : 0;
}

}  // namespace

void add_grammar(CLI::App& app, int& rc) {
  auto* grammar = app.add_subcommand("grammar", "Work with structured-output grammars");
  grammar->require_subcommand(1);
  auto o = std::make_shared<GrammarCheckOptions>();
  auto* check = grammar->add_subcommand(
      "check", "Compile a JSON Schema (or read a GBNF grammar) and say, per instance line, whether it accepts it");
  check->add_option("--schema", o->schema, "JSON Schema file (as in response_format.json_schema.schema)");
  check->add_option("--gbnf", o->gbnf, "GBNF grammar file (start symbol root)");
  check->add_option("instances", o->instances, "files of instances, one JSON text per line, checked as written");
  check->add_option("--expect", o->expect, "accept or reject: exit 1 when any instance is otherwise");
  check->add_option("--whitespace", o->whitespace, "compact (default, as served) or flexible")
      ->check(CLI::IsMember({"compact", "flexible"}));
  check->add_flag("--reserialize", o->reserialize, "parse each line and check its compact serialization instead");
  check->add_flag("--time", o->time, "print compile time and, with --vocab, per-token mask time (p50/p99)");
  check->add_option("--vocab", o->vocab, "a GGUF whose vocabulary the mask timing walks");
  check->add_option("--repeats", o->repeats, "compiles timed by --time")->check(CLI::Range(1, 100000));
  check->callback([o, &rc] { rc = run_check(*o); });
}

}  // namespace seer::cli
