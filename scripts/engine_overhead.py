#!/usr/bin/env python3
"""Per-token serving overhead of `seer serve` (README, "Capacity on this CPU"): the
client-observed time between tokens of one stream at a time, minus the per-token time
of `seer generate` (forward pass + sampling, no engine loop, HTTP or streaming) on the
same model and thread count. Run it with several builds to compare them
(`--seer build/seer --seer /path/to/old/seer`).

usage: scripts/engine_overhead.py [--seer BIN ...] [--model F ...] [--threads 1]
       [--requests 8] [--tokens 128] [--json]
Without --model it uses the built-in stories260K (forward pass ~0.1 ms, so the
overhead dominates) and a random llama-125m Q8_0 written to a scratch folder.
Timings depend on the machine's load: run it on an otherwise idle machine.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

from serve_process import free_port, wait_ready


def generate_ms_per_token(seer, model, a):
    """Decode ms/token of `seer generate`, best of 3 (it prints decode tok/s on stderr)."""
    best = None
    for _ in range(3):
        err = subprocess.run([seer, "generate", "--model", model, "--prompt", "Once upon a time", "-n",
                              str(a.tokens), "--temp", "0", "--threads", str(a.threads), "--ignore-eos"],
                             capture_output=True, text=True, check=True).stderr
        m = re.search(r"decode: .*?\(([0-9.]+) tok/s\)", err)
        if not m:
            raise RuntimeError(f"no decode tok/s in `seer generate` output: {err[-300:]}")
        ms = 1000.0 / float(m.group(1))
        best = ms if best is None else min(best, ms)
    return best


def served_tbt_ms(seer, model, trace, a):
    """Client-observed ms per output token after the first, one stream at a time:
    (mean end-to-end - mean TTFT) / (tokens - 1), which does not depend on how the
    stream's events were grouped into reads."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([seer, "serve", "--model", model, "--port", str(port), "--threads", str(a.threads),
                             "--policy", "sarathi"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, proc)
        out = subprocess.run([seer, "bench", "--url", url, "--trace", trace, "--max-concurrency", "1", "--json",
                              "--no-progress"], capture_output=True, text=True, check=True).stdout
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    j = json.loads(out[out.index("{"):])
    return 1000.0 * (j["e2e_s"]["mean"] - j["ttft_s"]["mean"]) / (a.tokens - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", action="append", help="seer binaries to compare (default build/seer)")
    ap.add_argument("--model", action="append", help="GGUF models (default: stories260K and llama-125m Q8_0)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    seers = a.seer or ["build/seer"]
    work = tempfile.mkdtemp(prefix="seer-overhead-")
    models = a.model
    if not models:
        here = os.path.dirname(os.path.abspath(__file__))
        q8 = os.path.join(work, "llama-125m-q8_0.gguf")
        subprocess.run([seers[0], "make-model", "--shape", "llama-125m", "--type", "q8_0", "--out", q8], check=True,
                       capture_output=True)
        models = [os.path.join(here, "..", "models", "stories260K.gguf"), q8]
    trace = os.path.join(work, "trace.jsonl")
    with open(trace, "w") as f:
        for i in range(a.requests):
            f.write(json.dumps({"id": f"r{i}", "arrival_s": 0, "prompt_tokens": 16, "output_tokens": a.tokens}) + "\n")
    rows = []
    for model in models:
        for seer in seers:
            gen = generate_ms_per_token(seer, model, a)
            tbt = statistics.median(served_tbt_ms(seer, model, trace, a) for _ in range(3))
            rows.append({"seer": seer, "model": os.path.basename(model), "generate_ms_per_token": gen,
                         "served_tbt_ms": tbt, "overhead_ms_per_token": tbt - gen})
            print(f"{os.path.basename(model):28s} {seer:40s} generate {gen:7.3f} ms/token  served TBT {tbt:7.3f} ms"
                  f"  overhead {tbt - gen:+7.3f} ms", flush=True)
    if a.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
