// The JSON Schema Test Suite's keyword groups (derived by
// scripts/derive_schema_suite_vectors.py into tests/data/json_schema_suite_vectors.json)
// against the compiled grammars: an invalid instance is never accepted; a valid one is
// accepted unless listed in json_schema_suite_stricter.txt (the grammar admits a subset:
// properties in schema order, integers without ".0", ...); the groups refused are
// exactly those in json_schema_suite_refused.txt. With SEER_SCHEMA_SUITE_REPORT=<file>
// the coverage table is written there (docs/results/schema_suite_coverage.md).
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "grammar/grammar_check.h"

namespace seer::grammar {
namespace {

using nlohmann::ordered_json;

std::string data_path(const std::string& name) { return std::string(SEER_SOURCE_DIR) + "/tests/data/" + name; }

std::set<std::string> read_list(const std::string& name) {
  std::ifstream in(data_path(name));
  std::set<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.insert(line.substr(0, line.find('\t')));
  return out;
}

struct FileCounts {
  int groups = 0, compiled = 0, instances = 0, valid_accepted = 0, invalid_rejected = 0, stricter = 0;
};

TEST(JsonSchemaSuite, CompiledGroupsAcceptValidAndRejectInvalidInstances) {
  std::ifstream in(data_path("json_schema_suite_vectors.json"));
  ASSERT_TRUE(in) << "missing " << data_path("json_schema_suite_vectors.json");
  const ordered_json groups = ordered_json::parse(in);
  const std::set<std::string> expected_refused = read_list("json_schema_suite_refused.txt");
  const std::set<std::string> expected_stricter = read_list("json_schema_suite_stricter.txt");
  std::map<std::string, std::string> refused;  // group -> reason
  std::set<std::string> stricter;
  std::map<std::string, FileCounts> by_file;
  for (const ordered_json& g : groups) {
    const std::string name = g["group"];
    FileCounts& counts = by_file[name.substr(0, name.find('#'))];
    ++counts.groups;
    std::optional<GrammarChecker> check;
    try {
      check.emplace(GrammarChecker::from_schema(g["schema"]));
    } catch (const Error& e) {
      refused[name] = e.what();
      continue;
    }
    ++counts.compiled;
    for (size_t i = 0; i < g["tests"].size(); ++i) {
      const ordered_json& t = g["tests"][i];
      const std::string text = t[0].dump();
      const bool valid = t[1].get<bool>();
      const bool accepted = check->accepts(text);
      ++counts.instances;
      EXPECT_FALSE(!valid && accepted) << name << " accepts the invalid instance " << text;
      if (valid && !accepted) stricter.insert(name + "/" + std::to_string(i)), ++counts.stricter;
      counts.valid_accepted += valid && accepted;
      counts.invalid_rejected += !valid && !accepted;
    }
  }
  std::set<std::string> refused_names;
  std::string refused_text;
  for (const auto& [name, why] : refused) refused_names.insert(name), refused_text += name + "\t" + why + "\n";
  EXPECT_EQ(refused_names, expected_refused) << "refused now:\n" << refused_text;
  std::string stricter_text;
  for (const std::string& s : stricter) stricter_text += s + "\n";
  EXPECT_EQ(stricter, expected_stricter) << "stricter now:\n" << stricter_text;
  if (const char* report = std::getenv("SEER_SCHEMA_SUITE_REPORT")) {
    std::ofstream out(report);
    out << "| suite file | groups | compiled | refused | instances checked | valid accepted | invalid rejected | "
           "valid rejected (stricter) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
    FileCounts total;
    for (const auto& [file, c] : by_file) {
      out << "| " << file << " | " << c.groups << " | " << c.compiled << " | " << c.groups - c.compiled << " | "
          << c.instances << " | " << c.valid_accepted << " | " << c.invalid_rejected << " | " << c.stricter << " |\n";
      total.groups += c.groups, total.compiled += c.compiled, total.instances += c.instances;
      total.valid_accepted += c.valid_accepted, total.invalid_rejected += c.invalid_rejected, total.stricter += c.stricter;
    }
    out << "| **all** | " << total.groups << " | " << total.compiled << " | " << total.groups - total.compiled << " | "
        << total.instances << " | " << total.valid_accepted << " | " << total.invalid_rejected << " | " << total.stricter
        << " |\n\nRefused groups and why:\n\n";
    for (const auto& [name, why] : refused) out << "* `" << name << "`: " << why << "\n";
  }
}

}  // namespace
}  // namespace seer::grammar
