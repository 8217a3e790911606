// The live view (GET /) in a real headless Chromium against a server under load:
// the page's numbers appear and change. Skips when chromium is not installed
// (scripts/install-deps.sh installs it).
#include <atomic>
#include <filesystem>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

std::string chromium_binary() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

// The page's DOM after a few seconds of (virtual) time.
std::string dump_dom(const std::string& chromium, const std::string& url) {
  static int n = 0;
  const std::string profile = seer::testing::scratch_dir() + "/chromium-" + std::to_string(++n);
  const std::string cmd = "timeout 120 " + chromium +
                          " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                          " --disable-background-networking --disable-component-update --disable-sync"
                          " --user-data-dir=" + profile + " --virtual-time-budget=4000 --dump-dom " + url +
                          " 2>/dev/null";
  return run_command(cmd);
}

// The text of the element with id `id`, or "".
std::string element_text(const std::string& dom, const std::string& id) {
  std::smatch m;
  if (std::regex_search(dom, m, std::regex("id=\"" + id + "\"[^>]*>([^<]*)<"))) return m[1];
  return "";
}

TEST(LiveViewBrowser, NumbersAppearAndChangeUnderLoad) {
  const std::string chromium = chromium_binary();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it); skipping";
  const std::string model =
      (std::filesystem::path(seer::testing::seer_binary()).parent_path() / "models" / "stories260K.gguf").string();
  ServerProcess s(model);
  ASSERT_TRUE(s.up());
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int t = 0; t < 3; ++t)
    load.emplace_back([&] {
      while (!stop.load())
        http_post(s.port(), "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 24, "ignore_eos": true})");
    });
  // The load is running before the first page is taken.
  EXPECT_TRUE(wait_for_metric(s.port(), "seer_generation_tokens_total", [](double v) { return v > 0; }));
  const std::string first = dump_dom(chromium, s.url() + "/");
  const std::string second = dump_dom(chromium, s.url() + "/");
  stop.store(true);
  for (auto& t : load) t.join();

  for (const std::string* dom : {&first, &second}) {
    ASSERT_NE(dom->find("seer live view"), std::string::npos) << dom->substr(0, 2000);
    EXPECT_GE(std::atoi(element_text(*dom, "updates").c_str()), 2) << "the page did not poll /v1/state";
    EXPECT_EQ(element_text(*dom, "model"), "stories260K");
    EXPECT_NE(element_text(*dom, "kv-device").find(" / "), std::string::npos);
    EXPECT_NE(element_text(*dom, "ttft-p50").find("ms"), std::string::npos);
    EXPECT_NE(dom->find("<polyline"), std::string::npos) << "no chart was drawn";
  }
  const long it1 = std::atol(element_text(first, "it-total").c_str());
  const long it2 = std::atol(element_text(second, "it-total").c_str());
  EXPECT_GT(it1, 0);
  EXPECT_GT(it2, it1) << "the iteration count did not change between two loads under load";
}

}  // namespace
}  // namespace seer::e2e
