#include "tokenizer/vocab_cases.h"

#include <fstream>
#include <iterator>
#include <sstream>

#include "common/error.h"

namespace seer::testing {
namespace {

constexpr std::string_view kSeparator = "\n__ggml_vocab_test__\n";

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

std::vector<VocabCase> read_vocab_cases(const std::filesystem::path& inp, const std::filesystem::path& out) {
  std::vector<VocabCase> cases;
  const std::string text = read_file(inp);
  size_t pos = 0;
  for (size_t next; (next = text.find(kSeparator, pos)) != std::string::npos; pos = next + kSeparator.size())
    cases.push_back({text.substr(pos, next - pos), {}});
  std::istringstream lines(read_file(out));
  std::string line;
  for (auto& c : cases) {
    if (!std::getline(lines, line)) throw Error(out.string() + ": fewer lines than cases in " + inp.string());
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) c.ids.push_back(id);
  }
  return cases;
}

std::string show_ids(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

}  // namespace seer::testing
