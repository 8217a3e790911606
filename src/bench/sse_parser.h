#pragma once
// Incremental parser of a server-sent-event stream (the client side of SSE): bytes
// arrive in arbitrary pieces; complete events come out. Handles \n, \r\n and \r
// line ends, multi-line data, comments and fields other than data (ignored).
#include <string>
#include <string_view>
#include <vector>

namespace seer::bench {

class SseParser {
 public:
  // Feeds bytes; returns the data of every event completed by them (an event with
  // no data line is not reported).
  std::vector<std::string> feed(std::string_view bytes);
  // Bytes buffered in an incomplete line (a bound on memory for hostile servers).
  size_t buffered() const { return line_.size() + data_.size(); }

 private:
  void line(std::string_view l, std::vector<std::string>& out);

  std::string line_;
  std::string data_;
  bool has_data_ = false;
  bool last_was_cr_ = false;
};

}  // namespace seer::bench
