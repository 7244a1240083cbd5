"""The native route: trt-action's own C++ progress monitor on the builder
config a Python program builds with, so a script build's callbacks cost
what a matrix build's do (no GIL, no Python per callback).

Two shared objects from the folder the supervisor names in
TRT_ACTION_NATIVE_DIR, loaded with ctypes:

  libtam_host.so   the monitor's host side (native/monitor.cc, the same
                   source the trt-action binary runs): a lock-free event
                   queue and a cancel flag, drained from Python
  libtam_rtx.so, libtam_trt10.so, libtam_trt11.so
                   the backend compiled against the headers of the
                   program's bindings: tensorrt_rtx_bindings takes
                   libtam_rtx.so, tensorrt_bindings (and the one-package
                   tensorrt) the one of its major version

The backend needs the config's raw nvinfer1::IBuilderConfig*, which
pybind11's conduit hands out: config._pybind11_conduit_v1_(ABI_ID,
TYPE_CAPSULE, b"raw_pointer_ephemeral") returns a capsule holding it, or
None when the ABI id or the type does not match (pybind11 2.11.2 and later;
include/pybind11/detail/type_caster_base.h, cpp_conduit_method, in
https://github.com/pybind/pybind11). The type capsule holds the backend's
own std::type_info of IBuilderConfig. The ABI id is the one the bindings
were compiled with; pybind11 keeps it in the key of its internals, which
every pybind11 module of the interpreter shares: in builtins (pybind11 2.x,
internals version 4) or in the interpreter's state dict (later), named
"__pybind11_internals_v" VERSION ["_" in 3.x] ABI_ID "__"
(include/pybind11/detail/internals.h, PYBIND11_INTERNALS_ID). attach tries
the ids of the keys it finds, those of the backend's own C++ library first,
then those of the other one: libstdc++ and libc++ both lay a std::type_info
out as the Itanium C++ ABI says (a vtable pointer, then the name:
https://itanium-cxx-abi.github.io/cxx-abi/abi.html#rtti), and all the
conduit does with ours is read its name (pybind11 finds a registered type
by its name under either library: internals.h, type_hash and
type_equal_to); its vtable, the part that would differ, is never called.
So a release backend, which has libc++ linked in (scripts/zig-cc), takes
the config of bindings built with libstdc++, as TensorRT's are.

attach() installs the monitor; the program's own monitor, if the config
had one, still gets every callback and can still cancel, and detach() puts
it back, so config.progress_monitor returns the program's object again.
attach says in one sentence why the build takes the route it takes (the
report's route_note); where the native route cannot be used the hook falls
back to a Python monitor. When TRT_ACTION_NATIVE_DIR is not set it says
nothing: the supervisor left it out because it found no native libraries,
and says itself what is missing and where it looked.

Times: the monitor counts event times from its creation on the steady
clock, which libstdc++ and libc++ read from CLOCK_MONOTONIC; tam_monitor_epoch_ns
gives that start on the same clock, so an event's time plus it is the
time.monotonic_ns() reading of the callback, the protocol's clock.

Threads: the THREAD of an event numbers the threads that called this
build's monitor, from 1 in the order they first did (the Python monitor
numbers them per process).

A build on the native route, as the hook runs it:

    native, why = attach(config)   # before the entry point; on None, the
                                   # Python monitor; why goes in the report
    native.cancel()                # at once if a stop came before the build,
                                   # else when one comes (drain thread)
    native.drain()                 # about every 10 ms on the drain thread
    ... the build returns ...
    native.detach()                # the program's monitor is back; stopped and
                                   # user_cancelled say how the build went
    native.drain()                 # the last events
    native.close()

No Python runs per callback unless the program set its own monitor (a
Python one is called as TensorRT would call it, taking the GIL), so with
none a signal's Python handler runs when the build returns, as without
trt-action.

Only the standard library is used; nothing here raises into the program.
"""

import _thread
import builtins
import ctypes
import os
import struct
import sys

ENV = "TRT_ACTION_NATIVE_DIR"
HOST_LIBRARY = "libtam_host.so"
# The backend object of a bindings package, and of each major version of
# NVIDIA's datacenter bindings (internal/backend's registry names the same
# files; a test holds the two together).
RTX_BACKEND = "libtam_rtx.so"
TRT_BACKENDS = {10: "libtam_trt10.so", 11: "libtam_trt11.so"}
RTX_PACKAGES = ("tensorrt_rtx_bindings",)
TRT_PACKAGES = ("tensorrt_bindings", "tensorrt")

ABI = 3  # TAM_BACKEND_ABI in native/trtaction.h

# tam_event (native/trtaction.h): t_ns, phase, parent, kind, n, thread, _pad.
_EVENT = struct.Struct("=qQQiiii")
_DRAIN_BATCH = 1024
_START, _STEP, _FINISH = 1, 2, 3  # enum tam_event_kind
_STOPPED = 1  # TAM_ATTACH_STOPPED
_USER_CANCELLED = 2  # TAM_ATTACH_USER_CANCELLED
_ERRCAP = 4096
_INTERNALS = "__pybind11_internals_v"
# The C++ libraries of pybind11's ABI ids whose std::type_info the conduit
# reads alike (the Itanium C++ ABI's layout).
_ITANIUM_STDLIBS = ("libstdcpp", "libcpp")


def attach(config):
    """Attaches trt-action's native monitor to config, a builder config of
    the TensorRT bindings. Returns (Native, note), note saying in a
    sentence what took the native route, or (None, reason) when it cannot
    be used here, reason saying why; reason is None when only
    TRT_ACTION_NATIVE_DIR is missing (the supervisor explains that).
    Never raises."""
    try:
        return _attach(config)
    except Exception as exc:
        return None, "the native monitor could not be attached: %s: %s" % (type(exc).__name__, exc)


class Native:
    """trt-action's native monitor on one build's config. drain() may run
    on another thread than the rest (one drainer at a time); detach() only
    after the build returned; close() when done. One dropped without
    close() keeps its monitor: a config may still call it."""

    route = "native"

    def __init__(self, host, backend, monitor, attachment):
        self.backend = backend.name  # the backend object's file name
        self.stopped = False  # set by detach(): our monitor returned False because of cancel()
        self.user_cancelled = False  # set by detach(): the program's monitor returned False
        self._host = host
        self._backend = backend
        self._monitor = monitor
        self._attachment = attachment
        self._epoch = host.f.tam_monitor_epoch_ns(monitor)
        self._buffer = ctypes.create_string_buffer(_EVENT.size * _DRAIN_BATCH)
        self._names = _Names(host, monitor)
        self._lock = _thread.allocate_lock()

    def drain(self):
        """The events queued since the last drain, oldest first, each as the
        protocol writes it: [T, THREAD, "s", PHASE, PARENT or None, NBSTEPS],
        [T, THREAD, "p", PHASE, STEP] or [T, THREAD, "f", PHASE], T in
        time.monotonic_ns()'s clock. [] once closed."""
        out = []
        add = out.append
        with self._lock:
            if self._monitor is None:
                return out
            drain, buffer, monitor = self._host.f.tam_monitor_drain, self._buffer, self._monitor
            epoch, names = self._epoch, self._names
            while True:
                n = drain(monitor, buffer, _DRAIN_BATCH)
                raw = ctypes.string_at(buffer, n * _EVENT.size)
                for t, phase, parent, kind, steps, thread, _ in _EVENT.iter_unpack(raw):
                    if kind == _STEP:
                        add([epoch + t, thread, "p", names[phase], steps])
                    elif kind == _START:
                        add([epoch + t, thread, "s", names[phase], names[parent], steps])
                    elif kind == _FINISH:
                        add([epoch + t, thread, "f", names[phase]])
                if n < _DRAIN_BATCH:
                    return out

    def cancel(self):
        """From now on every step_complete of this build returns False."""
        with self._lock:
            if self._monitor is not None:
                self._host.f.tam_monitor_cancel(self._monitor)

    def detach(self):
        """Puts the program's monitor back on the config and frees ours;
        sets stopped and user_cancelled. Only after the build returned.
        Events not yet drained stay for drain()."""
        attachment, self._attachment = self._attachment, None
        if attachment is None:
            return
        flags = self._backend.f.tam_backend_detach(attachment)
        if flags > 0:
            self.stopped = bool(flags & _STOPPED)
            self.user_cancelled = bool(flags & _USER_CANCELLED)

    def stats(self):
        """(callbacks, dropped): the callbacks so far, and how many of
        them the queue had no room for (it holds about half a million)."""
        with self._lock:
            if self._monitor is None:
                return 0, 0
            s = _Stats()
            self._host.f.tam_monitor_stats_get(self._monitor, ctypes.byref(s))
            return s.callbacks, s.dropped

    def close(self):
        """Detaches if that was not done, and frees the monitor."""
        self.detach()
        with self._lock:
            monitor, self._monitor = self._monitor, None
            if monitor is not None:
                self._host.f.tam_monitor_free(monitor)


class _Names(dict):
    """A monitor's phase names by id (0, no name, is None); an id not seen
    before is looked up once."""

    def __init__(self, host, monitor):
        dict.__init__(self, {0: None})
        self._host = host
        self._monitor = monitor

    def __missing__(self, ident):
        cap = 256
        while True:
            buf = ctypes.create_string_buffer(cap)
            size = self._host.f.tam_monitor_name(self._monitor, ident, buf, cap)
            if size < cap:
                name = self[ident] = "?" if size < 0 else buf.raw[:size].decode("utf-8", "replace")
                return name
            cap = size + 1


# ------------------------------------------------------------------ attaching


def _attach(config):
    file, why = _backend_file(config)
    if file is None:
        return None, why
    conduit = getattr(type(config), "_pybind11_conduit_v1_", None)
    if conduit is None:
        return None, (
            "%s has no pybind11 conduit (_pybind11_conduit_v1_: pybind11 2.11.2, 2.12.1, 2.13.6 and later), "
            "so the native monitor cannot reach its builder config" % _bindings_name(config)
        )
    folder = os.environ.get(ENV, "")
    if not folder:
        return None, None
    if not os.path.isabs(folder):
        return None, "%s=%s is not an absolute path" % (ENV, folder)
    host, why = _load(os.path.join(folder, HOST_LIBRARY), _HOST_FUNCTIONS)
    if host is None:
        return None, why
    backend, why = _load(os.path.join(folder, file), _BACKEND_FUNCTIONS)
    if backend is None:
        return None, why
    pointer, why = _raw_config(backend, config)
    if pointer is None:
        return None, why
    monitor = host.f.tam_monitor_new()
    if not monitor:
        return None, "%s could not make a monitor (out of memory)" % host.path
    try:
        table = host.f.tam_monitor_host(monitor)
        abi = ctypes.c_int32.from_address(table).value
        if abi != ABI:
            raise _Refused(
                "%s is of ABI %d, but this hook speaks ABI %d: it is from another trt-action" % (host.path, abi, ABI)
            )
        err = ctypes.create_string_buffer(_ERRCAP)
        attachment = backend.f.tam_backend_attach(pointer, table, err, _ERRCAP)
        if not attachment:
            raise _Refused("%s refused to attach: %s" % (backend.path, err.value.decode("utf-8", "replace")))
    except _Refused as refused:
        host.f.tam_monitor_free(monitor)
        return None, str(refused)
    except BaseException:
        host.f.tam_monitor_free(monitor)
        raise
    note = "%s hands its builder config to %s through pybind11's conduit: the native route, taken wherever it can be" % (
        _bindings_name(config),
        backend.path,
    )
    return Native(host, backend, monitor, attachment), note


class _Refused(Exception):
    pass


def _backend_file(config):
    """The backend object for config's bindings, or None and why."""
    module = type(config).__module__ or ""
    package = module.partition(".")[0]
    if type(config).__name__ != "IBuilderConfig":
        return None, "%s.%s is not a TensorRT builder config" % (module, type(config).__name__)
    if package in RTX_PACKAGES:
        return RTX_BACKEND, None
    if package in TRT_PACKAGES:
        version = _version(package)
        try:
            major = int(version.split(".")[0])
        except (AttributeError, ValueError):
            return None, "the version of %s (%r) does not say which backend fits it" % (package, version)
        if major in TRT_BACKENDS:
            return TRT_BACKENDS[major], None
        return None, "trt-action has no native monitor for TensorRT %s (its backends are for %s.x)" % (
            version,
            ".x and ".join(str(m) for m in sorted(TRT_BACKENDS)),
        )
    return None, "%s.IBuilderConfig is not from bindings trt-action knows (%s)" % (
        module,
        ", ".join(RTX_PACKAGES + TRT_PACKAGES),
    )


def _version(package):
    version = getattr(sys.modules.get(package), "__version__", None)
    return version if isinstance(version, str) else None


def _bindings_name(config):
    package = (type(config).__module__ or "").partition(".")[0]
    version = _version(package)
    return "%s %s" % (package, version) if version else package


# ------------------------------------------------------------------ the conduit


def _raw_config(backend, config):
    """config's nvinfer1::IBuilderConfig*, or None and why."""
    types = backend.types
    if types is None:
        try:
            types = backend.types = _ConduitTypes.of(backend)
        except _Refused as refused:
            return None, str(refused)
    tried = []
    for abi_id in _abi_ids(types.stdlib, backend.abi_id):
        got = config._pybind11_conduit_v1_(abi_id.encode("ascii"), types.capsule, b"raw_pointer_ephemeral")
        if got is None:
            tried.append(abi_id)
            continue
        if not _capi.PyCapsule_IsValid(got, types.config_type_name):
            return None, "the pybind11 conduit of %s returned a capsule that does not hold an IBuilderConfig" % (
                _bindings_name(config)
            )
        backend.abi_id = abi_id
        return _capi.PyCapsule_GetPointer(got, types.config_type_name), None
    if not tried:
        return None, (
            "no pybind11 module of this interpreter was built with %s (%s's C++ library is %s), "
            "so its conduit cannot take our IBuilderConfig type" % (" or ".join(_stdlibs(types.stdlib)), backend.name, types.stdlib)
        )
    return None, (
        "the pybind11 conduit of %s refused %s's IBuilderConfig type (%s) under every pybind11 ABI id "
        "of this interpreter (%s)"
        % (_bindings_name(config), backend.name, types.config_type_name.decode("ascii", "replace"), ", ".join(tried))
    )


def _abi_ids(stdlib, known):
    """The pybind11 ABI ids of this interpreter's pybind11 internals whose
    C++ library reads our std::type_info as stdlib's own does: the one that
    worked before first, then stdlib's, then the other Itanium library's."""
    ids = [known] if known else []
    keys = [
        key
        for store in (_builtins_dict(), _interpreter_dict())
        for key in sorted(k for k in store if isinstance(k, str))
        if key.startswith(_INTERNALS) and key.endswith("__")
    ]
    for lib in _stdlibs(stdlib):
        for key in keys:
            rest = key[len(_INTERNALS) : -2].lstrip("0123456789")
            # 2.x: the id starts with its compiler's "_gcc"; 3.x puts "_"
            # before an id that starts "system".
            for abi_id in (rest, rest[1:]):
                if abi_id and "_" + lib in abi_id and abi_id not in ids:
                    ids.append(abi_id)
    return ids


def _stdlibs(stdlib):
    """The C++ libraries whose pybind11 modules can take a std::type_info
    of stdlib's, stdlib first."""
    if stdlib not in _ITANIUM_STDLIBS:
        return (stdlib,)
    return (stdlib,) + tuple(lib for lib in _ITANIUM_STDLIBS if lib != stdlib)


def _builtins_dict():
    return vars(builtins)


def _interpreter_dict():
    try:
        state = _capi.PyInterpreterState_Get()
        if not state:
            return {}
        store = _capi.PyInterpreterState_GetDict(state)
        # A borrowed reference: py_object's value takes one of its own.
        return ctypes.cast(store, ctypes.py_object).value if store else {}
    except (AttributeError, ValueError, TypeError):
        return {}  # before Python 3.9, pybind11 keeps its internals in builtins


class _ConduitTypes:
    """tam_conduit_types of a backend, and the type capsule made from it
    (made once per backend: it lives as long as the library)."""

    @staticmethod
    def of(backend):
        raw = _ConduitTypesStruct()
        backend.f.tam_backend_conduit_types(ctypes.byref(raw))
        if not (raw.config_type and raw.config_type_name and raw.type_info_name and raw.stdlib):
            raise _Refused("%s did not say which type the conduit takes" % backend.path)
        t = _ConduitTypes()
        t.config_type_name = ctypes.string_at(raw.config_type_name)
        t.stdlib = ctypes.string_at(raw.stdlib).decode("ascii", "replace")
        # The capsule keeps the name's pointer: the library's own string.
        t.capsule = _capi.PyCapsule_New(raw.config_type, raw.type_info_name, None)
        return t


# ------------------------------------------------------------------ loading


class _Library:
    def __init__(self, path, functions):
        self.path = path
        self.name = os.path.basename(path)
        self.f = ctypes.CDLL(path)
        for name, restype, argtypes in functions:
            fn = getattr(self.f, name)  # AttributeError names the missing symbol
            fn.restype = restype
            fn.argtypes = argtypes
        self.types = None  # _ConduitTypes, for a backend
        self.abi_id = None  # the pybind11 ABI id that worked with it


_libraries = {}  # path -> (_Library, None) or (None, why)
_libraries_lock = _thread.allocate_lock()


def _load(path, functions):
    with _libraries_lock:
        known = _libraries.get(path)
        if known is None:
            known = _libraries[path] = _open(path, functions)
        return known


def _open(path, functions):
    if not os.path.isfile(path):
        return None, "%s is not there: trt-action's folder of native libraries lacks it (a release has it in lib/ beside the binary)" % path
    try:
        return _Library(path, functions), None
    except OSError as exc:
        return None, "cannot load %s: %s" % (path, exc)
    except AttributeError as exc:
        return None, "%s lacks a function this hook calls, so it is from another trt-action: %s" % (path, exc)


class _Stats(ctypes.Structure):
    _fields_ = [("callbacks", ctypes.c_int64), ("last_callback_ns", ctypes.c_int64), ("dropped", ctypes.c_int64)]


class _ConduitTypesStruct(ctypes.Structure):
    _fields_ = [
        ("config_type", ctypes.c_void_p),
        ("config_type_name", ctypes.c_void_p),
        ("type_info_name", ctypes.c_void_p),
        ("stdlib", ctypes.c_void_p),
    ]


_p = ctypes.c_void_p
_HOST_FUNCTIONS = (
    ("tam_monitor_new", _p, []),
    ("tam_monitor_free", None, [_p]),
    ("tam_monitor_host", _p, [_p]),
    ("tam_monitor_epoch_ns", ctypes.c_int64, [_p]),
    ("tam_monitor_cancel", None, [_p]),
    ("tam_monitor_drain", ctypes.c_size_t, [_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("tam_monitor_name", ctypes.c_int64, [_p, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]),
    ("tam_monitor_stats_get", None, [_p, ctypes.POINTER(_Stats)]),
)
_BACKEND_FUNCTIONS = (
    ("tam_backend_conduit_types", None, [ctypes.POINTER(_ConduitTypesStruct)]),
    ("tam_backend_attach", _p, [_p, _p, ctypes.c_char_p, ctypes.c_size_t]),
    ("tam_backend_detach", ctypes.c_int32, [_p]),
)


class _CAPI:
    """The few Python C API functions used, on a handle of their own, so
    the program's ctypes.pythonapi keeps whatever argtypes it set."""

    def __init__(self):
        api = ctypes.PyDLL(None)
        self.PyCapsule_New = api.PyCapsule_New
        self.PyCapsule_New.restype = ctypes.py_object  # a new reference, which ctypes takes over
        self.PyCapsule_New.argtypes = [_p, _p, _p]
        self.PyCapsule_IsValid = api.PyCapsule_IsValid
        self.PyCapsule_IsValid.restype = ctypes.c_int
        self.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
        self.PyCapsule_GetPointer = api.PyCapsule_GetPointer
        self.PyCapsule_GetPointer.restype = _p
        self.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        try:
            self.PyInterpreterState_Get = api.PyInterpreterState_Get  # Python 3.9 on
            self.PyInterpreterState_Get.restype = _p
            self.PyInterpreterState_Get.argtypes = []
            self.PyInterpreterState_GetDict = api.PyInterpreterState_GetDict
            self.PyInterpreterState_GetDict.restype = _p
            self.PyInterpreterState_GetDict.argtypes = [_p]
        except AttributeError:
            pass


_capi = _CAPI()
