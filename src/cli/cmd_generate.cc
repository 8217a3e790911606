#include "cli/commands.h"

namespace seer::cli {

void add_generate(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("generate", "Generate text from a prompt on the CPU backend");
  cmd->allow_extras();
  cmd->callback([&rc] { rc = not_yet_available("generate"); });
}

}  // namespace seer::cli
