#!/usr/bin/env python3
"""Lists the tests CTest skipped, with the reason each gave (GTEST_SKIP's message).

    scripts/skip_report.py JUNIT_XML [--allowed FILE]

JUNIT_XML is what `ctest --output-junit` wrote. With --allowed, exits 1 when a test
skipped for a reason that no line of FILE allows (each non-comment line of FILE is a
regular expression matched against the reason). CI passes .ci/allowed-skips: a test
that skips there for a reason CI could remove (a tool it installs, ../shared data) is
a hole, so it fails the run.
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ET

SKIP_REASON = re.compile(r"Skipped\n(.*?)\n\[  SKIPPED \]", re.S)


def skipped_tests(junit_path):
    for case in ET.parse(junit_path).getroot().iter("testcase"):
        if case.find("skipped") is None:
            continue
        out = case.find("system-out")
        text = out.text if out is not None and out.text else ""
        m = SKIP_REASON.search(text)
        yield case.get("name"), (m.group(1).strip() if m else "(no reason given)")


def allowed_patterns(path):
    with open(path, encoding="utf-8") as f:
        lines = [line.split("#", 1)[0].strip() for line in f]
    return [re.compile(line) for line in lines if line]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("junit")
    ap.add_argument("--allowed", help="file of regular expressions for reasons CI may skip for")
    args = ap.parse_args()
    skipped = list(skipped_tests(args.junit))
    patterns = allowed_patterns(args.allowed) if args.allowed else None
    holes = [(n, r) for n, r in skipped if patterns is not None and not any(p.search(r) for p in patterns)]
    print(f"skipped tests: {len(skipped)}")
    by_reason = {}
    for name, reason in skipped:
        by_reason.setdefault(reason, []).append(name)
    for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(names):4d}  {reason}")
        for n in names[:5]:
            print(f"          {n}")
        if len(names) > 5:
            print(f"          ... and {len(names) - 5} more")
    if holes:
        print(f"error: {len(holes)} test(s) skipped for a reason CI must provide "
              f"(not allowed by {args.allowed}):", file=sys.stderr)
        for name, reason in holes:
            print(f"  {name}: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
