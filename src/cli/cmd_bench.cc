#include "cli/commands.h"

namespace seer::cli {

void add_bench(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("bench", "Benchmark any OpenAI-compatible server with a trace or dataset");
  cmd->allow_extras();
  cmd->callback([&rc] { rc = not_yet_available("bench"); });
}

}  // namespace seer::cli
