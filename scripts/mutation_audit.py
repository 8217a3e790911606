#!/usr/bin/env python3
"""One-token mutation audit: do the tests notice a small wrong change?

Reads mutants (scripts/mutants.txt by default), one per line:

    path:line: before => after @@ area [ctest-regex]

`before` must occur exactly once on that line of the file; it is replaced by
`after`. `area` names the test target test_<area> that is built; the tests run
are `ctest -R <ctest-regex>` when a regex is given, else the whole test_<area>
binary. A mutant is *killed* when a test fails, *survived* when all pass,
*stillborn* when it does not compile, *stale* when its line no longer holds
`before` (fix the list). Lines starting with # are comments.

Each mutant is applied to a scratch copy of the tree (default build-mutation/
in the repository, ignored by git), built there with ccache and reverted. The
source tree itself is never modified.

    scripts/mutation_audit.py                     # all mutants, table on stdout
    scripts/mutation_audit.py --only stall_free   # mutants whose line contains the text
    scripts/mutation_audit.py --json out.json
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import sys
import time
from dataclasses import asdict, dataclass, field

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LINE_RE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):\s*(?P<before>.+?)\s+=>\s+(?P<after>.*?)\s+@@\s+(?P<area>\w+)"
                     r"(?:\s+(?P<regex>\S+))?\s*$")


@dataclass
class Mutant:
    path: str
    line: int
    before: str
    after: str
    area: str
    regex: str = ""
    spec: str = ""
    result: str = ""
    detail: str = ""
    seconds: float = 0.0
    killed_by: list = field(default_factory=list)


def parse_mutants(text):
    mutants = []
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        m = LINE_RE.match(s)
        if not m:
            sys.exit(f"mutants: line {n} is not 'path:line: before => after @@ area [ctest-regex]': {raw}")
        mutants.append(Mutant(m["path"], int(m["line"]), m["before"], m["after"], m["area"], m["regex"] or "", s))
    return mutants


# The scratch build compiles the same relative paths as build/: without the build
# directory in ccache's hash (debug info then names the other directory, which a
# scratch build does not need) it reuses build/'s objects.
ENV = dict(os.environ, CCACHE_NOHASHDIR="true")


def run(cmd, cwd=None, timeout=None):
    """Runs cmd in its own session; output goes to a file, so a helper process a
    failing test leaves behind (a redis-server) cannot hold the run open, and
    whatever of the session is left afterwards is killed."""
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, text=True, env=ENV,
                             start_new_session=True)
        try:
            p.wait(timeout=timeout)
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        out.seek(0)
        return subprocess.CompletedProcess(cmd, p.returncode, out.read())


def sync_tree(scratch):
    """Copies tracked and untracked-unignored files into scratch/tree, only those that changed."""
    tree = os.path.join(scratch, "tree")
    files = run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO).stdout.split("\0")
    for rel in filter(None, files):
        src, dst = os.path.join(REPO, rel), os.path.join(tree, rel)
        if not os.path.isfile(src) or os.path.islink(src):
            continue
        if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)  # a fresh mtime: ninja rebuilds what changed
    # Tests find ../shared next to the source tree.
    shared = os.path.join(scratch, "shared")
    target = os.path.normpath(os.path.join(REPO, "..", "shared"))
    if os.path.isdir(target) and not os.path.lexists(shared):
        os.symlink(target, shared)
    return tree


def configure(tree, build):
    if os.path.exists(os.path.join(build, "build.ninja")):
        return
    r = run(["cmake", "-S", tree, "-B", build, "-G", "Ninja", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
             "-DCMAKE_C_COMPILER_LAUNCHER=ccache"])
    if r.returncode != 0:
        sys.exit("mutation audit: configure failed\n" + r.stdout[-3000:])


def build_target(build, area):
    return run(["nice", "ninja", "-C", build, f"test_{area}"])


def run_tests(build, m, timeout):
    if m.regex:
        cmd = ["ctest", "--test-dir", build, "-R", m.regex, "--output-on-failure", "--timeout", str(timeout)]
    else:
        cmd = [os.path.join(build, "tests", f"test_{m.area}"), "--gtest_brief=1"]
    try:
        r = run(cmd, cwd=build, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, ["(timeout)"]
    if m.regex and "No tests were found" in r.stdout:
        return None, [f"no test matches {m.regex!r}"]
    failed = re.findall(r"\[  FAILED  \] (\S+?)(?:,| \(|$)", r.stdout, re.M)
    failed = sorted(set(failed + re.findall(r"\d+ - (\S+) \(Failed\)", r.stdout)))
    return r.returncode == 0, failed or ([] if r.returncode == 0 else [f"exit {r.returncode}"])


def audit_one(tree, build, m, timeout):
    path = os.path.join(tree, m.path)
    start = time.time()
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except OSError as e:
        m.result, m.detail = "stale", str(e)
        return
    idx = m.line - 1
    if idx >= len(lines) or lines[idx].count(m.before) != 1:
        m.result, m.detail = "stale", f"line {m.line} does not hold {m.before!r} exactly once"
        return
    original = "\n".join(lines)
    lines[idx] = lines[idx].replace(m.before, m.after)
    try:
        with open(path, "w") as f:
            f.write("\n".join(lines))
        b = build_target(build, m.area)
        if b.returncode != 0:
            m.result, m.detail = "stillborn", b.stdout[-400:]
        else:
            passed, failed = run_tests(build, m, timeout)
            if passed is None:
                m.result, m.detail = "stale", failed[0]
            else:
                m.result = "survived" if passed else "killed"
                m.killed_by = failed[:5]
    finally:
        with open(path, "w") as f:  # a fresh mtime, so the next build recompiles it
            f.write(original)
        m.seconds = round(time.time() - start, 1)


def baseline(build, areas, mutants, timeout):
    """The unmutated tree must pass every test a mutant will run, or no result means anything."""
    for area in sorted(areas):
        b = build_target(build, area)
        if b.returncode != 0:
            sys.exit(f"mutation audit: test_{area} does not build unmutated\n" + b.stdout[-3000:])
    seen = set()
    for m in mutants:
        key = (m.area, m.regex)
        if key in seen:
            continue
        seen.add(key)
        passed, failed = run_tests(build, m, timeout)
        if not passed:
            sys.exit(f"mutation audit: unmutated tests fail ({m.area} {m.regex!r}): {failed}")


def table(mutants):
    rows = [("result", "mutant", "killed by / detail", "s")]
    for m in mutants:
        where = f"{m.path}:{m.line}: {m.before} => {m.after}"
        why = ", ".join(m.killed_by) if m.killed_by else m.detail.strip().splitlines()[-1][:60] if m.detail else ""
        rows.append((m.result, where, why, f"{m.seconds:.0f}"))
    widths = [min(90, max(len(r[i]) for r in rows)) for i in range(4)]
    return "\n".join("  ".join(c[:widths[i]].ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows)


def summary(mutants):
    counts = {k: sum(m.result == k for m in mutants) for k in ("killed", "survived", "stillborn", "stale")}
    judged = counts["killed"] + counts["survived"]
    counts["kill_rate"] = round(counts["killed"] / judged, 4) if judged else None
    return counts


def markdown(out):
    s = out["summary"]
    rate = f"{100 * s['kill_rate']:.1f} %" if s["kill_rate"] is not None else "n/a"
    load = ", ".join(f"{x:.1f}" for x in out["load_average"])
    lines = [
        "# Mutation audit",
        "",
        f"Killed **{s['killed']} of {s['killed'] + s['survived']}** one-token mutants ({rate}); "
        f"stillborn {s['stillborn']}, stale {s['stale']}. How to run it: docs/testing.md.",
        "",
        f"Command: `{out['command']}` on commit {out['commit'][:10]}{' (dirty)' if out['dirty'] else ''}, "
        f"{out['seconds']} s on {out['cpus']} cores with load average {load} (1, 5, 15 min) at the end.",
        "",
        "| result | mutant | tests | killed by |",
        "|---|---|---|---|",
    ]
    for m in out["mutants"]:
        tests = f"test_{m['area']}" + (f" -R {m['regex']}" if m["regex"] else "")
        why = ", ".join(m["killed_by"]) or (m["detail"].strip().splitlines()[-1][:80] if m["detail"] else "")
        mutant = f"{m['path']}:{m['line']}: `{m['before']}` => `{m['after']}`"
        lines.append(f"| {m['result']} | {mutant} | {tests} | {why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", default=os.path.join(REPO, "scripts", "mutants.txt"))
    ap.add_argument("--only", action="append", default=[],
                    help="keep mutants whose line contains this text (repeatable: any of them)")
    ap.add_argument("--scratch", default=os.path.join(REPO, "build-mutation"),
                    help="scratch copy of the tree and its build (default build-mutation/)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test run")
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--markdown", help="write the results as a Markdown table to this file")
    ap.add_argument("--render", metavar="JSON", help="only write --markdown from a saved --json result")
    ap.add_argument("--list", action="store_true", help="list the selected mutants and exit")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f, open(args.markdown or "/dev/stdout", "w") as md:
            md.write(markdown(json.load(f)))
        return

    with open(args.mutants) as f:
        mutants = parse_mutants(f.read())
    if args.only:
        mutants = [m for m in mutants if any(o in m.spec for o in args.only)]
    if not mutants:
        sys.exit("mutation audit: no mutant selected")
    if args.list:
        print("\n".join(m.spec for m in mutants))
        return

    scratch = os.path.abspath(args.scratch)
    os.makedirs(scratch, exist_ok=True)
    tree = sync_tree(scratch)
    build = os.path.join(tree, "build")
    configure(tree, build)
    started = time.time()
    baseline(build, {m.area for m in mutants}, mutants, args.timeout)
    for i, m in enumerate(mutants, 1):
        audit_one(tree, build, m, args.timeout)
        print(f"[{i}/{len(mutants)}] {m.result:9} {m.path}:{m.line}: {m.before} => {m.after}", file=sys.stderr)
    for area in sorted({m.area for m in mutants}):
        build_target(build, area)  # leave the scratch build unmutated

    s = summary(mutants)
    print(table(mutants))
    rate = f"{100 * s['kill_rate']:.1f} %" if s["kill_rate"] is not None else "n/a"
    print(f"\nkilled {s['killed']} of {s['killed'] + s['survived']} ({rate}); "
          f"stillborn {s['stillborn']}, stale {s['stale']}; {time.time() - started:.0f} s")
    commit = run(["git", "rev-parse", "HEAD"], cwd=REPO).stdout.strip()
    dirty = bool(run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO).stdout.strip())
    out = {"commit": commit, "dirty": dirty, "command": "scripts/mutation_audit.py " + " ".join(sys.argv[1:]),
           "only": args.only, "load_average": os.getloadavg(), "cpus": os.cpu_count(),
           "seconds": round(time.time() - started), "summary": s, "mutants": [asdict(m) for m in mutants]}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(out))
    sys.exit(0 if s["stale"] == 0 else 1)


if __name__ == "__main__":
    main()
