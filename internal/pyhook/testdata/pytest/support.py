"""What the hook's tests share: a supervisor of their own (the socket end
of the protocol, in internal/pyhook's package comment) and a way to run a
script as trt-action runs a builder script.

Environment (go test ./internal/pyhook sets it):
    TRT_ACTION_TEST_HOOK_DIR  the folder pyhook.Extract wrote (default: ../../py)
    TRT_ACTION_TEST_MODELS    scripts/make-test-models output (RTX tests)
"""

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK_DIR = os.path.abspath(os.environ.get("TRT_ACTION_TEST_HOOK_DIR") or os.path.join(HERE, "..", "..", "py"))
SCRIPTS = os.path.join(HERE, "scripts")
FAKES = os.path.join(HERE, "fakes")
MODELS = os.environ.get("TRT_ACTION_TEST_MODELS", "")
LIMIT = 60000
WAIT = 60  # seconds any one wait in a test may take


class Connection:
    def __init__(self, sock):
        self.sock = sock
        self.messages = []
        self.sizes = []
        self.closed = False


class Supervisor:
    """A SOCK_SEQPACKET server that records each connection's messages.
    on_message(supervisor, connection, message) runs for each message on
    the connection's reader thread."""

    def __init__(self, path, on_message=None):
        self.path = path
        self.on_message = on_message
        self.connections = []
        self.stop_why = None
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.server.bind(self.path)
        self.server.listen(64)
        self.errors = []
        self.rounds = 0  # times the listener looked for new connections
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                ready, _, _ = select.select([self.server], [], [], 0.01)
                sock = self.server.accept()[0] if ready else None
            except (OSError, ValueError):
                return
            with self.lock:
                if sock is not None:
                    conn = Connection(sock)
                    self.connections.append(conn)
                    if self.stop_why is not None:
                        self._send(conn, {"m": "stop", "why": self.stop_why})
                    threading.Thread(target=self._read, args=(conn,), daemon=True).start()
                self.rounds += 1
                self.changed.notify_all()

    def _read(self, conn):
        while True:
            try:
                data = conn.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                with self.lock:
                    conn.closed = True
                    self.changed.notify_all()
                return
            try:
                message = json.loads(data.decode("utf-8"))
            except ValueError as exc:
                self.errors.append("not JSON: %r (%s)" % (data[:200], exc))
                continue
            with self.lock:
                conn.messages.append(message)
                conn.sizes.append(len(data))
                self.changed.notify_all()
            if self.on_message is not None:
                self.on_message(self, conn, message)

    def _send(self, conn, message):
        try:
            conn.sock.send(json.dumps(message).encode())
        except OSError:
            pass

    def stop(self, why):
        """Sends a stop to every connection, and to any that connects later."""
        with self.lock:
            self.stop_why = why
            for conn in self.connections:
                self._send(conn, {"m": "stop", "why": why})

    def close(self):
        """Goes away: closes the listener and every connection."""
        with self.lock:
            self.closed = True
            self.server.close()
            for conn in self.connections:
                try:
                    conn.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.sock.close()

    def wait(self, predicate, what):
        deadline = time.monotonic() + WAIT
        with self.lock:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out waiting for " + what)
                self.changed.wait(left)

    def settled(self):
        """Once the processes ended: waits until the listener has taken
        every connection they made (a full look after this call began)
        and each has closed."""
        with self.lock:
            start = self.rounds
        self.wait(lambda: self.closed or self.rounds >= start + 2, "the listener")
        self.wait(lambda: all(c.closed for c in self.connections), "every connection to close")
        return list(self.connections)


def hook_env(supervisor=None, hook_dir=HOOK_DIR, pythonpath=(), extra=None):
    env = dict(os.environ)
    for key in ("TRT_ACTION_SUPERVISOR", "TRT_ACTION_HOOK_DIR", "PYTHONPATH"):
        env.pop(key, None)
    path = [hook_dir] if hook_dir else []
    path += list(pythonpath)
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    if hook_dir:
        env["TRT_ACTION_HOOK_DIR"] = hook_dir
    if supervisor is not None:
        env["TRT_ACTION_SUPERVISOR"] = supervisor if isinstance(supervisor, str) else supervisor.path
    env["TRT_ACTION_ROUTE"] = "python"
    env.update(extra or {})
    return env


def run(args, env, stdin=None, timeout=300):
    """Runs args (a script in scripts/ and its arguments, or a full command
    when args[0] is absolute) with env; returns the CompletedProcess."""
    if not os.path.isabs(args[0]):
        args = [sys.executable, os.path.join(SCRIPTS, args[0])] + list(args[1:])
    return subprocess.run(
        args, env=env, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=timeout,
    )


class TestCase(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="pyhook-")
        self.addCleanup(shutil.rmtree, self.folder, True)

    def supervisor(self, on_message=None):
        sup = Supervisor(tempfile.mktemp(prefix="s", dir=self.folder), on_message)
        self.addCleanup(sup.close)
        return sup

    def assertRan(self, result):
        if result.returncode != 0:
            self.fail("exit %d\nstdout:\n%s\nstderr:\n%s" % (result.returncode, result.stdout, result.stderr))

    def assertProtocol(self, conn):
        """What every connection's messages must be: a hello first, then
        builds whose ev and end follow their begin, events under the size
        limit, phases opened before they progress or finish."""
        self.assertTrue(conn.messages, "no message")
        self.assertEqual(conn.messages[0]["m"], "hello")
        for size in conn.sizes:
            self.assertLessEqual(size, LIMIT)
        open_builds = set()
        for m in conn.messages[1:]:
            kind = m["m"]
            self.assertIn(kind, ("begin", "ev", "end"))
            if kind == "begin":
                self.assertNotIn(m["id"], open_builds)
                open_builds.add(m["id"])
            elif kind == "ev":
                self.assertIn(m["id"], open_builds)
            else:
                open_builds.remove(m["id"])
        self.assertEqual(open_builds, set(), "builds that began and never ended")

    def run_after_stop(self, args, sup):
        """Runs a script (in scripts/, given --wait-stdin) that waits for a
        line on stdin before it builds, and writes the line once sup has
        sent its stop: the stop is on the script's socket before any build
        begins. Returns the CompletedProcess."""
        proc = subprocess.Popen(
            [sys.executable, os.path.join(SCRIPTS, args[0])] + list(args[1:]),
            env=hook_env(sup), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True,
        )
        sup.wait(lambda: sup.stop_why is not None, "the stop")
        out, err = proc.communicate("go\n", timeout=WAIT)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        self.assertRan(result)
        return result

    def forked(self, sup, parent_pid):
        """The connections of a process that built, forked a child that
        built, and built again: (parent's, child's), each with its own hello
        and its own build ids."""
        conns = sup.settled()
        self.assertEqual(len(conns), 2)
        for conn in conns:
            self.assertProtocol(conn)
        parent = [c for c in conns if c.messages[0]["pid"] == parent_pid][0]
        child = [c for c in conns if c is not parent][0]
        self.assertEqual(child.messages[0]["ppid"], parent_pid)
        self.assertEqual([b[0]["id"] for b in self.builds(parent)], [1, 2])
        self.assertEqual([b[0]["id"] for b in self.builds(child)], [1])
        return parent, child

    def builds(self, conn):
        """Each build of a connection: (begin, events, end)."""
        out = {}
        for m in conn.messages:
            if m["m"] == "begin":
                out[m["id"]] = [m, [], None]
            elif m["m"] == "ev":
                out[m["id"]][1].extend(m["e"])
            elif m["m"] == "end":
                out[m["id"]][2] = m
        return [tuple(out[k]) for k in sorted(out)]

    def assertWellFormedEvents(self, begin, events, end):
        """Events in time order between begin and end, every progress and
        finish inside a phase that started, nothing left open."""
        last = begin["t"]
        open_phases = {}
        for ev in events:
            t, thread, kind = ev[0], ev[1], ev[2]
            self.assertGreaterEqual(t, last)
            self.assertGreaterEqual(thread, 1)
            last = t
            if kind == "s":
                self.assertEqual(len(ev), 6)
                open_phases.setdefault(ev[3], 0)
                open_phases[ev[3]] += 1
            elif kind == "p":
                self.assertEqual(len(ev), 5)
                self.assertIn(ev[3], open_phases)
            else:
                self.assertEqual(kind, "f")
                self.assertEqual(len(ev), 4)
                open_phases[ev[3]] -= 1
                if not open_phases[ev[3]]:
                    del open_phases[ev[3]]
        self.assertEqual(open_phases, {})
        self.assertGreaterEqual(end["t"], last)
