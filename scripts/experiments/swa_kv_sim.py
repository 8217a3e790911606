#!/usr/bin/env python3
"""Sliding-window K/V freed or kept, at GPU scale in `seer sim` (docs/models.md, "K/V
of sliding-window layers"; issue 28): Gemma 3 1B (26 layers, 22 local with a window of
512) on one A100-80GB with a 2 GiB K/V pool, arXiv-summarization lengths (prompts of
about 2.6k tokens), Poisson arrivals from light load to past saturation, Sarathi-Serve
(--policy sarathi), with --swa-kv window and --swa-kv full. Writes
docs/results/swa_kv_sim.md, .json and .svg (P90 normalized latency against throughput).

usage: scripts/experiments/swa_kv_sim.py [--seer build/seer] [--data-dir ../shared/data]
        [--rates 2,4,8,12,16,24,32] [--num 2000] [--out docs/results]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from svg_chart import line_chart  # noqa: E402

MODEL, KV_MEMORY, POLICY = "Gemma-3-1B", "2GiB", "sarathi"
COLORS = {"full": "#d62728", "window": "#1f77b4"}


def sim(seer, trace, mode):
    out = subprocess.run([seer, "sim", "--trace", trace, "--model", MODEL, "--kv-memory", KV_MEMORY, "--policy", POLICY,
                          "--swa-kv", mode, "--quiet", "--json"], check=True, capture_output=True, text=True)
    d = json.loads(out.stdout)
    return {"requests_per_s": d["throughput"]["requests_per_s"],
            "output_tokens_per_s": d["throughput"]["output_tokens_per_s"],
            "batch_size": d["batch_size"]["mean"], "kv_utilization": d["kv_utilization"]["mean"],
            "preemptions": d["preemptions"], "p90_normalized_latency_s": d["normalized_latency_s"]["p90"]}


def svg(rows):
    return line_chart([(f"--swa-kv {mode}", color,
                        [(r["requests_per_s"], r["p90_normalized_latency_s"]) for r in rows if r["mode"] == mode])
                       for mode, color in COLORS.items()],
                      "throughput (requests/s)", "P90 normalized latency (s/token)",
                      ymax=min(max(r["p90_normalized_latency_s"] for r in rows), 1.0) * 1.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--rates", default="2,4,8,12,16,24,32")
    ap.add_argument("--num", type=int, default=2000)
    ap.add_argument("--out", default="docs/results")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for rate in [float(r) for r in a.rates.split(",")]:
            trace = os.path.join(tmp, f"arxiv-{rate}.jsonl")
            subprocess.run([a.seer, "trace", "--lengths", "arxiv", "--data-dir", a.data_dir, "--num", str(a.num),
                            "--rate", str(rate), "--seed", "3", "--out", trace], check=True, capture_output=True)
            for mode in ("window", "full"):
                r = {"rate": rate, "mode": mode, **sim(a.seer, trace, mode)}
                rows.append(r)
                print(f"rate {rate:5.1f}/s --swa-kv {mode:<6}: {r['requests_per_s']:6.2f} req/s, batch "
                      f"{r['batch_size']:5.1f}, KV {100 * r['kv_utilization']:5.1f} %, {r['preemptions']:5d} "
                      f"preemptions, P90 {r['p90_normalized_latency_s']:.3f} s/token", flush=True)
    os.makedirs(a.out, exist_ok=True)
    setup = (f"{MODEL} on one A100-80GB, {KV_MEMORY} K/V pool, --policy {POLICY}, arXiv-summarization lengths "
             f"(`seer trace --lengths arxiv --num {a.num} --seed 3`), Poisson arrivals")
    with open(os.path.join(a.out, "swa_kv_sim.json"), "w") as f:
        json.dump({"setup": setup, "command": "scripts/experiments/swa_kv_sim.py " + " ".join(sys.argv[1:]),
                   "rows": rows}, f, indent=1)
    with open(os.path.join(a.out, "swa_kv_sim.svg"), "w") as f:
        f.write(svg(rows))
    lines = ["# Sliding-window K/V freed or kept, in the simulator", "",
             f"`scripts/experiments/swa_kv_sim.py`: {setup}. With `--swa-kv window` a pool block holds 4 layers "
             "(Gemma 3 1B's global ones) and the local layers' blocks behind their window of 512 are freed after "
             "every step; with `--swa-kv full` a block holds all 26 layers and nothing is freed. Same pool bytes.",
             "",
             "| offered req/s | layout | req/s | output tok/s | mean batch | mean KV use | preemptions | P90 normalized latency (s/token) |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['rate']:g} | {r['mode']} | {r['requests_per_s']:.2f} | {r['output_tokens_per_s']:.0f} | "
                     f"{r['batch_size']:.1f} | {100 * r['kv_utilization']:.1f} % | {r['preemptions']} | "
                     f"{r['p90_normalized_latency_s']:.3f} |")
    top = {m: max(r["requests_per_s"] for r in rows if r["mode"] == m) for m in COLORS}
    lines += ["", f"Highest throughput: {top['window']:.2f} req/s with the window, {top['full']:.2f} keeping every "
              f"position ({top['window'] / top['full']:.2f}x).", "", "![P90 normalized latency against throughput](swa_kv_sim.svg)", ""]
    with open(os.path.join(a.out, "swa_kv_sim.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
