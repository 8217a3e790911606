#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/knob_options.h"
#include "cli/predictor_options.h"
#include "common/builtin_model.h"
#include "common/error.h"
#include "common/thread_name.h"
#include "server/redis_url.h"
#include "scheduler/scheduler.h"
#include "server/api_keys.h"
#include "server/async_engine.h"
#include "server/byte_size.h"
#include "server/http_server.h"
#include "server/serving_stack.h"
#include "server/shared_kv_metrics.h"

namespace seer::cli {

namespace {

// $XDG_CACHE_HOME/seer (or ~/.cache/seer): the iteration-time profiles that size the
// token budget, so that a restart on the same model and machine starts at once.
std::string default_profile_cache() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) return std::string(xdg) + "/seer/iteration-profiles.json";
  if (home && *home) return std::string(home) + "/.cache/seer/iteration-profiles.json";
  return "";
}

int32_t parse_swap_blocks(const std::string& v) {
  if (v == "auto") return server::kAutoHostKvBlocks;
  try {
    size_t used = 0;
    const long n = std::stol(v, &used);
    if (used == v.size() && n >= 0 && n <= (1 << 24)) return static_cast<int32_t>(n);
  } catch (const std::exception&) {  // reported below
  }
  fail("--swap-blocks must be auto or a number of blocks in [0, 16777216], got '{}'", v);
}

struct ServeOptions {
  server::ServingConfig stack;
  server::HttpOptions http;
  std::string kv_memory;
  std::string shared_kv_max_bytes;
  std::string kv_type = kv_type_name(kDefaultKvType);
  std::string swap_blocks = "auto";
  std::string profile_cache = default_profile_cache();
  size_t max_queue = 1024;
  double shutdown_timeout_s = 10;
  std::vector<std::string> api_keys;
  std::string api_key_file;
};

// SIGINT/SIGTERM may land on any thread (libraries such as OpenBLAS start their own
// before main), so the handler only writes the signal number to a pipe; a watcher
// thread reads it and stops the server.
int g_signal_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int sig) {
  const char c = static_cast<char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &c, 1);
}

void install_signal_handlers() {
  if (pipe(g_signal_pipe) != 0) fail("cannot create the signal pipe");
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // re-reads --api-key-file
  // A client that hangs up must not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
}

// Every connection is a descriptor: raise the soft limit to the hard one, and keep
// --max-connections below it (with room for the model, logs and the listener).
void fit_connections_to_descriptor_limit(server::HttpOptions& http) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  constexpr rlim_t kReserved = 64;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > kReserved &&
      static_cast<rlim_t>(http.max_connections) > rl.rlim_cur - kReserved) {
    http.max_connections = static_cast<int>(rl.rlim_cur - kReserved);
    std::fprintf(stderr, "seer serve: --max-connections lowered to %d (open-file limit %llu)\n", http.max_connections,
                 static_cast<unsigned long long>(rl.rlim_cur));
  }
}

bool is_loopback(const std::string& host) {
  return host.rfind("127.", 0) == 0 || host == "::1" || host == "localhost";
}

// Reads signals until one that stops the server; SIGHUP re-reads the key file.
void wait_for_stop_signal(server::ApiKeys& keys, double shutdown_timeout_s) {
  for (;;) {
    char sig = 0;
    if (read(g_signal_pipe[0], &sig, 1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (sig != SIGHUP) {
      if (sig == SIGINT || sig == SIGTERM)
        std::fprintf(stderr, "seer serve: %s received, finishing in-flight requests (up to %.1f s)\n",
                     sig == SIGINT ? "SIGINT" : "SIGTERM", shutdown_timeout_s);
      return;
    }
    if (keys.key_file().empty()) {
      std::fprintf(stderr, "seer serve: SIGHUP ignored (no --api-key-file to re-read)\n");
      continue;
    }
    const std::string error = keys.reload();
    if (error.empty())
      std::fprintf(stderr, "seer serve: SIGHUP: %zu API keys in force from %s\n", keys.size(), keys.key_file().c_str());
    else
      std::fprintf(stderr, "seer serve: SIGHUP: %s; the previous keys stay in force\n", error.c_str());
  }
}

int serve(ServeOptions o) {
  install_signal_handlers();
  server::ApiKeys keys(o.api_keys, o.api_key_file);
  o.http.access.keys = &keys;
  if (!keys.enabled() && !is_loopback(o.http.host))
    std::fprintf(stderr, "seer serve: warning: listening on %s without --api-key: the API is open to anyone who can "
                 "reach this address (docs/security.md)\n", o.http.host.c_str());
  fit_connections_to_descriptor_limit(o.http);
  if (!o.kv_memory.empty()) o.stack.kv_memory_bytes = server::parse_byte_size(o.kv_memory, "--kv-memory");
  o.stack.kv_type = parse_kv_type(o.kv_type);
  o.stack.host_kv_blocks = parse_swap_blocks(o.swap_blocks);
  o.stack.profile_cache = o.profile_cache == "none" ? "" : o.profile_cache;
  o.http.policy = o.stack.policy;
  if (!o.shared_kv_max_bytes.empty())
    o.stack.shared_kv_max_bytes = server::parse_byte_size(o.shared_kv_max_bytes, "--shared-kv-max-bytes");
  o.stack.model_path = model_or_builtin(o.stack.model_path, "seer serve");
  server::ServerMetrics metrics;
  if (!o.http.replica_name.empty()) metrics.registry().set_constant_labels({{"replica", o.http.replica_name}});
  if (!o.stack.shared_kv.empty()) {
    server::Histogram& latency = server::shared_kv_latency_histogram(metrics.registry());
    o.stack.shared_kv_latency = [&latency](double s) { latency.observe(s); };
  }
  server::ServingStack stack(o.stack);
  metrics.watch_predictor(stack.predictor(), stack.predictor_buckets());
  metrics.set_token_budget(stack.token_budget());
  server::AsyncEngine engine(stack.engine(), stack.tokenizer(), metrics, {o.max_queue, stack.shared_kv()});
  server::HttpServer http(engine, stack.model_info(), metrics, o.http);
  const int port = http.bind();
  std::fprintf(stderr, "seer serve: %s\n", stack.summary().c_str());
  std::printf("seer serve: listening on http://%s:%d\n", o.http.host.c_str(), port);
  std::printf("seer serve: live view at http://%s:%d/ ; try:\n"
              "  curl -N http://%s:%d/v1/completions -H 'Content-Type: application/json' -d "
              "'{\"prompt\": \"Once upon a time\", \"max_tokens\": 64, \"stream\": true}'\n",
              o.http.host.c_str(), port, o.http.host.c_str(), port);
  std::fflush(stdout);

  const auto grace = std::chrono::milliseconds(static_cast<int64_t>(o.shutdown_timeout_s * 1000));
  std::thread watcher([&] {
    set_thread_name("seer-signals");
    wait_for_stop_signal(keys, o.shutdown_timeout_s);
    http.stop(grace);
  });
  const bool ok = http.serve();
  if (!ok) {  // the listener failed by itself: wake the watcher so it can finish
    const char c = 0;
    [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &c, 1);
  }
  watcher.join();
  std::fprintf(stderr, "seer serve: stopped\n");
  return ok ? 0 : 1;
}

// docs/security.md
void add_access_options(CLI::App* cmd, ServeOptions& o) {
  cmd->add_option("--api-key", o.api_keys,
                  "API key clients must send as 'Authorization: Bearer KEY' (repeatable; each key is its own tenant)");
  cmd->add_option("--api-key-file", o.api_key_file,
                  "File of API keys, one per line as 'KEY [TENANT]' (keys may share a tenant); re-read on SIGHUP");
  cmd->add_flag("--metrics-public", o.http.access.metrics_public,
                "Serve /metrics and /v1/state without a key (e.g. to a Prometheus on a private network)");
  cmd->add_option("--allowed-hosts", o.http.access.allowed_hosts,
                  "Host header names answered (comma-separated; '*': any). Default: the listen address, "
                  "localhost, 127.0.0.1, ::1")
      ->delimiter(',');
  cmd->add_flag("--trust-client-conversation-ids", o.http.trust_client_conversation_ids,
                "Without API keys, accept conversation ids that clients choose (only behind a trusted front end "
                "that chooses them); otherwise clients send \"conversation\": \"new\" and get an issued id");
}

}  // namespace

void add_serve(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API");
  auto o = std::make_shared<ServeOptions>();
  cmd->add_option("--model", o->stack.model_path,
                  "GGUF model or llama2.c checkpoint to serve (default: the built-in stories260K)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tokenizer", o->stack.tokenizer_path, "llama2.c tokenizer.bin (for .bin checkpoints)")
      ->check(CLI::ExistingFile);
  add_knob_options(cmd, o->stack);  // the knobs `seer sim` shares (scheduler/scheduler_knobs.h)
  cmd->add_option("--draft-model", o->stack.draft_model,
                  "Speculative decoding with a draft model: a smaller GGUF with the same tokenizer proposes "
                  "--draft-tokens per request per step, greedy on its own K/V (docs/speculative.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--draft-slots", o->stack.draft_slots,
                  "Requests the draft model keeps K/V for at once (each max-model-len tokens; beyond it the least "
                  "recently used starts again)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--host", o->http.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", o->http.port, "Port to listen on (0: any free port, printed on stdout)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  auto* blocks = cmd->add_option("--kv-blocks", o->stack.kv_blocks, "Device KV blocks");
  auto* memory = cmd->add_option("--kv-memory", o->kv_memory,
                                 "Device KV memory, e.g. 512M or 2G (default 1G, at least one full context)");
  blocks->excludes(memory);
  cmd->add_option("--kv-type", o->kv_type, kKvTypeHelp)->capture_default_str();
  cmd->add_option("--iteration-log", o->stack.iteration_log,
                  "Write one JSON line per engine iteration (time and plan shape) to FILE, for `seer sim validate "
                  "--iteration-log` and `seer sim calibrate --from-log`");
  cmd->add_option("--swap-blocks", o->swap_blocks,
                  "Host-tier KV blocks (swap preemption, the conversation cache's second tier): auto sizes it from "
                  "free RAM (min 4 GiB, a quarter of what is available), 0: none")
      ->capture_default_str();
  cmd->add_flag("--prefix-reuse,!--no-prefix-reuse", o->stack.prefix_reuse,
                "Reuse the KV of a cached history that a request re-sends (chained block hashes, per tenant), any "
                "policy (default: on)");
  cmd->add_option("--max-conversations", o->stack.max_conversations,
                  "Conversations and prefix entries kept, all tenants together; beyond it the tenant holding the "
                  "most loses its least recently active (prefix entries first)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-conversations-per-tenant", o->stack.max_conversations_per_tenant,
                  "Conversations and prefix entries one tenant may keep (0: only --max-conversations)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--conversation-ttl", o->stack.conversation_ttl_s,
                  "Seconds an idle conversation is kept (0: until evicted by --max-conversations)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--chunk-cost", o->stack.chunk_cost,
                  "pensieve eviction's Cost(l): profile (the backend's time of recomputing a chunk at position l, "
                  "measured at start-up) or analytic (l + 6 d_model)")
      ->capture_default_str();
  cmd->add_option("--shared-kv", o->stack.shared_kv,
                  "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]: a KV tier shared by replicas below the host tier; "
                  "conversation histories and K/V chunks go there, and a replica continues a conversation it does "
                  "not hold from it (docs/deploy.md)")
      ->check([](const std::string& url) {  // before the model loads: a bad URL fails at once
        try {
          (void)parse_redis_url(url, "--shared-kv");
          return std::string();
        } catch (const Error& e) {
          const std::string what = e.what(), flag = "--shared-kv: ";  // CLI11 names the flag itself
          return what.rfind(flag, 0) == 0 ? what.substr(flag.size()) : what;
        }
      });
  cmd->add_option("--shared-kv-ttl", o->stack.shared_kv_ttl_s,
                  "Seconds of idleness after which the shared tier forgets a conversation")
      ->capture_default_str();
  cmd->add_option("--shared-kv-max-bytes", o->shared_kv_max_bytes,
                  "Cap on the K/V bytes this replica keeps in the shared tier, oldest conversation evicted first "
                  "(e.g. 4G; default: none, Redis's maxmemory decides)");
  cmd->add_option("--shared-kv-timeout-ms", o->stack.shared_kv_timeout_ms,
                  "Bound on connecting to Redis and on each call (the I/O runs off the engine loop)")
      ->capture_default_str();
  cmd->add_flag("--shared-kv-write-through,!--shared-kv-evicted-only", o->stack.shared_kv_write_through,
                "Store every finished turn's K/V (default), or only the chunks the host tier drops");
  cmd->add_option("--profile-cache", o->profile_cache,
                  "JSON file caching the --tbt-slo profile (keyed by model + machine + SLO; reused when it "
                  "matches; 'none': profile at every start)")
      ->capture_default_str();
  add_predictor_options(cmd, o->stack.predictor, o->stack.padding);
  cmd->add_option("--max-queue", o->max_queue, "Waiting requests beyond which new ones get 429")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-body-bytes", o->http.max_body_bytes, "Largest request body (413 beyond)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--served-model-name", o->stack.served_name, "Model name in the API (default: the file name)");
  cmd->add_option("--chat-template", o->stack.chat_template_file,
                  "Jinja chat template file to use instead of the model's tokenizer.chat_template")
      ->check(CLI::ExistingFile);
  cmd->add_option("--reasoning-format", o->stack.reasoning_format,
                  "Thinking models: 'separate' returns the reasoning as reasoning_content, 'none' leaves it in content")
      ->capture_default_str()
      ->check(CLI::IsMember({"separate", "none"}));
  cmd->add_option("--tool-call-format", o->stack.tool_call_format,
                  "How the model writes tool calls, read from replies and forced by tool_choice (default: the one its "
                  "chat template shows): hermes, llama3_json, mistral, mistral_args, qwen3_coder, pythonic, granite, "
                  "functools, nemotron, deepseek_r1, deepseek_v3, generic_json");
  cmd->add_option("--reasoning-budget", o->stack.reasoning_budget,
                  "Reasoning tokens after which the close tag is forced (-1: no cap; a request's max_reasoning_tokens "
                  "overrides it)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 1 << 20));
  cmd->add_option("--reasoning-memory", o->stack.reasoning_memory,
                  "Assistant turns whose generated reasoning is kept, to restore it when a client sends the history "
                  "back without reasoning_content (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--threads", o->stack.threads, "Compute threads (0: all cores)")->capture_default_str();
  cmd->add_option("--http-threads", o->http.threads,
                  "I/O threads of the event-driven HTTP server (connections and streams hold none)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--prepare-threads", o->http.prepare.threads,
                  "Workers that parse, compile (schemas, grammars) and tokenize request bodies off the I/O threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--prepare-queue", o->http.prepare.max_pending,
                  "Requests being prepared or waiting for a worker beyond which new ones get 429")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--prepare-budget", o->http.prepare.queue_budget_s,
                  "Seconds a request may wait for a prepare worker (then 503 with Retry-After)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-connections-per-tenant", o->http.tenant_limits.max_connections,
                  "Open connections one tenant may hold once a request on them carried its key (0: only "
                  "--max-connections); more get 503")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-requests-per-tenant", o->http.tenant_limits.max_requests,
                  "Requests one tenant (API key) may have waiting or running (0: only --max-queue); more get 429")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tenant-tokens-per-minute", o->http.tenant_limits.tokens_per_minute,
                  "Token rate per tenant, prompt + max_tokens charged at admission (0: none); beyond it 429 with "
                  "Retry-After")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tenant-burst-tokens", o->http.tenant_limits.burst_tokens,
                  "Tokens a tenant may use at once before the rate applies (0: one minute's worth)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-connections", o->http.max_connections, "Open connections beyond which new ones get 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--header-timeout", o->http.header_timeout_s,
                  "Seconds a connection may take to send a request header (then it is closed)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--body-timeout", o->http.body_timeout_s, "Seconds to receive a request body after its header")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--keep-alive-timeout", o->http.keep_alive_timeout_s,
                  "Seconds an idle keep-alive connection stays open")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--shutdown-timeout", o->shutdown_timeout_s,
                  "Seconds in-flight requests may take to finish after SIGINT/SIGTERM before they are aborted")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--replica-name", o->http.replica_name,
                  "Name of this replica behind a load balancer: a `replica` label on every /metrics series and "
                  "a field of /health (docs/deploy.md)")
      ->check([](const std::string& v) {
        if (v.empty() || v.size() > 64) return std::string("must be 1-64 characters");
        for (unsigned char c : v)
          if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return std::string("must be [A-Za-z0-9_.-]");
        return std::string();
      });
  cmd->add_option("--seed", o->stack.seed, "Seed of requests that set none")->capture_default_str();
  add_access_options(cmd, *o);
  cmd->callback([o, &rc] { rc = serve(*o); });
}

}  // namespace seer::cli
