#!/usr/bin/env python3
"""Which results under docs/results/ are stale, and which doc lines cite them.

    scripts/results_status.py [--json] [--check] [--check-docs] [--root DIR]

docs/results/provenance.json records, for every result file, the commit whose code it
measured, the command that made it and the paths it depends on (its script and the src/
directories whose code it measures). A result is *stale* when `git log COMMIT..HEAD --
PATHS` is not empty: code it measures changed after it was measured.

The report lists every stale result (commits since, the newest one), then every line of
README.md and docs/*.md (outside code blocks) that cites a stale file (a link to or the name of a file under
docs/results/), and whether the line says so: a citing line is *marked* when it contains
the word "stale", e.g. "(stale: measured before the 11-27 kernels)".

--check      exit 1 when README.md cites a stale result on a line that does not say so,
             or cites a result file the manifest does not record (CI runs this)
--check-docs the same for docs/*.md too
--json       the report as JSON on stdout

When you regenerate a result, set its "commit" in the manifest to the HEAD you measured
at; when you add one, add its entry. A commit the clone does not have (a shallow clone)
is reported as unknown, never as stale.
"""
import argparse
import json
import os
import re
import subprocess
import sys

MANIFEST = 'docs/results/provenance.json'
RESULTS = 'docs/results/'
MARKER = re.compile(r'\bstale\b', re.IGNORECASE)
PATH_CITE = re.compile(r'results/([A-Za-z0-9_.\-/]+)')
BARE_CITE = re.compile(r'(?<![\w/.\-])([A-Za-z0-9_\-]+\.(?:md|json|jsonl|svg))(?![\w\-])')


def git(root, *args, check=True):
    r = subprocess.run(['git', '-C', root, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r


def load_manifest(root):
    with open(os.path.join(root, MANIFEST), encoding='utf-8') as f:
        return json.load(f)['results']


def result_status(root, name, entry):
    """One result's state: fresh, stale (with the commits since) or unknown."""
    commit = entry['commit']
    out = {'result': name, 'commit': commit, 'command': entry.get('command'),
           'depends_on': entry['depends_on'], 'files': [name] + entry.get('files', [])}
    if git(root, 'cat-file', '-e', commit + '^{commit}', check=False).returncode != 0:
        out.update(state='unknown', reason=f'commit {commit} is not in this clone')
        return out
    log = git(root, 'log', '--no-merges', '--format=%h %as %s', f'{commit}..HEAD', '--',
              *entry['depends_on']).stdout.splitlines()
    out['measured'] = git(root, 'log', '-1', '--format=%as', commit).stdout.strip()
    out['commits_since'] = len(log)
    out['newest'] = log[0] if log else None
    out['state'] = 'stale' if log else 'fresh'
    return out


def doc_files(root):
    docs = ['README.md']
    d = os.path.join(root, 'docs')
    if os.path.isdir(d):
        docs += sorted('docs/' + f for f in os.listdir(d) if f.endswith('.md'))
    return [f for f in docs if os.path.isfile(os.path.join(root, f))]


def cited_names(line, known, doc_names):
    """Result files a line cites: by a path through results/, or by a bare file name that
    is a result's and not also a doc's (docs/s3.md and docs/results/s3.md share a name)."""
    names = set()
    for m in PATH_CITE.finditer(line):
        n = m.group(1).rstrip('.,;:)').split('#')[0]
        if n:
            names.add(n)
    by_base = {}
    for k in known:
        by_base.setdefault(os.path.basename(k), []).append(k)
    for m in BARE_CITE.finditer(line):
        b = m.group(1)
        if b in by_base and b not in doc_names and len(by_base[b]) == 1:
            names.add(by_base[b][0])
    return names


def citations(root, owner, known):
    """Every (doc, line number, result entry, cited name, text) in README.md and docs/*.md."""
    docs = doc_files(root)
    doc_names = {os.path.basename(d) for d in docs}
    out = []
    for doc in docs:
        fenced = False
        with open(os.path.join(root, doc), encoding='utf-8') as f:
            for i, line in enumerate(f, 1):
                if line.lstrip().startswith('```'):
                    fenced = not fenced
                # a command writing a result file (fenced, or indented 4 spaces) cites no figure
                if fenced or (line.startswith('    ') and not line.lstrip()[:1] in '*-|'):
                    continue
                for n in sorted(cited_names(line, known, doc_names)):
                    out.append({'doc': doc, 'line': i, 'cited': n, 'result': owner.get(n),
                                'marked': bool(MARKER.search(line)), 'text': line.strip()})
    return out


def report(root):
    manifest = load_manifest(root)
    owner = {}
    for name, e in manifest.items():
        for f in [name] + e.get('files', []):
            owner[f] = name
    statuses = {n: result_status(root, n, e) for n, e in sorted(manifest.items())}
    on_disk = set()
    rdir = os.path.join(root, RESULTS)
    for dirpath, _, fs in os.walk(rdir):
        for f in fs:
            on_disk.add(os.path.relpath(os.path.join(dirpath, f), rdir).replace(os.sep, '/'))
    on_disk.discard('provenance.json')
    cites = citations(root, owner, set(owner) | on_disk)
    for c in cites:
        c['state'] = statuses[c['result']]['state'] if c['result'] else (
            'unrecorded' if c['cited'] in on_disk else 'missing')
    return {
        'head': git(root, 'rev-parse', '--short=12', 'HEAD').stdout.strip(),
        'results': list(statuses.values()),
        'unrecorded': sorted(on_disk - set(owner)),
        'missing': sorted(set(owner) - on_disk),
        'citations': cites,
    }


def failures(rep, docs_too):
    bad = []
    for c in rep['citations']:
        if c['doc'] != 'README.md' and not docs_too:
            continue
        if (c['state'] == 'stale' and not c['marked']) or c['state'] == 'unrecorded':
            bad.append(c)
    return bad


def print_table(rep):
    stale = [r for r in rep['results'] if r['state'] == 'stale']
    unknown = [r for r in rep['results'] if r['state'] == 'unknown']
    print(f"results at HEAD {rep['head']}: {len(rep['results'])} recorded, {len(stale)} stale, "
          f"{len(unknown)} unknown, {len(rep['results']) - len(stale) - len(unknown)} fresh")
    if stale:
        w = max(len(r['result']) for r in stale)
        print(f"\n{'stale result':<{w}}  measured    commit        since  newest change to its inputs")
        for r in stale:
            print(f"{r['result']:<{w}}  {r['measured']}  {r['commit'][:12]}  {r['commits_since']:>5}  "
                  f"{r['newest'][:90]}")
    for r in unknown:
        print(f"unknown: {r['result']}: {r['reason']}")
    for f in rep['unrecorded']:
        print(f"not in {MANIFEST}: docs/results/{f}")
    for f in rep['missing']:
        print(f"in {MANIFEST} but not on disk: docs/results/{f}")
    cites = [c for c in rep['citations'] if c['state'] in ('stale', 'unrecorded')]
    if cites:
        print('\ncitations of stale results:')
        for c in cites:
            mark = 'marked' if c['marked'] else ('UNRECORDED' if c['state'] == 'unrecorded' else 'NOT MARKED')
            print(f"  {c['doc']}:{c['line']}: {c['cited']}: {mark}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=None, help='repository root (default: this script\'s)')
    ap.add_argument('--json', action='store_true', help='the report as JSON')
    ap.add_argument('--check', action='store_true', help='fail on README citing a stale result silently')
    ap.add_argument('--check-docs', action='store_true', help='--check over docs/*.md as well')
    a = ap.parse_args(argv)
    root = a.root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rep = report(root)
    if a.json:
        json.dump(rep, sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        print_table(rep)
    if a.check or a.check_docs:
        bad = failures(rep, a.check_docs)
        for c in bad:
            why = ('cites a result not in ' + MANIFEST if c['state'] == 'unrecorded'
                   else 'cites a stale result without saying so (add "(stale: what changed)")')
            print(f"error: {c['doc']}:{c['line']}: {why}: {c['cited']}", file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == '__main__':
    sys.exit(main())
