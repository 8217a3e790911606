// seer: an LLM serving engine. `seer --help` lists the subcommands.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "common/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "seer: serves Llama-family models over an OpenAI-compatible API with iteration-level "
      "schedulers (Orca, vLLM, Sarathi-Serve; request-level static as baseline), and simulates "
      "them at cluster scale."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "seer 0.1.0");
  int rc = 0;
  seer::cli::add_serve(app, rc);
  seer::cli::add_generate(app, rc);
  seer::cli::add_bench(app, rc);
  seer::cli::add_sim(app, rc);
  seer::cli::add_trace(app, rc);
  seer::cli::add_inspect(app, rc);
  seer::cli::add_tokenize(app, rc);
  seer::cli::add_chat_template(app, rc);
  seer::cli::add_make_model(app, rc);
  seer::cli::add_make_vocab(app, rc);
  seer::cli::add_experiment(app, rc);
  seer::cli::add_predict(app, rc);
  seer::cli::add_perplexity(app, rc);
  seer::cli::add_cpu(app, rc);
  seer::cli::add_grammar(app, rc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const seer::Error& e) {
    std::fprintf(stderr, "seer: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seer: internal error: %s\n", e.what());
    return 3;
  }
  return rc;
}
