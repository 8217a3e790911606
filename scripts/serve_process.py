"""Shared by the scripts that start `seer serve` and talk to it (sim_vs_real.py,
engine_overhead.py, experiments/capacity_cpu.py): a free loopback port and a
deadline-bounded wait until the server answers."""
import socket
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, proc, deadline_s=120, path="/health"):
    end = time.time() + deadline_s
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError("seer serve exited early")
        try:
            urllib.request.urlopen(url + path, timeout=1).read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("seer serve did not come up")
