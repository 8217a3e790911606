// The iteration-profile cache (--profile-cache, $XDG_CACHE_HOME/seer/iteration-profiles.json)
// is only a cache: a truncated, empty or wrongly shaped file, or a directory in its
// place, is reported (so the caller warns and profiles again) and never stops a start;
// storing replaces an unusable file atomically and keeps the keys of a usable one.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "server/backend_profile.h"
#include "support/test_paths.h"

namespace seer::server {
namespace {

namespace fs = std::filesystem;

IterationProfile sample() {
  IterationProfile p;
  p.add(64, 0.01);
  p.add(128, 0.02);
  return p;
}

std::string fresh_path(const std::string& name) {
  const std::string dir = seer::testing::scratch_dir() + "/" + name;
  fs::create_directories(dir);
  return dir + "/iteration-profiles.json";
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

struct Broken {
  const char* name;
  std::function<void(const std::string&)> make;
  const char* problem;
};

std::vector<Broken> broken_forms() {
  return {
      {"truncated", [](const std::string& p) { write(p, R"({"format": "seer-iteration-profile/1", "profiles": {"k": [[64, 0.0)"); },
       "it is not JSON (truncated?)"},
      {"empty", [](const std::string& p) { write(p, ""); }, "it is empty"},
      {"wrong_shape", [](const std::string& p) { write(p, R"({"format": "seer-iteration-profile/1", "profiles": [1, 2]})"); },
       "its 'profiles' is not an object"},
      {"wrong_points",
       [](const std::string& p) { write(p, R"({"format": "seer-iteration-profile/1", "profiles": {"k": [["a", 1]]}})"); },
       "a profile in it is not a list of [tokens, seconds] points"},
      {"not_a_cache", [](const std::string& p) { write(p, "[1, 2, 3]"); }, "it is not a seer-iteration-profile/1 object"},
      {"directory", [](const std::string& p) { fs::create_directories(p); }, "it is not a regular file"},
  };
}

TEST(ProfileCache, BrokenFilesAreReportedAndReplaced) {
  for (const Broken& b : broken_forms()) {
    SCOPED_TRACE(b.name);
    const std::string path = fresh_path(b.name);
    b.make(path);
    CachedProfile c;
    ASSERT_NO_THROW(c = load_cached_profile(path, "k"));
    EXPECT_TRUE(c.profile.empty());
    EXPECT_EQ(c.problem, b.problem);
    if (fs::is_directory(path)) {
      // Nothing can be renamed over a directory: a clear error naming the file (the
      // server warns and serves with the profile it measured).
      try {
        store_cached_profile(path, "k", sample());
        ADD_FAILURE() << "stored over a directory";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      }
      EXPECT_TRUE(fs::is_directory(path));
      continue;
    }
    store_cached_profile(path, "k", sample());
    CachedProfile again = load_cached_profile(path, "k");
    EXPECT_EQ(again.problem, "");
    EXPECT_EQ(again.profile.points(), sample().points());
    for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path()))
      EXPECT_EQ(entry.path().filename(), "iteration-profiles.json");  // no temporary file left
  }
}

TEST(ProfileCache, AbsentFileIsNoProblemAndUsableFilesKeepOtherKeys) {
  const std::string path = fresh_path("usable");
  CachedProfile none = load_cached_profile(path, "k");
  EXPECT_TRUE(none.profile.empty());
  EXPECT_EQ(none.problem, "");
  store_cached_profile(path, "a", sample());
  store_cached_profile(path, "b", sample());
  EXPECT_EQ(load_cached_profile(path, "a").profile.points(), sample().points());
  EXPECT_EQ(load_cached_profile(path, "b").profile.points(), sample().points());
  CachedProfile other = load_cached_profile(path, "c");
  EXPECT_TRUE(other.profile.empty());
  EXPECT_EQ(other.problem, "");
}

}  // namespace
}  // namespace seer::server
