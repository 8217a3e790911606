#!/usr/bin/env python3
"""The tables of scripts/experiments/kv_quant.sh: reads its rows (one JSON object a
line) and writes OUT/kv_quant.md and .json.

usage: kv_quant_report.py ROWS OUT CTX CHUNKS THREADS ROUNDS SERVER_KV_MEMORY ARGS
"""
import json
import os
import platform
import re
import sys

rows_path, out, ctx, chunks, threads, rounds, server_kv_memory, args = sys.argv[1:9]
rows = [json.loads(l) for l in open(rows_path)]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
load = os.getloadavg()[0]
cmd = "scripts/experiments/kv_quant.sh" + (" " + args if args else "")
TYPES = ["f16", "q8_0", "q4_0"]
QUANT = ["q8_0", "q4_0"]

ppl = {(r["engine"], r["model"], r["kv"]): float(r["value"]) for r in rows if r["kind"] == "ppl"}
pools = {}
for r in rows:
    if r["kind"] == "pool":
        m = re.match(r"KV (\d+) blocks x (\d+) tokens \(([0-9.]+) MiB", r["line"])
        blocks, bs, mib = int(m[1]), int(m[2]), float(m[3])
        pools[r["kv"]] = {"blocks": blocks, "block_size": bs, "mib": mib, "tokens_per_gib": blocks * bs * 1024 / mib}
bench = [dict(json.loads(r["json"]), kv=r["kv"]) for r in rows if r["kind"] == "bench"]
att = [r for r in rows if r["kind"] == "attention"]
caps = {r["kv"]: float(r["value"]) for r in rows if r["kind"] == "sim_capacity" and r["value"]}
burst = [dict(json.loads(r["json"]), kv=r["kv"], round=int(r["round"]), load_1min=float(r["load"]),
              running_max=int(r["running_max"]), running_mean=float(r["running_mean"]), pool=r["pool"])
         for r in rows if r["kind"] == "server_burst"]
server_caps = [dict(json.loads(r["json"]), kv=r["kv"], load_1min=float(r["load"]))
               for r in rows if r["kind"] == "server_capacity"]

doc = {"meta": {"command": cmd, "cpu": cpu, "threads": int(threads), "ctx": int(ctx), "chunks": int(chunks),
                "rounds": int(rounds), "text": "Alpaca outputs 0..299 joined by blank lines",
                "load_avg_1min_at_end": load, "server_kv_memory": server_kv_memory},
       "perplexity": [{"engine": e, "model": m, "kv": k, "ppl": v} for (e, m, k), v in sorted(ppl.items())],
       "pool_1gib": pools, "bench": bench,
       "attention_kernel": [{k: r[k] for k in ("kv", "ctx", "seqs", "us", "gbs")} for r in att],
       "sim_capacity_rps": caps, "server_burst": burst, "server_capacity": server_caps}
json.dump(doc, open(f"{out}/kv_quant.json", "w"), indent=1)


def pct(a, b):
    return f"{100 * (b / a - 1):+.3f} %" if a and b else "-"


md = ["# Q8_0 and Q4_0 K/V cache against f16 K/V", "",
      f"{cpu}, {threads} threads, 1-min load average {load:.2f} at the end. Regenerate: `{cmd}`.", "",
      f"## Perplexity (ctx {ctx}, {chunks} chunks, random-weight models: see the script)", "",
      "| engine | model | f16 K/V | q8_0 K/V | q4_0 K/V | q8_0 / f16 - 1 | q4_0 / f16 - 1 |",
      "|---|---|---|---|---|---|---|"]
for e, m in sorted({(e, m) for e, m, _ in ppl}):
    v = [ppl.get((e, m, t)) for t in TYPES]
    cells = " | ".join(f"{x:.4f}" if x else "-" for x in v)
    md.append(f"| {e} | {m} | {cells} | {pct(v[0], v[1])} | {pct(v[0], v[2])} |")
md += ["", "## Tokens of KV per GiB (llama-125m: 12 layers x 12 KV heads x 64; `seer serve --kv-memory 1G`)", "",
       "| K/V | blocks x tokens | MiB | tokens per GiB | / f16 |", "|---|---|---|---|---|"]
for k in TYPES:
    if k in pools:
        p = pools[k]
        ratio = p["tokens_per_gib"] / pools["f16"]["tokens_per_gib"] if "f16" in pools else float("nan")
        md.append(f"| {k} | {p['blocks']} x {p['block_size']} | {p['mib']:.1f} | {p['tokens_per_gib']:.0f} | {ratio:.2f}x |")

md += ["", f"## Decode speed (llama-125m Q8_0 weights, `seer bench model`, best of {rounds} alternating rounds)", "",
       "| case | f16 tok/s | q8_0 tok/s | q4_0 tok/s | q8_0 / f16 | q4_0 / f16 | rounds min-max (f16 / q8_0 / q4_0) |",
       "|---|---|---|---|---|---|---|"]


def key(b):
    return b["test"] if b["test"] != "batched" else f"batched npl {b['parallel']} after {b.get('prompt_tokens', '')}"


cases = {}
for b in bench:
    if b["test"].startswith("pp"):
        continue
    cases.setdefault(key(b), {}).setdefault(b["kv"], []).append(b["gen_tokens_per_s"])
for c, v in cases.items():
    if not all(t in v for t in TYPES):
        continue
    best = {t: max(v[t]) for t in TYPES}
    spread = " / ".join(f"{min(v[t]):.0f}-{best[t]:.0f}" for t in TYPES)
    md.append(f"| {c} | {best['f16']:.1f} | {best['q8_0']:.1f} | {best['q4_0']:.1f} | "
              f"{best['q8_0'] / best['f16']:.2f} | {best['q4_0'] / best['f16']:.2f} | {spread} |")

if att:
    md += ["", "## The attention kernel alone (`bench_attention --threads 1 --repeats 200`, best run; 12 heads of 64)", "",
           "| context | sequences | f16 (us) | q8_0 (us) | q4_0 (us) | q8_0 / f16 time | q4_0 / f16 time |",
           "|---|---|---|---|---|---|---|"]
    by = {}
    for r in att:
        by.setdefault((int(r["ctx"]), int(r["seqs"])), {})[r["kv"]] = float(r["us"])
    for (c, n), v in sorted(by.items()):
        if all(t in v for t in TYPES):
            md.append(f"| {c} | {n} | {v['f16']:.1f} | {v['q8_0']:.1f} | {v['q4_0']:.1f} | "
                      f"{v['q8_0'] / v['f16']:.2f} | {v['q4_0'] / v['f16']:.2f} |")

if caps:
    md += ["", "## Capacity in the simulator (Llama-2-7B, A100-80GB, 4 GiB KV pool, 400 ShareGPT-length requests, "
           "vllm, P99 TBT <= 0.1 s, median scheduling delay <= 2 s)", "",
           "| K/V | capacity (req/s) |", "|---|---|"] + [f"| {k} | {caps[k]:.3f} |" for k in TYPES if k in caps]

if burst:
    md += ["", f"## The real server in the same KV memory (`seer serve --kv-memory {server_kv_memory} --swap-blocks 0 "
           f"--token-budget 128`, llama-125m Q8_0 weights)", "",
           "A burst of 24 requests of 256 prompt + 64 output tokens sent at once (`seer bench --rate inf`), "
           f"{rounds} rounds alternating the K/V types. Running at once: requests in one engine step "
           "(the iteration log's chunks), max and mean over the run.", "",
           "| K/V | round | KV pool | running max | running mean | preemptions | recomputed tokens | "
           "time for all (s) | req/s | output tok/s | 1-min load |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in sorted(burst, key=lambda b: (TYPES.index(b["kv"]), b["round"])):
        dur = b["duration_s"]
        out_tok = b["throughput"]["output_tokens_per_s"]
        md.append(f"| {b['kv']} | {b['round']} | {b['pool']} | {b['running_max']} | {b['running_mean']:.1f} | "
                  f"{b['preemptions']} | {b['recomputed_tokens']} | {dur:.1f} | {b['requests'] / dur:.3f} | "
                  f"{out_tok:.1f} | {b['load_1min']:.2f} |")
if server_caps:
    md += ["", "`seer bench capacity` (24 Poisson requests, log-normal lengths (`seer trace --prompt-mean 256 --output-mean 64 --prompt-max 512 --output-max 128`: means 192 / 59 drawn), P99 TBT <= 1 s, "
           "median TTFT <= 5 s, at most 5 probes from 0.5 req/s):", "",
           "| K/V | capacity (req/s) | probes (rate: P99 TBT / P50 TTFT, pass) | 1-min load at start |", "|---|---|---|---|"]
    for c in sorted(server_caps, key=lambda c: TYPES.index(c["kv"])):
        probes = "; ".join(f"{s['rate']:.2f}: {s['tbt_p99_s']:.3f} / {s['ttft_p50_s']:.3f} "
                           f"{'pass' if s['passed'] else 'fail'}" for s in c["steps"])
        md.append(f"| {c['kv']} | {c['capacity_rps']:.3f} | {probes} | {c['load_1min']:.2f} |")

open(f"{out}/kv_quant.md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
