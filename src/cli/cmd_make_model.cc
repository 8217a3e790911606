#include "cli/commands.h"

namespace seer::cli {

void add_make_model(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("make-model", "Write a GGUF model with random weights for a named shape");
  cmd->allow_extras();
  cmd->callback([&rc] { rc = not_yet_available("make-model"); });
}

}  // namespace seer::cli
