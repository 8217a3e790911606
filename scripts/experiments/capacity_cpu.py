#!/usr/bin/env python3
"""Real serving capacity on this CPU (README "Capacity on this CPU"): for each policy,
start `seer serve` on a random llama-125m Q8_0 model and let `seer bench capacity`
bisect the highest request rate it sustains with P99 TBT <= --slo-tbt-p99 and median
TTFT <= --max-sched-delay on a chat-like trace. Writes docs/results/capacity_cpu.md,
.json and .svg.

usage: scripts/experiments/capacity_cpu.py [--seer build/seer] [--threads 2]
        [--num 40] [--slo-tbt-p99 0.25] [--policies vllm,sarathi,...] [--resume]
        [--llama-server PATH] [--out docs/results] [--name capacity_cpu]
        [--tbt-slo-sweep 0.125,0.25,0.5] [--repeats 1]
Rows: each policy with the flags below; "seer (no flags)", `seer serve` as a user
starts it (its budget from the default TBT target); with --llama-server, llama.cpp's
server (-np 16 -c 65536 -cb -fa on) on the same model and trace. --tbt-slo-sweep adds
a row "seer --tbt-slo X" per value (issue 30: the no-flag default against the best
setting). --repeats N measures every row N times, round-robin, so a change of the
machine's load spreads over all rows; the table gives each row's runs and median.
The report is rewritten after each policy; --resume keeps the policies already in
the output's capacity_cpu.json (same settings) and measures only the others.
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
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from serve_process import free_port, wait_ready  # noqa: E402

# name, extra `seer serve` flags ({slo_budget}: half the TBT SLO). s3 and ecoserve
# need a length predictor, and a served request has no true length for the oracle or
# noisy predictors of `seer sim`; a file from `seer predict train` predicts nothing
# useful for the random token ids of this trace, so they are left out here; `seer`
# runs without a predictor (exact allocation falls back to block allocation).
POLICIES = {
    "vllm": [],
    "sarathi": ["--tbt-slo", "{slo_budget}"],
    "pensieve": [],
    "seer": ["--tbt-slo", "{slo_budget}"],
    "seer (no flags)": [],
}
LLAMA_SERVER = "llama-server"
TRACE = ["--prompt-mean", "96", "--output-mean", "48", "--prompt-max", "512", "--output-max", "192"]


def capacity(a, seer, model, trace, policy, flags):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    flags = [f.format(slo_budget=a.slo_tbt_p99 / 2) for f in flags]
    log_path = os.path.join(a.work, f"serve-{policy.split()[0]}.log")
    log = open(log_path, "w")
    if policy == LLAMA_SERVER:
        flags = ["-np", "16", "-c", "65536", "-cb", "-fa", "on"]
        cmd = [a.llama_server, "-m", model, "--port", str(port), "-t", str(a.threads)] + flags
    else:
        cmd = [seer, "serve", "--model", model, "--port", str(port), "--threads", str(a.threads)]
        cmd += (["--policy", policy.split()[0]] if "(" not in policy else []) + flags
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(url, proc, path="/v1/models")
        out = subprocess.run([seer, "bench", "capacity", "--url", url, "--trace", trace, "--slo-tbt-p99",
                              str(a.slo_tbt_p99), "--max-sched-delay", str(a.max_sched_delay), "--start-rate",
                              str(a.start_rate), "--max-steps", str(a.max_steps), "--json", "--no-progress"],
                             check=True, capture_output=True, text=True).stdout
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()
    with open(log_path, errors="replace") as f:  # llama-server logs raw bytes of generated text
        budget = next((l.strip() for l in f if "token budget" in l and "TBT SLO" in l), "")
    r = json.loads(out[out.index("{"):])
    r["policy"], r["flags"], r["serve_line"] = policy, " ".join(flags), budget
    return r


def summary(rows):
    """One entry per policy in measuring order: its runs' capacities and their median."""
    by = {}
    for r in rows:
        by.setdefault(r["policy"], []).append(r["capacity_rps"])
    return [(p, caps, statistics.median(caps)) for p, caps in by.items()]


def svg(path, rows, title):
    w, bar, gap, left = 640, 22, 10, 150
    rows = [{"policy": p, "capacity_rps": med} for p, _, med in summary(rows)]
    h = 60 + len(rows) * (bar + gap)
    top = max(r["capacity_rps"] for r in rows) or 1.0
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>']
    for i, r in enumerate(rows):
        y = 40 + i * (bar + gap)
        bw = (w - left - 90) * r["capacity_rps"] / top
        out.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{r["policy"]}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{bw:.1f}" height="{bar}" fill="#1f77b4"/>')
        out.append(f'<text x="{left + bw + 6:.1f}" y="{y + 15}">{r["capacity_rps"]:.2f} req/s</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def settings(a):
    return {"threads": a.threads, "num": a.num, "slo_tbt_p99": a.slo_tbt_p99, "max_sched_delay": a.max_sched_delay,
            "start_rate": a.start_rate, "max_steps": a.max_steps, "repeats": a.repeats}


def report(a, rows, load_before, load_after):
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.name + ".json"), "w") as f:
        json.dump({"settings": settings(a), "load_before": load_before, "load_after": load_after, "runs": rows}, f,
                  indent=1)
    title = f"capacity on this CPU: random llama-125m Q8_0, P99 TBT <= {a.slo_tbt_p99} s"
    svg(os.path.join(a.out, a.name + ".svg"), rows, title)
    lines = [f"# Serving capacity on this CPU ({a.threads} threads)", "",
             f"`scripts/experiments/capacity_cpu.py --threads {a.threads} --num {a.num} --slo-tbt-p99 {a.slo_tbt_p99}"
             f"{' --policies ' + repr(a.policies) if a.policies != ','.join(POLICIES) else ''}"
             f"{' --llama-server PATH' if a.llama_server else ''}{' --name ' + a.name if a.name != 'capacity_cpu' else ''}"
             f"{' --tbt-slo-sweep ' + a.tbt_slo_sweep if a.tbt_slo_sweep else ''}"
             f"{' --repeats ' + str(a.repeats) if a.repeats > 1 else ''}`: "
             f"random llama-125m Q8_0, a chat-like trace of {a.num} requests (`seer trace {' '.join(TRACE)} --seed 1`), "
             f"`seer bench capacity` against `seer serve` per policy: the highest rate with P99 TBT <= {a.slo_tbt_p99} s "
             f"and median TTFT <= {a.max_sched_delay} s. Machine load average {load_before:.2f} before, "
             f"{load_after:.2f} after.", "",
             "| policy | serve flags | capacity (req/s) | probes (rate: P99 TBT / P50 TTFT, pass) |",
             "|---|---|---:|---|"]
    for r in rows:
        probes = "; ".join(f"{s['rate']:.2f}: {s['tbt_p99_s']:.3f} / {s['ttft_p50_s']:.3f} "
                           f"{'✓' if s['passed'] else '✗'}" for s in r["steps"])
        lines.append(f"| {r['policy']} | `{r['flags']}` | {r['capacity_rps']:.2f} | {probes} |")
    if a.repeats > 1:
        lines += ["", "| policy | runs (req/s) | median |", "|---|---|---:|"]
        lines += [f"| {p} | {', '.join(f'{c:.2f}' for c in caps)} | {med:.2f} |" for p, caps, med in summary(rows)]
    lines += ["", "Start-up lines (token budget chosen):", ""]
    lines += [f"* {r['policy']}: {r['serve_line']}" for r in rows if r["serve_line"]]
    lines += ["", f"![capacity]({a.name}.svg)", ""]
    with open(os.path.join(a.out, a.name + ".md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines[6:6 + len(rows)]))
    if a.repeats > 1:
        print("\n".join(f"{p}: median {med:.2f} req/s of {len(caps)} runs" for p, caps, med in summary(rows)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--num", type=int, default=40, help="requests in the trace")
    ap.add_argument("--slo-tbt-p99", type=float, default=0.25)
    ap.add_argument("--max-sched-delay", type=float, default=2.0)
    ap.add_argument("--start-rate", type=float, default=2.0)
    ap.add_argument("--max-steps", type=int, default=5)
    ap.add_argument("--resume", action="store_true", help="keep the policies already measured in the output")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--llama-server", default="", help="also measure llama.cpp's server (path to llama-server)")
    ap.add_argument("--out", default="docs/results")
    ap.add_argument("--name", default="capacity_cpu", help="output files OUT/NAME.{md,json,svg}")
    ap.add_argument("--tbt-slo-sweep", default="", help="comma-separated TBT targets: a row `seer --tbt-slo X` each")
    ap.add_argument("--repeats", type=int, default=1, help="runs of every row, round-robin")
    a = ap.parse_args()
    for x in filter(None, a.tbt_slo_sweep.split(",")):
        POLICIES[f"seer --tbt-slo {float(x):g}"] = ["--tbt-slo", f"{float(x):g}"]
    seer = os.path.abspath(a.seer)
    a.work = tempfile.mkdtemp(prefix="seer-capacity-")
    model = os.path.join(a.work, "llama-125m-q8_0.gguf")
    subprocess.run([seer, "make-model", "--shape", "llama-125m", "--type", "q8_0", "-o", model, "-q"], check=True)
    trace = os.path.join(a.work, "chat.jsonl")
    subprocess.run([seer, "trace", "--out", trace, "--num", str(a.num), "--rate", "1", "--seed", "1"] + TRACE,
                   check=True, capture_output=True)
    load = os.getloadavg()[0]
    rows = []
    saved = os.path.join(a.out, a.name + ".json")
    if a.resume and os.path.exists(saved):
        with open(saved) as f:
            prior = json.load(f)
        if prior.get("settings") != settings(a):
            sys.exit(f"--resume: {saved} was measured with other settings: {prior.get('settings')}")
        rows, load = prior["runs"], prior["load_before"]
    policies = a.policies.split(",") + [p for p in POLICIES if p.startswith("seer --tbt-slo")]
    policies += [LLAMA_SERVER] if a.llama_server else []
    for policy in policies:
        if policy not in POLICIES and policy != LLAMA_SERVER:
            sys.exit(f"unknown policy {policy}; known: {', '.join(POLICIES)}")
    runs = [(rep, p) for rep in range(a.repeats) for p in policies]
    for i, (rep, policy) in enumerate(runs):
        if sum(r["policy"] == policy for r in rows) > rep:
            continue
        t0 = time.time()
        print(f"[{i + 1}/{len(runs)}] {policy} ...", file=sys.stderr, flush=True)
        rows.append(capacity(a, seer, model, trace, policy, POLICIES.get(policy, [])))
        print(f"    {rows[-1]['capacity_rps']:.2f} req/s ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
        report(a, rows, load, os.getloadavg()[0])
    shutil.rmtree(a.work, ignore_errors=True)


if __name__ == "__main__":
    main()
