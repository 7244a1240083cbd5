"""trt-action's hook: every TensorRT build of this Python process, reported
to trt-action's supervisor as it runs, with the supervisor's stop passed to
TensorRT through a progress monitor.

The bootstrap (sitecustomize.py beside this package) calls install() when
TRT_ACTION_SUPERVISOR names the supervisor's socket. The protocol and the
environment are described in internal/pyhook's package comment
(https://github.com/trt-action/trt-action).

Only the standard library is used, plus the TensorRT bindings the program
itself imports. What a build needs (session, readout) is imported when the
program imports TensorRT, so a process that never does pays only for
connecting and saying hello.
"""

import atexit
import os
import sys

from . import channel, notice, patch

_installed = False


def install():
    """Connects to the supervisor, says hello, and patches TensorRT's
    classes now and whenever they are imported. Once per process; never
    raises."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        path = os.environ.get("TRT_ACTION_SUPERVISOR")
        if not path:
            return
        ch = channel.Channel(path)
        if not ch.open():
            return
        channel.CURRENT = ch
        atexit.register(ch.forget)
        os.register_at_fork(after_in_child=_after_fork_in_child)
        patch.install()
    except Exception as exc:
        notice.once("not installed; TensorRT builds in this process are not observed", exc)


def _after_fork_in_child():
    channel.CURRENT.after_fork_in_child()
    session = sys.modules.get(__name__ + ".session")
    if session is not None:
        session.after_fork_in_child()
