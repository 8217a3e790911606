#pragma once
// The channel between the engine thread (producer) and the HTTP thread serving one
// request (consumer): text deltas as tokens are generated, then one final event.
// Thread-safe; shared by both sides through a shared_ptr so either may go first.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "common/thread_annotations.h"
#include "scheduler/request.h"
#include "server/openai_response.h"

namespace seer::server {

struct StreamEvent {
  enum class Kind {
    Accepted,  // the engine queued the request
    Delta,     // text (possibly "") and the logprobs of the tokens behind it
    Finished,  // the request ended: finish_reason and usage are set
    Rejected,  // the engine refused the request: status, message and code are set
  };
  Kind kind = Kind::Delta;
  std::string text;
  // Generated tokens behind this event: its own and those whose text was held back
  // before it (a partial UTF-8 character, a possible stop string).
  int32_t tokens = 0;
  std::vector<TokenLogprob> logprobs;
  FinishReason finish_reason = FinishReason::None;
  Usage usage;
  int status = 0;
  std::string message;
  std::string code;  // error.code ("" : the status's default)
};

class RequestStream {
 public:
  // Producer side (engine thread).
  void push(StreamEvent e);

  // Consumer side. Waits until at least one event is pending or `timeout` passes,
  // then takes every pending event (possibly none).
  std::vector<StreamEvent> take(std::chrono::milliseconds timeout);
  // Called (on the producer's thread, after each push) while set: it must only
  // schedule the consumer, never block. Called at once when events are pending.
  void set_listener(std::function<void()> listener);
  // True once a Finished or Rejected event was pushed.
  bool closed() const { return closed_.load(); }

  // Set by the consumer (or shutdown) to ask the engine to abort the request.
  bool cancel_requested() const { return cancel_.load(); }
  void request_cancel() { cancel_.store(true); }

 private:
  mutable Mutex mutex_;
  std::condition_variable cv_;
  std::deque<StreamEvent> events_ GUARDED_BY(mutex_);
  std::function<void()> listener_ GUARDED_BY(mutex_);
  std::atomic<bool> closed_{false};
  std::atomic<bool> cancel_{false};
};

}  // namespace seer::server
