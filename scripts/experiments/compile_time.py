#!/usr/bin/env python3
"""What a request's schema or grammar costs to compile, and what it costs everyone else
(issue 53, docs/security.md "Compiles off the I/O threads").

Starts `seer serve` (the built-in model, --http-threads 1) and times /v1/chat/completions
with max_tokens 1 and a response_format schema of N required integer properties, and
/v1/completions with a GBNF chain of N rules (`r_i ::= "a" r_{i+1}`): each the median
of --repeats runs. Then three of the largest schema compiles are sent at once while
/health is probed in a loop: its p50/p99/max latency is what the other connections
see. Records the machine's load before and after.

  scripts/experiments/compile_time.py [--build build] [--repeats 3]
Writes docs/results/compile_time.{md,json,svg}.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from serve_process import free_port, wait_ready  # noqa: E402
from svg_chart import line_chart  # noqa: E402

PROPERTIES = [1000, 2000, 5000, 10000, 20000, 40000, 100000]
RULES = [1000, 10000, 50000, 100000, 200000]


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def schema_body(n):
    props = {f"p{i}": {"type": "integer"} for i in range(n)}
    schema = {"type": "object", "properties": props, "required": list(props)}
    return json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1,
                       "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}})


def grammar_body(n):
    rules = "root ::= r0\n" + "".join(f'r{i} ::= "a" r{i + 1}\n' for i in range(n)) + f'r{n} ::= "b"\n'
    return json.dumps({"prompt": "a", "max_tokens": 1, "grammar": rules})


def post(url, body):
    req = urllib.request.Request(url, data=body.encode(), headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        e.read()
        status = e.code
    return time.perf_counter() - t0, status


def timed(url, body, repeats):
    runs = [post(url, body) for _ in range(repeats)]
    return statistics.median(t for t, _ in runs), runs[-1][1]


def health_under_load(base, body):
    done = []
    compile_s = []

    def client():
        t, _ = post(base + "/v1/chat/completions", body)
        compile_s.append(t)
        done.append(1)

    threads = [threading.Thread(target=client) for _ in range(3)]
    for t in threads:
        t.start()
    probes = []
    while len(done) < 3:
        t0 = time.perf_counter()
        urllib.request.urlopen(base + "/health", timeout=60).read()
        if len(done) < 3:
            probes.append(time.perf_counter() - t0)
    for t in threads:
        t.join()
    probes.sort()
    pct = lambda q: probes[min(len(probes) - 1, int(q * len(probes)))]  # noqa: E731
    return {"probes": len(probes), "p50_ms": pct(0.5) * 1e3, "p99_ms": pct(0.99) * 1e3, "max_ms": probes[-1] * 1e3,
            "compile_s": sorted(compile_s)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    a = ap.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([os.path.join(a.build, "seer"), "serve", "--port", str(port), "--http-threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(base, proc)
        load_before = load_average()
        rows = []
        for kind, sizes, path, make in (("schema properties", PROPERTIES, "/v1/chat/completions", schema_body),
                                        ("GBNF rules", RULES, "/v1/completions", grammar_body)):
            for n in sizes:
                body = make(n)
                t, status = timed(base + path, body, a.repeats)
                rows.append({"kind": kind, "n": n, "body_bytes": len(body), "seconds": t, "status": status})
                print(f"{kind:18s} {n:>7d}  {len(body) / 1e6:6.2f} MB  {t:7.3f} s  HTTP {status}",
                      file=sys.stderr, flush=True)
        health = health_under_load(base, schema_body(40000))
        print(f"/health during 3 concurrent 40k-property compiles: p50 {health['p50_ms']:.1f} ms, "
              f"p99 {health['p99_ms']:.1f} ms over {health['probes']} probes", file=sys.stderr)
        load_after = load_average()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    meta = {"command": "scripts/experiments/compile_time.py", "repeats": a.repeats, "nproc": os.cpu_count(),
            "load_before": load_before, "load_after": load_after, "rows": rows, "health_during_compiles": health}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "compile_time.json"), "w") as f:
        json.dump(meta, f, indent=1)
    with open(os.path.join(a.out, "compile_time.svg"), "w") as f:
        f.write(line_chart([(kind, color, [(r["n"] / 1000, r["seconds"]) for r in rows if r["kind"] == kind])
                            for kind, color in (("schema properties", "#1f77b4"), ("GBNF rules", "#d62728"))],
                           "size (thousands of properties or rules)", "request time (s)"))
    lines = ["# Compile time vs size, and /health while compiles run", "",
             "`scripts/experiments/compile_time.py`: `seer serve` with the built-in model and one I/O thread",
             f"(`--http-threads 1`, 2 prepare workers) on this {os.cpu_count()}-core machine, load average "
             f"{load_before:.1f} before and {load_after:.1f} after. Each time is the median of {a.repeats} requests "
             "(max_tokens 1): parse, compile, one forward step and the answer. A 400 is a refusal at the GBNF size "
             "limit (2^20 elements), reached after the compile.", "",
             "| size | N | body | request time | HTTP |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['kind']} | {r['n']:,} | {r['body_bytes'] / 1e6:.2f} MB | {r['seconds']:.3f} s | {r['status']} |")
    lines += ["", f"/health while three 40,000-property schema compiles ran at once "
              f"({', '.join(f'{t:.2f}' for t in health['compile_s'])} s each): p50 {health['p50_ms']:.1f} ms, "
              f"p99 {health['p99_ms']:.1f} ms, max {health['max_ms']:.1f} ms over {health['probes']} probes.", "",
              "![compile time](compile_time.svg)", ""]
    with open(os.path.join(a.out, "compile_time.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
