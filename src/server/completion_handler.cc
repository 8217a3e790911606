#include "server/completion_handler.h"

#include <ctime>
#include <optional>

#include "server/api_error.h"
#include "server/conversation_id.h"
#include "server/sse.h"

namespace seer::server {

namespace {

ApiError rejection_error(const StreamEvent& e) {
  if (e.status == 400) return ApiError(400, "invalid_request_error", "", "invalid_request", e.message);
  if (e.status == 503) return shutting_down_error();
  return ApiError(e.status >= 500 ? e.status : 500, "server_error", "", "internal_error", e.message);
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

// One response being produced. Owned by its ResponseChannel (attach) while the
// response is in progress; drain() runs on the connection's strand.
class ResponseJob : public std::enable_shared_from_this<ResponseJob> {
 public:
  ResponseJob(AsyncEngine& engine, std::shared_ptr<RequestStream> stream, std::shared_ptr<ResponseChannel> channel,
              ResponseContext ctx, bool streaming, bool include_usage, std::shared_ptr<std::atomic<int>> active)
      : engine_(engine), stream_(std::move(stream)), channel_(std::move(channel)), ctx_(std::move(ctx)),
        streaming_(streaming), include_usage_(include_usage), active_(std::move(active)) {}
  ResponseJob(const ResponseJob&) = delete;
  ResponseJob& operator=(const ResponseJob&) = delete;

  void start() {
    channel_->attach(shared_from_this());
    channel_->on_close([this] {  // on the strand; the job is still attached
      engine_.cancel(stream_);
      stream_->set_listener(nullptr);
    });
    std::weak_ptr<ResponseJob> weak = shared_from_this();
    std::weak_ptr<ResponseChannel> channel = channel_;
    stream_->set_listener([weak, channel] {  // engine thread: only schedule a drain
      auto job = weak.lock();
      auto ch = channel.lock();
      if (!job || !ch || job->scheduled_.exchange(true)) return;
      ch->post([weak] {
        if (auto j = weak.lock()) j->drain();
      });
    });
  }

 private:
  void drain() {
    scheduled_.store(false);
    if (done_ || channel_->closed()) return;
    std::vector<StreamEvent> events = stream_->take(std::chrono::milliseconds(0));
    try {
      for (auto& e : events) {
        if (!accepted_) {
          if (e.kind == StreamEvent::Kind::Rejected) throw rejection_error(e);
          accepted_ = true;
          if (streaming_) begin_stream();
        }
        if (streaming_) stream_event(e);
        else collect(e);
        if (done_) break;
      }
    } catch (const ApiError& err) {
      HttpResponse res;
      send_error(res, err);
      finish_with(std::move(res));
    }
  }

  HttpHeaders conversation_header() const {
    if (ctx_.conversation.empty()) return {};
    return {{kConversationHeader, ctx_.conversation}};
  }

  void begin_stream() {
    HttpHeaders headers = {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}};
    for (auto& h : conversation_header()) headers.push_back(std::move(h));
    channel_->start_stream(200, "text/event-stream", headers);
    if (ctx_.endpoint == Endpoint::ChatCompletions)
      channel_->write(sse_json(stream_chunk(ctx_, "", {}, FinishReason::None, /*first=*/true)));
  }

  void stream_event(StreamEvent& e) {
    if (e.kind == StreamEvent::Kind::Accepted) return;
    std::string out;
    ToolStreamOutput part = tools_ ? tools_->push(e.text) : ToolStreamOutput{e.text, {}};
    if (!part.content.empty() || !e.logprobs.empty())
      out += sse_json(stream_chunk(ctx_, part.content, e.logprobs, FinishReason::None, false));
    for (const ToolCallDelta& d : part.calls) out += sse_json(tool_call_chunk(ctx_, d));
    if (e.kind == StreamEvent::Kind::Finished) {
      FinishReason reason = e.finish_reason == FinishReason::None ? FinishReason::Stop : e.finish_reason;
      bool called = false;
      if (tools_) {
        std::string held;
        const std::vector<ToolCallDelta> rest = tools_->finish(&held, &called);
        if (!held.empty()) out += sse_json(stream_chunk(ctx_, held, {}, FinishReason::None, false));
        for (const ToolCallDelta& d : rest) out += sse_json(tool_call_chunk(ctx_, d));
      }
      if (called && reason == FinishReason::Stop)
        out += sse_json(tool_calls_finish_chunk(ctx_));
      else
        out += sse_json(stream_chunk(ctx_, "", {}, reason, false));
      if (include_usage_) out += sse_json(usage_chunk(ctx_, e.usage));
      out += sse_done();
    }
    channel_->write(std::move(out));
    if (e.kind == StreamEvent::Kind::Finished) {
      done_ = true;
      stream_->set_listener(nullptr);
      channel_->finish();
    }
  }

  void collect(StreamEvent& e) {
    if (e.kind == StreamEvent::Kind::Accepted) return;
    text_ += e.text;
    logprobs_.insert(logprobs_.end(), e.logprobs.begin(), e.logprobs.end());
    if (e.kind != StreamEvent::Kind::Finished) return;
    if (e.finish_reason == FinishReason::Abort) throw shutting_down_error();
    if (e.finish_reason == FinishReason::Error) throw internal_error(e.message);
    HttpResponse res;
    std::string content;
    std::optional<std::vector<ToolCall>> calls;
    if (!ctx_.tool_names.empty() && e.finish_reason == FinishReason::Stop)
      calls = parse_tool_calls(text_, ctx_.tool_names, &content);
    res.set_content(dump_json(calls ? tool_calls_response(ctx_, content, *calls, e.usage)
                                    : completion_response(ctx_, text_, logprobs_, e.finish_reason, e.usage)),
                    "application/json");
    res.headers = conversation_header();
    finish_with(std::move(res));
  }

  void finish_with(HttpResponse res) {
    done_ = true;
    stream_->set_listener(nullptr);
    channel_->respond(std::move(res));
  }

  // Set at construction.
  AsyncEngine& engine_;
  std::shared_ptr<RequestStream> stream_;
  std::shared_ptr<ResponseChannel> channel_;
  ResponseContext ctx_;
  bool streaming_;
  bool include_usage_;
  ActiveGuard active_;
  // Set from the engine thread, cleared on the strand.
  std::atomic<bool> scheduled_{false};
  // On the strand only.
  bool accepted_ = false;
  bool done_ = false;
  std::string text_;
  std::vector<TokenLogprob> logprobs_;
  std::unique_ptr<ToolCallStream> tools_ =
      ctx_.tool_names.empty() ? nullptr : std::make_unique<ToolCallStream>(ctx_.tool_names);
};

}  // namespace

void send_error(HttpResponse& res, const ApiError& e) {
  res.status = e.status();
  res.set_content(e.body(), "application/json");
  if (e.status() == 429 || e.status() == 503) res.set_header("Retry-After", "1");
  if (e.status() == 401) res.set_header("WWW-Authenticate", "Bearer");
}

CompletionHandler::CompletionHandler(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics,
                                     ConversationIdRules conversation_ids)
    : engine_(engine), model_(model), metrics_(metrics), conversation_ids_(conversation_ids) {
  limits_.vocab_size = model.vocab_size;
  conversation_ids_.max_bytes = limits_.max_conversation_bytes;
}

void CompletionHandler::handle(const HttpRequest& req, HttpResponse& res, Endpoint endpoint) {
  try {
    ApiRequest api = parse_api_request(req.body, endpoint, limits_);
    api.conversation =
        resolve_conversation_id(api.conversation, req.get_header_value(kConversationHeader), conversation_ids_);
    api.tenant = req.tenant;
    if (!api.model.empty() && api.model != model_.served_name) throw model_not_found_error(api.model);
    Request r = build_request(api, model_);
    std::vector<std::string> tool_names;
    if (api.tool_choice.mode != ToolChoiceMode::None)
      for (const auto& t : api.tools) tool_names.push_back(t.name);
    ResponseContext ctx{endpoint,       new_response_id(endpoint),
                        model_.served_name, static_cast<int64_t>(std::time(nullptr)),
                        api.sampling.logprobs, api.conversation, std::move(tool_names)};
    r.external_id = ctx.id;
    std::shared_ptr<RequestStream> stream = engine_.submit(std::move(r));
    auto job = std::make_shared<ResponseJob>(engine_, std::move(stream), res.defer(), ctx, api.stream,
                                             api.include_usage, active_);
    job->start();
  } catch (const ApiError& e) {
    metrics_.count_rejected(e.status());
    send_error(res, e);
  }
}

}  // namespace seer::server
