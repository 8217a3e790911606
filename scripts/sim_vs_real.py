#!/usr/bin/env python3
"""The CPU simulator against the real server (docs/simulator.md): calibrate the `cpu`
hardware entry on the model (`seer sim calibrate`), then refit it to the iterations
of calibration serving runs on traces drawn with another seed (`seer serve
--iteration-log`, `seer sim calibrate --from-log`); then for each trace shape and
policy replay the trace with `seer bench` against `seer serve`, simulate the same
trace with `seer sim --hardware cpu`, and compare TTFT, TBT and end-to-end latency
(mean, p90) and throughput, plus the cost model's error on the run's own iterations
(`seer sim validate --iteration-log`). Writes docs/results/sim_vs_real.{md,json,svg}.

usage: scripts/sim_vs_real.py [--seer build/seer] [--model FILE] [--threads 1]
                              [--num 40] [--quick] [--no-serving-fit] [--out docs/results]
Without --model a random llama-125m Q8_0 model is written to the work folder.
Timings depend on the machine's load: run it on an otherwise idle machine.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

from serve_process import free_port, wait_ready

# name, `seer trace` arguments (the rate scales with --rate-scale)
TRACES = [
    ("short chat", ["--prompt-mean", "64", "--output-mean", "32", "--prompt-max", "256", "--output-max", "128"], 1.0),
    ("long prompts", ["--prompt-mean", "320", "--output-mean", "16", "--prompt-max", "768", "--output-max", "64",
                      "--length-sigma", "0.4"], 0.2),
    ("bursty chat", ["--prompt-mean", "64", "--output-mean", "32", "--prompt-max", "256", "--output-max", "128",
                     "--arrival", "gamma", "--burstiness", "0.25"], 1.0),
]
POLICIES = [("sarathi", ["--token-budget", "128"]), ("vllm", [])]
METRICS = [("ttft_s", "mean"), ("ttft_s", "p90"), ("tbt_s", "mean"), ("tbt_s", "p90"), ("e2e_s", "mean"),
           ("e2e_s", "p90")]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def bench(seer, model, trace, policy, args, threads, iteration_log):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([seer, "serve", "--model", model, "--port", str(port), "--threads", str(threads),
                             "--policy", policy, "--iteration-log", iteration_log] + args,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, proc, deadline_s=60, path="/v1/models")
        out = run([seer, "bench", "--url", url, "--trace", trace, "--json", "--no-progress"])
        metrics = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    real = json.loads(out[out.index("{"):])
    real["server_iterations"] = prometheus_value(metrics, "seer_iteration_time_seconds_count")
    real["server_iteration_s"] = prometheus_value(metrics, "seer_iteration_time_seconds_sum")
    return real


def prometheus_value(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return 0.0


def sim(seer, model, trace, policy, args, catalog):
    out = run([seer, "sim", "--trace", trace, "--model", model, "--hardware", "cpu", "--catalog-dir", catalog,
               "--policy", policy, "--json", "--quiet"] + args)
    return json.loads(out.strip().splitlines()[-1])


def calibrate(seer, model, catalog, threads, quick):
    out = run([seer, "sim", "calibrate", "--model", model, "--out", os.path.join(catalog, "hardware.json"),
               "--threads", str(threads), "--repeats", "5"] + (["--quick"] if quick else []))
    return next((l for l in out.splitlines() if l.startswith("model error")), "")


def serving_fit(seer, model, catalog, work, threads, num, rate_scale, traces=TRACES):
    """Refits the cpu entry to the iterations of serving runs on traces of the given
    shapes drawn with another seed than the evaluation traces."""
    logs = []
    for name, targs, rate in traces:
        trace = os.path.join(work, "fit_" + name.replace(" ", "_") + ".jsonl")
        run([seer, "trace", "--out", trace, "--num", str(num), "--rate", str(rate * rate_scale), "--seed", "2"] + targs)
        for policy, pargs in POLICIES:
            logs.append(os.path.join(work, f"fit_{name.replace(' ', '_')}_{len(logs)}.jsonl"))
            bench(seer, model, trace, policy, pargs, threads, logs[-1])
    combined = os.path.join(work, "fit_iterations.jsonl")
    with open(combined, "w") as out:
        for log in logs:
            with open(log) as f:
                out.write(f.read())
    out = run([seer, "sim", "calibrate", "--model", model, "--from-log", combined, "--catalog-dir", catalog])
    lines = out.splitlines()
    return next(l.split() for l in lines[lines.index("after fitting:"):] if l.startswith("all "))


def iteration_error(seer, model, catalog, log):
    out = run([seer, "sim", "validate", "--iteration-log", log, "--model", model, "--catalog-dir", catalog, "--json"])
    return next(r for r in json.loads(out) if r["kind"] == "all")


def rel(sim_v, real_v):
    return (sim_v - real_v) / real_v if real_v else float("nan")


def iterations(summary):
    """Iterations of a run: its tokens over the mean tokens per iteration."""
    tokens = summary["throughput"]["total_tokens_per_s"] * summary["duration_s"]
    return tokens / summary["tokens_per_iteration"]["mean"] if summary["tokens_per_iteration"]["mean"] else 0.0


def rows_of(real, simulated):
    rows = [(f"{m} {q}", real[m][q], simulated[m][q]) for m, q in METRICS]
    rows.append(("throughput tok/s", real["throughput"]["output_tokens_per_s"],
                 simulated["throughput"]["output_tokens_per_s"]))
    return rows


def svg(path, results):
    labels = [f"{t} / {p}" for t, p, _, _, _ in results]
    names = [r[0] for r in rows_of(results[0][2], results[0][3])]
    w, h, m, top = 760, 120 + 22 * len(names) * len(labels) // 2, 150, 40
    bar_h = 8
    xmax = max(1.0, max(abs(rel(s, r)) for *_, real, simd, _ in results for _, r, s in rows_of(real, simd)))
    xmax = min(xmax, 2.0)
    sx = lambda v: m + (max(-xmax, min(xmax, v)) + xmax) / (2 * xmax) * (w - m - 20)
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w/2}" y="18" text-anchor="middle" font-size="14">seer sim (calibrated cpu) vs seer serve: '
           f'relative error (sim - real) / real</text>']
    y = top
    for i, name in enumerate(names):
        out.append(f'<text x="{m-6}" y="{y + bar_h * len(results) / 2 + 4}" text-anchor="end">{name}</text>')
        for j, (_, _, real, simd, _) in enumerate(results):
            r, s = rows_of(real, simd)[i][1:]
            e = rel(s, r)
            x0, x1 = sx(0), sx(e)
            out.append(f'<rect x="{min(x0, x1):.1f}" y="{y}" width="{abs(x1 - x0):.1f}" height="{bar_h - 1}" '
                       f'fill="{colors[j % len(colors)]}"><title>{labels[j]}: {e:+.0%}</title></rect>')
            y += bar_h
        y += 6
    for v in (-xmax, -xmax / 2, -0.1, 0, 0.1, xmax / 2, xmax):
        out.append(f'<line x1="{sx(v):.1f}" y1="{top - 4}" x2="{sx(v):.1f}" y2="{y}" stroke="#bbb" '
                   f'stroke-dasharray="{"" if v == 0 else "3,3"}"/>')
        out.append(f'<text x="{sx(v):.1f}" y="{y + 14}" text-anchor="middle">{v:+.0%}</text>')
    for j, label in enumerate(labels):
        out.append(f'<rect x="{m + (j % 3) * 200}" y="{y + 24 + (j // 3) * 16}" width="10" height="10" '
                   f'fill="{colors[j % len(colors)]}"/><text x="{m + 14 + (j % 3) * 200}" '
                   f'y="{y + 33 + (j // 3) * 16}">{label}</text>')
    out.append("</svg>")
    out[0] = out[0].replace(f'height="{h}"', f'height="{y + 70}"', 1)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--model", help="GGUF model (default: a random llama-125m Q8_0)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--num", type=int, default=40, help="requests per trace")
    ap.add_argument("--rate-scale", type=float, default=1.0, help="multiplies every trace's request rate")
    ap.add_argument("--quick", action="store_true", help="12 requests per trace, one policy")
    ap.add_argument("--no-serving-fit", action="store_true",
                    help="only the synthetic-shape calibration, no refit to served iterations")
    ap.add_argument("--fit-per-trace", action="store_true",
                    help="refit before each trace shape to that shape's own calibration runs, served just "
                         "before its evaluation runs (less time for the machine to drift in between)")
    ap.add_argument("--out", default="docs/results")
    ap.add_argument("--from-json", help="only rewrite the report from a sim_vs_real.json of an earlier run")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            saved = json.load(f)
        results = [(r["trace"], r["policy"], r["real"], r["sim"], r["calibration"]) for r in saved["runs"]]
        write_report(a, results, saved["load_before"], saved["load_after"])
        return
    seer = os.path.abspath(a.seer)
    work = tempfile.mkdtemp(prefix="seer-sim-vs-real-")
    catalog = os.path.join(work, "catalog")
    shutil.copytree(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "catalog"), catalog)
    model = a.model
    if not model:
        model = os.path.join(work, "llama-125m-q8_0.gguf")
        run([seer, "make-model", "--shape", "llama-125m", "--type", "q8_0", "-o", model, "-q"])
    num = 12 if a.quick else a.num
    policies = POLICIES[:1] if a.quick else POLICIES
    load = os.getloadavg()
    # One full calibration (11 shapes up to 512-token prompts) for all runs: `--quick`
    # fits 5 factors to 4 shapes, which extrapolates badly to long prompts.
    fit = calibrate(seer, model, catalog, a.threads, a.quick)
    print(f"calibrated: {fit}", file=sys.stderr, flush=True)
    synthetic = os.path.join(work, "hardware.synthetic.json")
    shutil.copy(os.path.join(catalog, "hardware.json"), synthetic)
    calibration = fit

    def refit(traces, what):
        shutil.copy(synthetic, os.path.join(catalog, "hardware.json"))
        row = serving_fit(seer, model, catalog, work, a.threads, num, a.rate_scale, traces)
        result = (f"{calibration}; refitted to {row[1]} served iterations of {what} (seed 2): mean error {row[4]}, "
                  f"total {row[6]}")
        print(f"refitted: {result}", file=sys.stderr, flush=True)
        return result

    if not a.no_serving_fit and not a.fit_per_trace:
        fit = refit(TRACES, "calibration runs")
    results = []
    for name, targs, rate in TRACES:
        if not a.no_serving_fit and a.fit_per_trace:
            fit = refit([t for t in TRACES if t[0] == name], f"calibration runs on {name}")
        trace = os.path.join(work, name.replace(" ", "_") + ".jsonl")
        run([seer, "trace", "--out", trace, "--num", str(num), "--rate", str(rate * a.rate_scale), "--seed", "1"] +
            targs)
        for policy, pargs in policies:
            log = os.path.join(work, f"iterations_{len(results)}.jsonl")
            try:
                real = bench(seer, model, trace, policy, pargs, a.threads, log)
            except (subprocess.CalledProcessError, RuntimeError) as e:  # a stray signal on a shared machine
                print(f"{name} / {policy}: {e}; once more", file=sys.stderr, flush=True)
                real = bench(seer, model, trace, policy, pargs, a.threads, log)
            real["iteration_model"] = iteration_error(seer, model, catalog, log)
            simulated = sim(seer, model, trace, policy, pargs, catalog)
            results.append((name, policy, real, simulated, fit))
            worst = max(abs(rel(s, r)) for _, r, s in rows_of(real, simulated))
            print(f"{name} / {policy}: worst error {worst:.0%} ({fit})", file=sys.stderr, flush=True)
    write_report(a, results, load, os.getloadavg())
    shutil.rmtree(work, ignore_errors=True)


def write_report(a, results, load_before, load_after):
    os.makedirs(a.out, exist_ok=True)
    refit_text = (" and, before each trace shape, its refit to served iterations of calibration runs on that shape "
                  "(other seed), served just before the shape's evaluation runs" if a.fit_per_trace else
                  " and its refit to served iterations of calibration runs on every trace shape (other seed)")
    lines = ["# seer sim vs seer serve on the CPU", "",
             f"`scripts/sim_vs_real.py --threads {a.threads} --num {12 if a.quick else a.num}"
             f"{' --quick' if a.quick else ''}{' --no-serving-fit' if a.no_serving_fit else ''}"
             f"{' --fit-per-trace' if a.fit_per_trace else ''}`: random llama-125m "
             f"Q8_0, one `seer sim calibrate --repeats 5` before all runs"
             f"{'' if a.no_serving_fit else refit_text}, then `seer bench` against `seer serve --threads {a.threads}` and `seer sim --hardware cpu` on "
             f"the same trace. Machine load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
             f"({os.cpu_count()} cores). Error = (sim - real) / real.", "",
             f"Calibration: {results[0][4] if results and not a.fit_per_trace else 'per trace shape, below'}", ""]
    names = [m for m, _, _ in rows_of(results[0][2], results[0][3])] if results else []
    lines += ["Error of the simulator per run:", "", "| trace | policy | " + " | ".join(names) + " |",
              "|---|---|" + "---:|" * len(names)]
    for name, policy, real, simulated, _ in results:
        errors = " | ".join(f"{rel(s, r):+.0%}" for _, r, s in rows_of(real, simulated))
        lines.append(f"| {name} | {policy} | {errors} |")
    lines.append("")
    for name, policy, real, simulated, fit in results:
        lines += [f"## {name}, {policy}", ""] + ([f"Calibration: {fit}", ""] if a.fit_per_trace else []) + [
                  "| metric | real | sim | error |", "|---|---:|---:|---:|"]
        for metric, r, s in rows_of(real, simulated):
            lines.append(f"| {metric} | {r:.4g} | {s:.4g} | {rel(s, r):+.0%} |")
        lines.append(f"| iterations | {iterations(real):.0f} | {iterations(simulated):.0f} | "
                     f"{rel(iterations(simulated), iterations(real)):+.0%} |")
        lines.append(f"| tokens per iteration | {real['tokens_per_iteration']['mean']:.1f} | "
                     f"{simulated['tokens_per_iteration']['mean']:.1f} | |")
        if real.get("server_iterations"):
            iteration = real["server_iteration_s"] / real["server_iterations"]
            lines.append(f"| engine busy (server iteration time / duration) | "
                         f"{real['server_iteration_s'] / real['duration_s']:.0%} | | |")
            lines.append(f"| server mean iteration (ms) | {1e3 * iteration:.1f} | | |")
            lines.append(f"| client TBT mean - server mean iteration (ms): streaming, HTTP | "
                         f"{1e3 * (real['tbt_s']['mean'] - iteration):.1f} | | |")
        if real.get("iteration_model"):
            m = real["iteration_model"]
            lines.append(f"| cost model on this run's {m['iterations']} iterations: mean error, total | | | "
                         f"{m['mean_relative_error']:.1%}, {m['total_relative_error']:+.1%} |")
        lines.append("")
    lines += ["![relative error](sim_vs_real.svg)", ""]
    with open(os.path.join(a.out, "sim_vs_real.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(a.out, "sim_vs_real.json"), "w") as f:
        runs = [{"trace": n, "policy": p, "real": r, "sim": s, "calibration": c} for n, p, r, s, c in results]
        json.dump({"load_before": list(load_before), "load_after": list(load_after), "runs": runs}, f, indent=1)
    svg(os.path.join(a.out, "sim_vs_real.svg"), results)
    print(open(os.path.join(a.out, "sim_vs_real.md")).read())


if __name__ == "__main__":
    main()
