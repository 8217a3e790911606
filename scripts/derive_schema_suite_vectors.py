#!/usr/bin/env python3
"""Derives tests/data/json_schema_suite_vectors.json from the JSON Schema Test Suite.

Usage: scripts/derive_schema_suite_vectors.py <git dir of JSON-Schema-Test-Suite> [out]

Keeps the schemas, instances and verdicts of the keyword groups seer's compiler deals
with (no descriptions, no suite files): one entry per group, named "<file>#<index>".
"""
import json
import subprocess
import sys

DRAFT = "tests/draft2020-12/"
FILES = [
    "additionalProperties", "allOf", "anyOf", "boolean_schema", "const", "defs", "dependentRequired", "enum",
    "exclusiveMaximum", "exclusiveMinimum", "format", "if-then-else", "items", "maxItems", "maxLength",
    "maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf",
    "pattern", "patternProperties", "prefixItems", "properties", "propertyNames", "ref", "required", "type",
    "uniqueItems", "dependentSchemas", "contains",
]
FORMATS = ["date-time", "date", "time", "duration", "email", "uuid", "ipv4", "ipv6", "hostname", "uri"]


def show(git_dir, path):
    return json.loads(subprocess.check_output(["git", "--git-dir", git_dir, "show", "HEAD:" + path]))


def main():
    git_dir = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else "tests/data/json_schema_suite_vectors.json"
    paths = [DRAFT + f + ".json" for f in FILES] + [DRAFT + "optional/format/" + f + ".json" for f in FORMATS]
    groups = []
    for path in paths:
        name = path[len(DRAFT):-len(".json")]
        for i, group in enumerate(show(git_dir, path)):
            groups.append({"group": f"{name}#{i}", "schema": group["schema"],
                           "tests": [[t["data"], t["valid"]] for t in group["tests"]]})
    with open(out, "w") as f:
        f.write("[\n")
        f.write(",\n".join(json.dumps(g, ensure_ascii=False, separators=(",", ":")) for g in groups))
        f.write("\n]\n")
    print(f"{len(groups)} groups, {sum(len(g['tests']) for g in groups)} instances -> {out}")


if __name__ == "__main__":
    main()
