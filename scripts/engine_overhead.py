#!/usr/bin/env python3
"""Per-token serving overhead of `seer serve` (README, "Capacity on this CPU"): the
client-observed time between tokens of one stream at a time, minus the per-token time
of `seer generate` (forward pass + sampling, no engine loop, HTTP or streaming) on the
same model and thread count. Run it with several builds to compare them
(`--seer build/seer --seer /path/to/old/seer`).

usage: scripts/engine_overhead.py [--seer BIN ...] [--model F ...] [--threads 1]
       [--requests 8] [--tokens 128] [--placement os|split ...] [--json]
Without --model it uses the built-in stories260K (forward pass ~0.1 ms, so the
overhead dominates) and a random llama-125m Q8_0 written to a scratch folder.
Timings depend on the machine's load: run it on an otherwise idle machine.

The served time is split with the server's --iteration-log: "executor" is the mean
time of a decode step inside the executor (forward pass + sampling, as `seer generate`
times them), "loop" the mean start-to-start time of consecutive decode steps, so
executor - generate is the forward pass running slower inside the server, loop -
executor the engine loop around it, and served - loop the delivery to the client.
--placement split runs each case a second time with the compute threads (seer-engine,
seer-compute-N) on the first --threads CPUs and every other thread of the server,
and the client, on the others (os.sched_setaffinity by thread name): the experiment
behind thread placement (issue 30 item 4).
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


def place_threads(pid, threads):
    """Compute threads on CPUs [0, threads), everything else of `pid` on the rest;
    returns the CPUs left for the client."""
    cpus = sorted(os.sched_getaffinity(0))
    compute, rest = set(cpus[:threads]), set(cpus[threads:]) or set(cpus)
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            name = f.read().strip()
        is_compute = name == "seer-engine" or name.startswith("seer-compute-")
        os.sched_setaffinity(int(tid), compute if is_compute else rest)
    return rest


def decode_steps(log_path):
    """Mean executor time of single-token decode steps and mean start-to-start time
    between consecutive ones (the same request, context + 1), in ms."""
    with open(log_path) as f:
        its = [json.loads(line) for line in f]
    is_decode = [len(i["chunks"]) == 1 and i["chunks"][0][0] == 1 for i in its]
    decode = [i for i, d in zip(its, is_decode) if d]
    gaps = [its[k + 1]["start_s"] - its[k]["start_s"] for k in range(len(its) - 1)
            if is_decode[k] and is_decode[k + 1] and its[k + 1]["chunks"][0][1] == its[k]["chunks"][0][1] + 1]
    return 1000 * statistics.mean(i["elapsed_s"] for i in decode), 1000 * statistics.mean(gaps)


def served_tbt_ms(seer, model, trace, a, placement):
    """Client-observed ms per output token after the first, one stream at a time:
    (mean end-to-end - mean TTFT) / (tokens - 1), which does not depend on how the
    stream's events were grouped into reads; with the executor and loop times of the
    server's decode steps."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = os.path.join(a.work, "iterations.jsonl")
    proc = subprocess.Popen([seer, "serve", "--model", model, "--port", str(port), "--threads", str(a.threads),
                             "--policy", "sarathi", "--iteration-log", log], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, proc)
        client_cpus = place_threads(proc.pid, a.threads) if placement == "split" else None
        bench = [seer, "bench", "--url", url, "--trace", trace, "--max-concurrency", "1", "--json", "--no-progress"]
        out = subprocess.run(bench, capture_output=True, text=True, check=True,
                             preexec_fn=(lambda: os.sched_setaffinity(0, client_cpus)) if client_cpus else None).stdout
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    j = json.loads(out[out.index("{"):])
    executor, loop = decode_steps(log)
    return 1000.0 * (j["e2e_s"]["mean"] - j["ttft_s"]["mean"]) / (a.tokens - 1), executor, loop


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", action="append", help="seer binaries to compare (default build/seer)")
    ap.add_argument("--model", action="append", help="GGUF models (default: stories260K and llama-125m Q8_0)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--placement", choices=["os", "split"], action="append",
                    help="thread placement of the served runs (repeatable; default os: the scheduler's)")
    a = ap.parse_args()
    seers = a.seer or ["build/seer"]
    work = a.work = tempfile.mkdtemp(prefix="seer-overhead-")
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
    print(f"{'model':24s} {'seer':28s} {'placement':9s} {'generate':>9s} {'executor':>9s} {'loop':>9s} {'served':>9s}"
          f" {'overhead':>9s}  (ms per token; median of 3 served runs)", flush=True)
    for model in models:
        for seer in seers:
            gen = generate_ms_per_token(seer, model, a)
            for placement in a.placement or ["os"]:
                runs = [served_tbt_ms(seer, model, trace, a, placement) for _ in range(3)]
                tbt, executor, loop = (statistics.median(r[i] for r in runs) for i in range(3))
                rows.append({"seer": seer, "model": os.path.basename(model), "placement": placement,
                             "generate_ms_per_token": gen, "executor_ms_per_step": executor,
                             "loop_ms_per_step": loop, "served_tbt_ms": tbt, "overhead_ms_per_token": tbt - gen})
                print(f"{os.path.basename(model):24s} {seer[-28:]:28s} {placement:9s} {gen:9.3f} {executor:9.3f}"
                      f" {loop:9.3f} {tbt:9.3f} {tbt - gen:+9.3f}", flush=True)
    if a.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
