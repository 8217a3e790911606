#include "sim/datasets.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace seer {
namespace {

using nlohmann::json;

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    out.push_back(cell);
  }
  return out;
}

double parse_number(const std::string& s, const std::string& path, int64_t line, const std::string& column) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    fail("{}:{}: column '{}': expected a number, got '{}'", path, line, column, s);
  return v;
}

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open dataset file {}", path);
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

std::string string_field(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return "";
  if (!it->is_string()) fail("{}: field '{}' must be a string", where, key);
  return it->get<std::string>();
}

}  // namespace

std::vector<LengthRecord> read_length_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open length table {}", path);
  std::string line;
  if (!std::getline(in, line)) fail("{}: empty file, expected a CSV header", path);
  auto header = split_csv(line);
  int prefill = -1, decode = -1, arrival = -1;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    if (header[i] == "num_prefill_tokens") prefill = i;
    if (header[i] == "num_decode_tokens") decode = i;
    if (header[i] == "arrived_at") arrival = i;
  }
  if (prefill < 0 || decode < 0)
    fail("{}:1: header must name the columns num_prefill_tokens and num_decode_tokens, got '{}'", path, line);
  std::vector<LengthRecord> out;
  int64_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    auto cells = split_csv(line);
    if (cells.size() != header.size())
      fail("{}:{}: expected {} columns, got {}", path, line_no, header.size(), cells.size());
    LengthRecord r;
    double p = parse_number(cells[prefill], path, line_no, header[prefill]);
    double d = parse_number(cells[decode], path, line_no, header[decode]);
    if (!(p >= 1 && p < (1 << 24)) || !(d >= 1 && d < (1 << 24)))
      fail("{}:{}: token counts must be in [1, 2^24), got {} and {}", path, line_no, p, d);
    r.prompt_tokens = static_cast<int32_t>(p);
    r.output_tokens = static_cast<int32_t>(d);
    if (arrival >= 0) {
      r.arrival_s = parse_number(cells[arrival], path, line_no, header[arrival]);
      if (!(r.arrival_s >= 0)) fail("{}:{}: arrived_at must be >= 0", path, line_no);
    }
    out.push_back(r);
  }
  if (out.empty()) fail("{}: no rows after the header", path);
  return out;
}

std::vector<TextRecord> read_alpaca(const std::string& path) {
  json doc = read_json_file(path);
  if (!doc.is_array()) fail("{}: expected a JSON array of {{instruction, input, output}} records", path);
  std::vector<TextRecord> out;
  out.reserve(doc.size());
  for (size_t i = 0; i < doc.size(); ++i) {
    const std::string where = fmt::format("{}: record {}", path, i);
    if (!doc[i].is_object()) fail("{}: expected an object", where);
    TextRecord r;
    r.prompt = string_field(doc[i], "instruction", where);
    std::string input = string_field(doc[i], "input", where);
    if (!input.empty()) r.prompt += "\n\n" + input;
    r.answer = string_field(doc[i], "output", where);
    if (r.prompt.empty()) continue;
    out.push_back(std::move(r));
  }
  if (out.empty()) fail("{}: no records with an instruction", path);
  return out;
}

std::vector<Conversation> read_sharegpt_conversations(const std::string& path) {
  json doc = read_json_file(path);
  if (!doc.is_array()) fail("{}: expected a JSON array of {{id, conversations}} records", path);
  std::vector<Conversation> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const std::string where = fmt::format("{}: record {}", path, i);
    const json& rec = doc[i];
    if (!rec.is_object()) fail("{}: expected an object", where);
    Conversation c;
    c.id = rec.contains("id") && rec["id"].is_string() ? rec["id"].get<std::string>() : fmt::format("conv{}", i);
    auto msgs = rec.find("conversations");
    if (msgs == rec.end() || !msgs->is_array()) fail("{}: field 'conversations' must be an array", where);
    std::string pending;  // a human message waiting for its answer
    bool have_pending = false;
    for (const auto& m : *msgs) {
      if (!m.is_object()) fail("{}: each message must be an object", where);
      std::string from = string_field(m, "from", where), value = string_field(m, "value", where);
      if (from == "human" || from == "user") {
        pending = value;  // two human messages in a row: keep the later one
        have_pending = true;
      } else if ((from == "gpt" || from == "assistant" || from == "chatgpt") && have_pending) {
        if (!pending.empty()) c.turns.push_back({pending, value});
        have_pending = false;
      }
    }
    if (!c.turns.empty()) out.push_back(std::move(c));
  }
  if (out.empty()) fail("{}: no conversation with a human message followed by an answer", path);
  return out;
}

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names = {"sharegpt",       "arxiv",  "splitwise-conv",     "splitwise-code",
                                                 "alpaca",         "sharegpt-multiturn", "sharegpt-chat"};
  return names;
}

std::string dataset_path(const std::string& data_dir, const std::string& dataset) {
  std::filesystem::path d(data_dir);
  std::filesystem::path p;
  if (dataset == "sharegpt")
    p = d / "length-traces" / "sharegpt_8k_filtered_stats_llama2_tokenizer.csv";
  else if (dataset == "arxiv")
    p = d / "length-traces" / "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv";
  else if (dataset == "splitwise-conv")
    p = d / "length-traces" / "splitwise_conv.csv";
  else if (dataset == "splitwise-code")
    p = d / "length-traces" / "splitwise_code.csv";
  else if (dataset == "alpaca")
    p = d / "alpaca" / "alpaca_data.json";
  else if (dataset == "sharegpt-multiturn" || dataset == "sharegpt-chat")
    p = d / "sharegpt" / "sharegpt_sample_1000_plain.json";
  else
    fail("unknown dataset '{}'; known: synthetic, {}", dataset, fmt::join(dataset_names(), ", "));
  if (!std::filesystem::exists(p))
    fail("dataset '{}' not found: {} does not exist (--data-dir should be the folder holding length-traces/, "
         "alpaca/ and sharegpt/)",
         dataset, p.string());
  return p.string();
}

}  // namespace seer
