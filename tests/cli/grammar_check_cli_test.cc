// seer grammar check: accept/reject per instance line, --expect's exit status, a
// refused schema's error naming the pointer.
#include <fstream>

#include <gtest/gtest.h>

#include "run_seer.h"

namespace seer {
namespace {

using testing::run_seer;

std::string write(const std::string& name, const std::string& text) {
  const std::string path = testing::scratch_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(GrammarCheckCli, SaysPerLineAndExitsByExpectation) {
  const std::string schema = write("gc_schema.json", R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9}},
                                                        "required": ["n"], "additionalProperties": false})");
  const std::string good = write("gc_good.jsonl", "{\"n\":1}\n{\"n\":9}\n");
  const std::string bad = write("gc_bad.jsonl", "{\"n\":0}\n{\"n\": 5}\n");
  auto r = run_seer({"grammar", "check", "--schema", schema, good, bad});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gc_good.jsonl:2: accept"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gc_bad.jsonl:1: reject"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gc_bad.jsonl:2: reject"), std::string::npos) << r.out;  // compact by default
  EXPECT_EQ(run_seer({"grammar", "check", "--schema", schema, "--expect", "accept", good}).exit_code, 0);
  EXPECT_EQ(run_seer({"grammar", "check", "--schema", schema, "--expect", "accept", bad}).exit_code, 1);
  EXPECT_EQ(run_seer({"grammar", "check", "--schema", schema, "--expect", "reject", bad}).exit_code, 0);
  auto flexible = run_seer({"grammar", "check", "--schema", schema, "--whitespace", "flexible", bad});
  EXPECT_NE(flexible.out.find("gc_bad.jsonl:2: accept"), std::string::npos) << flexible.out;
}

TEST(GrammarCheckCli, RefusedSchemaNamesThePointer) {
  const std::string schema = write("gc_refused.json", R"({"type": "array", "items": {"uniqueItems": true}})");
  auto r = run_seer({"grammar", "check", "--schema", schema});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("#/items/uniqueItems"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace seer
