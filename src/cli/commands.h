#pragma once
// Each `seer` subcommand registers itself on the app; its callback stores the exit
// code in `rc`. One file per subcommand (cmd_<name>.cc).
#include <CLI/CLI.hpp>

namespace seer::cli {

void add_serve(CLI::App& app, int& rc);
void add_generate(CLI::App& app, int& rc);
void add_bench(CLI::App& app, int& rc);
void add_sim(CLI::App& app, int& rc);
void add_trace(CLI::App& app, int& rc);
void add_inspect(CLI::App& app, int& rc);
void add_tokenize(CLI::App& app, int& rc);
void add_make_model(CLI::App& app, int& rc);
void add_make_vocab(CLI::App& app, int& rc);
void add_experiment(CLI::App& app, int& rc);
void add_predict(CLI::App& app, int& rc);
void add_perplexity(CLI::App& app, int& rc);
void add_chat_template(CLI::App& app, int& rc);
void add_cpu(CLI::App& app, int& rc);
void add_grammar(CLI::App& app, int& rc);

}  // namespace seer::cli
