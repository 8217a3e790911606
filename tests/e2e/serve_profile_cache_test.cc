// A broken iteration-profile cache never stops `seer serve` (issue 53): for a
// truncated file, an empty one, wrongly shaped JSON and a directory in its place,
// the server warns naming the file, profiles again, serves, and (where a file can be
// renamed into place) rewrites the cache so the next start reuses it.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Broken {
  std::string name;
  std::function<void(const std::string&)> make;
};

TEST(ServeProfileCache, BrokenCacheWarnsProfilesAgainAndIsRewritten) {
  ASSERT_FALSE(tiny_model().empty());
  const char* before = std::getenv("XDG_CACHE_HOME");
  const std::string saved = before ? before : "";
  const std::vector<Broken> forms = {
      {"truncated", [](const std::string& p) { std::ofstream(p) << R"({"format": "seer-iteration-profile/1", "prof)"; }},
      {"empty", [](const std::string& p) { std::ofstream{p}; }},
      {"wrong_shape", [](const std::string& p) { std::ofstream(p) << R"({"format": "seer-iteration-profile/1", "profiles": [1, 2]})"; }},
      {"directory", [](const std::string& p) { fs::create_directories(p); }},
  };
  for (const Broken& b : forms) {
    SCOPED_TRACE(b.name);
    // The default location, as a user meets it: $XDG_CACHE_HOME/seer/iteration-profiles.json.
    const std::string xdg = seer::testing::scratch_dir() + "/xdg-" + b.name;
    const std::string cache = xdg + "/seer/iteration-profiles.json";
    fs::create_directories(xdg + "/seer");
    b.make(cache);
    ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
    {
      ServerProcess s(tiny_model());
      ASSERT_TRUE(s.up()) << "a broken cache stopped the start";
      const std::string log = s.stderr_text();
      EXPECT_NE(log.find("warning: --profile-cache " + cache + ": "), std::string::npos) << log;
      EXPECT_NE(log.find("iteration time vs tokens"), std::string::npos) << log;  // profiled again
      HttpResult r = http_post(s.port(), "/v1/completions", R"({"prompt": "Hello", "max_tokens": 2})");
      EXPECT_EQ(r.status, 200) << r.body;
    }
    if (b.name == "directory") {
      EXPECT_TRUE(fs::is_directory(cache));  // left alone: nothing can be renamed over it
      continue;
    }
    std::ifstream in(cache);
    json j = json::parse(in, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not rewritten";
    EXPECT_EQ(j["format"], "seer-iteration-profile/1");
    EXPECT_EQ(j["profiles"].size(), 1u);
    // The next start reuses it, without a warning.
    ServerProcess again(tiny_model());
    ASSERT_TRUE(again.up());
    EXPECT_NE(again.stderr_text().find("iteration-time profile from " + cache), std::string::npos) << again.stderr_text();
    EXPECT_EQ(again.stderr_text().find("warning: --profile-cache"), std::string::npos) << again.stderr_text();
  }
  if (before) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace seer::e2e
