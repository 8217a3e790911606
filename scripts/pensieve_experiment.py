#!/usr/bin/env python3
"""The Pensieve experiment in `seer sim` (docs/pensieve.md): multi-turn ShareGPT
conversations, Poisson conversation arrivals, exponential think time; stateless
vLLM vs the device-only cache (pensieve-gpu) vs the two-tier cache (pensieve) vs
pensieve with LRU eviction. Writes docs/results/pensieve_sim.md and one SVG per
setup (throughput vs P90 normalized latency).

usage: scripts/pensieve_experiment.py [--seer build/seer] [--data-dir ../shared/data]
                                      [--num 1000] [--quick] [--jobs 2]
"""
import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys

POLICIES = [("vllm", "vllm", "pensieve"), ("pensieve-gpu", "pensieve-gpu", "pensieve"),
            ("pensieve", "pensieve", "pensieve"), ("pensieve+LRU", "pensieve", "lru")]
# name, model, tp, device KV GiB per device, conversation rates
SETUPS = [
    ("OPT-13B, 1x A100", "OPT-13B", 1, 40, [0.5, 1.0, 1.5, 2.0, 3.0]),
    ("Llama-2-13B (10 KV heads), 1x A100", "Llama-2-13B-10kv", 1, 40, [1.0, 2.0, 3.0, 4.0]),
    ("Llama-2-70B, 4x A100 TP4", "Llama-2-70B", 4, 35, [0.5, 1.0, 1.5, 2.0]),
]
COLORS = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"]


def trace(seer, data_dir, rate, think, num, out):
    if not os.path.exists(out):
        subprocess.run([seer, "trace", "--lengths", "sharegpt-multiturn", "--data-dir", data_dir, "--num", str(num),
                        "--rate", str(rate), "--think-mean", str(think), "--seed", "7", "--out", out],
                       check=True, capture_output=True)
    return out


def sim(seer, tr, model, tp, kv, policy, eviction):
    cmd = [seer, "sim", "--trace", tr, "--model", model, "--tp", str(tp), "--kv-memory", f"{kv}GiB",
           "--swap-space", "200", "--policy", policy, "--eviction", eviction, "--json", "--quiet"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def svg(path, title, series):
    w, h, m = 640, 400, 60
    pts = [p for s in series.values() for p in s]
    xmax = max(p[0] for p in pts) * 1.1 or 1
    ymax = max(p[1] for p in pts) * 1.1 or 1
    sx = lambda x: m + x / xmax * (w - 2 * m)
    sy = lambda y: h - m - y / ymax * (h - 2 * m)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w/2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{m}" y1="{h-m}" x2="{w-m}" y2="{h-m}" stroke="black"/>',
           f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h-m}" stroke="black"/>',
           f'<text x="{w/2}" y="{h-15}" text-anchor="middle">throughput (requests/s)</text>',
           f'<text x="15" y="{h/2}" transform="rotate(-90 15 {h/2})" text-anchor="middle">P90 normalized latency (s/token)</text>']
    for k in range(5):
        xv, yv = xmax * k / 4, ymax * k / 4
        out.append(f'<text x="{sx(xv)}" y="{h-m+15}" text-anchor="middle">{xv:.2f}</text>')
        out.append(f'<text x="{m-5}" y="{sy(yv)+4}" text-anchor="end">{yv:.3f}</text>')
    for i, (name, s) in enumerate(series.items()):
        c = COLORS[i % len(COLORS)]
        s = sorted(s)
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' %
                   (c, " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in s)))
        for x, y in s:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{c}"/>')
        out.append(f'<text x="{w-m-120}" y="{m+15*i}" fill="{c}">{name}</text>')
    out.append("</svg>")
    open(path, "w").write("\n".join(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--num", type=int, default=1000, help="turns per trace")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="first setup only, think time 60 s only")
    ap.add_argument("--out-dir", default="docs/results")
    ap.add_argument("--rates", default="", help="comma-separated conversation rates for every setup")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    tmp = os.path.join(a.out_dir, ".pensieve_traces")
    os.makedirs(tmp, exist_ok=True)
    setups = SETUPS[:1] if a.quick else SETUPS
    if a.rates:
        setups = [(n, m, tp, kv, [float(x) for x in a.rates.split(",")]) for n, m, tp, kv, _ in setups]
    jobs = []  # (setup name, think, rate, label, future)
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for name, model, tp, kv, rates in setups:
            for rate in rates:
                tr = trace(a.seer, a.data_dir, rate, 60, a.num, f"{tmp}/t60_r{rate}_n{a.num}.jsonl")
                for label, pol, ev in POLICIES:
                    jobs.append((name, 60, rate, label, ex.submit(sim, a.seer, tr, model, tp, kv, pol, ev)))
        if not a.quick:
            name, model, tp, kv, rates = SETUPS[0]
            for think in (30, 120):
                rate = 1.5
                tr = trace(a.seer, a.data_dir, rate, think, a.num, f"{tmp}/t{think}_r{rate}_n{a.num}.jsonl")
                for label, pol, ev in POLICIES:
                    jobs.append((name, think, rate, label, ex.submit(sim, a.seer, tr, model, tp, kv, pol, ev)))
        done = 0
        for j in jobs:
            j[4].result()
            done += 1
            print(f"\r{done}/{len(jobs)} simulations", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    lines = ["# Pensieve experiment (simulated)", "",
             "Generated by `scripts/pensieve_experiment.py` (seer sim, A100-80GB cost model). ShareGPT multi-turn "
             f"conversations ({a.num} turns per trace), Poisson conversation arrivals at the given rate (conversations/s), "
             "exponential think time; device KV fixed per setup, host tier 200 GiB. vllm is stateless (each turn "
             "re-sends and re-prefills the whole history). Hit rate = reused history tokens / prompt tokens; recomputed = "
             "history tokens computed again.", ""]
    for name, model, tp, kv, rates in setups:
        lines += [f"## {name} ({kv} GiB device KV per device), think time 60 s", "",
                  "| conv/s | policy | req/s | P90 norm. latency (s/tok) | P90 TTFT (s) | hit rate | recomputed tokens | dropped tokens | swapped out GB |",
                  "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
        series = {}
        for (sname, think, rate, label, f) in jobs:
            if sname != name or think != 60:
                continue
            j = f.result()
            c = j.get("cache", {})
            series.setdefault(label, []).append((j["throughput"]["requests_per_s"], j["normalized_latency_s"]["p90"]))
            lines.append(f"| {rate} | {label} | {j['throughput']['requests_per_s']:.3f} | {j['normalized_latency_s']['p90']:.4f} | "
                         f"{j['ttft_s']['p90']:.3f} | {c.get('hit_rate', 0):.3f} | {c.get('recomputed_tokens', 0)} | "
                         f"{c.get('dropped_tokens', 0)} | {c.get('swapped_out_bytes', 0) / 1e9:.1f} |")
        fig = f"pensieve_{model}.svg"
        svg(os.path.join(a.out_dir, fig), f"{name}: throughput vs P90 normalized latency", series)
        lines += ["", f"![{name}]({fig})", ""]
    if not a.quick:
        lines += ["## Think time (OPT-13B, 1.5 conversations/s)", "",
                  "| think (s) | policy | req/s | P90 norm. latency (s/tok) | hit rate | recomputed tokens |",
                  "|---:|---|---:|---:|---:|---:|"]
        for (sname, think, rate, label, f) in jobs:
            if sname == SETUPS[0][0] and (think != 60 or rate == 1.5):
                j = f.result()
                c = j.get("cache", {})
                lines.append(f"| {think} | {label} | {j['throughput']['requests_per_s']:.3f} | "
                             f"{j['normalized_latency_s']['p90']:.4f} | {c.get('hit_rate', 0):.3f} | "
                             f"{c.get('recomputed_tokens', 0)} |")
    open(os.path.join(a.out_dir, "pensieve_sim.md"), "w").write("\n".join(lines) + "\n")
    print(f"wrote {a.out_dir}/pensieve_sim.md")


if __name__ == "__main__":
    main()
