#!/usr/bin/env python3
"""Speculative decoding with a draft model (`--draft-model F`, docs/speculative.md) at
batch 1 in `seer generate`, on the input-grounded copy prompts of speculative.py:
for each (target, draft) pair, runs without drafts, with the draft model (gate
`always` and `adaptive`) and with prompt lookup (`ngram`, gate always), interleaved,
`--reps` times each, and reports the medians of the decode speed `seer generate`
prints (wall clock), the acceptance and the share of decode time the draft model's
forward passes took. Greedy, ignore_eos, one thread. The pairs:

* stories260K drafting for itself: every draft accepted, the upper bound of
  acceptance (and a draft exactly as costly as the target: the worst cost).
* a pair made by `seer make-model` (random weights, same byte-level vocabulary):
  target llama-125m Q8_0, draft tiny. Random models do not agree: acceptance is near
  zero, so this measures what drafting costs.

Writes JSON (--out) and a Markdown table (--md, and stdout).

usage: scripts/experiments/speculative_draft_model.py [--seer build/seer] [--tokens 128]
       [--draft-tokens 4] [--reps 3] [--out F.json] [--md F.md] [--workdir /tmp/seer-draft]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speculative import PASSAGES, prompt  # noqa: E402


def make_pair(a):
    os.makedirs(a.workdir, exist_ok=True)
    target = os.path.join(a.workdir, "target-llama-125m-q8_0.gguf")
    draft = os.path.join(a.workdir, "draft-tiny-v32000.gguf")
    if not os.path.exists(target):
        subprocess.run([a.seer, "make-model", "--shape", "llama-125m", "--type", "q8_0", "--seed", "1", "-q",
                        "--out", target], check=True)
    if not os.path.exists(draft):
        subprocess.run([a.seer, "make-model", "--shape", "tiny", "--vocab", "32000", "--seed", "2", "-q",
                        "--out", draft], check=True)
    return target, draft


def run(a, model, extra, i):
    cmd = [a.seer, "generate", "-p", prompt(i), "-n", str(a.tokens), "--temp", "0", "--ignore-eos", "-t", "1"]
    if model:
        cmd += ["-m", model]
    r = subprocess.run(cmd + extra, capture_output=True, text=True, check=True)
    decode_m = re.search(r"decode: \d+ tokens in ([\d.]+) s \(([\d.]+) tok/s\)", r.stderr)
    acc = re.search(r"(\d+) of (\d+) drafts accepted", r.stderr)
    draft_s = re.search(r"draft model .*: \d+ forward passes over \d+ tokens in ([\d.]+) s", r.stderr)
    return {"text": r.stdout, "decode_s": float(decode_m.group(1)), "tok_s": float(decode_m.group(2)),
            "accepted": int(acc.group(1)) if acc else 0, "drafted": int(acc.group(2)) if acc else 0,
            "draft_s": float(draft_s.group(1)) if draft_s else 0.0}


def measure(a, name, model, draft):
    k = str(a.draft_tokens)
    modes = {"off": [],
             "draft model, gate always": ["--draft-model", draft, "--draft-tokens", k, "--speculate-gate", "always"],
             "draft model, gate adaptive": ["--draft-model", draft, "--draft-tokens", k],
             "ngram, gate always": ["--speculate", "ngram", "--draft-tokens", k, "--speculate-gate", "always"]}
    res = {m: [] for m in modes}
    for _ in range(a.reps):
        for i in range(len(PASSAGES)):
            texts = set()
            for m, extra in modes.items():
                r = run(a, model, extra, i)
                texts.add(r["text"])
                res[m].append(r)
            if len(texts) != 1:
                sys.exit(f"{name}: outputs differ for prompt {i}")
    rows, base = [], None
    for m, runs in res.items():
        tok_s = statistics.median(r["tok_s"] for r in runs)
        base = base or tok_s
        drafted, accepted = sum(r["drafted"] for r in runs), sum(r["accepted"] for r in runs)
        draft_share = statistics.median(r["draft_s"] / r["decode_s"] for r in runs)
        rows.append({"pair": name, "mode": m, "decode_tokens_per_s_median": tok_s, "speed_up": tok_s / base,
                     "acceptance_rate": accepted / drafted if drafted else None, "drafted": drafted,
                     "draft_forward_share_of_decode": draft_share, "runs": len(runs)})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--stories", default="../shared/data/models/stories260K.gguf")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--draft-tokens", type=int, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--workdir", default="/tmp/seer-draft-model")
    ap.add_argument("--out", default="")
    ap.add_argument("--md", default="")
    a = ap.parse_args()
    target, draft = make_pair(a)
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = measure(a, "stories260K drafting for itself", a.stories, a.stories)
    rows += measure(a, "make-model llama-125m Q8_0, draft tiny", target, draft)
    uptime_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    out = {"command": " ".join(["scripts/experiments/speculative_draft_model.py"] + sys.argv[1:]),
           "tokens": a.tokens, "draft_tokens": a.draft_tokens, "uptime_before": uptime_before,
           "uptime_after": uptime_after, "rows": rows}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)
    lines = [f"`{out['command']}`, batch 1 (`seer generate -t 1`), {a.tokens} tokens greedy per run, "
             f"K = {a.draft_tokens}, {len(PASSAGES)} copy prompts x {a.reps} reps per mode, interleaved.",
             f"Load: `{uptime_before}` before, `{uptime_after}` after.", "",
             "| pair | mode | decode tok/s (median) | speed-up | acceptance | drafts | draft forward / decode time |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        acc = f"{100 * r['acceptance_rate']:.1f} %" if r["acceptance_rate"] is not None else "-"
        lines.append(f"| {r['pair']} | {r['mode']} | {r['decode_tokens_per_s_median']:.0f} | {r['speed_up']:.2f}x | "
                     f"{acc} | {r['drafted']} | {100 * r['draft_forward_share_of_decode']:.0f} % |")
    text = "\n".join(lines) + "\n"
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
