#!/usr/bin/env python3
"""Multi-turn chat, seer with no flags against llama.cpp's server (README "Multi-turn
chat against llama-server"): a random llama-125m Q8_0 with the Llama-2 vocabulary,
ShareGPT conversations (at most 6 turns, answers capped at 160 tokens) replayed by
`seer bench --multi-turn`, a stateless OpenAI-style client that re-sends the whole
history every turn, as chat UIs do. Rows:

  llama-server   `llama-server -np 16 -c 65536 -cb -fa on` (reuses each slot's common prefix)
  seer           `seer serve` with no flags (prefix caching, host tier, TBT-derived budget)
  seer, no prefix reuse   `seer serve --no-prefix-reuse` (the default before issue 30)
  seer, stateful client   `seer serve`, the client sends only the new message + conversation id

Writes OUT/multiturn_vs_llamacpp.{md,json}.

usage: scripts/experiments/multiturn_vs_llamacpp.py [--llama-server PATH] [--seer build/seer]
        [--threads 2] [--turns 60] [--rate 0.08] [--out docs/results]
Without --llama-server only the seer rows are measured. Timings depend on the
machine's load: run it on an otherwise idle machine.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from serve_process import free_port, wait_ready  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VOCAB = os.path.join(ROOT, "..", "shared", "data", "tokenizer-tests", "ggml-vocab-llama-spm.gguf")


def make_inputs(a, work):
    model = os.path.join(work, "llama-125m-q8_0.gguf")
    subprocess.run([a.seer, "make-model", "--shape", "llama-125m", "--type", "q8_0", "--seed", "1",
                    "--tokenizer-from", VOCAB, "-q", "-o", model], check=True)
    full = os.path.join(work, "full.jsonl")
    subprocess.run([a.seer, "trace", "--lengths", "sharegpt-multiturn", "--data-dir", a.data_dir, "--num",
                    str(a.turns), "--rate", str(a.rate), "--think-mean", str(a.think), "--seed", "3", "--out", full],
                   check=True, capture_output=True)
    trace = os.path.join(work, "trace.jsonl")
    with open(full) as f, open(trace, "w") as out:
        for line in f:
            e = json.loads(line)
            if e.get("turn", 0) >= 6:
                continue
            e["output_tokens"] = max(1, min(e["output_tokens"], a.max_output))
            out.write(json.dumps(e) + "\n")
    return model, trace


def bench(a, url, trace, label, stateful):
    cmd = [a.seer, "bench", "--url", url, "--trace", trace, "--multi-turn", "--label", label, "--json",
           "--no-progress"] + (["--stateful"] if stateful else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("{"):])


def run_server(a, cmd, url, log_path, trace, label, stateful):
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(url, proc, deadline_s=120, path="/v1/models")
        print(f"== {label}", file=sys.stderr, flush=True)
        return bench(a, url, trace, label, stateful)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()


def row(label, flags, j):
    c = j.get("cache") or {}
    hits = c.get("hit_tokens_device", 0) + c.get("hit_tokens_host", 0)
    return {"server": label, "flags": flags, "turns": j["requests"], "failed": j.get("failed_requests", 0),
            "ttft_p50": j["ttft_s"]["p50"], "ttft_mean": j["ttft_s"]["mean"], "ttft_p99": j["ttft_s"]["p99"],
            "tbt_p99": j["tbt_s"]["p99"], "prompt_tokens": c.get("prompt_tokens"), "reused_tokens": hits if c else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-server", default="")
    ap.add_argument("--seer", default=os.path.join(ROOT, "build", "seer"))
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--turns", type=int, default=60)
    ap.add_argument("--rate", type=float, default=0.08, help="conversations per second")
    ap.add_argument("--think", type=float, default=10, help="mean think time (s)")
    ap.add_argument("--max-output", type=int, default=160)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    a = ap.parse_args()
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        model, trace = make_inputs(a, work)
        seer = [a.seer, "serve", "--model", model, "--threads", str(a.threads)]
        runs = []
        if a.llama_server:
            runs.append(("llama-server", "-np 16 -c 65536 -cb -fa on",
                         [a.llama_server, "-m", model, "-t", str(a.threads), "-np", "16", "-c", "65536", "-cb", "-fa",
                          "on"], False))
        runs += [("seer", "(no flags)", seer, False),
                 ("seer, no prefix reuse", "--no-prefix-reuse", seer + ["--no-prefix-reuse"], False),
                 ("seer, stateful client", "(no flags; bench --stateful)", seer, True)]
        for label, flags, cmd, stateful in runs:
            port = free_port()
            j = run_server(a, cmd + ["--port", str(port)], f"http://127.0.0.1:{port}", os.path.join(work, "server.log"),
                           trace, label, stateful)
            rows.append(row(label, flags, j))
    load_after = os.getloadavg()[0]
    result = {"command": "scripts/experiments/multiturn_vs_llamacpp.py" + (" --llama-server PATH" if a.llama_server
                                                                           else ""),
              "turns": a.turns, "rate": a.rate, "think": a.think, "max_output": a.max_output, "threads": a.threads,
              "load_before": load_before, "load_after": load_after, "rows": rows}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "multiturn_vs_llamacpp.json"), "w") as f:
        json.dump(result, f, indent=1)
    base = next((r for r in rows if r["server"] == "llama-server"), None)
    lines = ["# Multi-turn chat: seer with no flags vs llama.cpp's server", "",
             f"`{result['command']}`: random llama-125m Q8_0 (Llama-2 vocabulary), {a.turns} turns of ShareGPT "
             f"conversations (at most 6 turns each, answers capped at {a.max_output} tokens), {a.rate} conversations/s, "
             f"think time exponential with mean {a.think} s, `seer bench --multi-turn` (stateless client re-sending the "
             f"whole history unless marked stateful), {a.threads} threads per server. Machine load average "
             f"{load_before:.2f} before, {load_after:.2f} after.", "",
             "| server | flags | turns (failed) | TTFT p50 / mean / p99 (s) | TBT p99 (ms) | history reused |"
             + (" TTFT p50 / p99 vs llama-server |" if base else ""),
             "|---|---|---:|---|---:|---:|" + ("---:|" if base else "")]
    for r in rows:
        reused = "slot prefix" if r["server"] == "llama-server" else (
            f"{r['reused_tokens']:,} of {r['prompt_tokens']:,} tokens" if r["prompt_tokens"] else "-")
        ratio = (f" {r['ttft_p50'] / base['ttft_p50']:.2f}x / {r['ttft_p99'] / base['ttft_p99']:.2f}x |" if base
                 else "")
        lines.append(f"| {r['server']} | `{r['flags']}` | {r['turns']} ({r['failed']}) | {r['ttft_p50']:.3f} / "
                     f"{r['ttft_mean']:.3f} / {r['ttft_p99']:.3f} | {r['tbt_p99'] * 1e3:.0f} | {reused} |{ratio}")
    with open(os.path.join(a.out, "multiturn_vs_llamacpp.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
