#include "cli/commands.h"

namespace seer::cli {

void add_tokenize(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids of UTF-8 text read from stdin");
  cmd->allow_extras();
  cmd->callback([&rc] { rc = not_yet_available("tokenize"); });
}

}  // namespace seer::cli
