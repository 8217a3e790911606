#include "server/completion_handler.h"

#include <ctime>

#include "server/api_error.h"
#include "server/connection_watch.h"
#include "server/sse.h"

namespace seer::server {

namespace {

ApiError rejection_error(const StreamEvent& e) {
  if (e.status == 400) return ApiError(400, "invalid_request_error", "", "invalid_request", e.message);
  if (e.status == 503) return shutting_down_error();
  return ApiError(e.status >= 500 ? e.status : 500, "server_error", "", "internal_error", e.message);
}

// Waits until the engine accepted or rejected the request. Returns the events seen
// (the backlog to answer from); empty when the client left meanwhile.
std::vector<StreamEvent> wait_admission(AsyncEngine& engine, const std::shared_ptr<RequestStream>& stream,
                                        const ConnectionWatch& watch) {
  std::vector<StreamEvent> backlog;
  for (;;) {
    for (auto& e : stream->take(CompletionHandler::kPollInterval)) {
      if (e.kind == StreamEvent::Kind::Rejected) throw rejection_error(e);
      backlog.push_back(std::move(e));
    }
    if (!backlog.empty()) return backlog;
    if (watch.peer_closed()) {
      engine.cancel(stream);
      return {};
    }
  }
}

// Counts a response as active for as long as it lives.
class ActiveGuard {
 public:
  explicit ActiveGuard(std::shared_ptr<std::atomic<int>> n) : n_(std::move(n)) { n_->fetch_add(1); }
  ~ActiveGuard() { n_->fetch_sub(1); }
  ActiveGuard(const ActiveGuard&) = delete;
  ActiveGuard& operator=(const ActiveGuard&) = delete;

 private:
  std::shared_ptr<std::atomic<int>> n_;
};

// Per-stream state shared by the content provider and its releaser.
struct StreamState {
  AsyncEngine* engine = nullptr;
  std::shared_ptr<RequestStream> stream;
  ResponseContext ctx;
  bool include_usage = false;
  ConnectionWatch watch;
  std::vector<StreamEvent> backlog;
  bool started = false;
  bool done = false;
  std::shared_ptr<ActiveGuard> active;  // released with the response
};

// The SSE text for `events`; sets st.done after the final event.
std::string render_events(StreamState& st, std::vector<StreamEvent>& events) {
  std::string out;
  if (!st.started) {
    st.started = true;
    if (st.ctx.endpoint == Endpoint::ChatCompletions)
      out += sse_json(stream_chunk(st.ctx, "", {}, FinishReason::None, /*first=*/true));
  }
  for (auto& e : events) {
    if (e.kind == StreamEvent::Kind::Accepted) continue;
    if (!e.text.empty() || !e.logprobs.empty())
      out += sse_json(stream_chunk(st.ctx, e.text, e.logprobs, FinishReason::None, false));
    if (e.kind != StreamEvent::Kind::Finished) continue;
    FinishReason reason = e.finish_reason == FinishReason::None ? FinishReason::Stop : e.finish_reason;
    out += sse_json(stream_chunk(st.ctx, "", {}, reason, false));
    if (st.include_usage) out += sse_json(usage_chunk(st.ctx, e.usage));
    out += sse_done();
    st.done = true;
    break;
  }
  return out;
}

}  // namespace

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status();
  res.set_content(e.body(), "application/json");
}

CompletionHandler::CompletionHandler(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics)
    : engine_(engine), model_(model), metrics_(metrics) {
  limits_.vocab_size = model.vocab_size;
}

void CompletionHandler::handle(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
  ActiveGuard active(active_);
  try {
    ApiRequest api = parse_api_request(req.body, endpoint, limits_);
    if (!api.model.empty() && api.model != model_.served_name) throw model_not_found_error(api.model);
    Request r = build_request(api, model_);
    ResponseContext ctx{endpoint, new_response_id(endpoint), model_.served_name,
                        static_cast<int64_t>(std::time(nullptr)), api.sampling.logprobs};
    r.external_id = ctx.id;
    std::shared_ptr<RequestStream> stream = engine_.submit(std::move(r));
    if (api.stream) respond_streaming(req, res, api, std::move(stream), ctx);
    else respond_whole(req, res, std::move(stream), ctx);
  } catch (const ApiError& e) {
    metrics_.count_rejected(e.status());
    send_error(res, e);
  }
}

void CompletionHandler::respond_streaming(const httplib::Request& req, httplib::Response& res, const ApiRequest& api,
                                          std::shared_ptr<RequestStream> stream, const ResponseContext& ctx) {
  auto st = std::make_shared<StreamState>(
      StreamState{&engine_, stream, ctx, api.include_usage,
                  ConnectionWatch(req.local_addr, req.local_port, req.remote_addr, req.remote_port), {}, false,
                  false, nullptr});
  st->active = std::make_shared<ActiveGuard>(active_);
  st->backlog = wait_admission(engine_, stream, st->watch);
  if (st->backlog.empty()) return;  // the client left before the request started
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [st](size_t, httplib::DataSink& sink) {
        if (st->done) {
          sink.done();
          return true;
        }
        std::vector<StreamEvent> events = std::move(st->backlog);
        st->backlog.clear();
        if (events.empty()) events = st->stream->take(kPollInterval);
        if (events.empty()) {
          if (st->watch.peer_closed()) {
            st->engine->cancel(st->stream);
            return false;
          }
          return true;  // called again at once; take() above paces the loop
        }
        std::string out = render_events(*st, events);
        if (!out.empty() && !sink.write(out.data(), out.size())) {
          st->engine->cancel(st->stream);
          return false;
        }
        if (st->done) sink.done();
        return true;
      },
      [st](bool) {
        // However the response ended, a request still running has lost its reader.
        if (!st->stream->closed()) st->engine->cancel(st->stream);
      });
}

void CompletionHandler::respond_whole(const httplib::Request& req, httplib::Response& res,
                                      std::shared_ptr<RequestStream> stream, const ResponseContext& ctx) {
  ConnectionWatch watch(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
  std::string text;
  std::vector<TokenLogprob> logprobs;
  for (;;) {
    for (auto& e : stream->take(kPollInterval)) {
      switch (e.kind) {
        case StreamEvent::Kind::Rejected: throw rejection_error(e);
        case StreamEvent::Kind::Accepted: break;
        case StreamEvent::Kind::Delta:
        case StreamEvent::Kind::Finished:
          text += e.text;
          logprobs.insert(logprobs.end(), e.logprobs.begin(), e.logprobs.end());
          break;
      }
      if (e.kind != StreamEvent::Kind::Finished) continue;
      if (e.finish_reason == FinishReason::Abort) throw shutting_down_error();
      if (e.finish_reason == FinishReason::Error) throw internal_error(e.message);
      res.set_content(dump_json(completion_response(ctx, text, logprobs, e.finish_reason, e.usage)),
                      "application/json");
      return;
    }
    if (watch.peer_closed()) {
      engine_.cancel(stream);
      return;
    }
  }
}

}  // namespace seer::server
