"""activate(): trt-action's TensorRT build hook in a Python started under
trt-action's supervisor, also under python -I and -E, which ignore the
PYTHONPATH through which the supervisor's bootstrap (sitecustomize.py)
enters.

Python's site module calls it at interpreter start, from the wheel's
trt_action.pth (an import line, which runs it only when
TRT_ACTION_SUPERVISOR is set) or, from Python 3.15 on, from trt_action.start
(PEP 829, https://peps.python.org/pep-0829/: such Pythons call the entry
points of a <name>.start file and ignore the import lines of the matching
<name>.pth). There it runs in EVERY process of the environment, so this
module imports nothing that is not loaded already and returns at once
without a supervisor.

It may run twice in one process (a venv's lib64 -> lib link makes site
process the same .pth twice; a program may call site.addsitedir), and the
bootstrap may run after it (site runs .pth files before sitecustomize): a
marker in sys.modules, which the bootstrap sets and reads too, makes only
the first of them try to install the hook, so a broken hook is one line on
stderr, not two. The bootstrap still runs the program's own sitecustomize.
"""

import os
import sys

# Shared with the bootstrap (internal/pyhook/py/sitecustomize.py in
# https://github.com/trt-action/trt-action): set by whichever of the two
# tries to install the hook first.
_TRIED = "_trt_action_hook_tried"
_HOOK = "trt_action_hook"


def activate():
    """Installs the hook of the supervisor named in TRT_ACTION_SUPERVISOR;
    nothing without one. Once per process; never raises."""
    if not os.environ.get("TRT_ACTION_SUPERVISOR") or _TRIED in sys.modules:
        return
    sys.modules[_TRIED] = type(sys)(_TRIED)
    try:
        if sys.version_info < (3, 7):
            raise RuntimeError("it needs Python 3.7 or later, this is %d.%d" % sys.version_info[:2])
        hook = sys.modules.get(_HOOK) or _load(_hook_folder())
        hook.install()
    except Exception as exc:
        try:
            sys.stderr.write(
                "trt-action hook: not installed; TensorRT builds in this process are not observed: %s: %s\n"
                % (type(exc).__name__, exc)
            )
        except Exception:
            pass


def _hook_folder():
    """The hook of the supervisor, which speaks its protocol: the
    trt_action_hook folder it wrote (TRT_ACTION_HOOK_DIR); if there is none,
    the wheel's own copy beside this package."""
    named = os.environ.get("TRT_ACTION_HOOK_DIR")
    if named:
        folder = os.path.join(named, _HOOK)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), _HOOK)


def _load(folder):
    """Imports the package in folder as trt_action_hook, without putting its
    parent on sys.path (where the program would find the bootstrap's
    sitecustomize and anything else of trt-action's)."""
    # CPython's import system, loaded at start-up under these names
    # (importlib.util would cost milliseconds).
    external = sys.modules.get("_frozen_importlib_external")
    bootstrap = sys.modules.get("_frozen_importlib")
    if external is None or bootstrap is None:
        import importlib.util as external

        bootstrap = external
    spec = external.spec_from_file_location(
        _HOOK, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
    )
    module = bootstrap.module_from_spec(spec)
    sys.modules[_HOOK] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for name in [n for n in sys.modules if n == _HOOK or n.startswith(_HOOK + ".")]:
            del sys.modules[name]
        raise
    return module
