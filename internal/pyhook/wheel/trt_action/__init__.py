"""trt-action, installed with pip: the binary and its backends, and the
hook that makes TensorRT builds inside Python programs observable
(https://github.com/trt-action/trt-action).

    python -m trt_action ARGS     runs trt-action (the process becomes it)
    trt_action.find_binary()      where pip put the trt-action binary
    trt_action.__version__        the installed distribution's version

Python 3.15 and later import this package at every interpreter start of the
environment (trt_action.start names trt_action._activate:activate), so it
imports nothing at the top: what find_binary and __version__ need is
imported when they are used.
"""

_DIST = "trt-action"
_BINARY = "trt-action"


def __getattr__(name):
    # A module __getattr__ (PEP 562): the version is read from the
    # distribution's metadata only when someone asks for it.
    if name == "__version__":
        dist = _distribution()
        return dist.version if dist is not None else "0+unknown"
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def _distribution():
    """The installed trt-action distribution this package belongs to: the
    trt_action-*.dist-info beside it (the folder pip installed it into:
    site-packages, or the --target folder), else the first one on sys.path.
    None when the package is not installed by pip (a source checkout)."""
    import glob
    import os

    try:
        from importlib import metadata
    except ImportError:  # Python 3.7: no importlib.metadata
        return None
    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for info in sorted(glob.glob(os.path.join(glob.escape(site), "trt_action-*.dist-info"))):
        dist = metadata.Distribution.at(info)
        if dist.metadata is not None and dist.version:
            return dist
    try:
        return metadata.distribution(_DIST)
    except metadata.PackageNotFoundError:
        return None


def find_binary():
    """The path of the trt-action executable pip installed with this
    package: the file its RECORD lists (a venv, --user, --prefix, --target,
    a system prefix), else the scripts folder of this Python's scheme and of
    its user scheme. Raises PermissionError when a file is there but cannot
    be run (its execute bit lost), FileNotFoundError otherwise, either
    naming every place it looked and what is wrong with what it found."""
    import os
    import sysconfig

    looked = []  # (path, the size the RECORD gives or None)
    dist = _distribution()
    if dist is not None:
        looked += _recorded_binaries(dist)
    schemes = [None, _user_scheme(sysconfig)]
    for scheme in schemes:
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        looked.append((os.path.join(scripts, _BINARY), None))
    wrong = []  # what is wrong with each file found, in the order looked
    judged = set()  # a path is judged once, by its first look (the RECORD's, with its size)
    for where, size in looked:
        if where in judged or not os.path.isfile(where):
            continue
        judged.add(where)
        if size is not None and size != os.path.getsize(where):
            wrong.append("%s is %d bytes, not the %d of the one pip installed" % (where, os.path.getsize(where), size))
        elif not os.access(where, os.X_OK):
            mode = os.stat(where).st_mode & 0o7777
            wrong.append("%s is there but not executable (mode %04o): chmod +x it" % (where, mode))
        else:
            return where
    places = []
    for where, _ in looked:
        if where not in places:
            places.append(where)
    if dist is None:
        places.insert(0, "the RECORD of an installed trt-action (none found)")
    reinstall = "or reinstall: pip install --force-reinstall trt-action"
    if any("not executable" in w for w in wrong):
        raise PermissionError("the %s binary cannot be run: %s; %s" % (_BINARY, "; ".join(wrong), reinstall))
    if wrong:
        raise FileNotFoundError("the %s binary pip installed is not there: %s; %s" % (_BINARY, "; ".join(wrong), reinstall[3:]))
    raise FileNotFoundError(
        "the %s binary is not where pip puts it (reinstall: pip install --force-reinstall trt-action); looked at: %s"
        % (_BINARY, ", ".join(places))
    )


def _recorded_binaries(dist):
    """Where the RECORD's trt-action file is, with the size it gives (a file
    of another size there is not the one pip installed). RECORD paths are
    relative to the folder holding the .dist-info (../../../bin/trt-action
    in a venv); pip install --target moves the scripts to TARGET/bin after
    writing the RECORD, so there the path without its leading ../ is the one
    that holds (pip's _handle_target_dir, src/pip/_internal/commands/install.py
    in https://github.com/pypa/pip)."""
    import os

    out = []
    base = str(dist.locate_file(""))
    for path in dist.files or ():
        if path.name != _BINARY:
            continue
        out.append((os.path.normpath(str(dist.locate_file(path))), path.size))
        parts = list(path.parts)
        while parts and parts[0] == "..":
            parts.pop(0)
        if parts:
            out.append((os.path.normpath(os.path.join(base, *parts)), path.size))
    return out


def _user_scheme(sysconfig):
    try:
        return sysconfig.get_preferred_scheme("user")  # Python 3.10 and later
    except AttributeError:
        import os

        return os.name + "_user"
    except Exception:
        return None
