#include "common/builtin_model.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "common/error.h"

namespace seer {

namespace fs = std::filesystem;

namespace {

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

}  // namespace

std::vector<std::string> builtin_model_candidates() {
  const fs::path dir = executable_dir();
  return {(dir / "models" / kBuiltinModelFile).string(),
          (dir.parent_path() / "share" / "seer" / "models" / kBuiltinModelFile).lexically_normal().string()};
}

std::optional<std::string> builtin_model_path() {
  for (const std::string& p : builtin_model_candidates()) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

std::string model_or_builtin(const std::string& given, const char* command) {
  if (!given.empty()) return given;
  if (auto p = builtin_model_path()) {
    std::fprintf(stderr, "%s: no --model given; using the built-in model %s (stories260K, a tiny story model)\n",
                 command, p->c_str());
    return *p;
  }
  std::string where;
  for (const std::string& c : builtin_model_candidates()) where += (where.empty() ? "" : ", ") + c;
  fail("no --model given and the built-in model is missing (looked in {}): pass --model FILE.gguf", where);
}

}  // namespace seer
