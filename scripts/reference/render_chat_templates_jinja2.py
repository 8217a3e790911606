#!/usr/bin/env python3
"""Cross-checks the @huggingface/jinja fixtures against Python's jinja2 set up as
transformers' apply_chat_template sets it up (ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks, loopcontrols, the {% generation %} tag, a tojson that is
json.dumps(ensure_ascii=False), raise_exception and strftime_now).

Where the two references disagree, Python is what the model authors wrote their
templates for, so its rendering is written as <case>.jinja2.txt (or
<case>.jinja2.error) next to the npm one and the seer test compares with that; the
disagreements are listed in tests/data/chat_templates/reference_differences.md.
Usage: render_chat_templates_jinja2.py tests/data/chat_templates
"""
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(Extension):
    tags = {"generation"}

    def parse(self, parser):
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                       extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    # The fixtures' clock: 2026-11-25 12:00 UTC, as tests/template/fixtures_test.cc pins it.
    env.globals["strftime_now"] = lambda f: datetime.fromtimestamp(1795608000).strftime(f)
    return env


def main(root):
    env = environment()
    with open(os.path.join(root, "conversations.json"), encoding="utf-8") as f:
        conversations = json.load(f)
    common = {"bos_token": "<s>", "eos_token": "</s>", "date_string": "26 Jul 2024"}
    differences = []
    for family in sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))):
        folder = os.path.join(root, family)
        with open(os.path.join(folder, "template.jinja"), encoding="utf-8") as f:
            source = f.read()
        for name, conv in conversations.items():
            for ext in (".jinja2.txt", ".jinja2.error"):
                p = os.path.join(folder, name + ext)
                if os.path.exists(p):
                    os.remove(p)
            try:
                out, err = env.from_string(source).render(**common, **conv), None
            except Exception as e:  # the template refused the case
                out, err = None, f"{type(e).__name__}: {e}"
            npm_txt = os.path.join(folder, name + ".txt")
            npm = open(npm_txt, encoding="utf-8", newline="").read() if os.path.exists(npm_txt) else None
            if out == npm or (out is None and npm is None):
                continue
            if out is not None:
                with open(os.path.join(folder, name + ".jinja2.txt"), "w", encoding="utf-8", newline="") as f:
                    f.write(out)
            else:
                with open(os.path.join(folder, name + ".jinja2.error"), "w", encoding="utf-8") as f:
                    f.write(err + "\n")
            npm_err = None if npm is not None else open(os.path.join(folder, name + ".error"), encoding="utf-8").read().strip()
            differences.append((family, name, npm_err or "renders", err or "renders"))
    with open(os.path.join(root, "reference_differences.md"), "w", encoding="utf-8") as f:
        f.write("# Where @huggingface/jinja and Python jinja2 disagree\n\n"
                "Written by scripts/reference/render_chat_templates_jinja2.py. For these cases the\n"
                "seer test compares with Python jinja2's result (<case>.jinja2.txt / .jinja2.error),\n"
                "the semantics the templates were written for.\n\n"
                "| family | case | @huggingface/jinja | Python jinja2 |\n|---|---|---|---|\n")
        for fam, name, a, b in differences:
            cell = lambda s: s.replace("|", "\\|").replace("\n", " ")[:160]
            f.write(f"| {fam} | {name} | {cell(a)} | {cell(b)} |\n")
    print(f"{len(differences)} cases differ between the references")


if __name__ == "__main__":
    main(sys.argv[1])
