// seer cpu: the CPU this process runs on, what the kernels were built for, and the
// kernel levels it can run (kernels/kernel_level.h). scripts/test.sh prints it after
// the tests, and the benchmarks' result files record it.
#include <nlohmann/json.hpp>

#include <cstdio>

#include "cli/commands.h"
#include "kernels/kernel_level.h"

namespace seer::cli {

void add_cpu(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("cpu", "The CPU, the build's -march and the kernel levels this machine runs");
  static bool json = false;
  cmd->add_flag("--json", json, "One JSON object instead of the table");
  cmd->callback([&rc] {
    const CpuSummary s = cpu_summary();
    if (json) {
      nlohmann::json levels = nlohmann::json::array();
      for (QIsa isa : kAllQIsas) {
        nlohmann::json l{{"level", qisa_name(isa)}, {"available", kernel_level_available(isa)}};
        if (!kernel_level_available(isa)) l["reason"] = kernel_level_unavailable_reason(isa);
        levels.push_back(l);
      }
      nlohmann::json j{{"model", s.model},        {"threads", s.threads},    {"features", s.features},
                       {"build_march", s.build_march}, {"kernel_level", s.level}, {"levels", levels}};
      if (!s.level_cap.empty()) j["kernel_level_cap"] = s.level_cap;
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("cpu           %s (%d threads)\n", s.model.c_str(), s.threads);
      std::string features;
      for (const auto& f : s.features) features += (features.empty() ? "" : " ") + f;
      std::printf("features      %s\n", features.c_str());
      std::printf("build         -march=%s\n", s.build_march.c_str());
      std::printf("kernel level  %s%s\n", s.level.c_str(),
                  s.level_cap.empty() ? "" : (" (SEER_KERNEL_LEVEL=" + s.level_cap + ")").c_str());
      for (QIsa isa : kAllQIsas) {
        const bool ok = kernel_level_available(isa);
        std::printf("  %-8s    %s\n", qisa_name(isa),
                    ok ? "runs here" : ("not run: " + kernel_level_unavailable_reason(isa)).c_str());
      }
    }
    rc = 0;
  });
}

}  // namespace seer::cli
