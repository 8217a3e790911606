#!/usr/bin/env python3
"""The CPU simulator on a trace shape its calibration never saw (issue 33 item 6;
docs/simulator.md): 60 bursty requests (gamma arrivals, burstiness 0.3, mean prompt
400 / output 100 tokens) under sarathi with a 128-token budget, served by `seer serve`
--repeats times (the spread of the real runs) and simulated with two calibrations:

  synthetic   `seer sim calibrate` alone, what a user runs first (timed synthetic
              shapes, no served log);
  served log  that entry refitted with `seer sim calibrate --from-log` to the
              iterations of serving runs on the *other* shapes of scripts/sim_vs_real.py
              (short chat, long prompts, bursty chat; another seed), never this one.

For TTFT, TBT and end-to-end latency (mean, p50, p99) and throughput: the real value
(mean of the runs, and their min-max spread relative to it) and each calibration's
error (sim - real) / real. Writes OUT/sim_vs_real_heldout.{md,json}.

usage: scripts/sim_vs_real_heldout.py [--seer build/seer] [--threads 1] [--rate 0.4]
       [--repeats 3] [--fit-num 24] [--out docs/results]
Timings depend on the machine's load: run it on an otherwise idle machine.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from sim_vs_real import TRACES, bench, calibrate, rel, run, sim

HELD_OUT = ["--prompt-mean", "400", "--output-mean", "100", "--prompt-max", "1024", "--output-max", "256",
            "--arrival", "gamma", "--burstiness", "0.3"]
POLICY, POLICY_ARGS = "sarathi", ["--token-budget", "128"]
METRICS = [(m, q) for m in ("ttft_s", "tbt_s", "e2e_s") for q in ("mean", "p50", "p99")]


def values(summary):
    v = {f"{m} {q}": summary[m][q] for m, q in METRICS}
    v["throughput tok/s"] = summary["throughput"]["output_tokens_per_s"]
    return v


def refit_to_other_shapes(a, seer, model, catalog, work):
    """`seer sim calibrate --from-log` on served iterations of the other shapes."""
    logs = []
    for name, targs, rate in TRACES:
        trace = os.path.join(work, "fit_" + name.replace(" ", "_") + ".jsonl")
        run([seer, "trace", "--out", trace, "--num", str(a.fit_num), "--rate", str(rate), "--seed", "2"] + targs)
        logs.append(os.path.join(work, f"fit_{len(logs)}.jsonl"))
        bench(seer, model, trace, POLICY, POLICY_ARGS, a.threads, logs[-1])
        print(f"  served {name} for the fit", file=sys.stderr, flush=True)
    combined = os.path.join(work, "fit_iterations.jsonl")
    with open(combined, "w") as out:
        for log in logs:
            with open(log) as f:
                out.write(f.read())
    out = run([seer, "sim", "calibrate", "--model", model, "--from-log", combined, "--catalog-dir", catalog])
    lines = out.splitlines()
    return next(l for l in lines[lines.index("after fitting:"):] if l.startswith("all "))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rate", type=float, default=0.4, help="mean arrival rate of the held-out trace (req/s)")
    ap.add_argument("--repeats", type=int, default=3, help="real runs of the held-out trace")
    ap.add_argument("--fit-num", type=int, default=24, help="requests per shape in the served-log fit")
    ap.add_argument("--out", default="docs/results")
    a = ap.parse_args()
    seer = os.path.abspath(a.seer)
    work = tempfile.mkdtemp(prefix="seer-heldout-")
    catalog = os.path.join(work, "catalog")
    shutil.copytree(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "catalog"), catalog)
    model = os.path.join(work, "llama-125m-q8_0.gguf")
    run([seer, "make-model", "--shape", "llama-125m", "--type", "q8_0", "-o", model, "-q"])
    load_before = os.getloadavg()
    trace = os.path.join(work, "held_out.jsonl")
    run([seer, "trace", "--out", trace, "--num", "60", "--rate", str(a.rate), "--seed", "1"] + HELD_OUT)

    print("calibrating (synthetic shapes) ...", file=sys.stderr, flush=True)
    synthetic_fit = calibrate(seer, model, catalog, a.threads, False)
    simulated = {"synthetic": values(sim(seer, model, trace, POLICY, POLICY_ARGS, catalog))}
    print("refitting to served logs of the other shapes ...", file=sys.stderr, flush=True)
    served_fit = refit_to_other_shapes(a, seer, model, catalog, work)
    simulated["served log"] = values(sim(seer, model, trace, POLICY, POLICY_ARGS, catalog))

    real_runs = []
    for i in range(a.repeats):
        real_runs.append(values(bench(seer, model, trace, POLICY, POLICY_ARGS, a.threads,
                                      os.path.join(work, f"held_out_{i}.jsonl"))))
        print(f"  real run {i + 1}/{a.repeats}", file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    real = {k: statistics.mean(r[k] for r in real_runs) for k in real_runs[0]}

    os.makedirs(a.out, exist_ok=True)
    cmd = " ".join(["scripts/sim_vs_real_heldout.py"] + sys.argv[1:])
    with open(os.path.join(a.out, "sim_vs_real_heldout.json"), "w") as f:
        json.dump({"command": cmd, "load_before": load_before, "load_after": load_after,
                   "synthetic_fit": synthetic_fit, "served_fit": served_fit, "real_runs": real_runs,
                   "sim": simulated}, f, indent=1)
    lines = ["# seer sim on a held-out trace shape (CPU)", "",
             f"`{cmd}`: random llama-125m Q8_0, `seer serve --threads {a.threads} --policy {POLICY} "
             f"{' '.join(POLICY_ARGS)}`; the held-out trace: 60 requests, `seer trace {' '.join(HELD_OUT)} --rate "
             f"{a.rate} --seed 1`, a shape no calibration step saw. Machine load average {load_before[0]:.1f} before, "
             f"{load_after[0]:.1f} after ({os.cpu_count()} cores). Error = (sim - real) / real; real = mean of "
             f"{a.repeats} runs, spread = their min and max relative to that mean.", "",
             f"* synthetic: `seer sim calibrate --repeats 5` alone ({synthetic_fit})",
             f"* served log: the same, refitted with `seer sim calibrate --from-log` to {a.fit_num}-request serving "
             f"runs of the other shapes (short chat, long prompts, bursty chat; seed 2): `{served_fit}`", "",
             "| metric | real | real spread | sim, synthetic | error | sim, served log | error |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for k, r in real.items():
        lo, hi = min(x[k] for x in real_runs), max(x[k] for x in real_runs)
        s1, s2 = simulated["synthetic"][k], simulated["served log"][k]
        lines.append(f"| {k} | {r:.4g} | {rel(lo, r):+.0%} .. {rel(hi, r):+.0%} | {s1:.4g} | {rel(s1, r):+.0%} | "
                     f"{s2:.4g} | {rel(s2, r):+.0%} |")
    lines.append("")
    with open(os.path.join(a.out, "sim_vs_real_heldout.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
