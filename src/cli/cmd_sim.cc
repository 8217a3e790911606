#include "cli/commands.h"

namespace seer::cli {

void add_sim(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("sim", "Simulate a scheduling policy on a trace at cluster scale");
  cmd->allow_extras();
  cmd->callback([&rc] { rc = not_yet_available("sim"); });
}

}  // namespace seer::cli
