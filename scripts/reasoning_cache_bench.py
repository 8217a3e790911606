#!/usr/bin/env python3
"""Prefix-cache hits per turn of a 10-turn conversation with a thinking model's
template (Qwen3's), for clients that send the reasoning back and clients that drop
it (issue 51, item 5). A random tiny model carrying tests/data/chat_templates/qwen3
is served; a GBNF grammar makes it write what a thinking model writes
("<think>\\n...\\n</think>\\n\\n" then the answer or a tool call, then <|im_end|>).
Two conversations: a plain chat (a new user question each turn) and an agent's tool
loop (one question, then a tool call and its result each turn, where Qwen3 keeps
the reasoning of the turns after the last user query). Each client behaviour runs
on a fresh server; "drop" runs twice: with seer's reasoning memory (the default) and
with --reasoning-memory 0. Writes docs/results/reasoning_cache_hits.{json,md}.

usage: scripts/reasoning_cache_bench.py [--seer build/seer] [--turns 10]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from serve_process import free_port, wait_ready  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = '[a-z] [a-z ]{12,24} [a-z]'
CHAT_GRAMMAR = f'root ::= "<think>\\n" {WORDS} "\\n</think>\\n\\n" {WORDS} "<|im_end|>"'
TOOL_GRAMMAR = (f'root ::= "<think>\\n" {WORDS} "\\n</think>\\n\\n<tool_call>\\n{{\\"name\\": \\"lookup\\", '
                '\\"arguments\\": {\\"q\\": \\"" [a-z]{3,8} "\\"}}\\n</tool_call><|im_end|>"')
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Look a word up",
                                            "parameters": {"type": "object", "properties": {"q": {"type": "string"}},
                                                           "required": ["q"]}}}]
SYSTEM = {"role": "system", "content": "You are a careful assistant. Think before you answer."}


def post(url, body):
    req = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)


def assistant_turn(message, send_reasoning):
    turn = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        turn["tool_calls"] = message["tool_calls"]
    if send_reasoning and message.get("reasoning_content"):
        turn["reasoning_content"] = message["reasoning_content"]
    return turn


def conversation(url, scenario, send_reasoning, turns):
    messages = [SYSTEM]
    if scenario == "tools":
        messages.append({"role": "user", "content": "Find out what the words mean, one lookup at a time."})
    rows = []
    for t in range(turns):
        if scenario == "chat":
            messages.append({"role": "user", "content": f"Question {t + 1}: what comes next in the story?"})
        body = {"model": "q", "messages": messages, "temperature": 1.0, "seed": 100 + t, "max_tokens": 200,
                "grammar": CHAT_GRAMMAR if scenario == "chat" else TOOL_GRAMMAR}
        if scenario == "tools":
            body["tools"] = TOOLS
        reply = post(url, body)
        usage = reply["usage"]
        message = reply["choices"][0]["message"]
        rows.append({"turn": t + 1, "prompt_tokens": usage["prompt_tokens"],
                     "cached_tokens": usage["prompt_tokens_details"]["cached_tokens"],
                     "reasoning_tokens": usage["completion_tokens_details"]["reasoning_tokens"]})
        messages.append(assistant_turn(message, send_reasoning))
        if scenario == "tools":
            call = message["tool_calls"][0]
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": f"result {t + 1}"})
    return rows


def byte_level_vocabulary(seer, directory):
    """A vocabulary GGUF of the 256 bytes (GPT-2's byte-to-character map), one merge
    of two bytes no UTF-8 text holds (make-vocab wants one) and <|endoftext|> as EOS."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    vocab = {chars[b]: b for b in range(256)}
    vocab[chars[0xFE] + chars[0xFF]] = 257
    tokenizer = {"version": "1.0", "normalizer": None, "post_processor": None, "decoder": {"type": "ByteLevel"},
                 "added_tokens": [{"id": 256, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                                   "rstrip": False, "normalized": False, "special": True}],
                 "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
                 "model": {"type": "BPE", "vocab": vocab, "merges": [chars[0xFE] + " " + chars[0xFF]]}}
    with open(os.path.join(directory, "tokenizer.json"), "w") as f:
        json.dump(tokenizer, f)
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": "<|endoftext|>", "bos_token": None, "add_bos_token": False}, f)
    out = os.path.join(directory, "vocab.gguf")
    subprocess.run([seer, "make-vocab", "--hf-tokenizer", os.path.join(directory, "tokenizer.json"), "--pre", "qwen2",
                    "-o", out], check=True, stdout=subprocess.DEVNULL)
    return out


def serve(seer, model, extra):
    port = free_port()
    proc = subprocess.Popen([seer, "serve", "--model", model, "--port", str(port), "--served-model-name", "q",
                             "--tbt-slo", "0", "--chunk-cost", "analytic", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, proc)
    return proc, url


RUNS = [("send", True, []), ("drop", False, []), ("drop, --reasoning-memory 0", False, ["--reasoning-memory", "0"])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seer", default=os.path.join(ROOT, "build/seer"))
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/results/reasoning_cache_hits"))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    model = os.path.join(tmp, "qwen3-tiny.gguf")
    vocab = byte_level_vocabulary(a.seer, tmp)
    subprocess.run([a.seer, "make-model", "--shape", "tiny", "--type", "f32", "--quiet", "--context", "8192",
                    "--tokenizer-from", vocab,
                    "--chat-template", os.path.join(ROOT, "tests/data/chat_templates/qwen3/template.jinja"),
                    "--out", model], check=True)
    results = {"command": "scripts/reasoning_cache_bench.py --turns %d" % a.turns, "template": "qwen3", "runs": []}
    for scenario in ("chat", "tools"):
        for name, send, extra in RUNS:
            proc, url = serve(a.seer, model, extra)
            try:
                rows = conversation(url, scenario, send, a.turns)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
            results["runs"].append({"scenario": scenario, "client": name, "turns": rows})
    with open(a.out + ".json", "w") as f:
        json.dump(results, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write(markdown(results))
    print(markdown(results))


def markdown(results):
    lines = ["# Prefix-cache hits per turn with a thinking model's template (Qwen3)", "",
             f"`{results['command']}` (a random tiny model with the Qwen3 template fixture and a byte-level vocabulary; "
             "a grammar makes it write `<think>\\n...\\n</think>\\n\\n` and then an answer or a tool call). "
             "Each cell: cached_tokens / prompt_tokens of the turn's request "
             "(usage.prompt_tokens_details.cached_tokens).", ""]
    for scenario, title in (("chat", "Plain chat: a new user question every turn"),
                            ("tools", "Agent tool loop: one question, then a tool call and its result every turn")):
        runs = [r for r in results["runs"] if r["scenario"] == scenario]
        lines += [f"## {title}", "", "| turn | " + " | ".join(r["client"] for r in runs) + " |",
                  "|---:|" + "---:|" * len(runs)]
        for i in range(len(runs[0]["turns"])):
            cells = [f"{r['turns'][i]['cached_tokens']} / {r['turns'][i]['prompt_tokens']}" for r in runs]
            lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
        totals = [f"{sum(t['cached_tokens'] for t in r['turns'])} / {sum(t['prompt_tokens'] for t in r['turns'])}"
                  for r in runs]
        lines += ["| all | " + " | ".join(totals) + " |", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
