// AsyncEngine's n choices of one prompt (issue 51): the group is queued as one
// Pending whose request is the prompt's shared prefill; its choices are admitted
// when that prefill ends and its KV is the cached prefix they share
// (docs/serving.md, "n choices share one prefill").
#include "kv/conversation_cache.h"
#include "scheduler/scheduler.h"
#include "server/api_error.h"
#include "server/async_engine.h"

namespace seer::server {

std::vector<std::shared_ptr<RequestStream>> AsyncEngine::submit_choices(std::vector<Request> choices) {
  if (choices.size() == 1) return {submit(std::move(choices.front()))};
  if (!accepting_.load() || failed_.load()) throw shutting_down_error();
  std::vector<std::shared_ptr<RequestStream>> streams;
  Pending group;
  group.stream = std::make_shared<RequestStream>();  // the prefill's: nobody reads it
  {
    MutexLock lock(mutex_);
    if (pending_.size() + engine_waiting_.load() + choices.size() > opts_.max_waiting)
      throw queue_full_error(opts_.max_waiting);
    const double now = engine_.clock().now();
    // The prompt alone: one token, sampled greedily and dropped; only its KV matters.
    group.request = choices.front();
    group.request.external_id += "-prefill";
    group.request.sampling = SamplingParams::greedy();
    group.request.sampling.max_tokens = 1;
    group.request.sampling.ignore_eos = true;
    group.request.arrival_s = now;
    for (Request& r : choices) {
      r.arrival_s = now;
      streams.push_back(std::make_shared<RequestStream>());
      group.choices.push_back({std::move(r), streams.back()});
    }
    pending_.push_back(std::move(group));
    wake_ = true;
    in_flight_.fetch_add(streams.size());
  }
  cv_.notify_one();
  return streams;
}

void AsyncEngine::admit_group(Pending& p) {
  const ConversationCache* cache = engine_.scheduler().conversations().cache();
  const bool share = cache && cache->config().prefix_reuse && !failed_.load() && !abort_everything_.load();
  if (share) {
    try {
      const double arrival = p.request.arrival_s;
      RequestId id = engine_.add_request(std::move(p.request));
      Live live{p.stream, OutputText(tokenizer_, {}, false), arrival};
      live.prefill_only = true;
      live.choices = std::move(p.choices);
      live_.emplace(id, std::move(live));
      return;
    } catch (const std::exception&) {
      // The choices go on their own (and get the engine's own answer).
    }
  }
  for (Pending& c : p.choices) admit(c);
}

void AsyncEngine::admit_released() {
  std::vector<Pending> batch;
  batch.swap(released_);
  for (Pending& p : batch) admit(p);
}

void AsyncEngine::end_choices(Live& live, FinishReason reason, const std::string& why) {
  for (Pending& c : live.choices) {
    StreamEvent e;
    e.kind = StreamEvent::Kind::Finished;
    e.finish_reason = reason;
    e.message = why;
    send(c.stream, std::move(e), /*ends_request=*/true);
  }
  live.choices.clear();
}

}  // namespace seer::server
