#!/usr/bin/env python3
"""bench_forward over the quantized recipes people download, as a result file.

Runs build/benchmarks/bench_forward --json (its own table goes to the terminal as it
runs) and writes OUT.json (every case, the bounds measured in the same run, the machine
and its load) and OUT.md: one row per shape and recipe, prefill and decode tok/s with
the percentage of the case's bound (max(bytes / copy bandwidth, FLOPs / sgemm peak),
bench_forward's header says how each is counted).

  scripts/experiments/bench_forward_table.py [--shapes llama-125m,llama-1b]
      [--types q8_0,q4_k_m,q5_k_m,q6_k,iq4_xs] [--batches 1,8,32] [--contexts 128,1024]
      [--prefill 512] [--threads 2] [--repeats 3] [--out docs/results/bench_forward_quant]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="llama-125m,llama-1b")
    ap.add_argument("--types", default="q8_0,q4_k_m,q5_k_m,q6_k,iq4_xs")
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--contexts", default="128,1024")
    ap.add_argument("--prefill", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--bench", default="build/benchmarks/bench_forward")
    ap.add_argument("--out", default="docs/results/bench_forward_quant")
    a = ap.parse_args()

    cmd = [a.bench, "--shapes", a.shapes, "--types", a.types, "--kv-types", "f16", "--batches", a.batches,
           "--contexts", a.contexts, "--prefill", str(a.prefill), "--threads", str(a.threads),
           "--repeats", str(a.repeats), "--json"]
    print("$ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows, header = [], []
    # stderr carries bench_forward's table (shown as it comes); stdout one JSON line per case.
    def relay():
        for line in proc.stderr:
            sys.stderr.write(line)
            header.append(line)

    t = threading.Thread(target=relay)
    t.start()
    for line in proc.stdout:
        if line.startswith("{"):
            rows.append(json.loads(line))
    t.join()
    if proc.wait() != 0:
        sys.exit(f"bench_forward failed ({proc.returncode})")

    text = "".join(header)
    bw = re.search(r"memory copy bandwidth: ([0-9.]+) GB/s", text)
    level = re.search(r"kernel level (\w+)", text)
    peak = re.search(r"sgemm peak \([^)]*\): ([0-9.]+) GFLOP/s", text)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    amx = "amx_int8" in open("/proc/cpuinfo").read()
    load = float(open("/proc/loadavg").read().split()[0])
    command = "scripts/experiments/bench_forward_table.py " + " ".join(sys.argv[1:])
    meta = {"cpu": cpu, "amx": amx, "threads": a.threads, "load_avg_1min_at_end": load,
            "kernel_level": level[1] if level else None,
            "copy_bandwidth_gb_s": float(bw[1]) if bw else None, "sgemm_peak_gflop_s": float(peak[1]) if peak else None,
            "command": command.strip()}
    json.dump({"meta": meta, "rows": rows}, open(a.out + ".json", "w"), indent=1)

    contexts = [int(c) for c in a.contexts.split(",")]
    batches = [int(b) for b in a.batches.split(",")]
    cols = ["prefill %d" % a.prefill] + [f"b{b} ctx{c}" for c in contexts for b in batches]
    lines = ["# bench_forward: quantized recipes against their bounds", "",
             f"{cpu} ({'with' if amx else 'without'} AMX), {a.threads} threads, f16 K/V, random weights; "
             f"measured in the same run: copy bandwidth {meta['copy_bandwidth_gb_s']} GB/s, OpenBLAS sgemm peak "
             f"{meta['sgemm_peak_gflop_s']} GFLOP/s; 1-min load average {load} at the end.",
             f"Regenerate: `{meta['command']}`.", "",
             "Each cell: tok/s (% of the case's bound). Decode: a step of `b` sequences each at context `ctx`.", "",
             "| shape | type | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for shape in a.shapes.split(","):
        for label in dict.fromkeys(r["type"] for r in rows if r["shape"] == shape):
            cells = []
            for col in cols:
                if col.startswith("prefill"):
                    r = next((r for r in rows if r["shape"] == shape and r["type"] == label and r["phase"] == "prefill"), None)
                else:
                    b, c = re.match(r"b(\d+) ctx(\d+)", col).groups()
                    r = next((r for r in rows if r["shape"] == shape and r["type"] == label and r["phase"] == "decode"
                              and r["batch"] == int(b) and r["context"] == int(c)), None)
                cells.append(f"{r['tokens_per_s']:.1f} ({r['percent_of_bound']:.0f} %)" if r else "-")
            lines.append(f"| {shape} | {label} | " + " | ".join(cells) + " |")
    open(a.out + ".md", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
