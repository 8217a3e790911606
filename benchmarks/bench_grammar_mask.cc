// bench_grammar_mask: the per-step cost of constrained decoding (the token mask, its
// application to the logits and the grammar advance by the sampled token), in µs of
// thread CPU time per request per step, for a typical JSON schema at a 32k and a ~150k vocabulary, batch 1
// and 32 (requests stepped one after another on one thread, as the executor samples).
//   cold: a fresh CompiledGrammar, so every new grammar state walks the vocabulary trie;
//   warm: the same grammar text again (the server's GrammarCache shares it across
//         requests), so the states met before are cache hits.
// Vocabularies (../shared/data/tokenizer-tests): 32k = llama-spm; ~150k = the union
// of the deepseek-llm, gpt-2 and falcon vocabularies' distinct token byte strings
// (no ~150k vocabulary file is in the shared data).
// Usage: bench_grammar_mask [--data DIR] [--steps N] [--json]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/gbnf_parser.h"
#include "grammar/json_schema_to_gbnf.h"
#include "grammar/token_mask.h"
#include "model/gguf_file.h"
#include "sampling/rng.h"
#include "tokenizer/tokenizer.h"
#include "typical_schema.h"

namespace seer {
namespace {

using bench::kDocuments;
using bench::kSchema;

using Clock = std::chrono::steady_clock;

// This thread's CPU time: on a shared machine, wall time inside a 10 µs region mostly
// measures the other processes that preempt it.
double thread_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

struct Vocabulary {
  std::string name;
  std::vector<std::string> bytes;
  std::vector<int32_t> eog;
};

std::unique_ptr<Tokenizer> load(const std::string& dir, const std::string& name) {
  return tokenizer_from_gguf(*GgufFile::open(dir + "/tokenizer-tests/ggml-vocab-" + name + ".gguf"));
}

Vocabulary from_tokenizer(const Tokenizer& t, const std::string& name) {
  Vocabulary v{name, {}, t.end_of_generation_ids()};
  for (int32_t id = 0; id < t.vocab_size(); ++id) v.bytes.push_back(t.token_bytes(id));
  return v;
}

Vocabulary union_vocabulary(const std::string& dir) {
  Vocabulary v{"union (deepseek-llm + gpt-2 + falcon)", {""}, {0}};  // id 0: end of generation
  std::set<std::string> seen;
  for (const char* n : {"deepseek-llm", "gpt-2", "falcon"}) {
    auto t = load(dir, n);
    for (int32_t id = 0; id < t->vocab_size(); ++id) {
      std::string b = t->token_bytes(id);
      if (!b.empty() && seen.insert(b).second) v.bytes.push_back(std::move(b));
    }
  }
  return v;
}

struct Result {
  std::string vocab;
  int vocab_size;
  int batch;
  const char* phase;
  double us_per_request_step;
  double mask_us;     // of which the mask (cache lookup or trie walk): overlappable with the forward pass
  double apply_us;    // its application to the logits
  double advance_us;  // the advance by the sampled token
  double p99_us;
  double max_us;
  size_t cached_states;
  int documents;  // requests that reached the end of their JSON
};

std::vector<int32_t> tokenize(const grammar::TokenTrie& trie, const std::string& text) {
  std::vector<int32_t> out;
  const auto& nodes = trie.nodes();
  for (size_t pos = 0; pos < text.size();) {
    int32_t best = -1;
    size_t best_len = 0;
    for (size_t i = 0; i < nodes.size();) {  // walk down the path of text[pos..]
      const auto& n = nodes[i];
      const size_t d = n.depth;
      if (pos + d - 1 >= text.size() || n.byte != static_cast<uint8_t>(text[pos + d - 1])) {
        i = n.subtree_end;
        continue;
      }
      if (n.tokens_begin < n.tokens_end) best = trie.tokens()[n.tokens_begin], best_len = d;
      ++i;
    }
    if (best < 0) throw std::runtime_error("the vocabulary cannot spell the document");
    out.push_back(best);
    pos += best_len;
  }
  return out;
}

// Steps `batch` constrained requests for `steps` steps, each replaying a document
// (then the end-of-generation token, then the next document); the logits are random.
// Times the grammar work only (apply + accept), not the drawing of the logits.
Result run(const Vocabulary& v, const std::shared_ptr<const grammar::CompiledGrammar>& g, int batch, int steps,
           const char* phase) {
  std::vector<std::vector<int32_t>> docs;
  for (const char* d : kDocuments) docs.push_back(tokenize(g->trie(), d));
  std::vector<std::unique_ptr<grammar::GrammarConstraint>> reqs;
  std::vector<size_t> doc_of(batch), pos_of(batch, 0);
  for (int b = 0; b < batch; ++b) {
    reqs.push_back(std::make_unique<grammar::GrammarConstraint>(g));
    doc_of[b] = static_cast<size_t>(b) % docs.size();
  }
  std::vector<float> logits(v.bytes.size());
  Rng rng(std::strcmp(phase, "warm") == 0 ? 1000 + batch : 42 + batch);  // warm: other documents
  std::vector<double> samples;
  double mask_sum = 0, apply_sum = 0, advance_sum = 0;
  samples.reserve(static_cast<size_t>(steps) * batch);
  int documents = 0;
  for (int s = 0; s < steps; ++s)
    for (int b = 0; b < batch; ++b) {
      for (float& l : logits) l = static_cast<float>(rng.uniform());
      const double t0 = thread_cpu_us();
      (void)reqs[b]->mask();
      const double tm = thread_cpu_us();
      reqs[b]->apply(logits);
      const double t1 = thread_cpu_us();
      const std::vector<int32_t>& doc = docs[doc_of[b]];
      const int32_t tok = pos_of[b] < doc.size() ? doc[pos_of[b]++] : v.eog[0];
      const double t2 = thread_cpu_us();
      const bool ok = reqs[b]->accept(tok);
      const double t3 = thread_cpu_us();
      samples.push_back((t1 - t0) + (t3 - t2));
      mask_sum += tm - t0;
      apply_sum += t1 - tm;
      advance_sum += t3 - t2;
      if (!ok) std::fprintf(stderr, "bench_grammar_mask: token %d refused (bug)\n", tok);
      if (std::find(v.eog.begin(), v.eog.end(), tok) != v.eog.end()) {
        ++documents;
        reqs[b] = std::make_unique<grammar::GrammarConstraint>(g);
        doc_of[b] = (doc_of[b] + 1) % docs.size();
        pos_of[b] = 0;
      }
    }
  double sum = 0;
  for (double x : samples) sum += x;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  return {v.name, static_cast<int>(v.bytes.size()), batch, phase, sum / n, mask_sum / n, apply_sum / n, advance_sum / n,
          samples[samples.size() * 99 / 100], samples.back(), g->cache_size(), documents};
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  using namespace seer;
  std::string dir = std::string(SEER_SOURCE_DIR_FOR_BENCH) + "/../shared/data";
  int steps = 400;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--data") && i + 1 < argc) dir = argv[++i];
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else {
      std::fprintf(stderr, "usage: bench_grammar_mask [--data DIR] [--steps N] [--json]\n");
      return 2;
    }
  }
  try {
    std::vector<Vocabulary> vocabs;
    vocabs.push_back(from_tokenizer(*load(dir, "llama-spm"), "llama-spm"));
    vocabs.push_back(union_vocabulary(dir));
    const std::string gbnf = grammar::json_schema_to_gbnf(nlohmann::ordered_json::parse(kSchema), grammar::JsonWhitespace::Flexible);  // the documents are indented
    FILE* table = json ? stderr : stdout;
    std::fprintf(table, "%-40s %7s %5s %5s %12s %8s %8s %8s %10s %10s %8s %5s\n", "vocabulary", "tokens", "batch",
                 "phase", "us/req/step", "mask", "apply", "advance", "p99 us", "max us", "states", "docs");
    for (const Vocabulary& v : vocabs) {
      const auto t0 = Clock::now();
      auto trie = std::make_shared<const grammar::TokenTrie>(v.bytes, v.eog);
      const double trie_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      std::fprintf(table, "# %s: %zu tokens, trie of %zu nodes built in %.1f ms\n", v.name.c_str(), v.bytes.size(),
                   trie->nodes().size(), trie_ms);
      for (int batch : {1, 32}) {
        auto g = std::make_shared<const grammar::CompiledGrammar>(grammar::parse_gbnf(gbnf), trie, gbnf);
        for (const char* phase : {"cold", "warm"}) {
          Result r = run(v, g, batch, steps, phase);
          std::fprintf(table, "%-40s %7d %5d %5s %12.1f %8.1f %8.1f %8.1f %10.1f %10.1f %8zu %5d\n", r.vocab.c_str(),
                       r.vocab_size, r.batch, r.phase, r.us_per_request_step, r.mask_us, r.apply_us, r.advance_us,
                       r.p99_us, r.max_us, r.cached_states, r.documents);
          if (json)
            std::printf("%s\n", nlohmann::json{{"vocab", r.vocab}, {"tokens", r.vocab_size}, {"batch", r.batch},
                                               {"phase", r.phase}, {"us_per_request_step", r.us_per_request_step},
                                               {"mask_us", r.mask_us}, {"apply_us", r.apply_us}, {"advance_us", r.advance_us},
                                               {"p99_us", r.p99_us}, {"max_us", r.max_us}, {"cached_states", r.cached_states},
                                               {"documents", r.documents}}
                                    .dump()
                                    .c_str());
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_grammar_mask: %s\n", e.what());
    return 1;
  }
  return 0;
}
