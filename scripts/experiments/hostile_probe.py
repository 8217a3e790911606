#!/usr/bin/env python3
"""The adversarial probe of issue 53, as one command: every raw request of the HTTP
fuzzer's seed corpus (fuzz/http_seeds: smuggling vectors CL.TE, TE.CL, TE.TE
obfuscations, trailers, obs-fold, bare CR/LF, Expect, pipelining ...) and a set of
hostile JSON bodies (deep GBNF groups, $ref chains in a schema and in a tool's
parameters, deep JSON, deep tool-call arguments, huge schemas) are sent to one
`seer serve`; for each the status lines that came back, whether the server closed the
connection, and whether /health still answers. Nothing may crash it.

  scripts/experiments/hostile_probe.py [--build build]
Writes docs/results/hostile_probe.{md,json}.
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from serve_process import free_port, wait_ready  # noqa: E402


def exchange(port, data, timeout=3.0):
    """Sends raw bytes; returns (status lines, closed by the server)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        got, closed = b"", False
        end = time.time() + timeout
        while time.time() < end:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                closed = True
                break
            got += chunk
            if got.count(b"HTTP/1.") >= 4:
                break
    return re.findall(rb"HTTP/1\.[01] (\d{3})", got), closed


def post(port, path, body):
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return exchange(port, head + body.encode(), timeout=30)


def hostile_bodies():
    def ref_chain(n, link):
        defs = {f"d{i}": link(f"#/$defs/d{i + 1}") for i in range(n - 1)}
        defs[f"d{n - 1}"] = {"type": "string"}
        return {"$defs": defs, "$ref": "#/$defs/d0"}

    def schema(s):
        return json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
                           "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": s}}})

    def tool(params):
        return json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "tool_choice": "required",
                           "tools": [{"type": "function", "function": {"name": "f", "parameters": params}}]})

    plain = lambda t: {"$ref": t}  # noqa: E731
    chat, comp = "/v1/chat/completions", "/v1/completions"
    deep_args = "[" * 200000 + "]" * 200000
    wide = {f"p{i}": {"type": "integer"} for i in range(100000)}
    return [
        ("GBNF: 17,500 nested groups", comp,
         json.dumps({"prompt": "a", "max_tokens": 2, "grammar": "root ::= " + "(" * 17500 + '"a"' + ")" * 17500})),
        ("schema: 20,000-link $ref chain", chat, schema(ref_chain(20000, plain))),
        ("tool parameters: 20,000-link $ref chain", chat, tool(ref_chain(20000, plain))),
        ("schema: anyOf chain", chat, schema(ref_chain(20000, lambda t: {"anyOf": [plain(t)]}))),
        ("schema: items chain", chat, schema(ref_chain(20000, lambda t: {"type": "array", "items": plain(t)}))),
        ("schema: allOf chain", chat, schema(ref_chain(20000, lambda t: {"allOf": [plain(t)]}))),
        ("GBNF: 20,000 rules chained by first reference", comp,
         json.dumps({"prompt": "a", "max_tokens": 2,
                     "grammar": "root ::= r0\n" + "".join(f"r{i} ::= r{i + 1}\n" for i in range(20000)) + 'r20000 ::= "a"\n'})),
        ("JSON body nested 33 deep", comp, '{"prompt": "a", "x": ' + "[" * 33 + "]" * 33 + "}"),
        ("tool-call arguments nested 200,000 deep", chat,
         json.dumps({"messages": [{"role": "user", "content": "hi"},
                                  {"role": "assistant", "content": None, "tool_calls": [
                                      {"id": "c1", "type": "function", "function": {"name": "f", "arguments": deep_args}}]},
                                  {"role": "tool", "tool_call_id": "c1", "content": "ok"}], "max_tokens": 2})),
        ("schema: 100,000 required properties", chat,
         schema({"type": "object", "properties": wide, "required": list(wide)})),
    ]


def health(port):
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10).status
    except OSError:
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    a = ap.parse_args()
    port = free_port()
    proc = subprocess.Popen([os.path.join(a.build, "seer"), "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = []
    try:
        wait_ready(f"http://127.0.0.1:{port}", proc)
        seeds = os.path.join(ROOT, "fuzz", "http_seeds")
        for name in sorted(os.listdir(seeds)):
            with open(os.path.join(seeds, name), "rb") as f:
                data = f.read().replace(b"Host: localhost", f"Host: 127.0.0.1:{port}".encode())
            t0 = time.perf_counter()
            statuses, closed = exchange(port, data)
            rows.append({"kind": "raw HTTP (fuzz/http_seeds)", "name": name,
                         "statuses": [s.decode() for s in statuses], "closed": closed,
                         "seconds": time.perf_counter() - t0, "health_after": health(port)})
            print(f"{name:32s} {' '.join(rows[-1]['statuses']) or '-':16s} closed={closed}", file=sys.stderr)
        for name, path, body in hostile_bodies():
            t0 = time.perf_counter()
            statuses, closed = post(port, path, body)
            rows.append({"kind": "hostile JSON body", "name": name, "body_bytes": len(body),
                         "statuses": [s.decode() for s in statuses], "closed": closed,
                         "seconds": time.perf_counter() - t0, "health_after": health(port)})
            print(f"{name:45s} {' '.join(rows[-1]['statuses'])} {rows[-1]['seconds']:.2f} s", file=sys.stderr)
        alive = proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    os.makedirs(a.out, exist_ok=True)
    meta = {"command": "scripts/experiments/hostile_probe.py", "server_alive_at_end": alive, "rows": rows}
    with open(os.path.join(a.out, "hostile_probe.json"), "w") as f:
        json.dump(meta, f, indent=1)
    lines = ["# Hostile requests against one `seer serve`", "",
             "`scripts/experiments/hostile_probe.py`: each raw request of the HTTP fuzzer's seed corpus",
             "(`fuzz/http_seeds`, made by `fuzz/make_http_seeds.sh`: smuggling vectors and framing edge cases) and",
             "each hostile JSON body of issue 53, sent to one server with the built-in model, one after another;",
             "the status lines that came back (a pipelined seed gets several), whether the server closed the",
             "connection, and `/health` afterwards. Status lines are in order; `-` is none (the server waits",
             "for more bytes: an incomplete request). Time: until the server closed the connection, or 3 s (30 s for",
             "the JSON bodies) passed with nothing more (a kept-alive connection).",
             f"Server alive at the end: **{'yes' if alive else 'NO'}**.", "",
             "| kind | request | statuses | closed | time | /health after |", "|---|---|---|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['kind']} | `{r['name']}` | {' '.join(r['statuses']) or '-'} | "
                     f"{'yes' if r['closed'] else 'no'} | {r['seconds']:.2f} s | {r['health_after']} |")
    with open(os.path.join(a.out, "hostile_probe.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if not alive or any(r["health_after"] != 200 for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
