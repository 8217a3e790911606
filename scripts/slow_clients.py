#!/usr/bin/env python3
"""Does a server keep answering while many clients hold half-sent request headers?

Opens --idle connections that each send the first line and one header field of a
request and then nothing, keeps them open for --hold seconds while it times
ordinary completion requests sent one after another the whole time, and prints the probe
latencies next to the same probes sent before the idle connections were opened.

  scripts/slow_clients.py --url http://127.0.0.1:8080 --idle 700 --hold 8

The server under test must already be running (e.g. `build/seer serve`). Only
loopback addresses are accepted: this is a load tool.
"""
import argparse
import http.client
import json
import socket
import statistics
import sys
import time
import urllib.parse


def probe(host, port, timeout):
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": 8})
    start = time.monotonic()
    try:
        c = http.client.HTTPConnection(host, port, timeout=timeout)
        c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        c.close()
        return time.monotonic() - start, r.status
    except OSError as e:
        return time.monotonic() - start, f"error: {e}"


def run_probes(host, port, n, timeout, until=None):
    """n probes, or with `until` as many as fit before that time (at least n)."""
    out = []
    while len(out) < n or (until is not None and time.monotonic() < until):
        out.append(probe(host, port, timeout))
    return out


def summary(label, results):
    ok = [t for t, s in results if s == 200]
    bad = [s for _, s in results if s != 200]
    if not ok:
        return f"{label:<28} {len(results):>6} {0:>6} {'-':>9} {'-':>9}  {bad[:3]}"
    return (f"{label:<28} {len(results):>6} {len(ok):>6} {statistics.median(ok):>9.3f} {max(ok):>9.3f}"
            + (f"  failures: {bad[:3]}" if bad else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--idle", type=int, default=700, help="connections holding half a header")
    ap.add_argument("--hold", type=float, default=8.0, help="seconds to hold them (keep it below the server's --header-timeout)")
    ap.add_argument("--probes", type=int, default=20, help="ordinary requests timed before (and at least as many while holding)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a probe counts as failed")
    a = ap.parse_args()
    u = urllib.parse.urlparse(a.url)
    host, port = u.hostname, u.port or 80
    if host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("slow_clients: only loopback servers (127.0.0.1, localhost, ::1)")

    before = run_probes(host, port, a.probes, a.timeout)
    idle = []
    for i in range(a.idle):
        s = socket.create_connection((host, port), timeout=a.timeout)
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")  # and never the rest
        idle.append(s)
    opened = time.monotonic()
    during = run_probes(host, port, a.probes, a.timeout, until=opened + a.hold)
    # The idle connections the server has already closed read as EOF.
    closed = 0
    for s in idle:
        s.setblocking(False)
        try:
            closed += s.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    print(f"{a.idle} idle connections held {time.monotonic() - opened:.1f} s; {closed} already closed by the server")
    print(f"{'phase':<28} {'sent':>6} {'ok':>6} {'p50 (s)':>9} {'max (s)':>9}")
    print(summary("before", before))
    print(summary(f"with {a.idle} idle connections", during))


if __name__ == "__main__":
    main()
