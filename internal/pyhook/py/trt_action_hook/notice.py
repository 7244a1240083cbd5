"""The hook's one way to say that something failed: one line on stderr,
each kind of failure once per process, so a failure that repeats (every
build, every batch) does not flood the program's output. Nothing the hook
does may raise into the program; every failure ends here."""

import sys

_said = set()


def once(what, exc=None):
    """Writes "trt-action hook: WHAT[: TYPE: MESSAGE]" the first time WHAT
    fails in this process."""
    if what in _said:
        return
    _said.add(what)
    try:
        line = "trt-action hook: " + what
        if exc is not None:
            line += ": %s: %s" % (type(exc).__name__, exc)
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except Exception:
        pass
