// Every chat template under tests/data/chat_templates/<family>/ rendered with every
// conversation of conversations.json must equal, byte for byte, what the reference
// rendered (scripts/reference/render_chat_templates.sh): @huggingface/jinja's
// <case>.txt, or Python jinja2's <case>.jinja2.txt where the two references disagree
// (reference_differences.md). Where the reference refused the case (.error: the
// template raised an exception or failed), seer must refuse it too.
#include <gtest/gtest.h>

#include <ctime>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "template/template.h"

namespace seer::tmpl {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(SEER_SOURCE_DIR) / "tests/data/chat_templates";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Case {
  std::string family, name;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.family << "/" << c.name; }

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  auto conv = nlohmann::ordered_json::parse(read_file(kRoot / "conversations.json"));
  std::vector<std::string> families;
  for (const auto& d : fs::directory_iterator(kRoot))
    if (d.is_directory()) families.push_back(d.path().filename().string());
  std::sort(families.begin(), families.end());
  for (const auto& f : families)
    for (const auto& [name, _] : conv.items()) cases.push_back({f, name});
  return cases;
}

// The time the references were rendered at (2026-11-25 12:00 UTC), for the templates
// that print today's date with strftime_now: the same date in every time zone from
// UTC-11 to UTC+11 (scripts/reference/render_chat_templates_jinja2.py pins it too).
constexpr std::time_t kRenderedAt = 1795608000;

class ChatTemplateFixture : public ::testing::TestWithParam<Case> {};

TEST_P(ChatTemplateFixture, MatchesReferenceRendering) {
  const Case& c = GetParam();
  const fs::path dir = kRoot / c.family;
  auto conv = nlohmann::ordered_json::parse(read_file(kRoot / "conversations.json"));
  nlohmann::ordered_json context = {{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"date_string", "26 Jul 2024"}};
  for (const auto& [k, v] : conv[c.name].items()) context[k] = v;

  fs::path expected = dir / (c.name + ".jinja2.txt");
  fs::path refused = dir / (c.name + ".jinja2.error");
  if (!fs::exists(expected) && !fs::exists(refused)) {
    expected = dir / (c.name + ".txt");
    refused = dir / (c.name + ".error");
  }
  ASSERT_TRUE(fs::exists(expected) || fs::exists(refused)) << "no reference rendering for " << dir / c.name;

  std::string out, error;
  try {
    out = Template::parse(read_file(dir / "template.jinja")).render(context, kRenderedAt);
  } catch (const Error& e) {
    error = e.what();
  }
  if (fs::exists(refused)) {
    EXPECT_FALSE(error.empty()) << "the reference refused this case (" << read_file(refused)
                                << ") but seer rendered:\n" << out;
  } else {
    ASSERT_TRUE(error.empty()) << "seer failed: " << error;
    EXPECT_EQ(out, read_file(expected));
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.family + "_" + info.param.name;
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Families, ChatTemplateFixture, ::testing::ValuesIn(all_cases()), case_name);

TEST(ChatTemplateFixtures, CoverAtLeastTwentyFamilies) {
  int families = 0;
  for (const auto& d : fs::directory_iterator(kRoot)) families += d.is_directory();
  EXPECT_GE(families, 20);
}

}  // namespace
}  // namespace seer::tmpl
