#!/usr/bin/env python3
"""Writes benchmarks/schemas/{wide,nested,formats}.json and one instance line each (.jsonl)
for `seer grammar check --time` (docs/results/schema_timing.md)."""
import json

OUT = "benchmarks/schemas/"


def wide():
    props, inst = {}, {}
    for i in range(80):
        kind = i % 4
        if kind == 0:
            props[f"n{i}"] = {"type": "integer", "minimum": -1000 * i, "maximum": 123456789 + i}
            inst[f"n{i}"] = 42 + i
        elif kind == 1:
            props[f"s{i}"] = {"type": "string", "maxLength": 40 + i}
            inst[f"s{i}"] = "value number %d" % i
        elif kind == 2:
            props[f"x{i}"] = {"type": "number", "exclusiveMinimum": -2.5, "maximum": 1e6}
            inst[f"x{i}"] = 3.25
        else:
            props[f"e{i}"] = {"enum": ["alpha", "beta", "gamma", i]}
            inst[f"e{i}"] = "beta"
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}, inst


def nested():
    leaf = {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0},
                                             "tags": {"type": "array", "items": {"type": "string", "maxLength": 16},
                                                      "maxItems": 10000}},
            "required": ["id", "tags"], "additionalProperties": False}
    schema, inst = leaf, {"id": 1, "tags": ["a", "b"]}
    for depth in range(12):
        schema = {"type": "object", "properties": {"level": {"type": "integer", "minimum": depth, "maximum": depth + 1000},
                                                   "child": schema, "items": {"type": "array", "items": leaf, "minItems": 1, "maxItems": 5000}},
                  "required": ["level", "child", "items"], "additionalProperties": False}
        inst = {"level": depth, "child": inst, "items": [{"id": 2, "tags": []}]}
    return schema, inst


def formats():
    props = {"id": {"type": "string", "format": "uuid"}, "day": {"type": "string", "format": "date"},
             "at": {"type": "string", "format": "date-time"}, "mail": {"type": "string", "format": "email"},
             "host": {"type": "string", "format": "hostname"}, "ip": {"type": "string", "format": "ipv6"},
             "site": {"type": "string", "format": "uri"}, "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{4}(-[a-z]+)?$"},
             "span": {"type": "string", "format": "duration"}}
    inst = {"id": "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "day": "2024-02-29", "at": "2024-05-01T12:30:00Z",
            "mail": "joe.bloggs@example.com", "host": "www.example.com", "ip": "2001:db8::1",
            "site": "https://example.com/a/b?c=d#e", "code": "ABC-1234-xy", "span": "P1Y2M3DT4H5M6S"}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}, inst


for name, make in [("wide", wide), ("nested", nested), ("formats", formats)]:
    schema, inst = make()
    with open(OUT + name + ".json", "w") as f:
        json.dump(schema, f, indent=1)
    with open(OUT + name + ".jsonl", "w") as f:
        f.write(json.dumps(inst, separators=(",", ":")) + "\n")
