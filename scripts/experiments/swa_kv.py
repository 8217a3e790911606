#!/usr/bin/env python3
"""K/V of sliding-window layers, freed behind the window (docs/models.md, "K/V of
sliding-window layers"; issue 28): one long request at a time through `seer serve`
on a random Gemma 3 model with Gemma 3 1B's K/V layout (26 layers, five local to one
global, window 512, one K/V head of 256; F16 K/V; one query head instead of four and
a small hidden size, to keep this CPU's time down), with --swa-kv window (local
layers in block groups of their own, trimmed as the window moves) and --swa-kv full
(every position of every layer kept, as before). The K/V a request holds is read
from the server's iteration log (kv_bytes: the device blocks in use when each step was
planned, its allocations included); the greedy tokens of the two layouts are compared.
Writes docs/results/swa_kv.md, .json and .svg.

usage: scripts/experiments/swa_kv.py [--seer build/seer] [--threads 2]
        [--contexts 2048,8192,16384,32000] [--out docs/results] [--report-only]
--report-only rewrites the .md and .svg from the .json already in --out. The K/V
bytes do not depend on the machine; the seconds in the .json do (and on its load).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from serve_process import free_port, wait_ready  # noqa: E402
from svg_chart import line_chart  # noqa: E402

LAYERS, LOCAL, WINDOW, KV_HEADS, HEAD_DIM, BLOCK = 26, 22, 512, 1, 256, 16
BYTES_PER_LAYER_TOKEN = 2 * KV_HEADS * HEAD_DIM * 2  # K and V, F16
OUTPUT_TOKENS = 16
CHUNK = 1024  # prompt tokens per step (sarathi's token budget)


def make_model(seer, path):
    subprocess.run([seer, "make-model", "--arch", "gemma3", "--layers", str(LAYERS), "--dim", "256", "--heads", "1",
                    "--kv-heads", str(KV_HEADS), "--head-dim", str(HEAD_DIM), "--ffn", "512", "--context", "32768",
                    "--sliding-window", str(WINDOW), "--tied", "--type", "f16", "--seed", "5", "-o", path],
                   check=True, capture_output=True)


def serve_one(seer, model, mode, prompt_len, threads, tmp):
    port = free_port()
    log = os.path.join(tmp, f"iter-{mode}-{prompt_len}.jsonl")
    cmd = [seer, "serve", "--model", model, "--port", str(port), "--swa-kv", mode, "--kv-type", "f16",
           "--kv-memory", "1GiB", "--swap-blocks", "0", "--policy", "sarathi", "--token-budget", str(CHUNK),
           "--chunk-cost", "analytic",
           "--threads", str(threads), "--iteration-log", log]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, proc)
        body = {"prompt": [(i * 7 + 3) % 250 + 1 for i in range(prompt_len)], "max_tokens": OUTPUT_TOKENS,
                "temperature": 0, "ignore_eos": True}
        req = urllib.request.Request(url + "/v1/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        start = time.time()
        reply = json.loads(urllib.request.urlopen(req, timeout=3600).read())
        seconds = time.time() - start
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    with open(log) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    return {"mode": mode, "prompt_tokens": prompt_len, "peak_kv_bytes": max(s["kv_bytes"] for s in steps),
            "final_kv_bytes": steps[-1]["kv_bytes"], "steps": len(steps), "seconds": round(seconds, 2),
            "text": reply["choices"][0]["text"]}


def expected_bytes(prompt, mode):
    """The layouts' arithmetic at the largest step: blocks of 16 positions; every step
    holds the blocks of its sequence so far, less, with the window, each local layer's
    blocks behind the window of the step's first query. A pool block holds G = 4
    layers (the global ones): the local layers take whole groups of G, the last one
    padded (kv/kv_layer_groups.h)."""
    per_block = LAYERS - LOCAL
    local_slots = -(-LOCAL // per_block) * per_block
    steps = [(c, min(c + CHUNK, prompt)) for c in range(0, prompt, CHUNK)]  # prompt chunks
    steps += [(p, p + 1) for p in range(prompt, prompt + OUTPUT_TOKENS - 1)]  # decodes
    peak = 0
    for first, end in steps:
        blocks = -(-end // BLOCK)
        if mode == "full":
            layer_blocks = blocks * LAYERS
        else:
            layer_blocks = blocks * per_block + (blocks - max(0, first - WINDOW + 1) // BLOCK) * local_slots
        peak = max(peak, layer_blocks * BLOCK * BYTES_PER_LAYER_TOKEN)
    return peak


def svg(rows, lengths):
    return line_chart([(f"--swa-kv {mode}", color,
                        [(r["prompt_tokens"] + OUTPUT_TOKENS, r["peak_kv_bytes"] / 2**20) for r in rows if r["mode"] == mode])
                       for mode, color in (("full", "#d62728"), ("window", "#1f77b4"))],
                      "request length (tokens)", "peak K/V (MiB)", xmax=max(lengths) * 1.05, xticks=lengths)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--contexts", default="2048,8192,16384,32000")
    ap.add_argument("--out", default="docs/results")
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    if a.report_only:
        with open(os.path.join(a.out, "swa_kv.json")) as f:
            saved = json.load(f)
        return report(saved["rows"], saved["command"], a.out)
    contexts = [int(c) for c in a.contexts.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "gemma3-1b-layout.gguf")
        make_model(a.seer, model)
        for n in contexts:
            for mode in ("window", "full"):
                r = serve_one(a.seer, model, mode, n, a.threads, tmp)
                rows.append(r)
                print(f"{n:>6} prompt tokens, --swa-kv {mode:<6}: peak {r['peak_kv_bytes'] / 2**20:8.1f} MiB "
                      f"(layout arithmetic {expected_bytes(n, mode) / 2**20:8.1f}), {r['seconds']:.1f} s", flush=True)
    os.makedirs(a.out, exist_ok=True)
    command = "scripts/experiments/swa_kv.py " + " ".join(sys.argv[1:])
    with open(os.path.join(a.out, "swa_kv.json"), "w") as f:
        json.dump({"model": "random gemma3, Gemma 3 1B K/V layout (26 layers, 22 local, window 512, "
                            "1 K/V head of 256; 1 query head, hidden 256), F16 K/V, block 16",
                   "command": command, "rows": rows}, f, indent=1)
    return report(rows, command, a.out)


def report(rows, command, out):
    contexts = sorted({r["prompt_tokens"] for r in rows})
    same = all(next(r for r in rows if r["prompt_tokens"] == n and r["mode"] == "full")["text"] ==
               next(r for r in rows if r["prompt_tokens"] == n and r["mode"] == "window")["text"] for n in contexts)
    with open(os.path.join(out, "swa_kv.svg"), "w") as f:
        f.write(svg(rows, [n + OUTPUT_TOKENS for n in contexts]))
    lines = ["# K/V per long request, sliding-window layers freed or kept",
             "",
             f"`{command}` (issue 28): one request at a time through `seer serve --policy sarathi "
             f"--token-budget {CHUNK}` "
             "on a random `gemma3` model with Gemma 3 1B's K/V layout (26 layers, 22 local with a window of "
             "512, 4 global; one K/V head of 256; one query head and hidden size 256, to keep the CPU time "
             "down), F16 K/V in blocks of 16, "
             f"{OUTPUT_TOKENS} output tokens. Peak K/V: the most device-block bytes in use when a step was planned "
             "(the server's `--iteration-log` `kv_bytes`), that step's allocations included. Layout arithmetic: "
             "the blocks each layout holds at its largest step (full: every layer; window: the global layers "
             "in full, the local layers the blocks from the step's first window on, in groups of 4 layers: 22 local "
             "layers take 6 groups, 24 layer slots).",
             "",
             "| request tokens | --swa-kv full: peak MiB | --swa-kv window: peak MiB | window / full | arithmetic full / window MiB |",
             "|---:|---:|---:|---:|---:|"]
    for n in contexts:
        full = next(r for r in rows if r["prompt_tokens"] == n and r["mode"] == "full")
        win = next(r for r in rows if r["prompt_tokens"] == n and r["mode"] == "window")
        lines.append(f"| {n + OUTPUT_TOKENS} | {full['peak_kv_bytes'] / 2**20:.1f} | {win['peak_kv_bytes'] / 2**20:.1f} | "
                     f"{win['peak_kv_bytes'] / full['peak_kv_bytes']:.2f} | {expected_bytes(n, 'full') / 2**20:.1f} / "
                     f"{expected_bytes(n, 'window') / 2**20:.1f} |")
    lines += ["",
              f"Same greedy tokens in both layouts at every length: {'yes' if same else 'NO'}.",
              "",
              f"With the window, a prompt chunk's local blocks are held until the step's commit trims what is "
              f"behind the next window, so the peak is the global layers in full plus, for each local layer, "
              f"the window and one chunk of {CHUNK}. A policy that computes a whole prompt in one step "
              "(`--policy vllm`) holds every local block of the prompt during that step.",
              "",
              "![peak K/V per request](swa_kv.svg)", ""]
    lines.insert(-2, "The .json also has each run's seconds; they were taken while other jobs ran on the 2-core "
                     "machine, so they compare nothing (the window's effect on attention time is `bench_forward`'s "
                     "llama-125m+swa256 row in docs/models.md).")
    lines.insert(-2, "")
    with open(os.path.join(out, "swa_kv.md"), "w") as f:
        f.write("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
