#!/usr/bin/env bash
# Regenerates fuzz/http_seeds, the seed corpus of fuzz_http: each file holds the bytes of
# one HTTP/1.1 connection (CRLF line endings), well-formed requests to every kind of
# route, pipelined and chunked ones, malformed ones, and request-smuggling vectors
# (CL.TE, TE.CL, obfuscated Transfer-Encodings, trailers, obs-fold, bare CR/LF), each
# followed by the request a proxy reading the other framing would see. Not run by CI
# (the seeds are committed). The API key is one fuzz_http.cc configures.
set -euo pipefail
export LC_ALL=C  # ${#body} counts bytes
out="$(dirname "$0")/http_seeds"
rm -rf "$out"
mkdir -p "$out"

key="sk-fuzz-alpha-0123456789"
issued="conv_0123456789abcdef0123456789abcdef"

# request METHOD PATH BODY [HEADER...]: one request with Host and the headers; a body
# comes with a JSON Content-Type and its Content-Length.
request() {
  local method=$1 path=$2 body=$3
  shift 3
  printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n' "$method" "$path"
  for h in "$@"; do printf '%s\r\n' "$h"; done
  if [ -n "$body" ]; then printf 'Content-Type: application/json\r\nContent-Length: %d\r\n' "${#body}"; fi
  printf '\r\n%s' "$body"
}

# nested N: N arrays around a 1, as JSON.
nested() { printf '%*s' "$1" '' | tr ' ' '['; printf '1'; printf '%*s' "$1" '' | tr ' ' ']'; }

request POST /v1/completions \
  '{"model":"stories260K","prompt":"Once upon a time","max_tokens":16,"temperature":0.7,"top_p":0.9,"top_k":40,"seed":42}' \
  >"$out/completions"
request POST /v1/chat/completions \
  '{"model":"stories260K","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":32}' \
  >"$out/chat_stream"
request POST /v1/chat/completions \
  "{\"messages\":[{\"role\":\"user\",\"content\":\"and then?\"}],\"conversation\":\"$issued\"}" \
  "Authorization: Bearer $key" "X-Conversation-Id: $issued" >"$out/conversation_auth"
request POST /v1/completions '{"prompt":"A new story","conversation":"new","ignore_eos":true,"priority":5,"slo":{"ttft_s":0.5,"tbt_s":0.05,"deadline_s":10}}' \
  "X-Conversation-Id: new" >"$out/conversation_new"
{
  request GET /health ''
  request POST /v1/completions '{"prompt":"two in a row","max_tokens":4}' "Authorization: Bearer $key"
} >"$out/pipelined"
printf 'POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%s' \
  $'a\r\n{"prompt":\r\n10\r\n"chunked body", \r\nf\r\n"max_tokens":8}\r\n0\r\n\r\n' >"$out/chunked"
request POST /v1/completions '{"prompt":"continue?","stream":true}' "Expect: 100-continue" >"$out/expect_100_continue"
request GET /metrics '' "Authorization: Bearer $key" >"$out/metrics"
request DELETE /v1/conversations/x '' "Authorization: Bearer $key" "X-Conversation-Id: x" >"$out/delete_conversation"
request POST /v1/completions '{"prompt":"who am I"}' "Authorization: Bearer $key" "Authorization: Bearer other" \
  >"$out/duplicate_header"
printf 'POST /v1/completions HTTP/1.1\r\nHost: [::1]:8080\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n\r\n{"prompt":"plain"}' \
  >"$out/text_plain"
request POST /v1/chat/completions '{"messages":[{"role":"user","content":"mine"}],"conversation":"acct-alice-1"}' \
  "X-Conversation-Id: acct-bob-2" >"$out/conversation_mismatch"
printf 'G@T /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n' >"$out/bad_method"
printf 'GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-Long: %s\r\n\r\n' "$(printf '%*s' 12000 '' | tr ' ' a)" \
  >"$out/huge_header_line"
printf 'POST /v1/completions HTTP/1.1\r\nHost: evil.example:80\r\nContent-Type: application/json\r\nContent-Length: 9000\r\n\r\n{"prompt":"too big"' \
  >"$out/body_too_large"
printf 'GET / HTTP/1.0\r\n\r\n' >"$out/http10_no_host"
request POST /v1/completions "{\"prompt\":$(nested 30)}" >"$out/deep_nesting"
request POST /v1/chat/completions "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"metadata\":$(nested 40)}" \
  >"$out/too_deep"
request POST /v1/completions '{"prompt":"biased","logit_bias":{"13":5.5,"31999":-100,"0":0},"logprobs":0}' >"$out/logit_bias"
request POST /v1/chat/completions \
  '{"messages":[{"role":"developer","content":"Stop early."},{"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]},{"role":"assistant","content":null}],"stop":["\n","END","\u00e9t\u00e9"],"logprobs":true,"frequency_penalty":0.5,"presence_penalty":-0.5,"repetition_penalty":1.1,"min_p":0.05}' \
  >"$out/stop_array"
request POST /v1/completions '{"prompt":[1,2,3,31999],"max_tokens":8,"stop":"\n\n","n":1,"best_of":1,"echo":false}' >"$out/token_ids"
request POST /v1/completions '{"prompt":[[15043,29892,3186]],"tool_choice":"none","store":false,"response_format":{"type":"text"}}' \
  >"$out/token_ids_batch"

# Request smuggling: a POST whose framing is ambiguous, then a smuggled GET.
smuggled=$'GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n'
chunk=$'2\r\n{}\r\n0\r\n\r\n'
# smuggle NAME HEAD_LINES BODY: the POST with HEAD_LINES (CRLF-terminated), BODY, then the smuggled GET.
# Seeds named smuggle_* must be refused (tests/server/http_request_reader_test.cc); the
# others are well-formed, their GET a pipelined request.
smuggle() {
  printf 'POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n%s\r\n%s%s' \
    "$2" "$3" "$smuggled" >"$out/$1"
}
smuggle smuggle_cl_te $'Content-Length: 13\r\nTransfer-Encoding: chunked\r\n' "$chunk"
smuggle smuggle_te_cl $'Transfer-Encoding: chunked\r\nContent-Length: 4\r\n' "$chunk"
smuggle smuggle_xchunked $'Transfer-Encoding: xchunked\r\n' ''
smuggle smuggle_xchunked_cl $'Transfer-Encoding: xchunked\r\nContent-Length: 2\r\n' '{}'
smuggle smuggle_chunked_identity $'Transfer-Encoding: chunked, identity\r\n' "$chunk"
smuggle smuggle_gzip_chunked $'Transfer-Encoding: gzip, chunked\r\n' "$chunk"
smuggle smuggle_te_space_colon $'Transfer-Encoding : chunked\r\n' "$chunk"
smuggle smuggle_te_twice $'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n' "$chunk"
smuggle smuggle_te_split $'Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n' "$chunk"
smuggle chunked_mixed_case $'Transfer-Encoding: ChUnKeD\r\n' "$chunk"
smuggle chunked_tab $'Transfer-Encoding:\tchunked\r\n' "$chunk"
smuggle smuggle_te_empty $'Transfer-Encoding: \r\nContent-Length: 2\r\n' '{}'
smuggle smuggle_te_obs_fold $'Transfer-Encoding:\r\n chunked\r\n' "$chunk"
smuggle smuggle_obs_fold $'X-Note: one\r\n\ttwo\r\nContent-Length: 2\r\n' '{}'
smuggle smuggle_cl_twice $'Content-Length: 2\r\nContent-Length: 3\r\n' '{}'
smuggle content_length_list $'Content-Length: 2, 2\r\n' '{}'
smuggle smuggle_bare_lf $'X-Note: one\nContent-Length: 2\r\n' '{}'
smuggle smuggle_bare_cr $'X-Note: one\rtwo\r\nContent-Length: 2\r\n' '{}'
smuggle smuggle_chunk_size_bare_lf $'Transfer-Encoding: chunked\r\n' $'2\n{}\r\n0\r\n\r\n'
smuggle chunked_extension $'Transfer-Encoding: chunked\r\n' $'2;name=value\r\n{}\r\n0\r\n\r\n'
smuggle trailer_authorization $'Transfer-Encoding: chunked\r\n' \
  $'2\r\n{}\r\n0\r\nAuthorization: Bearer '"$key"$'\r\nHost: evil.example\r\nX-Conversation-Id: new\r\nContent-Type: text/plain\r\n\r\n'
smuggle expect_unknown $'Expect: 200-ok\r\nContent-Length: 2\r\n' '{}'
printf 'POST /v1/completions HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%s%s' \
  "$chunk" "$smuggled" >"$out/smuggle_http10_te"
printf 'GET /v1/models HTTP/1.1\nHost: localhost\n\n%s' "$smuggled" >"$out/lf_line_endings"
