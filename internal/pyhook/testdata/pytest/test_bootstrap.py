"""The bootstrap (sitecustomize.py): it installs the hook only for a
supervisor, always runs the program's own sitecustomize, runs once, and
never breaks the program."""

import os
import shutil
import sys

import support

# What the program prints: whether its own sitecustomize ran, which module
# is sitecustomize, and whether the hook was imported.
PROBE = (
    "import os, sys\n"
    "m = sys.modules.get('sitecustomize')\n"
    "print(os.environ.get('USER_SITE_RAN', '-'), getattr(m, 'MARK', '-'), 'trt_action_hook' in sys.modules)\n"
)

USER_SITE = (
    "import os, sys\n"
    "os.environ['USER_SITE_RAN'] = os.environ.get('USER_SITE_RAN', '') + 'x'\n"
    "sys.stderr.write('user sitecustomize ran\\n')\n"
    "MARK = 'user'\n"
)

# ddtrace's bootstrap hides itself and imports sitecustomize again
# (ddtrace/bootstrap/sitecustomize.py in DataDog/dd-trace-py): with the
# hook's folder first on the path, that import runs the hook's bootstrap a
# second time.
REIMPORTING_SITE = USER_SITE + (
    "here = os.path.dirname(os.path.abspath(__file__))\n"
    "i = sys.path.index(here)\n"
    "del sys.path[i]\n"
    "mine = sys.modules.pop('sitecustomize')\n"
    "import sitecustomize\n"
    "sys.path.insert(i, here)\n"
)


class Bootstrap(support.TestCase):
    def user_site(self, text=USER_SITE, name="user"):
        folder = os.path.join(self.folder, name)
        os.mkdir(folder)
        with open(os.path.join(folder, "sitecustomize.py"), "w") as f:
            f.write(text)
        return folder

    def probe(self, env, *python_args):
        result = support.run([sys.executable] + list(python_args) + ["-c", PROBE], env)
        self.assertRan(result)
        return result

    def test_without_a_supervisor_only_the_programs_sitecustomize_runs(self):
        user = self.user_site()
        for supervisor in (None, ""):
            with self.subTest(supervisor=supervisor):
                result = self.probe(support.hook_env(supervisor, pythonpath=[user]))
                self.assertEqual(result.stdout, "x user False\n")
                self.assertEqual(result.stderr, "user sitecustomize ran\n")

    def test_with_a_supervisor_the_hook_and_the_programs_sitecustomize_run(self):
        sup = self.supervisor()
        user = self.user_site()
        result = self.probe(support.hook_env(sup, pythonpath=[user]))
        self.assertEqual(result.stdout, "x user True\n")
        self.assertEqual(result.stderr, "user sitecustomize ran\n")
        conns = sup.settled()
        self.assertEqual([[m["m"] for m in c.messages] for c in conns], [["hello"]])

    def test_no_sitecustomize_of_the_program(self):
        sup = self.supervisor()
        result = self.probe(support.hook_env(sup))
        self.assertEqual(result.stdout, "- - True\n")
        self.assertEqual(result.stderr, "")

    def test_an_error_in_the_programs_sitecustomize_is_reported_as_without_the_hook(self):
        user = self.user_site("MARK = 'user'\nraise ValueError('boom')\n")
        without = support.run([sys.executable, "-c", PROBE], support.hook_env(None, hook_dir=None, pythonpath=[user]))
        self.assertRan(without)
        self.assertEqual(without.stderr, "Error in sitecustomize; set PYTHONVERBOSE for traceback:\nValueError: boom\n")
        sup = self.supervisor()
        result = self.probe(support.hook_env(sup, pythonpath=[user]))
        self.assertEqual((result.stdout, result.stderr), (without.stdout.replace("False", "True"), without.stderr))
        self.assertEqual([[m["m"] for m in c.messages] for c in sup.settled()], [["hello"]])

    def test_runs_once_when_imported_again(self):
        sup = self.supervisor()
        user = self.user_site(REIMPORTING_SITE)
        again = "import runpy; runpy.run_path(%r)\n" % os.path.join(support.HOOK_DIR, "sitecustomize.py")
        result = support.run([sys.executable, "-c", again + PROBE], support.hook_env(sup, pythonpath=[user]))
        self.assertRan(result)
        self.assertEqual(result.stderr, "user sitecustomize ran\n")
        self.assertEqual(result.stdout.split()[0], "x")
        self.assertEqual([[m["m"] for m in c.messages] for c in sup.settled()], [["hello"]])

    def test_a_run_inside_another_run(self):
        # trt-action running trt-action: two hook folders on the path; the
        # program's sitecustomize runs once, the inner hook reports.
        inner, outer = os.path.join(self.folder, "inner"), os.path.join(self.folder, "outer")
        shutil.copytree(support.HOOK_DIR, inner)
        shutil.copytree(support.HOOK_DIR, outer)
        user = self.user_site()
        sup = self.supervisor()
        env = support.hook_env(sup, hook_dir=inner, pythonpath=[outer, user])
        where = "import trt_action_hook; print(trt_action_hook.__file__)\n"
        result = support.run([sys.executable, "-c", PROBE + where], env)
        self.assertRan(result)
        self.assertEqual(result.stdout.splitlines()[0], "x user True")
        self.assertTrue(result.stdout.splitlines()[1].startswith(inner + os.sep), result.stdout)
        self.assertEqual(result.stderr, "user sitecustomize ran\n")
        self.assertEqual(len(sup.settled()), 1)

    def test_a_broken_hook_is_one_line_and_the_program_runs(self):
        broken = os.path.join(self.folder, "broken")
        shutil.copytree(support.HOOK_DIR, broken)
        with open(os.path.join(broken, "trt_action_hook", "__init__.py"), "w") as f:
            f.write("raise RuntimeError('broken')\n")
        user = self.user_site()
        sup = self.supervisor()
        result = self.probe(support.hook_env(sup, hook_dir=broken, pythonpath=[user]))
        self.assertEqual(result.stdout, "x user False\n")
        self.assertEqual(
            result.stderr,
            "trt-action hook: not installed; TensorRT builds in this process are not observed: "
            "RuntimeError: broken\nuser sitecustomize ran\n",
        )

    def test_python_flags_that_keep_the_hook_out(self):
        # -I and -E ignore PYTHONPATH, -S skips site: the program runs and
        # the supervisor hears nothing (the report says why: Script.Unobserved).
        for flag in ("-I", "-E", "-S"):
            with self.subTest(flag=flag):
                self.setUp()
                sup = self.supervisor()
                result = self.probe(support.hook_env(sup), flag)
                self.assertEqual(result.stdout, "- - False\n")
                self.assertEqual(sup.settled(), [])
        with self.subTest(flag="-s"):
            self.setUp()
            sup = self.supervisor()
            result = self.probe(support.hook_env(sup), "-s")
            self.assertEqual(result.stdout, "- - True\n")
            self.assertEqual(len(sup.settled()), 1)

    def test_a_program_that_never_builds(self):
        sup = self.supervisor()
        result = support.run([sys.executable, "-c", "print('no TensorRT here')"], support.hook_env(sup))
        self.assertRan(result)
        conns = sup.settled()
        self.assertEqual(len(conns), 1)
        hello = conns[0].messages[0]
        self.assertEqual([m["m"] for m in conns[0].messages], ["hello"])
        self.assertEqual(sorted(hello), ["argv", "executable", "m", "pid", "ppid", "python"])
        if sys.version_info >= (3, 10):  # sys.orig_argv: the whole command line
            self.assertEqual(hello["argv"], [sys.executable, "-c", "print('no TensorRT here')"])

    def test_children_connect_on_their_own(self):
        # subprocess and multiprocessing spawn children inherit the
        # environment, not the connection: each says hello itself.
        sup = self.supervisor()
        program = (
            "import multiprocessing, subprocess, sys\n"
            "if __name__ == '__main__':\n"
            "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
            "    p = multiprocessing.get_context('spawn').Process(target=print)\n"
            "    p.start(); p.join()\n"
        )
        path = os.path.join(self.folder, "parent.py")
        with open(path, "w") as f:
            f.write(program)
        result = support.run([sys.executable, path], support.hook_env(sup))
        self.assertRan(result)
        hellos = [c.messages[0] for c in sup.settled()]
        parent = [h for h in hellos if h["ppid"] == os.getpid()]
        self.assertEqual(len(parent), 1)
        # The subprocess and the spawned process, which the parent waits
        # for; multiprocessing's resource tracker too where this Python
        # starts one (its parent may have ended by the time it says hello).
        children = [h for h in hellos if h["ppid"] == parent[0]["pid"]]
        self.assertGreaterEqual(len(children), 2, hellos)
        self.assertLessEqual(len(hellos), 4, hellos)

    def test_byte_code_cached_in_the_hooks_folder_only(self):
        # Under PYTHONDONTWRITEBYTECODE the hook writes its own byte code
        # (in trt-action's folder), never the program's.
        for supervised in (False, True):
            with self.subTest(supervised=supervised):
                self.setUp()
                hook = os.path.join(self.folder, "hook")
                shutil.copytree(support.HOOK_DIR, hook, ignore=shutil.ignore_patterns("__pycache__"))
                user = self.user_site()
                sup = self.supervisor() if supervised else None
                env = support.hook_env(sup, hook_dir=hook, pythonpath=[user], extra={"PYTHONDONTWRITEBYTECODE": "1"})
                for _ in range(2):
                    self.assertEqual(self.probe(env).stdout, "x user %s\n" % supervised)
                cached = sorted(
                    os.path.relpath(os.path.join(d, f), hook) for d, _, files in os.walk(hook) for f in files if f.endswith(".pyc")
                )
                modules = sorted(f[:-3] for f in os.listdir(os.path.join(hook, "trt_action_hook")) if f.endswith(".py"))
                tag = sys.implementation.cache_tag
                want = ["__pycache__/sitecustomize.%s.pyc" % tag]
                if supervised:
                    want += ["trt_action_hook/__pycache__/%s.%s.pyc" % (m, tag) for m in modules]
                self.assertEqual(cached, sorted(want))
                self.assertFalse(os.path.exists(os.path.join(user, "__pycache__")))

    def test_old_python_gets_a_line_and_the_programs_sitecustomize(self):
        # Python 3.6 and older: no hook (it needs os.register_at_fork),
        # said once; the program's sitecustomize still runs.
        sup = self.supervisor()
        user = self.user_site()
        result = self.probe(support.hook_env(sup, pythonpath=[user]))
        if sys.version_info >= (3, 7):
            self.assertEqual(result.stderr, "user sitecustomize ran\n")
            self.assertEqual(len(sup.settled()), 1)
        else:
            self.assertEqual(
                result.stderr,
                "trt-action hook: not installed; TensorRT builds in this process are not observed: "
                "RuntimeError: it needs Python 3.7 or later, this is %d.%d\nuser sitecustomize ran\n"
                % sys.version_info[:2],
            )
            self.assertEqual(sup.settled(), [])


