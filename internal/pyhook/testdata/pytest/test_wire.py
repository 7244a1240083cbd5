"""The hook's JSON text and message sizes (trt_action_hook.wire), read
back with the json package as the supervisor reads them with Go's."""

import json
import sys
import unittest

import support

sys.path.insert(0, support.HOOK_DIR)
from trt_action_hook import wire  # noqa: E402


class Wire(unittest.TestCase):
    def test_dumps_reads_back(self):
        value = {
            "m": "begin", "n": -3, "big": 1 << 40, "f": 0.5, "yes": True, "no": False, "nothing": None,
            "s": 'quote " backslash \\ newline \n tab \t bell \x07 é 日本 \U0001F600',
            "list": [1, "a", [], {}], "tuple": (1, 2),
        }
        text = wire.dumps(value)
        text.encode("ascii")  # non-ASCII escaped
        back = json.loads(text)
        value["tuple"] = [1, 2]
        self.assertEqual(back, value)

    def test_dumps_lone_surrogates_and_odd_values(self):
        # A file name Python decoded with surrogateescape; inf and nan,
        # which JSON cannot hold; an object, written as its str.
        text = wire.dumps(["bad\udcff", float("inf"), float("nan"), object.__new__(Odd)])
        text.encode("ascii")
        self.assertEqual(json.loads(text), ["bad\udcff", None, None, "odd"])

    def test_event_texts(self):
        self.assertEqual(json.loads(wire.event((5, 0, "s", "Building engine", None, 6), 1)), [5, 1, "s", "Building engine", None, 6])
        self.assertEqual(json.loads(wire.event((6, 0, "s", "Child", "Building engine", 2), 2)), [6, 2, "s", "Child", "Building engine", 2])
        self.assertEqual(json.loads(wire.event((7, 0, "p", "Child", 1), 2)), [7, 2, "p", "Child", 1])
        self.assertEqual(json.loads(wire.event((8, 0, "f", "Child"), 2)), [8, 2, "f", "Child"])
        long_name = "é" * 10000
        ev = json.loads(wire.event((9, 0, "s", long_name, long_name, 1), 1))
        self.assertEqual(ev[3], long_name[:4096])
        self.assertEqual(ev[4], long_name[:4096])

    def test_batches_stay_under_the_limit_and_keep_order(self):
        texts = [wire.event((i, 0, "p", "phase %d " % i + "é" * (i % 3000), i), 1) for i in range(2000)]
        messages = wire.batches(7, texts)
        self.assertGreater(len(messages), 1)
        got = []
        for m in messages:
            self.assertLessEqual(len(m.encode()), wire.LIMIT)
            decoded = json.loads(m)
            self.assertEqual((decoded["m"], decoded["id"]), ("ev", 7))
            got += decoded["e"]
        self.assertEqual(got, [json.loads(t) for t in texts])
        self.assertEqual(wire.batches(1, []), [])

    def test_fitted_cuts_in_turn(self):
        message = {"m": "begin", "a": "x" * 70000, "b": "y" * 100}

        def cut_a(m):
            m["a"] = m["a"][:50000]

        def drop_a(m):
            m["a"] = ""

        text = wire.fitted(dict(message), (cut_a, drop_a))
        self.assertEqual(json.loads(text), {"m": "begin", "a": "x" * 50000, "b": "y" * 100, "cut": True})
        small = wire.fitted({"m": "end"}, (drop_a,))
        self.assertEqual(json.loads(small), {"m": "end"})


class Odd:
    def __str__(self):
        return "odd"


if __name__ == "__main__":
    unittest.main()
