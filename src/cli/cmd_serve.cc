#include "cli/commands.h"

namespace seer::cli {

void add_serve(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API");
  cmd->allow_extras();
  cmd->callback([&rc] { rc = not_yet_available("serve"); });
}

}  // namespace seer::cli
