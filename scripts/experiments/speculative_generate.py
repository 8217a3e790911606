#!/usr/bin/env python3
"""Speculative decoding in `seer generate` (docs/speculative.md), robust to a loaded
machine: runs the same input-grounded copy prompts without drafts, with
`--speculate ngram --draft-tokens K --speculate-gate adaptive` and with `always`,
interleaved, `--reps` times each, and reports the medians of the decode speed
`seer generate` prints (wall clock) and of the process's CPU time (user + system,
from getrusage; less disturbed by other jobs than wall time). Greedy, ignore_eos.
Writes JSON (--out) and prints a Markdown table.

usage: scripts/experiments/speculative_generate.py [--seer build/seer] [--model F]
       [--tokens 256] [--draft-tokens 4] [--reps 7] [--out F]
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speculative import PASSAGES, prompt  # noqa: E402


def run(a, extra, i):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [a.seer, "generate", "-p", prompt(i), "-n", str(a.tokens), "--temp", "0", "--ignore-eos", "-t", "1"]
    if a.model:
        cmd += ["-m", a.model]
    r = subprocess.run(cmd + extra, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    decode = float(re.search(r"decode: \d+ tokens in [\d.]+ s \(([\d.]+) tok/s\)", r.stderr).group(1))
    m = re.search(r"(\d+) of (\d+) drafts accepted", r.stderr)
    acc = (int(m.group(1)), int(m.group(2))) if m else None
    return r.stdout, decode, cpu, acc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--model", default="", help="GGUF model (default: the built-in stories260K)")
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--draft-tokens", type=int, default=4)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    k = str(a.draft_tokens)
    modes = {"off": [], "adaptive": ["--speculate", "ngram", "--draft-tokens", k, "--speculate-gate", "adaptive"],
             "always": ["--speculate", "ngram", "--draft-tokens", k, "--speculate-gate", "always"]}
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    res = {m: {"decode": [], "cpu": [], "accepted": 0, "drafted": 0} for m in modes}
    for rep in range(a.reps):
        for i in range(len(PASSAGES)):
            texts = set()
            for m, extra in modes.items():
                text, decode, cpu, acc = run(a, extra, i)
                texts.add(text)
                res[m]["decode"].append(decode)
                res[m]["cpu"].append(cpu)
                if acc:
                    res[m]["accepted"] += acc[0]
                    res[m]["drafted"] += acc[1]
            if len(texts) != 1:
                sys.exit(f"outputs differ for prompt {i}")
    uptime_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = []
    base = None
    for m in modes:
        d, c = statistics.median(res[m]["decode"]), statistics.median(res[m]["cpu"])
        base = base or (d, c)
        acc = res[m]["accepted"] / res[m]["drafted"] if res[m]["drafted"] else None
        rows.append({"mode": m, "decode_tokens_per_s_median": d, "cpu_s_median": c, "decode_speed_up": d / base[0],
                     "cpu_ratio": c / base[1], "acceptance_rate": acc, "drafted": res[m]["drafted"],
                     "runs": len(res[m]["decode"])})
    out = {"command": " ".join(["scripts/experiments/speculative_generate.py"] + sys.argv[1:]),
           "model": a.model or "stories260K (built-in)", "tokens": a.tokens, "draft_tokens": a.draft_tokens,
           "uptime_before": uptime_before, "uptime_after": uptime_after, "rows": rows}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)
    print(uptime_before, "/", uptime_after)
    print("| mode | decode tok/s (median) | speed-up | CPU s per run (median) | CPU vs off | acceptance | drafts |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        acc = f"{100 * r['acceptance_rate']:.0f} %" if r["acceptance_rate"] is not None else "-"
        print(f"| {r['mode']} | {r['decode_tokens_per_s_median']:.0f} | {r['decode_speed_up']:.2f}x | "
              f"{r['cpu_s_median']:.3f} | {r['cpu_ratio']:.2f}x | {acc} | {r['drafted']} |")


if __name__ == "__main__":
    main()
