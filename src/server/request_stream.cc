#include "server/request_stream.h"

namespace seer::server {

void RequestStream::push(StreamEvent e) {
  {
    MutexLock lock(mutex_);
    if (e.kind == StreamEvent::Kind::Finished || e.kind == StreamEvent::Kind::Rejected) closed_.store(true);
    events_.push_back(std::move(e));
    if (listener_) listener_();
  }
  cv_.notify_all();
}

void RequestStream::set_listener(std::function<void()> listener) {
  MutexLock lock(mutex_);
  listener_ = std::move(listener);
  if (listener_ && !events_.empty()) listener_();
}

std::vector<StreamEvent> RequestStream::take(std::chrono::milliseconds timeout) {
  MutexLock lock(mutex_);
  // At the deadline with nothing pending the answer is no events: the result adds nothing.
  (void)lock.wait_for(cv_, timeout, [this]() REQUIRES(mutex_) { return !events_.empty(); });
  std::vector<StreamEvent> out(std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

}  // namespace seer::server
