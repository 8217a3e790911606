#include "cli/commands.h"

namespace seer::cli {

void add_trace(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("trace", "Write a request trace (JSONL) from a generator or dataset");
  cmd->allow_extras();
  cmd->callback([&rc] { rc = not_yet_available("trace"); });
}

}  // namespace seer::cli
