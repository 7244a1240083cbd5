"""python -m trt_action ARGS: runs the trt-action binary with ARGS.

The Python process becomes trt-action (os.execv: same PID, same open
files), with the binary's path as argv[0]: a CI runner
that cancels a job signals only the process it started, and a child would
never hear it (GitHub's runner: SIGINT, SIGTERM 7.5 s later, then a kill of
that one process; src/Runner.Sdk/ProcessInvoker.cs in
https://github.com/actions/runner).

Python ignores SIGPIPE (and SIGXFSZ) at start-up, and an ignored signal
stays ignored across exec: they are put back to the default first, as
subprocess does for its children (restore_signals), so trt-action writing
into a closed pipe ends as it would when started by a shell.
"""

import os
import signal
import sys

from . import find_binary


def main():
    try:
        binary = find_binary()
    except OSError as exc:  # not there, or there and not executable: its message says which
        sys.stderr.write("trt-action: %s\n" % exc)
        return 1
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(binary, [binary] + sys.argv[1:])
    except OSError as exc:
        sys.stderr.write("trt-action: cannot run %s: %s\n" % (binary, exc))
        return 126  # found, not runnable: the shell's code for it
    return 1  # not reached: execv returns only by raising


if __name__ == "__main__":
    sys.exit(main())
