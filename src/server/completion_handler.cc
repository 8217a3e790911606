#include "server/completion_handler.h"

#include <algorithm>
#include <ctime>
#include <optional>

#include "server/api_error.h"
#include "server/conversation_id.h"
#include "server/reasoning_parser.h"
#include "server/sse.h"
#include "server/tool_formats/registry.h"

namespace seer::server {

namespace {

ApiError rejection_error(const StreamEvent& e) {
  if (e.status == 400 || e.status == 404) {
    const std::string param = e.code == "conversation_not_found" ? "conversation" : "";
    return ApiError(e.status, "invalid_request_error", param, e.code.empty() ? "invalid_request" : e.code, e.message);
  }
  if (e.status == 503) return shutting_down_error();
  return ApiError(e.status >= 500 ? e.status : 500, "server_error", "", "internal_error", e.message);
}

// completions' echo: the prompt as sent, or its token ids as text.
std::string echo_text(const ApiRequest& api, const Request& r, const Tokenizer& tok) {
  return api.prompt_text ? *api.prompt_text : tok.decode(r.prompt_tokens);
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

// How a chat reply is split (server/reasoning_parser.h) and where its reasoning is kept.
struct ReplyReasoning {
  std::optional<ReasoningTags> tags;  // nullopt: the model does not think, or /v1/completions
  bool starts_inside = false;         // the prompt opened the reasoning
  bool separate = false;              // false (--reasoning-format none): only counted
  ReasoningMemory* memory = nullptr;
  std::string tenant;
};

// One choice's progress (n of them per response).
struct ChoiceState {
  std::shared_ptr<RequestStream> stream;
  bool accepted = false;
  bool finished = false;
  bool started = false;  // streamed: its first chunk went out
  size_t text_offset = 0;  // bytes of text before the next token (completions' text_offset)
  ChoiceOutput out;
  Usage usage;
  // A thinking model's reply is split as it arrives (counted even with
  // --reasoning-format none); streamed: the reasoning, content and call ids sent.
  std::optional<ReasoningSplitter> splitter;
  std::string reasoning, content_sent;
  std::vector<std::string> call_ids;
};

// One response being produced: n choices, one RequestStream each. Owned by its
// ResponseChannel (attach) while the response is in progress; drain() runs on the
// connection's strand.
class ResponseJob : public std::enable_shared_from_this<ResponseJob> {
 public:
  ResponseJob(AsyncEngine& engine, std::vector<std::shared_ptr<RequestStream>> streams,
              std::shared_ptr<ResponseChannel> channel, ResponseContext ctx, bool streaming, bool include_usage,
              std::shared_ptr<std::atomic<int>> active, ReplyReasoning reasoning)
      : engine_(engine), channel_(std::move(channel)), ctx_(std::move(ctx)), streaming_(streaming),
        include_usage_(include_usage), active_(std::move(active)), reasoning_(std::move(reasoning)) {
    for (size_t i = 0; i < streams.size(); ++i) {
      ChoiceState c;
      c.stream = std::move(streams[i]);
      if (reasoning_.tags) c.splitter.emplace(*reasoning_.tags, reasoning_.starts_inside);
      c.out.index = static_cast<int32_t>(i);
      c.out.text = ctx_.echo_text;  // non-streamed: the echoed prompt first
      c.text_offset = ctx_.echo_text.size();
      choices_.push_back(std::move(c));
    }
  }
  ResponseJob(const ResponseJob&) = delete;
  ResponseJob& operator=(const ResponseJob&) = delete;

  void start() {
    channel_->attach(shared_from_this());
    channel_->on_close([this] {  // on the strand; the job is still attached: every choice ends
      for (ChoiceState& c : choices_) {
        engine_.cancel(c.stream);
        c.stream->set_listener(nullptr);
      }
    });
    std::weak_ptr<ResponseJob> weak = shared_from_this();
    std::weak_ptr<ResponseChannel> channel = channel_;
    for (ChoiceState& c : choices_)
      c.stream->set_listener([weak, channel] {  // engine thread: only schedule a drain
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
    try {
      for (ChoiceState& c : choices_) {
        for (auto& e : c.stream->take(std::chrono::milliseconds(0))) {
          if (!c.accepted) {
            if (e.kind == StreamEvent::Kind::Rejected) {
              if (!stream_begun_) throw rejection_error(e);
              e.kind = StreamEvent::Kind::Finished;  // another choice's stream is under way
              e.finish_reason = FinishReason::Error;
            }
            c.accepted = true;
            if (streaming_ && !stream_begun_) begin_stream();
          }
          if (streaming_) stream_event(c, e);
          else collect(c, e);
          if (done_) return;
        }
      }
      if (!streaming_ && all_finished()) respond();
    } catch (const ApiError& err) {
      HttpResponse res;
      send_error(res, err);
      finish_with(std::move(res));
    }
  }

  bool all_finished() const {
    return std::all_of(choices_.begin(), choices_.end(), [](const ChoiceState& c) { return c.finished; });
  }

  // The prompt once, the completion tokens of every choice (as OpenAI counts n).
  Usage total_usage() const {
    Usage u = choices_.front().usage;
    u.completion_tokens = u.reasoning_tokens = 0;
    for (const ChoiceState& c : choices_) {
      u.completion_tokens += c.usage.completion_tokens;
      u.reasoning_tokens += c.usage.reasoning_tokens;
    }
    return u;
  }

  HttpHeaders conversation_header() const {
    if (ctx_.conversation.empty()) return {};
    return {{kConversationHeader, ctx_.conversation}};
  }

  void begin_stream() {
    stream_begun_ = true;
    HttpHeaders headers = {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}};
    for (auto& h : conversation_header()) headers.push_back(std::move(h));
    channel_->start_stream(200, "text/event-stream", headers);
  }

  // A choice's first chunk: the assistant role (chat) or the echoed prompt (completions).
  std::string open_choice(ChoiceState& c) {
    c.started = true;
    if (ctx_.endpoint == Endpoint::ChatCompletions)
      return sse_json(stream_chunk(ctx_, ChoiceOutput{c.out.index, "", {}, FinishReason::None, 0, true}));
    if (ctx_.echo_text.empty()) return "";
    return sse_json(stream_chunk(ctx_, ChoiceOutput{c.out.index, ctx_.echo_text, {}, FinishReason::None, 0, false}));
  }

  std::string text_chunk(ChoiceState& c, std::string text, std::vector<TokenLogprob> logprobs,
                         std::string reasoning = "") {
    c.content_sent += text;
    c.reasoning += reasoning;
    ChoiceOutput o{c.out.index, std::move(text), std::move(logprobs), FinishReason::None, c.text_offset, false,
                   std::move(reasoning)};
    for (const TokenLogprob& lp : o.logprobs) c.text_offset += lp.token.size();
    return sse_json(stream_chunk(ctx_, o));
  }

  void stream_event(ChoiceState& c, StreamEvent& e) {
    std::string out;
    if (!c.started) out += open_choice(c);
    if (e.kind == StreamEvent::Kind::Accepted) {
      if (!out.empty()) channel_->write(std::move(out));
      return;
    }
    const bool finished = e.kind == StreamEvent::Kind::Finished;
    ReasoningSplit split = split_text(c, e.text, e.tokens, finished);
    ToolStreamOutput part = tools_ ? tools_->push(split.content) : ToolStreamOutput{split.content, {}};
    if (!part.content.empty() || !split.reasoning.empty() || !e.logprobs.empty())
      out += text_chunk(c, part.content, std::move(e.logprobs), std::move(split.reasoning));
    out += call_chunks(c, part.calls);
    if (finished) {
      c.finished = true;
      c.usage = e.usage;
      c.usage.reasoning_tokens = c.splitter ? c.splitter->reasoning_tokens() : 0;
      FinishReason reason = e.finish_reason == FinishReason::None ? FinishReason::Stop : e.finish_reason;
      bool called = false;
      if (tools_) {
        std::string held;
        const std::vector<ToolCallDelta> rest = tools_->finish(&held, &called);
        if (!held.empty()) out += text_chunk(c, held, {});
        out += call_chunks(c, rest);
        if (!called && reason == FinishReason::Stop) out += calls_in_reasoning(c, &called);
      }
      remember(c.content_sent, c.call_ids, c.reasoning);
      if (called && reason == FinishReason::Stop)
        out += sse_json(tool_calls_finish_chunk(ctx_));
      else
        out += sse_json(stream_chunk(ctx_, ChoiceOutput{c.out.index, "", {}, reason, 0, false}));
      if (all_finished()) {
        if (include_usage_) out += sse_json(usage_chunk(ctx_, total_usage()));
        out += sse_done();
      }
    }
    channel_->write(std::move(out));
    if (all_finished()) {
      done_ = true;
      for (ChoiceState& s : choices_) s.stream->set_listener(nullptr);
      channel_->finish();
    }
  }

  // Streamed tool-call deltas; the ids of calls are kept (a re-sent turn's key).
  std::string call_chunks(ChoiceState& c, const std::vector<ToolCallDelta>& calls) {
    std::string out;
    for (const ToolCallDelta& d : calls) {
      if (!d.id.empty()) c.call_ids.push_back(d.id);
      out += sse_json(tool_call_chunk(ctx_, d));
    }
    return out;
  }

  // Calls the model wrote inside its reasoning (none in the answer): sent whole at the
  // end; the reasoning streamed already keeps their text.
  std::string calls_in_reasoning(ChoiceState& c, bool* called) {
    auto calls = ctx_.tool_format->parse(c.reasoning, ctx_.tools, nullptr);
    if (!calls) return "";
    *called = true;
    std::vector<ToolCallDelta> deltas;
    for (size_t i = 0; i < calls->size(); ++i) {
      const auto index = static_cast<int32_t>(i);
      deltas.push_back({index, (*calls)[i].id, (*calls)[i].name, ""});
      deltas.push_back({index, "", "", (*calls)[i].arguments});
    }
    return call_chunks(c, deltas);
  }

  // The event's text as reasoning and content (all content for a model that does not
  // think, with --reasoning-format none, and for /v1/completions).
  ReasoningSplit split_text(ChoiceState& c, const std::string& text, int32_t tokens, bool finished) {
    if (!c.splitter) return {"", text};
    ReasoningSplit s = c.splitter->push(text, tokens);
    if (finished) {
      ReasoningSplit rest = c.splitter->finish();
      s.reasoning += rest.reasoning;
      s.content += rest.content;
    }
    if (!reasoning_.separate) return {"", text};
    return s;
  }

  void remember(const std::string& content, const std::vector<std::string>& call_ids, const std::string& reasoning) {
    if (reasoning_.memory) reasoning_.memory->remember(reasoning_.tenant, content, call_ids, reasoning);
  }

  void collect(ChoiceState& c, StreamEvent& e) {
    if (e.kind == StreamEvent::Kind::Accepted) return;
    const bool finished = e.kind == StreamEvent::Kind::Finished;
    ReasoningSplit split = split_text(c, e.text, e.tokens, finished);
    c.out.text += split.content;
    c.out.reasoning += split.reasoning;
    c.out.logprobs.insert(c.out.logprobs.end(), e.logprobs.begin(), e.logprobs.end());
    if (!finished) return;
    if (e.finish_reason == FinishReason::Abort) throw shutting_down_error();
    if (e.finish_reason == FinishReason::Error) throw internal_error(e.message);
    c.finished = true;
    c.out.finish = e.finish_reason;
    c.out.text_offset = ctx_.echo_text.size();
    c.usage = e.usage;
    c.usage.reasoning_tokens = c.splitter ? c.splitter->reasoning_tokens() : 0;
  }

  void respond() {
    HttpResponse res;
    ChoiceState& only = choices_.front();
    std::string content;
    std::optional<std::vector<ToolCall>> calls;
    if (!ctx_.tools.empty() && choices_.size() == 1 && only.out.finish == FinishReason::Stop) {
      calls = ctx_.tool_format->parse(only.out.text, ctx_.tools, &content);
      if (!calls && (calls = ctx_.tool_format->parse(only.out.reasoning, ctx_.tools, nullptr))) content = only.out.text;
    }
    std::vector<ChoiceOutput> outs;
    for (const ChoiceState& c : choices_) outs.push_back(c.out);
    if (calls) {
      std::vector<std::string> ids;
      for (const ToolCall& call : *calls) ids.push_back(call.id);
      remember(content, ids, only.out.reasoning);
    } else {
      for (const ChoiceOutput& o : outs) remember(o.text, {}, o.reasoning);
    }
    res.set_content(dump_json(calls ? tool_calls_response(ctx_, content, *calls, total_usage(), only.out.reasoning)
                                    : completion_response(ctx_, outs, total_usage())),
                    "application/json");
    res.headers = conversation_header();
    finish_with(std::move(res));
  }

  void finish_with(HttpResponse res) {
    done_ = true;
    for (ChoiceState& c : choices_) {
      c.stream->set_listener(nullptr);
      if (!c.finished) engine_.cancel(c.stream);  // one choice failed: the others end too
    }
    channel_->respond(std::move(res));
  }

  // Set at construction.
  AsyncEngine& engine_;
  std::shared_ptr<ResponseChannel> channel_;
  ResponseContext ctx_;
  bool streaming_;
  bool include_usage_;
  ActiveGuard active_;
  ReplyReasoning reasoning_;
  // Set from the engine thread, cleared on the strand.
  std::atomic<bool> scheduled_{false};
  // On the strand only.
  std::vector<ChoiceState> choices_;
  bool stream_begun_ = false;
  bool done_ = false;
  std::unique_ptr<ToolCallStream> tools_ =
      ctx_.tools.empty() ? nullptr : std::make_unique<ToolCallStream>(*ctx_.tool_format, ctx_.tools);
};

}  // namespace

void send_error(HttpResponse& res, const ApiError& e) {
  res.status = e.status();
  res.set_content(e.body(), "application/json");
  if (e.status() == 429 || e.status() == 503) res.set_header("Retry-After", std::to_string(e.retry_after()));
  if (e.status() == 401) res.set_header("WWW-Authenticate", "Bearer");
}

CompletionHandler::CompletionHandler(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics,
                                     ConversationIdRules conversation_ids, PreparePool& workers,
                                     TenantLimits& tenant_limits)
    : engine_(engine), model_(model), metrics_(metrics), conversation_ids_(conversation_ids),
      tenant_limits_(tenant_limits),
      reasoning_memory_(model.reasoning.memory_entries), workers_(workers) {
  limits_.vocab_size = model.vocab_size;
  limits_.tool_format = model.tool_format;
  conversation_ids_.max_bytes = limits_.max_conversation_bytes;
}

CompletionHandler::~CompletionHandler() = default;

// What a worker turns a request body into: the engine requests and the response's
// context, or the error to answer.
struct CompletionHandler::Prepared {
  std::vector<Request> choices;
  ResponseContext ctx;
  bool stream = false;
  bool include_usage = false;
  ReplyReasoning reasoning;
  std::string tenant;
  int64_t tokens = 0;  // the prompt once and every choice's max_tokens (TenantLimits)
  std::optional<ApiError> error;
};

CompletionHandler::Prepared CompletionHandler::prepare(const PrepareInput& in) {
  Prepared p;
  ApiRequest api = parse_api_request(in.body, in.endpoint, limits_);
  api.conversation = resolve_conversation_id(api.conversation, in.conversation_header, conversation_ids_);
  api.tenant = in.tenant;
  if (!api.model.empty() && api.model != model_.served_name) throw model_not_found_error(api.model);
  if (api.n > 1 && !api.conversation.empty())
    bad_request("n", "n > 1 is not supported with a conversation (which choice would continue it?)");
  if (model_.reasoning.separates()) (void)reasoning_memory_.restore(api.tenant, api.messages, api.message_tools);
  p.choices = build_choice_requests(api, model_);
  p.ctx = ResponseContext{in.endpoint,         new_response_id(in.endpoint),
                          model_.served_name,  static_cast<int64_t>(std::time(nullptr)),
                          api.sampling.logprobs, api.conversation};
  if (api.tool_choice.mode != ToolChoiceMode::None) p.ctx.tools = api.tools;
  p.ctx.tool_format = model_.tool_format ? model_.tool_format : &hermes_tool_format();
  p.ctx.top_logprobs = api.sampling.top_logprobs;
  if (api.echo) p.ctx.echo_text = echo_text(api, p.choices.front(), *model_.tokenizer);
  for (Request& r : p.choices) r.external_id = p.ctx.id;
  if (in.endpoint == Endpoint::ChatCompletions && model_.reasoning.tags) {
    const bool separate = model_.reasoning.separates();
    p.reasoning = {model_.reasoning.tags, prompt_opens_reasoning(p.choices.front().prompt_text, *model_.reasoning.tags),
                   separate, separate ? &reasoning_memory_ : nullptr, api.tenant};
  }
  p.stream = api.stream;
  p.include_usage = api.include_usage;
  p.tenant = api.tenant;
  p.tokens = p.choices.front().prompt_len();
  for (const Request& r : p.choices) p.tokens += r.sampling.max_tokens;
  return p;
}

void CompletionHandler::handle(const HttpRequest& req, HttpResponse& res, Endpoint endpoint) {
  // Parsing, compiling and tokenizing grow with the body: a worker does them and
  // posts the result back to this connection's strand, which enqueues it.
  auto in = std::make_shared<const PrepareInput>(
      PrepareInput{req.body, req.get_header_value(kConversationHeader), req.tenant, endpoint});
  std::shared_ptr<ResponseChannel> channel = res.defer();
  auto active = std::make_shared<ActiveGuard>(active_);
  const bool queued = workers_.try_submit([this, in, channel, active](bool expired) {
    auto p = std::make_shared<Prepared>();
    try {
      if (expired) throw prepare_budget_error(workers_.queue_budget_s());
      *p = prepare(*in);
    } catch (const ApiError& e) {
      p->error = e;
    } catch (const std::exception& e) {
      p->error = internal_error(e.what());
    }
    channel->post([this, p, channel, active] { start(*p, channel); });
  });
  if (!queued) refuse(channel, prepare_queue_full_error(workers_.max_pending()));
}

void CompletionHandler::start(Prepared& p, const std::shared_ptr<ResponseChannel>& channel) {
  if (p.error) return refuse(channel, *p.error);
  std::vector<std::shared_ptr<RequestStream>> streams;
  try {
    if (tenant_limits_.enabled())  // held until the response ends
      channel->attach(tenant_limits_.admit(p.tenant, static_cast<int32_t>(p.choices.size()), p.tokens));
    streams = engine_.submit_choices(std::move(p.choices));  // 429 when the queue is full
  } catch (const ApiError& e) {
    return refuse(channel, e);
  } catch (const std::exception& e) {  // nothing may escape onto the I/O thread
    return refuse(channel, internal_error(e.what()));
  }
  auto job = std::make_shared<ResponseJob>(engine_, std::move(streams), channel, std::move(p.ctx), p.stream,
                                           p.include_usage, active_, std::move(p.reasoning));
  job->start();
}

void CompletionHandler::refuse(const std::shared_ptr<ResponseChannel>& channel, const ApiError& e) {
  metrics_.count_rejected(e.status());
  HttpResponse res;
  send_error(res, e);
  channel->respond(std::move(res));
}

}  // namespace seer::server
