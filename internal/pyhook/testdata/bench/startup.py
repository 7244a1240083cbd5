"""The start-up cost of trt-action's Python hook on its own: a Python
process started with no hook, with the bootstrap and no supervisor (what
every process pays when TRT_ACTION_SUPERVISOR is not set), and with the hook
installed (connect, hello, the finder), paired: each round starts every
configuration once, in an order that rotates from round to round. Prints
each configuration's median and minimum and the median of the paired
differences.

    $TRT_ACTION_SCRIPT_PYTHON internal/pyhook/testdata/bench/startup.py [--rounds 40] [--code 'import tensorrt_rtx']
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "py")


def supervisor(path):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(path)
    server.listen(64)

    def read(conn):
        while conn.recv(65536):
            pass
        conn.close()

    def accept():
        while True:
            conn, _ = server.accept()
            threading.Thread(target=read, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--code", default="pass")
    args = p.parse_args()
    folder = tempfile.mkdtemp(prefix="pyhook-bench-")
    hook = os.path.join(folder, "py")
    shutil.copytree(SOURCE, hook, ignore=shutil.ignore_patterns("__pycache__"))
    sock = os.path.join(folder, "s")
    supervisor(sock)
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRT_ACTION_SUPERVISOR", "TRT_ACTION_HOOK_DIR")}
    with_path = dict(base, PYTHONPATH=hook, TRT_ACTION_HOOK_DIR=hook)
    configs = [
        ("no hook", base),
        ("bootstrap, no supervisor", with_path),
        ("hook installed", dict(with_path, TRT_ACTION_SUPERVISOR=sock, TRT_ACTION_ROUTE="python")),
    ]
    command = [sys.executable, "-c", args.code]

    def once(env):
        start = time.perf_counter_ns()
        subprocess.run(command, env=env, check=True)
        return time.perf_counter_ns() - start

    for _, env in configs * 3:  # warm up: byte code cached, files in the page cache
        once(env)
    times = {name: [] for name, _ in configs}
    for r in range(args.rounds):
        order = configs[r % len(configs):] + configs[: r % len(configs)]
        for name, env in order:
            times[name].append(once(env))
    print("python %s, %r, %d rounds (paired, order rotated)" % (sys.version.split()[0], args.code, args.rounds))
    for name, _ in configs:
        t = times[name]
        print("  %-26s median %6.2f ms  min %6.2f ms" % (name, statistics.median(t) / 1e6, min(t) / 1e6))
    for name, _ in configs[1:]:
        diff = [a - b for a, b in zip(times[name], times["no hook"])]
        print("  %-26s median paired difference %+6.2f ms" % (name, statistics.median(diff) / 1e6))
    shutil.rmtree(folder, True)


main()
