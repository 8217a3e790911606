#!/usr/bin/env python3
"""Real-world schema coverage: JSONSchemaBench (issue 51, docs/structured-outputs.md,
"Real-world schemas").

Reads the corpus straight from a git directory of guidance-ai/jsonschemabench (the
`fetch` of github:guidance-ai/jsonschemabench; nothing of it is committed): per subset
of data/ a fixed sample (--sample schemas, ordered by the SHA-256 of their file name,
so the sample is deterministic but not alphabetical), then
  * seer: `seer grammar check --schema FILE` with no instances only compiles; exit 0 is
    compiled, otherwise the refusal's keyword is parsed from the message
    (`seer: error: #/pointer: 'keyword' ...`);
  * llama.cpp (optional, --llama-converter): its examples/json_schema_to_grammar.py run
    on the same file; a grammar on stdout counts as covered. The converter skips
    keywords it cannot enforce, so each success is also checked for the assertion
    keywords its README lists as unsupported (and those its code never reads);
  * instances: MaskBench (maskbench/data/<subset>---<name>.json in the same repository)
    holds valid and invalid instances of most schemas; for each schema seer compiled,
    its schema and instances (compact JSON) go through `seer grammar check` again:
    valid ones should be accepted (seer admits a subset: properties in schema order),
    invalid ones must be rejected unless the reason is a keyword seer documents as an
    annotation (an unknown `format`);
  * mask time: for up to --mask-schemas compiled schemas a subset, `--time --vocab V
    --repeats 1` along its first valid instance: per-token mask p50/p99 (uncached trie
    walks), reported as the median of the schemas' p50s and the largest p99.

  scripts/experiments/schema_corpus.py --corpus-git DIR [--seer build/seer]
      [--llama-converter /tmp/json_schema_to_grammar.py] [--sample 200] [--mask-schemas 10]
      [--vocab ../shared/data/tokenizer-tests/ggml-vocab-llama-spm.gguf] [--jobs 2]
Writes docs/results/schema_corpus.{md,json}.
"""
import argparse
import concurrent.futures
import collections
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Assertion keywords llama.cpp's converter does not enforce: the ones its grammars/README.md
# lists as unsupported, plus the ones json_schema_to_grammar.py never reads.
LLAMA_UNENFORCED = {
    "patternProperties", "uniqueItems", "contains", "minContains", "maxContains", "not", "if", "then", "else",
    "dependentSchemas", "dependentRequired", "dependencies", "propertyNames", "multipleOf", "minProperties",
    "maxProperties", "unevaluatedProperties", "unevaluatedItems", "additionalItems",
}
# Formats seer enforces that the converter lacks (other formats are annotations to both).
LLAMA_MISSING_FORMATS = {"duration", "email", "ipv4", "ipv6", "hostname", "uri"}
NUMBER_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")

# Keywords whose value is a map of name -> schema, a schema, or a list of schemas.
SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")
SCHEMA_VALUES = ("not", "if", "then", "else", "additionalProperties", "additionalItems", "contains",
                 "propertyNames", "unevaluatedProperties", "unevaluatedItems", "items")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")


def subschemas(s):
    for k in SCHEMA_MAPS:
        if isinstance(s.get(k), dict):
            yield from (v for v in s[k].values() if isinstance(v, dict))
    for k in SCHEMA_VALUES:
        if isinstance(s.get(k), dict):
            yield s[k]
    for k in SCHEMA_LISTS:
        if isinstance(s.get(k), list):
            yield from (v for v in s[k] if isinstance(v, dict))
    if isinstance(s.get("dependencies"), dict):
        yield from (v for v in s["dependencies"].values() if isinstance(v, dict))


def llama_dropped(schema):
    """The assertion keywords in `schema` that llama.cpp's converter would not enforce."""
    found, todo, seen = set(), [schema], 0
    while todo and seen < 200000:
        s = todo.pop()
        seen += 1
        for k in LLAMA_UNENFORCED & s.keys():
            v = s[k]
            if k == "uniqueItems" and v is not True:
                continue
            if k in ("dependencies", "dependentRequired", "patternProperties") and not v:
                continue
            if k in ("additionalItems", "propertyNames", "unevaluatedProperties", "unevaluatedItems") and v in (True, {}):
                continue
            found.add(k)
        t = s.get("type")
        if any(b in s for b in NUMBER_BOUNDS) and (t == "number" or (isinstance(t, list) and "number" in t)):
            found.add("minimum/maximum on number")
        if s.get("format") in LLAMA_MISSING_FORMATS and "pattern" not in s:
            found.add("format:" + s["format"])
        todo.extend(subschemas(s))
    return sorted(found)


class Corpus:
    """Files of one commit of a git directory, read without a work tree."""

    def __init__(self, git_dir):
        self.git_dir = git_dir
        self.commit = self.git("rev-parse", "HEAD").strip()
        self.date = self.git("log", "-1", "--format=%cI").strip()
        self.paths = self.git("ls-tree", "-r", "--name-only", "HEAD").splitlines()

    def git(self, *args):
        return subprocess.run(["git", f"--git-dir={self.git_dir}", *args], check=True, capture_output=True,
                              text=True).stdout

    def read(self, path):
        """The file's bytes, or None where the snapshot lacks the blob (its largest files)."""
        r = subprocess.run(["git", f"--git-dir={self.git_dir}", "show", f"HEAD:{path}"], capture_output=True)
        return r.stdout if r.returncode == 0 else None


def sample_names(corpus, subset, n):
    names = [p.split("/", 2)[2] for p in corpus.paths if p.startswith(f"data/{subset}/") and p.endswith(".json")]
    names.sort(key=lambda x: hashlib.sha256(x.encode()).hexdigest())
    return names[:n]


REFUSAL = re.compile(r"^seer: error: (#[^\n]*?): '([^']+)'", re.M)


def refusal_keyword(stderr):
    m = REFUSAL.search(stderr)
    if m:
        return m.group(2), m.group(1)
    if "no value satisfies the schema" in stderr:
        return "unsatisfiable", "#"
    if "the schema depth limit" in stderr:
        return "depth limit", ""
    line = next((x for x in stderr.splitlines() if "error" in x), stderr.strip()[:200])
    return "other: " + re.sub(r"\d+", "N", line.replace("seer: error: ", ""))[:90], ""


def run(cmd, timeout):
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr, time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        return None, "", "", time.perf_counter() - t0


def seer_compile(seer, path, timeout):
    rc, _, err, secs = run([seer, "grammar", "check", "--schema", path], timeout)
    if rc == 0:
        return {"seer": "compiled", "seer_s": round(secs, 3)}
    if rc is None:
        return {"seer": "refused", "keyword": "timeout", "pointer": "", "seer_s": round(secs, 3)}
    if rc < 0 or rc > 1:
        return {"seer": "crashed", "keyword": f"exit {rc}", "pointer": "", "message": err[-300:]}
    kw, ptr = refusal_keyword(err)
    return {"seer": "refused", "keyword": kw, "pointer": ptr, "message": err.strip()[:300], "seer_s": round(secs, 3)}


def llama_convert(converter, path, schema, timeout):
    rc, out, err, _ = run([sys.executable, converter, path], timeout)
    if rc == 0 and out.strip():
        return {"llama": "converted", "llama_dropped": llama_dropped(schema)}
    last = (err.strip().splitlines() or ["timeout" if rc is None else "no output"])[-1]
    return {"llama": "failed", "llama_error": re.sub(r"\d+", "N", last)[:120]}


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def check_instances(seer, tmp, name, bench, timeout):
    """Valid/invalid MaskBench instances of one compiled schema through seer."""
    schema_file = os.path.join(tmp, name + ".mb.json")
    with open(schema_file, "w") as f:
        json.dump(bench["schema"], f)
    out = {"valid": 0, "valid_accepted": 0, "invalid": 0, "invalid_rejected": 0, "invalid_accepted": []}
    tests = bench.get("tests") or []
    inst = os.path.join(tmp, name + ".jsonl")
    with open(inst, "w") as f:
        f.writelines(compact(t["data"]) + "\n" for t in tests)
    rc, stdout, err, _ = run([seer, "grammar", "check", "--schema", schema_file, inst], timeout)
    if rc not in (0, 1):
        out["error"] = "timeout" if rc is None else err.strip()[:200]
        return out
    verdicts = re.findall(r":(\d+): (accept|reject)", stdout)
    if len(verdicts) != len(tests):
        out["error"] = (err.strip() or "verdict count mismatch")[:200]
        return out
    for t, (_, v) in zip(tests, verdicts):
        if t["valid"]:
            out["valid"] += 1
            out["valid_accepted"] += v == "accept"
        else:
            out["invalid"] += 1
            out["invalid_rejected"] += v == "reject"
            if v == "accept":
                out["invalid_accepted"].append((t.get("rust_error") or t.get("python_error") or "")[:160])
    return out


MASK = re.compile(r"mask: p50 (\d+) us, p99 (\d+) us over (\d+) tokens")
COMPILE = re.compile(r"compile: p50 (\d+) us.*\((\d+) grammar elements\)")


def time_mask(seer, vocab, tmp, name, bench, timeout):
    valid = [t for t in bench.get("tests") or [] if t["valid"]]
    if not valid:
        return None
    schema_file = os.path.join(tmp, name + ".mb.json")
    inst = os.path.join(tmp, name + ".one.jsonl")
    with open(inst, "w") as f:
        f.write(compact(valid[0]["data"]) + "\n")
    rc, stdout, err, _ = run([seer, "grammar", "check", "--schema", schema_file, inst, "--time", "--repeats", "1",
                              "--vocab", vocab], timeout)
    m, c = MASK.search(stdout), COMPILE.search(stdout)
    if not m:
        return {"name": name, "error": "timeout" if rc is None else err.strip()[:200]}
    return {"name": name, "accepted": ": accept" in stdout, "mask_p50_us": int(m.group(1)),
            "mask_p99_us": int(m.group(2)), "tokens": int(m.group(3)), "compile_us": int(c.group(1)),
            "elements": int(c.group(2))}


def measure_subset(args, corpus, subset, tmp):
    names = sample_names(corpus, subset, args.sample)
    rows, absent = [], []
    jobs = []
    for name in names:
        raw = corpus.read(f"data/{subset}/{name}")
        if raw is None:
            absent.append(name)
            continue
        path = os.path.join(tmp, f"{subset}--{name}")
        with open(path, "wb") as f:
            f.write(raw)
        try:
            schema = json.loads(raw)
        except ValueError:
            schema = None
        jobs.append((name, path, schema))

    def one(job):
        name, path, schema = job
        row = {"name": name, **seer_compile(args.seer, path, args.timeout)}
        if args.llama_converter and isinstance(schema, dict):
            row.update(llama_convert(args.llama_converter, path, schema, args.timeout))
        return row

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(one, jobs))

    masks = []
    for row in rows:
        if row["seer"] != "compiled":
            continue
        mb_path = f"maskbench/data/{subset}---{row['name']}"
        raw = corpus.read(mb_path) if mb_path in corpus.path_set else None
        if raw is None:
            continue
        bench = json.loads(raw)
        key = f"{subset}--{row['name']}"
        row["instances"] = check_instances(args.seer, tmp, key, bench, args.timeout)
        if args.vocab and len(masks) < args.mask_schemas:
            t = time_mask(args.seer, args.vocab, tmp, key, bench, args.mask_timeout)
            if t:
                masks.append(t)
    return {"subset": subset, "sampled": len(names), "absent_from_snapshot": absent, "schemas": rows,
            "mask": masks}


def summarize(res):
    rows = res["schemas"]
    n = len(rows)
    compiled = [r for r in rows if r["seer"] == "compiled"]
    refused = collections.Counter(r["keyword"] for r in rows if r["seer"] != "compiled")
    llama = [r for r in rows if r.get("llama") == "converted"]
    llama_clean = [r for r in llama if not r["llama_dropped"]]
    inst = [r["instances"] for r in compiled if "instances" in r and "error" not in r["instances"]]
    masks = [m for m in res["mask"] if "mask_p50_us" in m]
    return {
        "subset": res["subset"], "schemas": n, "absent_from_snapshot": len(res["absent_from_snapshot"]),
        "seer_compiled": len(compiled), "seer_crashed": sum(r["seer"] == "crashed" for r in rows),
        "seer_refusals": refused.most_common(),
        "llama_converted": len(llama) if any("llama" in r for r in rows) else None,
        "llama_converted_nothing_dropped": len(llama_clean),
        "llama_dropped": collections.Counter(k for r in llama for k in r["llama_dropped"]).most_common(),
        "instances_schemas": len(inst),
        "valid": sum(i["valid"] for i in inst), "valid_accepted": sum(i["valid_accepted"] for i in inst),
        "invalid": sum(i["invalid"] for i in inst), "invalid_rejected": sum(i["invalid_rejected"] for i in inst),
        "mask_schemas": len(masks), "mask_timeouts": sum(m.get("error") == "timeout" for m in res["mask"]),
        "mask_p50_us": statistics.median(m["mask_p50_us"] for m in masks) if masks else None,
        "mask_p99_us": max(m["mask_p99_us"] for m in masks) if masks else None,
        "mask_tokens": sum(m["tokens"] for m in masks),
    }


def pct(a, b):
    return f"{100 * a / b:.0f} %" if b else "–"


def markdown(meta, summaries, results):
    out = ["# Real-world schemas: JSONSchemaBench coverage", "",
           f"Command: `{meta['command']}`", "",
           f"Corpus: guidance-ai/jsonschemabench commit `{meta['corpus_commit']}` ({meta['corpus_date']}), "
           f"`data/<subset>/`, up to {meta['sample']} schemas a subset ordered by SHA-256 of the file name. "
           f"llama.cpp: `examples/json_schema_to_grammar.py` of ggerganov/llama.cpp commit "
           f"`{meta.get('llama_commit') or 'not run'}`, run as shipped (a grammar on stdout = covered). "
           f"Machine: {meta['machine']}; load average {meta['load_before']:.1f} before, "
           f"{meta['load_after']:.1f} after.", "",
           "| subset | schemas | seer compiled | llama.cpp converted | … of which nothing dropped | "
           "top seer refusals | valid accepted | invalid rejected | mask p50 / p99 µs (schemas, tokens) |",
           "|---|---:|---:|---:|---:|---|---:|---:|---|"]
    tot = collections.Counter()
    for s in summaries:
        top = ", ".join(f"`{k}` {c}" for k, c in s["seer_refusals"][:4])
        llama = pct(s["llama_converted"], s["schemas"]) if s["llama_converted"] is not None else "–"
        clean = pct(s["llama_converted_nothing_dropped"], s["schemas"]) if s["llama_converted"] is not None else "–"
        mask = (f"{s['mask_p50_us']:.0f} / {s['mask_p99_us']:,} ({s['mask_schemas']}, {s['mask_tokens']})"
                if s["mask_schemas"] else "–")
        if s["mask_timeouts"]:
            mask += f"; {s['mask_timeouts']} over the time limit"
        out.append(f"| {s['subset']} | {s['schemas']} | {pct(s['seer_compiled'], s['schemas'])} | {llama} | {clean} | "
                   f"{top} | {s['valid_accepted']}/{s['valid']} | {s['invalid_rejected']}/{s['invalid']} | {mask} |")
        for k in ("schemas", "seer_compiled", "llama_converted", "llama_converted_nothing_dropped", "valid",
                  "valid_accepted", "invalid", "invalid_rejected"):
            tot[k] += s[k] or 0
    out.append(f"| **all** | {tot['schemas']} | {pct(tot['seer_compiled'], tot['schemas'])} | "
               f"{pct(tot['llama_converted'], tot['schemas'])} | {pct(tot['llama_converted_nothing_dropped'], tot['schemas'])}"
               f" | | {tot['valid_accepted']}/{tot['valid']} | {tot['invalid_rejected']}/{tot['invalid']} | |")
    refusals = collections.Counter()
    for s in summaries:
        refusals.update(dict(s["seer_refusals"]))
    out += ["", "## seer's refusals over all subsets (schemas; the first refusal of each)", "",
            "| keyword | schemas |", "|---|---:|"]
    out += [f"| `{k}` | {c} |" for k, c in refusals.most_common(25)]
    dropped = collections.Counter()
    for s in summaries:
        dropped.update(dict(s["llama_dropped"]))
    if dropped:
        out += ["", "## What llama.cpp's converter left unenforced in the schemas it converted", "",
                "| keyword | converted schemas containing it |", "|---|---:|"]
        out += [f"| `{k}` | {c} |" for k, c in dropped.most_common(20)]
    bad = [(r["subset"], x["name"], e) for r in results for x in r["schemas"]
           for e in x.get("instances", {}).get("invalid_accepted", [])]
    out += ["", f"## Invalid MaskBench instances seer accepted ({len(bad)})", ""]
    out += [f"* {sub}/{name}: {e.splitlines()[0] if e else '(no reason given)'}" for sub, name, e in bad[:40]]
    absent = sum(s["absent_from_snapshot"] for s in summaries)
    if absent:
        out += ["", f"{absent} sampled files are absent from the stored snapshot (its largest files) and not counted."]
    out += ["", "Notes: " + meta["notes"]]
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus-git", required=True, help="git directory of guidance-ai/jsonschemabench")
    p.add_argument("--seer", default=os.path.join(ROOT, "build", "seer"))
    p.add_argument("--llama-converter", default="", help="llama.cpp's examples/json_schema_to_grammar.py")
    p.add_argument("--llama-commit", default="", help="the llama.cpp commit the converter came from")
    p.add_argument("--sample", type=int, default=200, help="schemas a subset")
    p.add_argument("--mask-schemas", type=int, default=10, help="compiled schemas a subset whose mask is timed")
    p.add_argument("--vocab", default="", help="a GGUF vocabulary for the mask timing (none: no timing)")
    p.add_argument("--subsets", default="", help="comma-separated subsets (default: every data/ folder)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=120, help="seconds a compile or conversion may take")
    p.add_argument("--mask-timeout", type=float, default=20, help="seconds one schema's mask timing may take")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "results", "schema_corpus"))
    args = p.parse_args()

    corpus = Corpus(args.corpus_git)
    corpus.path_set = set(corpus.paths)
    subsets = args.subsets.split(",") if args.subsets else sorted(
        {x.split("/")[1] for x in corpus.paths if x.startswith("data/") and x.count("/") == 2})
    load_before = os.getloadavg()[0]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for subset in subsets:
            t0 = time.time()
            results.append(measure_subset(args, corpus, subset, tmp))
            s = summarize(results[-1])
            print(f"{subset}: {s['seer_compiled']}/{s['schemas']} compiled, llama {s['llama_converted']}, "
                  f"{time.time() - t0:.0f} s", file=sys.stderr)
    summaries = [summarize(r) for r in results]
    meta = {
        "command": " ".join(["scripts/experiments/schema_corpus.py"] + [a for a in sys.argv[1:]]),
        "corpus_commit": corpus.commit, "corpus_date": corpus.date, "llama_commit": args.llama_commit,
        "sample": args.sample, "vocab": os.path.basename(args.vocab), "machine": f"{os.cpu_count()} cores",
        "load_before": load_before, "load_after": os.getloadavg()[0],
        "notes": ("'valid accepted' / 'invalid rejected' count MaskBench's instances of the compiled schemas, "
                  "written as compact JSON and checked against MaskBench's copy of the schema; seer admits a "
                  "subset of the valid JSON (properties in schema order, `1.0` is not an integer), and leaves "
                  "formats it does not know as annotations. Mask time: `--time --repeats 1 --vocab "
                  f"{os.path.basename(args.vocab)}` along each timed schema's first valid instance (greedy "
                  "longest-match tokens, uncached trie walks): the median of the schemas' p50 and the largest "
                  "p99, wall time on a shared machine; a schema whose timing run passes --mask-timeout is counted as over "
                  "the time limit and left out of the figures. llama.cpp's mask time needs its C++ build and is not "
                  "measured here."),
    }
    with open(args.out + ".json", "w") as f:
        json.dump({"meta": meta, "summary": summaries, "results": results}, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write(markdown(meta, summaries, results))
    print(markdown(meta, summaries, results))


if __name__ == "__main__":
    main()
