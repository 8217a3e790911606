#!/usr/bin/env python3
"""One tenant floods, another chats (issue 53, docs/security.md "Quotas").

`seer serve` (the built-in model) with two API keys and --max-conversations 64. Tenant
A holds one conversation and sends its turns one at a time, streamed; its time to
first token is measured quiet, then while tenant B floods from --flood-clients threads
(stateless long prompts, each leaving a prefix entry, and new conversations, each
taking a conversation slot). Recorded: A's TTFT p50/p99 quiet and flooded, whether
every one of A's turns still carried its history (prompt tokens grew), and what B's
requests got. Run with the default flags and with --max-requests-per-tenant.

  scripts/experiments/tenant_flood.py [--build build] [--turns 20] [--flood-clients 6]
Writes docs/results/tenant_flood.{md,json}.
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from serve_process import free_port, wait_ready  # noqa: E402

KEY_A, KEY_B = "sk-flood-a-7c1d9e3b52", "sk-flood-b-2e8f4a6c90"
STORY = ("Once upon a time there was a little girl named Lily who loved to play in the park with her dog. "
         "One day she found a big red ball under a tree and ")


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def request(port, key, body, stream=False):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    c.request("POST", "/v1/chat/completions", json.dumps(body),
              {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    r = c.getresponse()
    if not stream or r.status != 200:
        data = r.read()
        c.close()
        return r.status, time.perf_counter() - t0, json.loads(data) if data else {}
    ttft, usage = None, {}
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if ttft is None and any(ch.get("delta", {}).get("content") for ch in chunk.get("choices", [])):
            ttft = time.perf_counter() - t0
        if chunk.get("usage"):
            usage = chunk["usage"]
    c.close()
    return r.status, ttft, usage


def a_turns(port, turns, conversation):
    ttfts, prompts, statuses = [], [], []
    for i in range(turns):
        body = {"messages": [{"role": "user", "content": f"And then, part {i}?"}], "max_tokens": 8,
                "temperature": 0, "ignore_eos": True, "conversation": conversation, "stream": True,
                "stream_options": {"include_usage": True}}
        status, ttft, usage = request(port, KEY_A, body, stream=True)
        statuses.append(status)
        if status == 200:
            ttfts.append(ttft)
            prompts.append(usage.get("prompt_tokens", 0))
    grew = all(b > a for a, b in zip(prompts, prompts[1:])) and len(prompts) == turns
    return ttfts, prompts, statuses, grew


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def run(build, flags, turns, clients, label):
    port = free_port()
    proc = subprocess.Popen([os.path.join(build, "seer"), "serve", "--port", str(port), "--api-key", KEY_A,
                             "--api-key", KEY_B, "--max-conversations", "64"] + flags,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}", proc, path="/health")
        quiet = a_turns(port, turns, "a-quiet")
        stop = threading.Event()
        b_counts = {}
        lock = threading.Lock()

        def flood(k):
            n = 0
            while not stop.is_set():
                n += 1
                stateless = n % 2 == 0
                body = {"messages": [{"role": "user", "content": STORY * 3 + str(k * 100000 + n)}],
                        "max_tokens": 16, "temperature": 1}
                if not stateless:
                    body["conversation"] = f"b-{k}-{n}"
                status, _, _ = request(port, KEY_B, body)
                with lock:
                    b_counts[status] = b_counts.get(status, 0) + 1

        threads = [threading.Thread(target=flood, args=(k,)) for k in range(clients)]
        for t in threads:
            t.start()
        time.sleep(1.0)  # the flood under way before A's first flooded turn
        flooded = a_turns(port, turns, "a-flooded")
        stop.set()
        for t in threads:
            t.join()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    row = {"label": label, "flags": flags,
           "quiet": {"ttft_p50_ms": pct(quiet[0], 0.5) * 1e3, "ttft_p99_ms": pct(quiet[0], 0.99) * 1e3,
                     "history_kept": quiet[3]},
           "flooded": {"ttft_p50_ms": pct(flooded[0], 0.5) * 1e3, "ttft_p99_ms": pct(flooded[0], 0.99) * 1e3,
                       "history_kept": flooded[3], "statuses": flooded[2], "prompt_tokens": flooded[1]},
           "b_statuses": {str(k): v for k, v in sorted(b_counts.items())}}
    row["p99_ratio"] = row["flooded"]["ttft_p99_ms"] / row["quiet"]["ttft_p99_ms"]
    print(f"{label}: A TTFT p99 quiet {row['quiet']['ttft_p99_ms']:.1f} ms, flooded "
          f"{row['flooded']['ttft_p99_ms']:.1f} ms ({row['p99_ratio']:.2f}x), history kept "
          f"{row['flooded']['history_kept']}, B {row['b_statuses']}", file=sys.stderr, flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--flood-clients", type=int, default=6)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    a = ap.parse_args()
    load_before = load_average()
    rows = [run(a.build, [], a.turns, a.flood_clients, "defaults"),
            run(a.build, ["--max-requests-per-tenant", "2"], a.turns, a.flood_clients, "--max-requests-per-tenant 2")]
    load_after = load_average()
    meta = {"command": "scripts/experiments/tenant_flood.py", "turns": a.turns, "flood_clients": a.flood_clients,
            "nproc": os.cpu_count(), "load_before": load_before, "load_after": load_after, "rows": rows}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tenant_flood.json"), "w") as f:
        json.dump(meta, f, indent=1)
    lines = ["# Tenant B floods, tenant A chats", "",
             f"`scripts/experiments/tenant_flood.py`: `seer serve` with the built-in model, two API keys and",
             f"`--max-conversations 64`, on this {os.cpu_count()}-core machine (load average {load_before:.1f} before,",
             f"{load_after:.1f} after). A sends {a.turns} streamed turns of one conversation (8 tokens each), quiet and",
             f"then while B floods from {a.flood_clients} threads: stateless long prompts and new conversations",
             "(16 tokens each), several times the conversation cap over the run. TTFT: time to A's first content",
             "chunk. History kept: every one of A's turns had more prompt tokens than the one before.", "",
             "| flags | A TTFT p50 / p99 quiet | A TTFT p50 / p99 flooded | p99 flooded / quiet | A's history kept | B's answers |",
             "|---|---:|---:|---:|---|---|"]
    for r in rows:
        q, f = r["quiet"], r["flooded"]
        lines.append(f"| {r['label']} | {q['ttft_p50_ms']:.1f} / {q['ttft_p99_ms']:.1f} ms | "
                     f"{f['ttft_p50_ms']:.1f} / {f['ttft_p99_ms']:.1f} ms | {r['p99_ratio']:.2f}x | "
                     f"{'yes' if f['history_kept'] else 'NO'} | "
                     f"{', '.join(f'{v} x {k}' for k, v in r['b_statuses'].items())} |")
    with open(os.path.join(a.out, "tenant_flood.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
