// The layers of docs/architecture.md §2 include only what lies below them: a
// directory's `#include "dir/..."` edges must stay inside the transitive closure of
// the layer graph below (the same graph CMakeLists.txt links).
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

// Each layer and the layers it builds on directly.
const std::map<std::string, std::vector<std::string>>& layer_graph() {
  static const std::map<std::string, std::vector<std::string>> g = {
      {"common", {}},
      {"model", {"common"}},
      {"template", {"common"}},
      {"tokenizer", {"model", "template"}},
      {"kernels", {"model"}},
      {"kv", {"common"}},
      {"backend", {"kernels", "kv"}},  // kv: the block, KvOp and layer-group types only
      {"grammar", {"common"}},
      {"sampling", {"grammar"}},
      {"predict", {"tokenizer", "sampling"}},
      {"scheduler", {"kv", "sampling", "predict"}},
      {"engine", {"scheduler", "predict", "tokenizer"}},
      {"sim", {"engine"}},
      {"runtime", {"engine", "backend"}},
      {"calibration", {"runtime", "sim"}},
      {"server", {"engine", "runtime"}},
      {"bench", {"sim"}},
      {"cli", {"server", "bench", "calibration"}},
  };
  return g;
}

std::set<std::string> below(const std::string& layer) {
  std::set<std::string> seen;
  std::vector<std::string> pending{layer};
  while (!pending.empty()) {
    const std::string l = pending.back();
    pending.pop_back();
    for (const std::string& d : layer_graph().at(l))
      if (seen.insert(d).second) pending.push_back(d);
  }
  return seen;
}

TEST(Layering, EveryDirectoryIncludesOnlyTheLayersBelowIt) {
  const fs::path src = fs::path(SEER_SOURCE_DIR) / "src";
  const std::regex include_re(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
  int files = 0;
  for (const auto& dir : fs::directory_iterator(src)) {
    if (!dir.is_directory()) continue;
    const std::string layer = dir.path().filename().string();
    ASSERT_TRUE(layer_graph().count(layer)) << "src/" << layer << " is not in the layer graph: add it here and to "
                                            << "docs/architecture.md";
    const std::set<std::string> allowed = below(layer);
    for (const auto& f : fs::recursive_directory_iterator(dir.path())) {
      if (!f.is_regular_file()) continue;
      ++files;
      std::ifstream in(f.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string target = m[1];
        if (target == layer || !layer_graph().count(target)) continue;
        EXPECT_TRUE(allowed.count(target)) << fs::relative(f.path(), src).string() << ":" << n << " includes "
                                           << target << "/, a layer that is not below " << layer << "/";
      }
    }
  }
  EXPECT_GT(files, 100);
}

TEST(Layering, TheGraphHasNoCycles) {
  for (const auto& [layer, deps] : layer_graph()) EXPECT_FALSE(below(layer).count(layer)) << layer;
}

}  // namespace
