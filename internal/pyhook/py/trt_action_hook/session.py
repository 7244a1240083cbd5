"""One TensorRT build as the hook sees it: begin, the monitor's events,
end.

At begin the hook reads the program's monitor from the config, attaches its
own (a subclass of that bindings' IProgressMonitor, made for this build)
that passes every callback on to the program's, and starts a drain thread;
at end it puts the program's monitor back (unless the program set another
during the build), so the config's getter returns the program's object
again, joins the drain thread and says how the build ended.

The callbacks run on TensorRT's threads, holding the GIL, while tactics are
timed (the PyProgressMonitor trampoline in python/src/infer/pyCore.cpp,
https://github.com/NVIDIA/TensorRT). Each appends one tuple to a deque and
reads one flag: no lock, no I/O, no formatting; the drain thread does the
rest about every 10 ms. TensorRT cancels a build whose Python step_complete
raises or returns something pybind11 does not read as true (None reads as
false), so the monitor's step_complete catches everything and returns a
bool.

Signals. Python runs a signal's handler in the main thread at the next
bytecode it executes (https://docs.python.org/3/library/signal.html). With
no Python monitor, a build on the main thread runs no bytecode, so a Ctrl-C
raises KeyboardInterrupt when the build returns; a monitor's callback, on
the calling thread in TensorRT-RTX, would run the handler at the callback's
first instruction, where the exception escapes into pybind11, which prints
it and cancels the build, and the KeyboardInterrupt is lost. So while a
build without the program's own monitor runs on the main thread, the hook
holds every Python-level signal handler (it records the signal) and sends
the held signals again when the build has ended, so the program's handlers
run when they would have without the hook. A build whose program set its
own monitor is left as it is: there the handlers run in a callback without
the hook too.

No thread runs between builds, so a program that forks between builds forks
a single-threaded process.
"""

import _signal
import _thread
import itertools
import os
import sys
from time import monotonic_ns

from . import channel as channel_module
from . import notice, readout, wire

_ids = itertools.count(1)  # build ids, from 1 in each process
_threads = {}  # thread ident -> 1-based number, in the order threads first called back
_threads_lock = _thread.allocate_lock()
_active = set()  # builds begun and not ended
_classes = {}  # IProgressMonitor class -> (plain monitor class, teeing monitor class)

DRAIN_SECONDS = 0.01

# TRT_ACTION_ROUTE=python keeps a build on the Python monitor; anything
# else lets the hook use the native route where it can (_native.py).
ROUTE_VARIABLE = "TRT_ACTION_ROUTE"
ROUTE_ASKED = ROUTE_VARIABLE + "=python asks for the Python route"


def after_fork_in_child():
    global _ids, _threads_lock
    _ids = itertools.count(1)
    _threads.clear()
    _threads_lock = _thread.allocate_lock()
    for build in list(_active):
        build.orphaned = True  # the parent's to report; its drain thread is not here
    _active.clear()


def begin(builder, entry, args, kwargs):
    """The Build for a call of builder's entry point, or None when this
    build is not observed. Raises nothing but what a signal handler of the
    program raised."""
    ch = channel_module.CURRENT
    if ch is None or ch.gone:
        return None
    build = None
    try:
        called = _arguments(builder, entry, args, kwargs)
        if called is None:
            return None  # the bindings refuse the call before TensorRT is entered: no build
        network, config = called["network"], called["config"]
        ch.poll()  # a stop the supervisor sent before this build
        if ch.gone:
            return None
        build = Build(ch, entry, config)
        build.args, build.kwargs = _count_written(builder, args, kwargs, called, build)
        message = build.begin_message(builder, network)
    except Exception as exc:
        notice.once("could not observe a TensorRT build", exc)
        if build is not None and build.native is not None:
            _step(build.native.detach, [])  # the build runs as the program set it up
            _step(build.native.close, [])
        return None
    build.start(message)
    return build


# The parameters of each entry point, as the bindings name them
# (python/src/infer/pyCore.cpp in https://github.com/NVIDIA/TensorRT), and
# the bindings' class each argument must be. pybind11 refuses a call that
# does not bind to them, or passes None or an object of another class,
# with a TypeError before TensorRT is entered: that call is no TensorRT
# build, and the hook leaves it alone.
_PARAMETERS = {"build_serialized_network_to_stream": ("network", "config", "writer")}
_NETWORK_AND_CONFIG = ("network", "config")
_CLASSES = (("network", "INetworkDefinition"), ("config", "IBuilderConfig"), ("writer", "IStreamWriter"))


def _arguments(builder, entry, args, kwargs):
    """The call's arguments by parameter name, or None when the bindings
    would refuse them."""
    names = _PARAMETERS.get(entry, _NETWORK_AND_CONFIG)
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names or name in bound:
            return None
        bound[name] = value
    if len(bound) != len(names):
        return None
    module = sys.modules.get(type(builder).__module__)
    for name, cls in _CLASSES:
        if name not in bound:
            continue
        base = getattr(module, cls, None)
        if bound[name] is None or (isinstance(base, type) and not isinstance(bound[name], base)):
            return None
    return bound


def _count_written(builder, args, kwargs, called, build):
    """The arguments to call the entry point with: for a build to a stream,
    the program's writer behind one that counts what it accepted (the
    serialized size; the entry returns only True), so the end can say it.
    The program's writer gets every write as it would, and its result
    (or exception) goes back to TensorRT unchanged."""
    writer = called.get("writer")
    if writer is None:
        return args, kwargs
    base = getattr(sys.modules.get(type(builder).__module__), "IStreamWriter", None)
    if not isinstance(base, type):
        return args, kwargs
    counting = _writer_class(base)(writer)
    build.writer = counting
    if "writer" in kwargs:
        return args, dict(kwargs, writer=counting)
    return args[:2] + (counting,), kwargs


class Build:
    def __init__(self, channel, entry, config):
        from _collections import deque

        self.channel = channel
        self.id = next(_ids)
        self.entry = entry
        self.config = config
        self.args, self.kwargs = (), {}  # what the entry point is called with
        self.writer = None  # the counting writer of a build to a stream
        self.events = deque()
        self.monitor = None
        self.native = None  # the native route's monitor (_native.Native), when attached
        self.user = None
        self.orphaned = False
        self.held = {}  # signal -> the program's handler, while the hook holds them
        self.arrived = []  # signals that came while held, in order
        self._draining = False  # a drain thread runs for this build
        self._wake = _thread.allocate_lock()
        self._done = _thread.allocate_lock()

    def begin_message(self, builder, network):
        config = self.config
        try:
            self.user = config.progress_monitor
        except Exception:
            self.user = None
        message = {
            "m": "begin",
            "id": self.id,
            "t": 0,
            "entry": self.entry,
            "route": "python",
            "bindings": readout.bindings(builder),
            "library": readout.library(builder),
            "user_monitor": self.user is not None,
            "config": readout.config(config),
            "network": readout.network(network),
        }
        if message["library"] is None:
            del message["library"]
        why = self._attach_native()
        if why is not None:
            message["route_note"] = why
        if self.native is not None:
            message["route"] = "native"
            return message
        base = _monitor_base(builder, config)
        if base is not None:
            plain, tee = _monitor_classes(base)
            self.monitor = plain(self) if self.user is None else tee(self, self.user)
        return message

    def _attach_native(self):
        """Puts trt-action's C++ monitor on the config (the native route),
        unless TRT_ACTION_ROUTE says python. Returns why the build takes
        the route it takes, or None when the one reason is that no folder
        of native libraries was named: the supervisor says why, as it
        knows where it looked."""
        if os.environ.get(ROUTE_VARIABLE) == "python":
            return ROUTE_ASKED
        from . import _native

        self.native, why = _native.attach(self.config)
        return why

    def start(self, message):
        """Announces the build, starts its drain thread and attaches the
        monitor. A signal handler's exception in between ends the build as
        an error before it goes on."""
        if self.user is None and self.native is None:
            # A native build without the program's monitor runs no Python
            # on the main thread, so its handlers run when it returns.
            self._hold_signals()
        try:
            message["t"] = monotonic_ns()
            self.channel.send(wire.fitted(message, readout.CUTS))
            _active.add(self)
            if self.native is not None and channel_module.STOP:
                self.native.cancel()  # a stop that came before this build
            self._start_drain()
            if self.monitor is not None:
                try:
                    self.config.progress_monitor = self.monitor
                except Exception as exc:
                    self.monitor = None
                    notice.once("could not attach a progress monitor; builds are seen without their phases", exc)
        except BaseException as exc:
            self.end(raised=exc)
            raise

    def _start_drain(self):
        self._wake.acquire()
        self._done.acquire()
        try:
            _thread.start_new_thread(self._drain, ())
            self._draining = True
        except Exception as exc:
            notice.once("could not start a drain thread; a build's phases are sent when it ends", exc)

    def end(self, returned=None, raised=None):
        """Says how the build ended, after its last events. Raises what a
        signal handler of the program raised meanwhile (where the hook does
        not hold them: a build with the program's own monitor), once the
        end is said."""
        t = monotonic_ns()
        interrupted = []
        _step(self._restore_monitor, interrupted)
        if not self.orphaned:
            _step(self._join_drain, interrupted)
            _active.discard(self)
            _step(lambda: self.channel.send(wire.dumps(self._end_message(t, returned, raised))), interrupted)
        if self.native is not None:
            _step(self.native.close, interrupted)
        _step(self._release_signals, interrupted)
        if interrupted:
            raise interrupted[0]

    def _end_message(self, t, returned, raised):
        message = {"m": "end", "id": self.id, "t": t}
        if raised is not None:
            message["result"] = "error"
            message["error"] = ("%s: %s" % (type(raised).__name__, raised))[:2000]
        elif returned is None or returned is False:
            message["result"] = "none"
        else:
            message["result"] = "ok"
            size = _size(returned)
            if size is None and self.writer is not None:
                size = self.writer.written
            if size is not None:
                message["bytes"] = size
        monitor = self.native if self.native is not None else self.monitor
        message["stopped"] = bool(monitor is not None and monitor.stopped)
        message["user_cancelled"] = bool(monitor is not None and getattr(monitor, "user_cancelled", False))
        return message

    def _restore_monitor(self):
        if self.native is not None:
            self.native.detach()  # the program's monitor is back on the config
            return
        monitor = self.monitor
        if monitor is None:
            return
        try:
            # Only over our own: a monitor another thread of the program set
            # during the build is what the getter must give afterwards, as
            # without the hook. (The bindings take no lock here either: a
            # set between this read and the write below is overwritten.)
            if self.config.progress_monitor is monitor:
                self.config.progress_monitor = self.user
        except Exception as exc:
            notice.once("could not put the program's progress monitor back", exc)
        monitor.detach()

    def _join_drain(self):
        if not self._draining:
            self._flush()
            return
        self._draining = False
        self._wake.release()
        interrupted = None
        while True:  # the end goes after the last events, whatever interrupts the wait
            try:
                self._done.acquire()
                break
            except BaseException as exc:
                interrupted = interrupted or exc
        if interrupted is not None:
            raise interrupted

    def _drain(self):
        try:
            while not self._wake.acquire(True, DRAIN_SECONDS):
                self._flush()
                self.channel.poll()
                if self.native is not None and channel_module.STOP:
                    self.native.cancel()
            self._flush()
        except Exception as exc:
            notice.once("the drain thread failed; a build's events are not all reported", exc)
        finally:
            self._done.release()

    def _flush(self):
        if self.native is not None:
            # The native monitor numbers its threads per build already.
            texts = [wire.event(ev, ev[1]) for ev in self.native.drain()]
            for text in wire.batches(self.id, texts):
                self.channel.send(text)
            return
        pop = self.events.popleft
        texts = []
        while True:
            try:
                ev = pop()
            except IndexError:
                break
            texts.append(wire.event(ev, _thread_number(ev[1])))
        for text in wire.batches(self.id, texts):
            self.channel.send(text)

    def _hold_signals(self):
        # Only the main thread may set handlers, and only it runs them:
        # signal() raises ValueError anywhere else, and then nothing is held.
        try:
            signals = _signal.valid_signals()
        except AttributeError:  # Python 3.7
            signals = range(1, _signal.NSIG)
        for signum in signals:
            try:
                handler = _signal.getsignal(signum)
            except (ValueError, OSError):
                continue
            if not callable(handler):
                continue  # SIG_DFL, SIG_IGN, or not set from Python
            try:
                _signal.signal(signum, self._signal_arrived)
            except ValueError:
                if not self.held:
                    return  # not the main thread
                continue
            except (OSError, RuntimeError):
                continue
            self.held[signum] = handler

    def _signal_arrived(self, signum, frame):
        if signum not in self.arrived:
            self.arrived.append(signum)

    def _release_signals(self):
        held, self.held = self.held, {}
        for signum, handler in held.items():
            _signal.signal(signum, handler)
        for signum in self.arrived:
            os.kill(os.getpid(), signum)  # its handler runs as this returns, as without the hook


def _step(do, interrupted):
    """Does one step of ending a build: a failure of the hook is said once,
    a signal handler's exception is kept for the end."""
    try:
        do()
    except Exception as exc:
        notice.once("could not report the end of a TensorRT build", exc)
    except BaseException as exc:
        interrupted.append(exc)


def _thread_number(ident):
    n = _threads.get(ident)
    if n is None:
        with _threads_lock:
            n = _threads.setdefault(ident, len(_threads) + 1)
    return n


def _size(returned):
    """The serialized size of what an entry returned, where it has one
    without serializing: an IHostMemory's nbytes. None for an engine
    object, whose size would take a copy of the whole engine."""
    size = getattr(returned, "nbytes", None)
    if isinstance(size, int) and not isinstance(size, bool):
        return size
    return None


_writer_classes = {}  # IStreamWriter class -> the counting writer class


def _writer_class(base):
    cls = _writer_classes.get(base)
    if cls is None:
        cls = _writer_classes[base] = _make_writer_class(base)
    return cls


def _make_writer_class(base):
    class CountingWriter(base):
        """Passes each write on to the program's writer and adds up the
        bytes it says it took."""

        def __init__(self, writer):
            base.__init__(self)
            self._writer = writer
            self.written = 0

        def write(self, data):
            n = self._writer.write(data)
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                self.written += n
            return n

    CountingWriter.__qualname__ = CountingWriter.__name__ = "TrtActionCountingWriter"
    return CountingWriter


def _monitor_base(builder, config):
    for obj in (config, builder):
        module = sys.modules.get(type(obj).__module__)
        base = getattr(module, "IProgressMonitor", None)
        if isinstance(base, type):
            return base
    return None


def _monitor_classes(base):
    classes = _classes.get(base)
    if classes is None:
        classes = _classes[base] = _make_monitor_classes(base)
    return classes


def _make_monitor_classes(base):
    stop = channel_module.STOP

    class Monitor(base):
        """trt-action's progress monitor for one build."""

        def __init__(self, build):
            base.__init__(self)
            self._append = build.events.append
            self.stopped = False

        def detach(self):
            # The config keeps every monitor it was given alive (pybind11
            # keep_alive) until it is freed: keep nothing big reachable.
            self._append = _ignore

        def phase_start(self, phase_name, parent_phase, num_steps, _now=monotonic_ns, _ident=_thread.get_ident):
            try:
                self._append((_now(), _ident(), "s", phase_name, parent_phase, num_steps))
            except BaseException as exc:
                _own_failure(exc)

        def step_complete(self, phase_name, step, _now=monotonic_ns, _ident=_thread.get_ident):
            try:
                self._append((_now(), _ident(), "p", phase_name, step))
                if stop:
                    self.stopped = True
                    return False
                return True
            except BaseException as exc:
                _own_failure(exc)
                return not stop

        def phase_finish(self, phase_name, _now=monotonic_ns, _ident=_thread.get_ident):
            try:
                self._append((_now(), _ident(), "f", phase_name))
            except BaseException as exc:
                _own_failure(exc)

    class TeeMonitor(Monitor):
        """The monitor of a build whose config had the program's own
        monitor: every callback also goes to the program's, which may
        cancel the build as it would without trt-action. Whatever is
        raised in a callback (a signal handler's exception) is printed
        and cancels, as the bindings do with the program's monitor."""

        def __init__(self, build, user):
            Monitor.__init__(self, build)
            self._user = user
            self.user_cancelled = False

        def detach(self):
            Monitor.detach(self)
            self._user = None

        def phase_start(self, phase_name, parent_phase, num_steps, _now=monotonic_ns, _ident=_thread.get_ident):
            try:
                self._append((_now(), _ident(), "s", phase_name, parent_phase, num_steps))
                self._user.phase_start(phase_name, parent_phase, num_steps)
            except BaseException as exc:
                _say_like_tensorrt("phase_start", exc)

        def step_complete(self, phase_name, step, _now=monotonic_ns, _ident=_thread.get_ident):
            try:
                self._append((_now(), _ident(), "p", phase_name, step))
                go_on = _as_bool(self._user.step_complete(phase_name, step))
            except BaseException as exc:
                _say_like_tensorrt("step_complete", exc)
                go_on = False
            try:
                if not go_on:
                    self.user_cancelled = True
                if stop:
                    self.stopped = True
                    return False
                return go_on
            except BaseException as exc:
                _say_like_tensorrt("step_complete", exc)
                return False

        def phase_finish(self, phase_name, _now=monotonic_ns, _ident=_thread.get_ident):
            try:
                self._append((_now(), _ident(), "f", phase_name))
                self._user.phase_finish(phase_name)
            except BaseException as exc:
                _say_like_tensorrt("phase_finish", exc)

    Monitor.__qualname__ = Monitor.__name__ = "TrtActionMonitor"
    TeeMonitor.__qualname__ = TeeMonitor.__name__ = "TrtActionTeeMonitor"
    return Monitor, TeeMonitor


def _ignore(*args):
    pass


def _own_failure(exc):
    try:
        notice.once("a progress callback failed; the build goes on", exc)
    except BaseException:
        pass


class _NotABool(Exception):
    pass


def _as_bool(result):
    """The program's step_complete result read as pybind11 reads a Python
    override's result as a C++ bool: True and False; None is false; numbers
    and other objects with __bool__ by their truth; anything else fails to
    convert, which the bindings print and take as a cancel."""
    if result is True or result is False:
        return result
    if result is None:
        return False
    if hasattr(type(result), "__bool__"):
        return bool(result)
    raise _NotABool("Unable to cast Python instance of type %s to C++ type 'bool'" % type(result))


def _say_like_tensorrt(method, exc):
    # What the bindings print when a Python monitor's method raises
    # (PyProgressMonitor in pyCore.cpp), so the program's output is the same.
    try:
        what = str(exc) if isinstance(exc, _NotABool) else "%s: %s" % (type(exc).__name__, exc)
        sys.stderr.write("[ERROR] Exception caught in %s(): %s\n" % (method, what))
        sys.stderr.flush()
    except BaseException:
        pass
