# trt-action's bootstrap for Python programs (internal/pyhook in
# https://github.com/trt-action/trt-action).
#
# trt-action puts the folder of this file first on PYTHONPATH of a command it
# runs, so Python's `site` module imports it as `sitecustomize` when any
# Python process of the command starts (https://docs.python.org/3/library/site.html).
# It does two things:
#
# 1. If TRT_ACTION_SUPERVISOR names a supervisor's socket, it installs the
#    hook (the trt_action_hook package beside this file), which reports every
#    TensorRT build of this process to that supervisor.
# 2. Always, it runs the program's own sitecustomize, the next one on
#    sys.path after this folder, which this file hides by its name, and makes
#    it sys.modules["sitecustomize"], as if this file were not there (the idea
#    of ddtrace's bootstrap: ddtrace/bootstrap/sitecustomize.py in
#    https://github.com/DataDog/dd-trace-py).
#
# Under PYTHONDONTWRITEBYTECODE or python -B, Python would compile this
# file and the hook's modules again in every process of the command
# (milliseconds each); the first process writes their byte code into the
# hook's folder, which is trt-action's own, so the program's files are left
# as the setting asks, and the later processes load it.
#
# It may run twice in one process (a .pth file, or another bootstrap like
# ddtrace's that re-imports sitecustomize): a marker in sys.modules makes the
# second run do nothing. trt-action installed with pip in the program's
# environment has its own way in, a .pth file (trt_action/_activate.py in
# internal/pyhook/wheel), which site runs before this file: whichever of the
# two comes first tries to install the hook, the other does not (a second
# marker), and this file still runs the program's sitecustomize. Nothing it
# does may break the program: its own failures are one line on stderr that
# starts with "trt-action hook:". An error in the program's sitecustomize is
# left to `site`, which reports it as it would without trt-action.
#
# Written in the Python that every Python 3 parses; the hook itself needs 3.7.

import os
import sys

_MARKER = "_trt_action_bootstrap"
# Shared with the wheel's trt_action/_activate.py: set by whichever of the
# two tries to install the hook first, so a broken hook is one line.
_TRIED = "_trt_action_hook_tried"
_HOOK_PACKAGE = "trt_action_hook"
# How this file begins: what tells another trt-action's bootstrap folder
# from a folder that only holds a trt_action_hook (site-packages with
# trt-action installed by pip, beside the program's own sitecustomize).
_SIGNATURE = b"# trt-action's bootstrap for Python programs"


def _say(what, exc):
    try:
        sys.stderr.write("trt-action hook: %s: %s: %s\n" % (what, type(exc).__name__, exc))
    except Exception:
        pass


def _write_bytecode(here, supervised):
    try:
        external = sys.modules["_frozen_importlib_external"]
        paths = [os.path.join(here, "sitecustomize.py")]
        if supervised:
            package = os.path.join(here, _HOOK_PACKAGE)
            paths += [os.path.join(package, n) for n in sorted(os.listdir(package)) if n.endswith(".py")]
        for path in paths:
            if os.path.exists(external.cache_from_source(path)):
                continue
            sys.dont_write_bytecode = False
            try:
                external.SourceFileLoader(_MARKER, path).get_code(_MARKER)  # compiles and writes the byte code
            finally:
                sys.dont_write_bytecode = True
    except Exception:
        pass  # a folder that cannot be written: Python compiles, as it would anyway


def _install_hook():
    if _TRIED in sys.modules:
        return
    sys.modules[_TRIED] = type(sys)(_TRIED)
    try:
        if sys.version_info < (3, 7):
            raise RuntimeError("it needs Python 3.7 or later, this is %d.%d" % sys.version_info[:2])
        import trt_action_hook

        trt_action_hook.install()
    except Exception as exc:
        _say("not installed; TensorRT builds in this process are not observed", exc)


def _real(entry):
    return os.path.realpath(entry or os.curdir)


def _is_bootstrap_folder(entry):
    folder = entry or os.curdir
    if not os.path.isdir(os.path.join(folder, _HOOK_PACKAGE)):
        return False
    try:
        with open(os.path.join(folder, "sitecustomize.py"), "rb") as f:
            return f.read(len(_SIGNATURE)) == _SIGNATURE
    except OSError:
        return False


def _search_path(ours):
    """The sys.path entries after this file's folder, without any folder
    of another trt-action bootstrap (a trt-action run inside another's:
    each supervisor sees the builds of its own command only)."""
    after = None
    for i, entry in enumerate(sys.path):
        if isinstance(entry, str) and _real(entry) in ours:
            after = sys.path[i + 1 :]
            break
    if after is None:
        after = sys.path
    return [e for e in after if isinstance(e, str) and _real(e) not in ours and not _is_bootstrap_folder(e)]


def _importlib():
    # CPython's import system, loaded at start-up under these names; the
    # public modules cost milliseconds to import, which every process of a
    # command would pay.
    external = sys.modules.get("_frozen_importlib_external")
    bootstrap = sys.modules.get("_frozen_importlib")
    if external is None or bootstrap is None:
        import importlib.machinery as external
        import importlib.util as bootstrap
    return external.PathFinder, bootstrap.module_from_spec


def _run_user_sitecustomize(ours):
    try:
        path_finder, module_from_spec = _importlib()
        spec = path_finder.find_spec("sitecustomize", _search_path(ours))
        if spec is None or spec.loader is None:
            return
        module = module_from_spec(spec)
    except Exception as exc:
        _say("could not look for the program's sitecustomize", exc)
        return
    # The import of this file ends by taking sys.modules["sitecustomize"]
    # as its result, so the program's module becomes sitecustomize. If it
    # raises, the import system removes it and `site` reports the error.
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _main():
    if _MARKER in sys.modules:
        return
    sys.modules[_MARKER] = type(sys)(_MARKER)
    here = os.path.dirname(os.path.abspath(__file__))
    ours = set([_real(here)])
    named = os.environ.get("TRT_ACTION_HOOK_DIR")
    if named:
        ours.add(_real(named))
    supervised = bool(os.environ.get("TRT_ACTION_SUPERVISOR"))
    if sys.dont_write_bytecode:
        _write_bytecode(here, supervised)
    if supervised:
        _install_hook()
    _run_user_sitecustomize(ours)


_main()
