// The request reader as the fuzzer and the transport use it (server/http_request_reader.h):
// strict framing (RFC 9112 §6: only a final, single `chunked`; never Transfer-Encoding
// beside Content-Length; no obs-fold), chunked trailers read and dropped, and Expect
// limited to 100-continue.
#include "server/http_request_reader.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/test_paths.h"

namespace seer::server {
namespace {

constexpr size_t kMaxBody = 1 << 20;

std::string post(const std::string& lines, const std::string& version = "HTTP/1.1") {
  return "POST /v1/completions " + version + "\r\nHost: localhost\r\nContent-Type: application/json\r\n" + lines +
         "\r\n";
}

const std::string kSmuggled = "GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n";
const std::string kChunkedBody = "2\r\n{}\r\n0\r\n\r\n";

struct Case {
  const char* what;
  std::string bytes;
  int status;
};

TEST(HttpRequestReader, RefusesAmbiguousFramingWithoutReadingTheBodyAsARequest) {
  const Case cases[] = {
      {"unknown coding", post("Transfer-Encoding: xchunked\r\n") + kSmuggled, 501},
      {"gzip before chunked", post("Transfer-Encoding: gzip, chunked\r\n") + kChunkedBody + kSmuggled, 501},
      {"chunked not final", post("Transfer-Encoding: chunked, identity\r\n") + kChunkedBody + kSmuggled, 400},
      {"chunked twice", post("Transfer-Encoding: chunked, chunked\r\n") + kChunkedBody + kSmuggled, 400},
      {"two fields", post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n") + kChunkedBody, 400},
      {"empty value", post("Transfer-Encoding: \r\nContent-Length: 2\r\n") + "{}" + kSmuggled, 400},
      {"unknown coding beside Content-Length", post("Transfer-Encoding: xchunked\r\nContent-Length: 2\r\n") + "{}", 400},
      {"Content-Length, then chunked", post("Content-Length: 12\r\nTransfer-Encoding: chunked\r\n") + kChunkedBody, 400},
      {"chunked, then Content-Length", post("Transfer-Encoding: chunked\r\nContent-Length: 12\r\n") + kChunkedBody, 400},
      {"HTTP/1.0 with Transfer-Encoding", post("Transfer-Encoding: chunked\r\n", "HTTP/1.0") + kChunkedBody, 400},
      {"space before the colon", post("Transfer-Encoding : chunked\r\n") + kChunkedBody + kSmuggled, 400},
      {"obs-fold", post("X-Note: one\r\n two\r\nContent-Length: 2\r\n") + "{}" + kSmuggled, 400},
      {"folded Transfer-Encoding", post("Transfer-Encoding:\r\n\tchunked\r\n") + kChunkedBody + kSmuggled, 400},
      {"bare LF", post("X-Note: one\nContent-Length: 2\r\n") + "{}", 400},
      {"bare CR", post("X-Note: one\rtwo\r\nContent-Length: 2\r\n") + "{}", 400},
      {"unknown expectation", post("Expect: 200-ok\r\nContent-Length: 2\r\n") + "{}" + kSmuggled, 417},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const ParsedRequests parsed = parse_http_requests(c.bytes, kMaxBody);
    EXPECT_EQ(parsed.error_status, c.status);
    EXPECT_TRUE(parsed.requests.empty()) << parsed.requests.size() << " requests read";
  }
}

TEST(HttpRequestReader, ChunkedTrailerFieldsAreDropped) {
  const std::string bytes = post("Transfer-Encoding: chunked\r\n") +
                            "2\r\n{}\r\n0\r\nAuthorization: Bearer sk-trailer\r\nX-Conversation-Id: c\r\n\r\n" + kSmuggled;
  const ParsedRequests parsed = parse_http_requests(bytes, kMaxBody);
  EXPECT_EQ(parsed.error_status, 0);
  ASSERT_EQ(parsed.requests.size(), 2u);
  const HttpRequest& req = parsed.requests[0];
  EXPECT_EQ(req.body, "{}");
  EXPECT_EQ(req.get_header_value("Authorization"), "");
  EXPECT_EQ(req.get_header_value("X-Conversation-Id"), "");
  EXPECT_EQ(req.headers.size(), 3u);  // Host, Content-Type, Transfer-Encoding
  EXPECT_EQ(parsed.requests[1].path, "/v1/models");
}

TEST(HttpRequestReader, AcceptsWellFormedFraming) {
  const std::string bytes = post("Transfer-Encoding: chunked\r\n") + kChunkedBody +
                            post("Transfer-Encoding: CHUNKED\r\nExpect: 100-Continue\r\n") + kChunkedBody +
                            post("Content-Length: 2\r\n") + "{}" + post("Content-Length: 2\r\n", "HTTP/1.0") + "{}";
  const ParsedRequests parsed = parse_http_requests(bytes, kMaxBody);
  EXPECT_EQ(parsed.error_status, 0);
  ASSERT_EQ(parsed.requests.size(), 4u);
  for (const HttpRequest& req : parsed.requests) EXPECT_EQ(req.body, "{}");
}

// The transport's parser consumes a head in pieces as it arrives: a fold split at any
// byte is still found, and a CRLF followed by a field name is none.
TEST(ObsFoldScan, FindsAFoldSplitAcrossPieces) {
  const std::string folded = "Host: x\r\nX-Note: one\r\n two\r\n\r\n";
  for (size_t cut = 0; cut <= folded.size(); ++cut) {
    SCOPED_TRACE(cut);
    ObsFoldScan scan;
    scan.feed(std::string_view(folded).substr(0, cut));
    scan.feed(std::string_view(folded).substr(cut));
    EXPECT_TRUE(scan.found());
  }
  ObsFoldScan plain;
  plain.feed("Host: x\r\nX-Note: one two\r\n");
  plain.feed("\r\n");
  EXPECT_FALSE(plain.found());
}

std::string seed(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The fuzzer's smuggling seeds (fuzz/make_http_seeds.sh): each is a POST with ambiguous
// framing followed by a GET that a proxy reading the other framing would forward.
TEST(HttpRequestReader, SmugglingSeedsAreRefusedAndTheirSecondRequestNeverRead) {
  const std::filesystem::path dir = seer::testing::source_dir() + "/fuzz/http_seeds";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("smuggle_", 0) != 0) continue;
    SCOPED_TRACE(name);
    ++seen;
    const ParsedRequests parsed = parse_http_requests(seed(entry.path()), kMaxBody);
    EXPECT_NE(parsed.error_status, 0);
    for (const HttpRequest& req : parsed.requests) EXPECT_NE(req.path, "/v1/models");
  }
  EXPECT_GE(seen, 15);
  // Well-formed variants: the GET is a pipelined request.
  for (const char* name : {"chunked_mixed_case", "chunked_tab", "chunked_extension", "content_length_list"}) {
    SCOPED_TRACE(name);
    const ParsedRequests parsed = parse_http_requests(seed(dir / name), kMaxBody);
    EXPECT_EQ(parsed.error_status, 0);
    ASSERT_EQ(parsed.requests.size(), 2u);
    EXPECT_EQ(parsed.requests[0].body, "{}");
  }
  const ParsedRequests trailer = parse_http_requests(seed(dir / "trailer_authorization"), kMaxBody);
  ASSERT_EQ(trailer.requests.size(), 2u);
  EXPECT_EQ(trailer.requests[0].get_header_value("Authorization"), "");
  EXPECT_EQ(trailer.requests[0].get_header_value("Host"), "localhost");
  EXPECT_EQ(parse_http_requests(seed(dir / "expect_unknown"), kMaxBody).error_status, 417);
  EXPECT_EQ(parse_http_requests(seed(dir / "lf_line_endings"), kMaxBody).error_status, 400);
}

}  // namespace
}  // namespace seer::server
