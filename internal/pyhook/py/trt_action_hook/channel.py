"""A process's connection to the supervisor: a Unix SOCK_SEQPACKET socket
(one message per send, boundaries kept), opened by each process itself.

Children inherit the environment, not descriptors, so each process connects
on its own and says hello first. After a fork the child drops the
connection it inherited (closing only its own copy of the descriptor: the
parent still uses the connection, and the supervisor must see it close when
the parent ends) and opens its own at its first message.

If the supervisor cannot be reached, or has gone, the channel goes quiet:
sends do nothing, and the program runs on unobserved.
"""

import _socket
import _thread
import os
import sys

from . import notice, wire

# A stop from the supervisor: its reason, once one came. Every build of the
# process reads it at each step_complete (a list: one truth test, no lock).
STOP = []

# The process's connection, once install() made it.
CURRENT = None


def _hello():
    argv = getattr(sys, "orig_argv", None) or sys.argv
    return {
        "m": "hello",
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "executable": sys.executable,
        "argv": list(argv),
    }


def _cut_argv(message):
    argv = message["argv"]
    message["argv"] = [a[:1000] for a in argv[:20]] + (["..."] if len(argv) > 20 else [])


def _drop_argv(message):
    message["argv"] = []


class Channel:
    def __init__(self, path):
        self.path = path
        self.gone = False
        self._sock = None
        self._pid = 0  # the process that opened _sock
        self._lock = _thread.allocate_lock()

    def open(self):
        """Connects and says hello, in this process. False if the supervisor
        cannot be reached (said on stderr)."""
        with self._lock:
            return self._open_locked()

    def _open_locked(self):
        if self.gone:
            return False
        if self._sock is not None and self._pid == os.getpid():
            return True
        sock = None
        try:
            sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
            sock.connect(self.path)
            sock.send(wire.fitted(_hello(), (_cut_argv, _drop_argv)).encode())
        except OSError as exc:
            if sock is not None:
                sock.close()
            self.gone = True
            notice.once("cannot reach trt-action's supervisor at %s; TensorRT builds are not observed" % self.path, exc)
            return False
        self._sock, self._pid = sock, os.getpid()
        return True

    def send(self, text):
        """Sends one message (at most wire.LIMIT bytes)."""
        with self._lock:
            if not self._open_locked():
                return
            try:
                self._sock.send(text.encode())
            except OSError:
                self._lost()

    def poll(self):
        """Reads what the supervisor sent, without waiting."""
        with self._lock:
            if not self._open_locked():
                return
            while True:
                try:
                    data = self._sock.recv(65536, _socket.MSG_DONTWAIT)
                except BlockingIOError:
                    return
                except InterruptedError:
                    continue
                except OSError:
                    self._lost()
                    return
                if not data:
                    self._lost()
                    return
                _receive(data)

    def _lost(self):
        # The supervisor ended (or closed this connection): go quiet.
        self.gone = True
        try:
            self._sock.close()
        except OSError:
            pass
        self._sock = None

    def forget(self):
        """At exit: goes quiet and lets go of the socket without closing it
        (no ResourceWarning under -W error or -X dev). The system closes it
        when the process ends, which is when the supervisor must see it
        close."""
        with self._lock:
            self.gone = True
            if self._sock is not None:
                self._sock.detach()
                self._sock = None

    def after_fork_in_child(self):
        # The parent's lock may have been held by one of its threads; this
        # process has only the thread that forked.
        self._lock = _thread.allocate_lock()
        if self._sock is not None:
            try:
                self._sock.close()  # this process's copy of the descriptor only
            except OSError:
                pass
        self._sock, self._pid = None, 0


def _receive(data):
    try:
        import json

        message = json.loads(data.decode("utf-8", "replace"))
    except Exception as exc:
        notice.once("a message from the supervisor could not be read", exc)
        return
    if isinstance(message, dict) and message.get("m") == "stop" and not STOP:
        STOP.append(str(message.get("why", "")))
