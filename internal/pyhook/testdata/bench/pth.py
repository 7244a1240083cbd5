"""What trt-action installed with pip costs every Python start of the
environment when no supervisor runs it: its trt_action.pth (an import line
that imports nothing without TRT_ACTION_SUPERVISOR), and what Python 3.15
and later do instead (PEP 829: import trt_action._activate, the target
trt_action.start names, and call it).

A throwaway venv (no pip, no network) gets the wheel's Python files as pip
lays them out (internal/pyhook/wheel, the hook); then, paired, each round
starts `python -c CODE` once in each configuration, in an order that
rotates from round to round:

    no .pth             the files, without trt_action.pth
    comment-only .pth   trt_action.pth without its import line: what
                        reading a .pth file costs, whatever it holds
    trt_action.pth      the wheel's .pth
    .start target       no trt_action.pth; a .pth that imports
                        trt_action._activate and calls activate() (no
                        Python 3.15 here: that is what its site does)

Prints each configuration's median and minimum, the median of the paired
differences, and two in-process figures: exec() of the .pth's import line
as site runs it (compiled each time), and the import of the .start target
in a fresh interpreter.

    $TRT_ACTION_SCRIPT_PYTHON internal/pyhook/testdata/bench/pth.py [--rounds 100] [--code pass]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WHEEL = os.path.join(HERE, "..", "..", "wheel")
HOOK = os.path.join(HERE, "..", "..", "py", "trt_action_hook")
START_PTH = "import trt_action._activate as a; a.activate()\n"


def venv(folder):
    prefix = os.path.join(folder, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", prefix], check=True)
    python = os.path.join(prefix, "bin", "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        stdout=subprocess.PIPE, universal_newlines=True, check=True,
    ).stdout.strip()
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(os.path.join(WHEEL, "trt_action"), os.path.join(site, "trt_action"), ignore=ignore)
    shutil.copytree(HOOK, os.path.join(site, "trt_action_hook"), ignore=ignore)
    return python, site


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--code", default="pass")
    args = p.parse_args()
    folder = tempfile.mkdtemp(prefix="pyhook-pth-bench-")
    python, site = venv(folder)
    pth = os.path.join(site, "trt_action.pth")
    start = os.path.join(site, "trt_action_start.pth")
    with open(os.path.join(WHEEL, "trt_action.pth")) as f:
        wheel_pth = f.read()

    def lay(config):
        for path in (pth, start):
            if os.path.exists(path):
                os.remove(path)
        if config == "trt_action.pth":
            with open(pth, "w") as f:
                f.write(wheel_pth)
        elif config == "comment-only .pth":
            with open(pth, "w") as f:
                f.write("".join(l for l in wheel_pth.splitlines(True) if not l.startswith("import")))
        elif config == ".start target":
            with open(start, "w") as f:
                f.write(START_PTH)

    # Byte code written as pip writes it at install (PYTHONDONTWRITEBYTECODE
    # would compile the package at every start).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRT_ACTION_") and k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    command = [python, "-c", args.code]

    def once(config):
        lay(config)
        t0 = time.perf_counter_ns()
        subprocess.run(command, env=env, check=True)
        return time.perf_counter_ns() - t0

    configs = ["no .pth", "comment-only .pth", "trt_action.pth", ".start target"]
    for config in configs * 3:  # warm up: byte code cached, files in the page cache
        once(config)
    times = {c: [] for c in configs}
    for r in range(args.rounds):
        for config in configs[r % len(configs):] + configs[: r % len(configs)]:
            times[config].append(once(config))
    print("python %s, python -c %r, %d rounds (paired, order rotated)" % (sys.version.split()[0], args.code, args.rounds))
    for config in configs:
        t = times[config]
        print("  %-17s median %6.2f ms  min %6.2f ms" % (config, statistics.median(t) / 1e6, min(t) / 1e6))
    for config in configs[1:]:
        diff = [a - b for a, b in zip(times[config], times["no .pth"])]
        print("  %-17s median paired difference %+6.3f ms" % (config, statistics.median(diff) / 1e6))

    # In process: the import line as site runs it (exec of the text), and
    # the .start target's import in a fresh interpreter.
    line = [l for l in wheel_pth.splitlines() if l.startswith("import")][0]
    exec_line = subprocess.run(
        [python, "-c", "import timeit; n = 20000; print(min(timeit.repeat('exec(line)', globals={'line': %r}, number=n, repeat=5)) / n * 1e9)" % line],
        env=env, stdout=subprocess.PIPE, universal_newlines=True, check=True,
    ).stdout.strip()
    print("  exec() of the .pth's import line: %.0f ns" % float(exec_line))
    lay("no .pth")
    imports = []
    for _ in range(max(20, args.rounds // 5)):
        out = subprocess.run(
            [python, "-c", "import time; t = time.perf_counter_ns(); import trt_action._activate as a; a.activate(); print(time.perf_counter_ns() - t)"],
            env=env, stdout=subprocess.PIPE, universal_newlines=True, check=True,
        ).stdout
        imports.append(int(out))
    print("  import trt_action._activate and activate(), fresh interpreter: median %.0f us, min %.0f us (%d runs)"
          % (statistics.median(imports) / 1e3, min(imports) / 1e3, len(imports)))
    shutil.rmtree(folder, True)


main()
