"""The wheel's Python side (internal/pyhook/wheel): trt_action.pth and
trt_action.start, which activate the hook under a supervisor, also under
python -I; trt_action.find_binary; python -m trt_action.

Each test lays the wheel's files into a throwaway venv by hand, where pip
would put them (the wheel itself is built and installed by make dist's
checks, scripts/smoke-wheel): the package, the hook's copy, the .pth and
the .start in site-packages, a stand-in binary in the venv's bin, and a
dist-info whose RECORD lists them. No network.

Python 3.15, the first with PEP 829's .start files, cannot be installed
here: the .start tests check what PEP 829 specifies (each line a
pkgutil.resolve_name colon-form entry point, called with no arguments;
the .pth's import lines ignored then) by doing it, in the venv, with the
.pth removed.
"""

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys

import support
import test_bindings

WHEEL = os.path.abspath(os.path.join(support.HERE, "..", "..", "wheel"))
VERSION = "1.2.3rc1"

# A stand-in for the trt-action binary: what it was started as, its PID and
# its parent's, its arguments, and whether SIGPIPE is ignored (bit 13 of
# SigIgn: the 4096s digit of the mask's last four hex digits).
STAND_IN = """#!/bin/sh
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
printf '%s\\n' "pid=$$" "argv0=$0" "sigign=$ign"
for a in "$@"; do printf 'arg=%s\\n' "$a"; done
exit 7
"""

# What a program prints: which trt-action modules are loaded, and where the
# hook came from.
PROBE = (
    "import json, os, sys\n"
    "hook = sys.modules.get('trt_action_hook')\n"
    "m = sys.modules.get('sitecustomize')\n"
    "print(json.dumps({'loaded': sorted(n for n in sys.modules if 'trt_action' in n),\n"
    "    'hook': getattr(hook, '__file__', None), 'path': sys.path,\n"
    "    'user_site_ran': os.environ.get('USER_SITE_RAN', ''), 'sitecustomize': getattr(m, 'MARK', None),\n"
    "    'pth_runs': os.environ.get('PTH_RUNS', '')}))\n"
)

USER_SITE = (
    "import os, sys\n"
    "os.environ['USER_SITE_RAN'] = os.environ.get('USER_SITE_RAN', '') + 'x'\n"
    "sys.stderr.write('user sitecustomize ran\\n')\n"
    "MARK = 'user'\n"
)


def record_line(root, path):
    with open(os.path.join(root, path), "rb") as f:
        data = f.read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path.replace(os.sep, "/"), digest, len(data))


def install(site, binary_at=None):
    """Lays the wheel's Python files into site as pip would, with a
    dist-info; binary_at (a path relative to site, as the RECORD gives it)
    is where the stand-in binary goes."""
    shutil.copytree(os.path.join(WHEEL, "trt_action"), os.path.join(site, "trt_action"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(support.HOOK_DIR, "trt_action_hook"), os.path.join(site, "trt_action_hook"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("trt_action.pth", "trt_action.start"):
        shutil.copy(os.path.join(WHEEL, name), site)
    info = "trt_action-%s.dist-info" % VERSION
    os.mkdir(os.path.join(site, info))
    with open(os.path.join(site, info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: trt-action\nVersion: %s\n" % VERSION)
    files = [os.path.relpath(os.path.join(d, n), site) for d, _, names in os.walk(site) for n in names]
    lines = [record_line(site, p) for p in sorted(files)]
    if binary_at is not None:
        binary = os.path.normpath(os.path.join(site, binary_at))
        os.makedirs(os.path.dirname(binary), exist_ok=True)
        with open(binary, "w") as f:
            f.write(STAND_IN)
        os.chmod(binary, 0o755)
        lines.append(record_line(site, binary_at))
    lines.append(info + "/RECORD,,")
    with open(os.path.join(site, info, "RECORD"), "w") as f:
        f.write("\n".join(lines) + "\n")


class Venv:
    def __init__(self, folder):
        self.prefix = os.path.join(folder, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", self.prefix], check=True)
        self.python = os.path.join(self.prefix, "bin", "python")
        self.site = subprocess.run(
            [self.python, "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            stdout=subprocess.PIPE, universal_newlines=True, check=True,
        ).stdout.strip()
        self.binary = os.path.join(self.prefix, "bin", "trt-action")

    def install(self):
        install(self.site, os.path.relpath(self.binary, self.site))
        return self


def wheel_env(supervisor=None, hook_dir=support.HOOK_DIR, bootstrap=False, extra=None):
    """The environment trt-action gives a command; without the bootstrap's
    PYTHONPATH unless asked (python -I ignores it anyway)."""
    env = support.hook_env(supervisor, hook_dir=hook_dir, extra=extra)
    if not bootstrap:
        env.pop("PYTHONPATH", None)
    return env


class Wheel(support.TestCase):
    def venv(self):
        return Venv(self.folder).install()

    def probe(self, venv, env, *flags, code=PROBE):
        result = support.run([venv.python] + list(flags) + ["-c", code], env)
        self.assertRan(result)
        return result, json.loads(result.stdout.splitlines()[-1])

    def hellos(self, sup):
        conns = sup.settled()
        for conn in conns:
            self.assertProtocol(conn)
        return [[m["m"] for m in c.messages if m["m"] != "ev"] for c in conns]

    def broken_hook(self):
        broken = os.path.join(self.folder, "broken")
        shutil.copytree(support.HOOK_DIR, broken)
        with open(os.path.join(broken, "trt_action_hook", "__init__.py"), "w") as f:
            f.write("raise RuntimeError('broken')\n")
        return broken

    def test_without_a_supervisor_nothing_is_imported(self):
        venv = self.venv()
        pth = os.path.join(venv.site, "trt_action.pth")
        with open(pth) as f:
            text = f.read()
        modules = "import sys; print(' '.join(sorted(sys.modules)))"
        for supervisor in (None, ""):
            with self.subTest(supervisor=supervisor):
                env = wheel_env(supervisor)
                _, got = self.probe(venv, env, "-I")
                self.assertEqual((got["loaded"], got["hook"]), ([], None))
                # The same modules as with a .pth without the import line
                # (reading a .pth file at all may import a codec).
                with_line = support.run([venv.python, "-I", "-c", modules], env)
                with open(pth, "w") as f:
                    f.write("".join(l for l in text.splitlines(True) if not l.startswith("import")))
                try:
                    without_line = support.run([venv.python, "-I", "-c", modules], env)
                finally:
                    with open(pth, "w") as f:
                        f.write(text)
                self.assertRan(with_line)
                self.assertEqual(with_line.stdout, without_line.stdout)
                self.assertEqual(with_line.stderr, "")

    def test_python_I_under_a_supervisor_is_observed(self):
        # python -I ignores PYTHONPATH (the bootstrap's route) but runs the
        # .pth files of its site-packages: the build is reported.
        venv = self.venv()
        sup = self.supervisor()
        hook = os.path.join(self.folder, "hook")
        shutil.copytree(support.HOOK_DIR, hook)
        run_fake = (
            "import runpy, sys\n"
            "sys.path.insert(0, %r)\n"
            "sys.argv = ['fake_build.py']\n"
            "runpy.run_path(%r, run_name='__main__')\n"
        ) % (support.SCRIPTS, os.path.join(support.SCRIPTS, "fake_build.py"))
        result = support.run([venv.python, "-I", "-c", run_fake], wheel_env(sup, hook_dir=hook))
        self.assertRan(result)
        self.assertEqual(result.stderr, "")
        conns = sup.settled()
        self.assertEqual(len(conns), 1)
        self.assertProtocol(conns[0])
        self.assertEqual(conns[0].messages[0]["executable"], venv.python)
        builds = self.builds(conns[0])
        self.assertEqual(len(builds), 1)
        begin, events, end = builds[0]
        self.assertEqual((begin["entry"], begin["bindings"], end["result"]), ("build_serialized_network", "tensorrt_bindings", "ok"))
        self.assertEqual(test_bindings.without_time(events), test_bindings.TREE_EVENTS)
        self.assertEqual(json.loads(result.stdout.splitlines()[-1])["builds"][0]["result"], "IHostMemory")

    def test_the_supervisors_hook_is_loaded_without_its_folder_on_the_path(self):
        venv = self.venv()
        sup = self.supervisor()
        hook = os.path.join(self.folder, "hook")
        shutil.copytree(support.HOOK_DIR, hook)
        _, got = self.probe(venv, wheel_env(sup, hook_dir=hook), "-I")
        self.assertEqual(got["hook"], os.path.join(hook, "trt_action_hook", "__init__.py"))
        self.assertNotIn(hook, [os.path.realpath(p) for p in got["path"]] + got["path"])
        self.assertIn("trt_action_hook.channel", got["loaded"])
        self.assertEqual(self.hellos(sup), [["hello"]])

    def test_without_the_supervisors_hook_folder_the_wheels_copy(self):
        venv = self.venv()
        own = os.path.join(venv.site, "trt_action_hook", "__init__.py")
        for hook_dir in (os.path.join(self.folder, "gone"), None):
            with self.subTest(hook_dir=hook_dir):
                sup = self.supervisor()
                env = wheel_env(sup, hook_dir=None, extra={"TRT_ACTION_HOOK_DIR": hook_dir} if hook_dir else None)
                result, got = self.probe(venv, env, "-I")
                self.assertEqual(got["hook"], own)
                self.assertEqual(result.stderr, "")
                self.assertEqual(self.hellos(sup), [["hello"]])

    def test_a_pth_processed_twice_installs_once(self):
        # A venv's lib64 -> lib link (where sys.platlibdir is lib64) makes
        # site process the same .pth twice; a program may call addsitedir.
        venv = self.venv()
        with open(os.path.join(venv.site, "zz_count.pth"), "w") as f:
            f.write("import os; os.environ['PTH_RUNS'] = os.environ.get('PTH_RUNS', '') + 'x'\n")
        link = os.path.join(self.folder, "lib64")
        os.symlink(venv.site, link)
        again = "import site; site.addsitedir(%r)\n" % link
        sup = self.supervisor()
        result, got = self.probe(venv, wheel_env(sup), "-I", code=again + PROBE)
        self.assertGreaterEqual(len(got["pth_runs"]), 2, "the .pth files did not run twice")
        self.assertEqual(result.stderr, "")
        self.assertEqual(self.hellos(sup), [["hello"]])

    def test_with_the_bootstrap_too_the_programs_sitecustomize_runs_once(self):
        # PYTHONPATH honoured: site runs the .pth (which installs the hook),
        # then the bootstrap's sitecustomize, which must run the program's
        # own (here in site-packages, beside the wheel's trt_action_hook)
        # and not install the hook again.
        venv = self.venv()
        with open(os.path.join(venv.site, "sitecustomize.py"), "w") as f:
            f.write(USER_SITE)
        for supervised in (True, False):
            with self.subTest(supervised=supervised):
                sup = self.supervisor()
                result, got = self.probe(venv, wheel_env(sup if supervised else None, bootstrap=True))
                self.assertEqual((got["user_site_ran"], got["sitecustomize"]), ("x", "user"))
                self.assertEqual(result.stderr, "user sitecustomize ran\n")
                self.assertEqual(self.hellos(sup), [["hello"]] if supervised else [])
                if supervised:
                    self.assertEqual(got["hook"], os.path.join(support.HOOK_DIR, "trt_action_hook", "__init__.py"))

    def test_a_broken_hook_is_one_line_and_the_program_runs(self):
        venv = self.venv()
        broken = self.broken_hook()
        line = "trt-action hook: not installed; TensorRT builds in this process are not observed: RuntimeError: broken\n"
        for bootstrap, flags in ((False, ["-I"]), (True, [])):
            with self.subTest(bootstrap=bootstrap):
                sup = self.supervisor()
                result, got = self.probe(venv, wheel_env(sup, hook_dir=broken, bootstrap=bootstrap), *flags)
                self.assertEqual(result.stderr, line)
                self.assertEqual(got["hook"], None)
                self.assertEqual(self.hellos(sup), [])

    def test_the_start_file_names_an_entry_point_that_activates(self):
        # PEP 829: each line that is not blank and does not begin with "#"
        # is pkg.mod:callable (pkgutil.resolve_name's colon form), called
        # with no arguments; Python 3.15 then ignores the .pth's import
        # lines, so they are removed here.
        venv = self.venv()
        os.remove(os.path.join(venv.site, "trt_action.pth"))
        with open(os.path.join(WHEEL, "trt_action.start")) as f:
            entries = [line.strip() for line in f if line.strip() and not line.startswith("#")]
        self.assertEqual(entries, ["trt_action._activate:activate"])
        start = (
            "import importlib, pkgutil, sys\n"
            "def resolve(name):  # pkgutil.resolve_name is Python 3.9 and later\n"
            "    if hasattr(pkgutil, 'resolve_name'):\n"
            "        return pkgutil.resolve_name(name)\n"
            "    module, _, attr = name.partition(':')\n"
            "    return getattr(importlib.import_module(module), attr)\n"
            "resolve('os:getcwd')  # what resolving imports the first time (re) is not the entry point's\n"
            "before = set(sys.modules)\n"
            "for entry in %r:\n"
            "    resolve(entry)()\n"
            "print(' '.join(sorted(set(sys.modules) - before)))\n"
        ) % entries
        unsupervised = support.run([venv.python, "-I", "-c", start], wheel_env())
        self.assertRan(unsupervised)
        # Without a supervisor the entry point costs the import of the
        # package and the module that holds it, nothing more.
        self.assertEqual(unsupervised.stdout, "trt_action trt_action._activate\n")
        sup = self.supervisor()
        supervised = support.run([venv.python, "-I", "-c", start + PROBE], wheel_env(sup))
        self.assertRan(supervised)
        self.assertEqual(supervised.stderr, "")
        self.assertEqual(self.hellos(sup), [["hello"]])

    def test_the_pth_file_holds_one_import_line_that_names_its_start_twin(self):
        with open(os.path.join(WHEEL, "trt_action.pth")) as f:
            lines = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith("import "), lines)
        self.assertIn("trt_action._activate", lines[0])
        self.assertTrue(os.path.isfile(os.path.join(WHEEL, "trt_action.start")))

    def test_python_m_trt_action_becomes_the_binary(self):
        venv = self.venv()
        proc = subprocess.Popen(
            [venv.python, "-m", "trt_action", "version", "two words", "--flag=x"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=wheel_env(),
        )
        out, err = proc.communicate(timeout=support.WAIT)
        self.assertEqual((proc.returncode, err), (7, ""))
        lines = out.splitlines()
        self.assertEqual(lines[0], "pid=%d" % proc.pid, "not the same process")
        self.assertEqual(lines[1], "argv0=" + venv.binary)
        sigpipe = 1 << (13 - 1)
        self.assertEqual(int(lines[2][len("sigign="):], 16) & sigpipe, 0, "SIGPIPE left ignored")
        self.assertEqual(lines[3:], ["arg=version", "arg=two words", "arg=--flag=x"])

    def test_python_m_trt_action_without_the_binary(self):
        venv = self.venv()
        os.remove(venv.binary)
        result = support.run([venv.python, "-m", "trt_action", "version"], wheel_env())
        self.assertEqual(result.returncode, 1)
        self.assertTrue(result.stderr.startswith("trt-action: the trt-action binary is not where pip puts it"), result.stderr)
        self.assertIn(venv.binary, result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1)

    def test_python_m_trt_action_with_a_binary_that_lost_its_execute_bit(self):
        # Exactly where pip put it, but not executable: say that, not that
        # it is missing.
        venv = self.venv()
        os.chmod(venv.binary, 0o644)
        result = support.run([venv.python, "-m", "trt_action", "version"], wheel_env())
        self.assertEqual(result.returncode, 1)
        self.assertEqual(
            result.stderr,
            "trt-action: the trt-action binary cannot be run: %s is there but not executable (mode 0644): chmod +x it; "
            "or reinstall: pip install --force-reinstall trt-action\n" % venv.binary,
        )
        code = "import trt_action\ntry:\n    trt_action.find_binary()\nexcept PermissionError:\n    print('PermissionError')"
        result = support.run([venv.python, "-I", "-c", code], wheel_env())
        self.assertRan(result)
        self.assertEqual(result.stdout.strip(), "PermissionError")

    def test_python_m_trt_action_with_another_file_where_the_binary_was(self):
        venv = self.venv()
        with open(venv.binary, "a") as f:
            f.write("# changed\n")
        size = os.path.getsize(venv.binary)
        result = support.run([venv.python, "-m", "trt_action", "version"], wheel_env())
        self.assertEqual(result.returncode, 1)
        self.assertTrue(
            result.stderr.startswith(
                "trt-action: the trt-action binary pip installed is not there: %s is %d bytes, not the %d of the one pip installed"
                % (venv.binary, size, size - len("# changed\n"))
            ),
            result.stderr,
        )

    def test_find_binary_and_version_in_a_venv(self):
        venv = self.venv()
        code = "import trt_action; print(trt_action.find_binary()); print(trt_action.__version__)"
        result = support.run([venv.python, "-I", "-c", code], wheel_env())
        self.assertRan(result)
        self.assertEqual(result.stdout.splitlines(), [venv.binary, VERSION])

    def test_find_binary_of_a_target_install(self):
        # pip install --target DIR: the package in DIR, the binary moved to
        # DIR/bin after the RECORD was written, which still says
        # ../../bin/trt-action (from DIR/lib/python). A trt-action of
        # another size where that path points is not taken.
        target = os.path.join(self.folder, "a", "b", "target")
        os.makedirs(target)
        recorded = os.path.join(self.folder, "a", "bin", "trt-action")  # target/../../bin
        install(target, os.path.relpath(recorded, target))
        os.mkdir(os.path.join(target, "bin"))
        os.rename(recorded, os.path.join(target, "bin", "trt-action"))
        with open(recorded, "w") as f:
            f.write("#!/bin/sh\necho another trt-action\n")
        os.chmod(recorded, 0o755)
        code = "import sys; sys.path.insert(0, %r); import trt_action; print(trt_action.find_binary())" % target
        result = support.run([sys.executable, "-I", "-c", code], wheel_env())
        self.assertRan(result)
        self.assertEqual(result.stdout.strip(), os.path.join(target, "bin", "trt-action"))

    def test_find_binary_from_the_scripts_folder_without_a_record(self):
        venv = self.venv()
        for info in os.listdir(venv.site):
            if info.endswith(".dist-info"):
                shutil.rmtree(os.path.join(venv.site, info))
        code = "import trt_action; print(trt_action.find_binary()); print(trt_action.__version__)"
        result = support.run([venv.python, "-I", "-c", code], wheel_env())
        self.assertRan(result)
        self.assertEqual(result.stdout.splitlines(), [venv.binary, "0+unknown"])
