#!/usr/bin/env python3
"""Speculative decoding with prompt lookup (docs/speculative.md): output tokens/s of
`seer serve` at batch 1 (one request in flight) with and without
`--speculate ngram --draft-tokens K`, on an input-grounded workload: each prompt holds
a passage and asks for it again, so the output's n-grams recur in the prompt (and the
models' own output repeats itself). Greedy, ignore_eos, forced output lengths.
Writes docs/results/speculative.json and prints a Markdown table.

usage: scripts/experiments/speculative.py [--seer build/seer] [--threads 1]
       [--requests 6] [--concurrency 1] [--tokens 160] [--draft-tokens 4 8] [--model F ...]
       [--gates adaptive always] [--draft-model F] [--out docs/results/speculative.json]
--draft-model F: draft with that model (`seer serve --draft-model F`) instead of prompt
lookup, e.g. under load with --concurrency 4.
--gates: the --speculate-gate settings to run each K with (adaptive pauses a request's
drafting while its drafts do not pay; always never does).
Models: the built-in stories260K and a random llama-125m Q8_0 (`seer make-model`).
Timings depend on the machine's load (`uptime` is recorded).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from serve_process import free_port, wait_ready  # noqa: E402

PASSAGES = [
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, "
    "she saw a big, red ball. She wanted to play with it, but it was too high. Lily's mom said, \"Lily, let's "
    "go to the park.\"",
    "Tom and his dog Max went to the big hill. They liked to run and jump in the green grass. Tom saw a small "
    "bird in a tree. The bird was sad because it could not fly. Tom said, \"Do not be sad, little bird. I will "
    "help you.\"",
    "One day, a boy named Tim found a shiny box in the garden. He opened the box and saw a toy car inside. Tim "
    "was very happy. He ran to his mom and said, \"Look, Mom! I found a toy car!\" His mom smiled and said, "
    "\"That is a nice car, Tim.\"",
]


def prompt(i):
    p = PASSAGES[i % len(PASSAGES)]
    return f"Copy the story exactly.\nStory: {p}\nCopy: {p.split('.')[0]}."


def bench(seer, model, trace, threads, extra, concurrency=1):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([seer, "serve", "--model", model, "--port", str(port), "--threads", str(threads),
                             "--policy", "sarathi"] + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, proc)
        out = subprocess.run([seer, "bench", "--url", url, "--trace", trace, "--max-concurrency", str(concurrency), "--json",
                              "--no-progress", "--temperature", "0"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return json.loads(out[out.index("{"):])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--requests", type=int, default=6)
    ap.add_argument("--concurrency", type=int, default=1, help="requests in flight at once (1: batch 1)")
    ap.add_argument("--tokens", type=int, default=160)
    ap.add_argument("--draft-tokens", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--model", action="append", help="GGUF models (default: stories260K and llama-125m Q8_0)")
    ap.add_argument("--gates", nargs="+", default=["adaptive"], choices=["adaptive", "always"])
    ap.add_argument("--draft-model", help="draft with this GGUF (--draft-model) instead of prompt lookup")
    ap.add_argument("--out", default="docs/results/speculative.json")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="seer-spec-")
    models = a.model
    if not models:
        here = os.path.dirname(os.path.abspath(__file__))
        q8 = os.path.join(work, "llama-125m-q8_0.gguf")
        subprocess.run([a.seer, "make-model", "--shape", "llama-125m", "--type", "q8_0", "--out", q8], check=True,
                       capture_output=True)
        models = [os.path.join(here, "..", "..", "models", "stories260K.gguf"), q8]
    trace = os.path.join(work, "trace.jsonl")
    with open(trace, "w") as f:
        for i in range(a.requests):
            f.write(json.dumps({"id": f"r{i}", "arrival_s": 0, "prompt": prompt(i), "output_tokens": a.tokens}) + "\n")
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = []
    for model in models:
        base = None
        for k, gate in [(0, None)] + [(k, g) for k in a.draft_tokens for g in a.gates]:
            drafter = ["--draft-model", a.draft_model] if a.draft_model else ["--speculate", "ngram"]
            extra = [] if k == 0 else drafter + ["--draft-tokens", str(k), "--speculate-gate", gate]
            j = bench(a.seer, model, trace, a.threads, extra, a.concurrency)
            tps = j["throughput"]["output_tokens_per_s"]
            # Per stream: tokens after the first over the time after the first token.
            decode = (a.tokens - 1) / (j["e2e_s"]["mean"] - j["ttft_s"]["mean"])
            base = (tps, decode) if k == 0 else base
            spec = j.get("speculation") or {}
            row = {"model": os.path.basename(model), "drafter": os.path.basename(a.draft_model or "ngram"),
                   "draft_tokens": k, "gate": gate, "output_tokens_per_s": tps,
                   "decode_tokens_per_s": decode, "speed_up": tps / base[0], "decode_speed_up": decode / base[1],
                   "tbt_mean_s": j["tbt_s"]["mean"], "ttft_mean_s": j["ttft_s"]["mean"],
                   "acceptance_rate": spec.get("acceptance_rate"), "tokens_per_step": spec.get("tokens_per_step"),
                   "verify_steps": spec.get("verify_steps"), "paused_steps": spec.get("paused_steps"),
                   "tokens_per_iteration_mean": j["tokens_per_iteration"]["mean"]}
            rows.append(row)
            print(f"{row['model']:24s} K={k:2d} {gate or '-':8s} {tps:8.1f} tok/s  x{row['speed_up']:.2f}  decode {decode:8.1f} tok/s "
                  f"x{row['decode_speed_up']:.2f}  acceptance "
                  f"{row['acceptance_rate'] if row['acceptance_rate'] is not None else '-'}  tokens/step "
                  f"{row['tokens_per_step'] if row['tokens_per_step'] is not None else '-'}", flush=True)
    uptime_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    cmd = " ".join(["scripts/experiments/speculative.py"] + sys.argv[1:])
    result = {"command": cmd, "threads": a.threads, "requests": a.requests, "concurrency": a.concurrency,
              "output_tokens": a.tokens,
              "uptime_before": uptime_before, "uptime_after": uptime_after, "rows": rows}
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print("\n| model | draft tokens K | gate | output tok/s | speed-up | decode tok/s per stream | speed-up | "
          "acceptance | tokens/step | steps verifying / paused |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        acc = f"{100 * r['acceptance_rate']:.0f} %" if r["acceptance_rate"] is not None else "-"
        tps = f"{r['tokens_per_step']:.2f}" if r["tokens_per_step"] is not None else "-"
        steps = f"{r['verify_steps']} / {r['paused_steps']}" if r["verify_steps"] is not None else "-"
        print(f"| {r['model']} | {r['draft_tokens'] or 'off'} | {r['gate'] or '-'} | {r['output_tokens_per_s']:.1f} | "
              f"{r['speed_up']:.2f}x | {r['decode_tokens_per_s']:.1f} | {r['decode_speed_up']:.2f}x | {acc} | {tps} | "
              f"{steps} |")


if __name__ == "__main__":
    main()
