#!/usr/bin/env python3
"""scripts/results_status.py on a temporary git repository (run by .ci/run)."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts'))
import results_status as rs  # noqa: E402


class ResultsStatusTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.git('init', '-q')
        self.git('config', 'user.email', 't@example.com')
        self.git('config', 'user.name', 't')
        self.write('src/kernels/dot.cc', 'v1\n')
        self.write('src/sim/cost.cc', 'v1\n')
        self.write('docs/results/kernel.md', '| 1.0 |\n')
        self.write('docs/results/sim.md', '| 2.0 |\n')
        self.write('docs/results/sim.json', '{}\n')
        self.measured = self.commit('results')
        self.write_manifest({
            'kernel.md': {'commit': self.measured, 'command': 'k', 'depends_on': ['src/kernels']},
            'sim.md': {'commit': self.measured, 'command': 's', 'depends_on': ['src/sim'],
                       'files': ['sim.json']},
        })
        self.write('README.md', 'Kernels: [k](docs/results/kernel.md).\nSim: docs/results/sim.json.\n')
        self.write('src/kernels/dot.cc', 'v2\n')
        self.commit('kernel change')

    def tearDown(self):
        self.tmp.cleanup()

    def git(self, *args):
        return subprocess.run(['git', '-C', self.root, *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)

    def write_manifest(self, results):
        self.write(rs.MANIFEST, json.dumps({'results': results}))

    def commit(self, msg):
        self.git('add', '-A')
        self.git('commit', '-q', '-m', msg)
        return self.git('rev-parse', 'HEAD')

    def states(self):
        return {r['result']: r for r in rs.report(self.root)['results']}

    def check(self, *flags):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return rs.main(['--root', self.root, '--json', *flags])

    def test_changed_dependency_is_stale_unchanged_is_fresh(self):
        s = self.states()
        self.assertEqual(s['kernel.md']['state'], 'stale')
        self.assertEqual(s['kernel.md']['commits_since'], 1)
        self.assertIn('kernel change', s['kernel.md']['newest'])
        self.assertEqual(s['sim.md']['state'], 'fresh')

    def test_check_fails_on_an_unmarked_readme_citation(self):
        self.assertEqual(self.check('--check'), 1)
        self.write('README.md', 'Kernels: [k](docs/results/kernel.md) (stale: before v2).\n')
        self.assertEqual(self.check('--check'), 0)

    def test_a_sibling_file_cites_its_result(self):
        cites = rs.report(self.root)['citations']
        self.assertIn(('README.md', 2, 'sim.md', 'fresh'),
                      [(c['doc'], c['line'], c['result'], c['state']) for c in cites])

    def test_docs_are_checked_only_with_check_docs(self):
        self.write('README.md', 'nothing cited\n')
        self.write('docs/kernels.md', 'See `kernel.md` and results/kernel.md.\n')
        self.assertEqual(self.check('--check'), 0)
        self.assertEqual(self.check('--check-docs'), 1)

    def test_a_doc_of_the_same_name_is_no_citation(self):
        self.write('README.md', 'See [docs/sim.md](docs/sim.md).\n')
        self.write('docs/sim.md', 'doc\n')
        self.write_manifest({'sim.md': {'commit': self.measured, 'depends_on': ['src/kernels']},
                             'kernel.md': {'commit': self.measured, 'depends_on': ['src/sim']}})
        self.assertEqual(self.check('--check'), 0)

    def test_code_blocks_are_not_citations(self):
        self.write('README.md', '```sh\nrun --out docs/results/kernel.md\n```\n\n    run --out docs/results/kernel.md\n')
        self.assertEqual(self.check('--check'), 0)

    def test_readme_citing_an_unrecorded_result_fails(self):
        self.write('docs/results/new.md', 'x\n')
        self.write('README.md', 'New: docs/results/new.md\n')
        self.assertEqual(self.check('--check'), 1)

    def test_a_commit_missing_from_the_clone_is_unknown_not_stale(self):
        self.write_manifest({'kernel.md': {'commit': '0' * 40, 'depends_on': ['src/kernels']},
                             'sim.md': {'commit': self.measured, 'depends_on': ['src/sim'],
                                        'files': ['sim.json']}})
        self.assertEqual(self.states()['kernel.md']['state'], 'unknown')
        self.assertEqual(self.check('--check'), 0)


if __name__ == '__main__':
    unittest.main()
