#include "server/request_stream.h"

namespace seer::server {

void RequestStream::push(StreamEvent e) {
  {
    std::lock_guard lock(mutex_);
    if (e.kind == StreamEvent::Kind::Finished || e.kind == StreamEvent::Kind::Rejected) closed_.store(true);
    events_.push_back(std::move(e));
    if (listener_) listener_();
  }
  cv_.notify_all();
}

void RequestStream::set_listener(std::function<void()> listener) {
  std::lock_guard lock(mutex_);
  listener_ = std::move(listener);
  if (listener_ && !events_.empty()) listener_();
}

std::vector<StreamEvent> RequestStream::take(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, timeout, [this] { return !events_.empty(); });
  std::vector<StreamEvent> out(std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

}  // namespace seer::server
