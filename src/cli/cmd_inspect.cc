#include "cli/commands.h"

namespace seer::cli {

void add_inspect(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("inspect", "Print a model file's hyper-parameters, tokenizer and tensors");
  cmd->allow_extras();
  cmd->callback([&rc] { rc = not_yet_available("inspect"); });
}

}  // namespace seer::cli
