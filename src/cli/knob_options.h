#pragma once
// Binds the shared knob table (scheduler/scheduler_knobs.h) to a command: `seer
// serve` and `seer sim` (and its companions) take every shared knob from here,
// under one name, help and default each.
#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "scheduler/scheduler_knobs.h"

namespace seer::cli {

// Adds every knob of stack_knobs() but those whose flag is in `except` (a command
// that takes the knob another way, e.g. `sim sweep --policies`). The default shown
// is the value `k` holds now, so a command may start from its own (serve: --policy seer).
// `only` non-empty: those knobs alone (a command that shares a few, e.g. `seer
// generate` the speculative-decoding ones).
inline void add_knob_options(CLI::App* cmd, StackKnobs& k, const std::vector<std::string>& except = {},
                             const std::vector<std::string>& only = {}) {
  for (const Knob& knob : stack_knobs()) {
    if (std::find(except.begin(), except.end(), knob.flag) != except.end()) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), knob.flag) == only.end()) continue;
    const std::string names = knob.alias.empty() ? knob.flag : knob.flag + "," + knob.alias;
    const auto plain = [&](auto member) { cmd->add_option(names, k.*member, knob.help)->capture_default_str(); };
    std::visit([&](auto member) {
      using Value = std::remove_reference_t<decltype(k.*member)>;
      if constexpr (std::is_same_v<Value, PreemptionMode>)
        cmd->add_option_function<std::string>(
               names, [&knob, &k](const std::string& v) { set_knob(knob, k, v); }, knob.help)
            ->default_str(knob_text(knob, k));
      else if constexpr (std::is_same_v<Value, std::optional<double>>)
        cmd->add_option(names, k.*member, knob.help);
      else
        plain(member);
    }, knob.field);
  }
}

}  // namespace seer::cli
