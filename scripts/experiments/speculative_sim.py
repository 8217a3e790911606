#!/usr/bin/env python3
"""Speculative decoding under load, simulated (docs/speculative.md): `seer sim` of
Llama-2-7B on one A100-80GB (policy sarathi, TBT SLO 0.05 s) over ShareGPT lengths at
increasing Poisson rates, without speculation and with `--speculate-acceptance P
--draft-tokens K`. Drafts only fill the token budget the scheduler left, so the gain
shrinks as load grows. Writes docs/results/speculative_sim.json and prints a table.

usage: scripts/experiments/speculative_sim.py [--seer build/seer] [--data-dir ../shared/data]
       [--num 1000] [--rates 0.5 2 4 8] [--acceptance 0.7] [--draft-tokens 4]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def sim(a, trace, rate, extra):
    out = subprocess.run([a.seer, "sim", "--model", "Llama-2-7B", "--hardware", "A100-80GB", "--trace", trace,
                          "--rate", str(rate), "--policy", "sarathi", "--tbt-slo", "0.05", "--json"] + extra,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{"):])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seer", default="build/seer")
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--num", type=int, default=1000)
    ap.add_argument("--rates", type=float, nargs="+", default=[0.5, 2, 4, 8])
    ap.add_argument("--acceptance", type=float, default=0.7)
    ap.add_argument("--draft-tokens", type=int, default=4)
    ap.add_argument("--out", default="docs/results/speculative_sim.json")
    a = ap.parse_args()
    trace = os.path.join(tempfile.mkdtemp(prefix="seer-spec-sim-"), "trace.jsonl")
    subprocess.run([a.seer, "trace", "--out", trace, "--num", str(a.num), "--rate", "1", "--lengths", "sharegpt",
                    "--data-dir", a.data_dir, "--seed", "1"], check=True, capture_output=True)
    rows = []
    for rate in a.rates:
        plain = sim(a, trace, rate, [])
        spec = sim(a, trace, rate, ["--speculate-acceptance", str(a.acceptance), "--draft-tokens", str(a.draft_tokens)])
        s = spec.get("speculation") or {}
        row = {"rate": rate,
               "tbt_p50_s": [plain["tbt_s"]["p50"], spec["tbt_s"]["p50"]],
               "tbt_p99_s": [plain["tbt_s"]["p99"], spec["tbt_s"]["p99"]],
               "e2e_mean_s": [plain["e2e_s"]["mean"], spec["e2e_s"]["mean"]],
               "ttft_p50_s": [plain["ttft_s"]["p50"], spec["ttft_s"]["p50"]],
               "tokens_per_step": s.get("tokens_per_step"),
               "draft_tokens_per_verify": (s["draft_tokens"] / s["verify_steps"]) if s.get("verify_steps") else 0}
        rows.append(row)
    cmd = " ".join(["scripts/experiments/speculative_sim.py"] + sys.argv[1:])
    with open(a.out, "w") as f:
        json.dump({"command": cmd, "acceptance": a.acceptance, "draft_tokens": a.draft_tokens, "rows": rows}, f,
                  indent=1)
    print(f"| rate (req/s) | TBT p50 off / on (ms) | TBT p99 off / on (ms) | e2e mean off / on (s) | "
          f"TTFT p50 off / on (s) | drafts per verifying chunk | tokens/step |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rate']:g} | {1e3 * r['tbt_p50_s'][0]:.1f} / {1e3 * r['tbt_p50_s'][1]:.1f} | "
              f"{1e3 * r['tbt_p99_s'][0]:.1f} / {1e3 * r['tbt_p99_s'][1]:.1f} | "
              f"{r['e2e_mean_s'][0]:.2f} / {r['e2e_mean_s'][1]:.2f} | {r['ttft_p50_s'][0]:.3f} / {r['ttft_p50_s'][1]:.3f} | "
              f"{r['draft_tokens_per_verify']:.2f} | {r['tokens_per_step'] or 0:.2f} |")


if __name__ == "__main__":
    main()
