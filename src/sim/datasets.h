#pragma once
// Readers for the workload datasets of ../shared/data (see its README.md): token
// length tables (Sarathi-Serve's ShareGPT and arXiv statistics, Splitwise's Azure
// traces with arrival times), Alpaca instruction records and ShareGPT conversations.
#include <cstdint>
#include <string>
#include <vector>

namespace seer {

struct LengthRecord {
  double arrival_s = -1;  // -1 when the table has no arrival column
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
};

// CSV with a header naming num_prefill_tokens and num_decode_tokens, and optionally
// arrived_at. Rows with a non-positive count are rejected with the line number.
std::vector<LengthRecord> read_length_csv(const std::string& path);

struct TextRecord {
  std::string prompt;  // instruction, then the input (if any) after a blank line
  std::string answer;
};
// Alpaca's JSON array of {instruction, input, output}.
std::vector<TextRecord> read_alpaca(const std::string& path);

struct Conversation {
  std::string id;
  std::vector<TextRecord> turns;  // user message and the assistant's answer
};
// ShareGPT's [{id, conversations:[{from, value}]}]: each human message followed by a
// gpt message is a turn; leading gpt messages (split continuations) and system
// messages are skipped. Conversations without a turn are left out.
std::vector<Conversation> read_sharegpt_conversations(const std::string& path);

// Dataset names of `seer trace --lengths` and their file under a data dir
// (the folder holding length-traces/, alpaca/, sharegpt/).
std::string dataset_path(const std::string& data_dir, const std::string& dataset);
const std::vector<std::string>& dataset_names();

}  // namespace seer
