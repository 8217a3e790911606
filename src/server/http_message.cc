#include "server/http_message.h"

#include <strings.h>

namespace seer::server {

std::string HttpRequest::get_header_value(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return "";
}

std::shared_ptr<ResponseChannel> HttpResponse::defer() {
  if (!deferred_) deferred_ = make_channel();
  return deferred_;
}

}  // namespace seer::server
