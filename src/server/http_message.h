#pragma once
// The HTTP request and response a route handler sees, independent of the transport
// (src/server/http_server.cc: Boost.Beast over Asio, event-driven). A handler fills
// the response at once, or takes a ResponseChannel with defer() and answers later
// (from any thread, through post()) — how completions stream without holding a
// thread per connection.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace seer::server {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;                 // "GET", "POST", ...
  std::string path;                   // target without the query string
  std::string body;
  HttpHeaders headers;                // as received
  std::vector<std::string> matches;   // the route's regex groups; [0] is the whole path
  std::string remote_addr;
  std::string tenant;                 // whom the request acts for (server/request_guard.h)

  // The first header named `name` (case-insensitive), or "".
  std::string get_header_value(const std::string& name) const;
};

class ResponseChannel;

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type;
  HttpHeaders headers;

  void set_content(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
  void set_header(std::string name, std::string value) { headers.emplace_back(std::move(name), std::move(value)); }

  // Answer later through the returned channel; this response object is then unused.
  std::shared_ptr<ResponseChannel> defer();
  const std::shared_ptr<ResponseChannel>& deferred() const { return deferred_; }

  // Set by the transport before the handler runs.
  std::function<std::shared_ptr<ResponseChannel>()> make_channel;

 private:
  std::shared_ptr<ResponseChannel> deferred_;
};

// A response in progress on one connection. Every method except post() must be
// called on the connection's strand: from the handler itself or from a function
// given to post().
class ResponseChannel {
 public:
  virtual ~ResponseChannel() = default;
  // Runs `fn` on the connection's strand; dropped once the connection is gone.
  // Safe from any thread.
  virtual void post(std::function<void()> fn) = 0;

  // The whole response, once.
  virtual void respond(HttpResponse res) = 0;
  // Or a chunked stream: the head, then any number of writes, then finish().
  virtual void start_stream(int status, const std::string& content_type, const HttpHeaders& headers) = 0;
  virtual void write(std::string chunk) = 0;
  virtual void finish() = 0;

  // True once the client went away (or the server closed the connection).
  virtual bool closed() const = 0;
  // Called once, on the strand, when the connection ends before the response did.
  virtual void on_close(std::function<void()> fn) = 0;
  // Keeps `owner` alive for as long as the response is in progress.
  virtual void attach(std::shared_ptr<void> owner) = 0;
};

}  // namespace seer::server
