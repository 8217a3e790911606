#!/usr/bin/env python3
"""What constrained decoding adds to a real decode step, and what the executor hides
(issue 31, docs/structured-outputs.md "Cost").

Runs benchmarks/bench_constrained_step on a random llama-125m Q8_0 (Llama-2 vocabulary,
32,000 tokens; `seer make-model`): B requests decode with and without the typical JSON
schema, on the executor as it was (masks after the forward pass, requests sampled one
after another) and as it is (masks on a second thread during the forward pass, requests
sampled on --sampling-threads threads). Records the machine's load before and after.

  scripts/experiments/constrained_step.py [--build build] [--batches 1,8,32] [--repeats 3]
Writes docs/results/constrained_step.{md,json}.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--cold-steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sampling-threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    a = ap.parse_args()
    model = os.path.join(tempfile.mkdtemp(), "llama-125m-q8_0.gguf")
    subprocess.run([os.path.join(a.build, "seer"), "make-model", "--shape", "llama-125m", "--type", "q8_0",
                    "--seed", "1", "-o", model, "-q"], check=True)
    load_before = load_average()
    print(f"bench_constrained_step, batches {a.batches} (load {load_before:.1f})", file=sys.stderr, flush=True)
    out = subprocess.run([os.path.join(a.build, "benchmarks", "bench_constrained_step"), "--model", model,
                          "--batches", a.batches, "--steps", str(a.steps), "--cold-steps", str(a.cold_steps),
                          "--repeats", str(a.repeats), "--threads", str(a.threads),
                          "--sampling-threads", str(a.sampling_threads), "--json"],
                         check=True, capture_output=True, text=True)
    load_after = load_average()
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    os.makedirs(a.out, exist_ok=True)
    meta = {"command": "scripts/experiments/constrained_step.py", "model": "random llama-125m Q8_0 (seed 1)",
            "steps": a.steps, "cold_steps": a.cold_steps, "repeats": a.repeats,
            "load_before": load_before, "load_after": load_after, "nproc": os.cpu_count(), "rows": rows}
    with open(os.path.join(a.out, "constrained_step.json"), "w") as f:
        json.dump(meta, f, indent=1)
    lines = ["# Constrained decoding on a real decode step (bench_constrained_step)", "",
             f"`scripts/experiments/constrained_step.py`: random llama-125m Q8_0 (32,000-token Llama-2",
             f"vocabulary), {a.threads} forward threads on this {os.cpu_count()}-core machine, load average "
             f"{load_before:.1f} before and {load_after:.1f} after",
             f"(other work was running). B requests decode (prompt 32, up to 96 tokens, temperature 0.8),",
             "with and without the typical JSON schema (benchmarks/typical_schema.h). *serial*: the",
             "executor before the overlap (masks after the forward pass, requests sampled one after",
             f"another); *overlap*: masks on a second thread during the forward pass, requests sampled on",
             f"{a.sampling_threads} threads. ms per decode step, mean of steps {a.cold_steps + 1}-{a.steps} (warm), best of",
             f"{a.repeats} runs taken in turn; *cold*: the mean of the first {a.cold_steps} steps of a fresh grammar.", "",
             "| batch | serial | serial + schema | added | cold | overlap | overlap + schema | added | cold |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['batch']} | {r['serial_free_ms']:.2f} | {r['serial_schema_ms']:.2f} | "
                     f"{r['serial_added_pct']:+.1f} % | {r['serial_schema_cold_ms']:.2f} | {r['overlap_free_ms']:.2f} | "
                     f"{r['overlap_schema_ms']:.2f} | {r['overlap_added_pct']:+.1f} % | {r['overlap_schema_cold_ms']:.2f} |")
    with open(os.path.join(a.out, "constrained_step.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
