#!/usr/bin/env python3
"""test_circles.py — scripts/circles.py finds loops of files on tiny
synthetic trees: a call back into an including file is a circle; an own
header, a static function of the same name, a member call, and names in
comments or strings make no arrow; the exit status follows --max. Needs
no build and no fixtures."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, HERE)
sys.path.insert(0, SCRIPTS)
import circles  # noqa: E402
import xpv_e2e as e2e  # noqa: E402


def tree(files):
    root = e2e.tmpdir("xpv-circles-")
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    return root


def run(root, *extra):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, "circles.py"), "--root", root]
                          + list(extra), capture_output=True, text=True)


LOWER = {
    "lib/b.h": "int b_fn(int x);\n",
    "lib/a.h": "int a_fn(void);\n",
    "lib/a.c": '#include "a.h"\n#include "b.h"\n'
               "int a_fn(void)\n{\n    return b_fn(1);\n}\n",
}


def test_call_back_is_a_circle():
    """a includes b's header and b calls back into a: one circle, which
    c (calling b only) and tests/ (not read) stay out of."""
    root = tree(dict(LOWER, **{
        "lib/b.c": '#include "b.h"\nint a_fn(void);\n'
                   "int b_fn(int x)\n{\n    return x + a_fn();\n}\n",
        "lib/c.c": '#include "b.h"\nint c_fn(void)\n{\n    return b_fn(2);\n}\n',
        "tests/t.c": '#include "../lib/a.h"\nint t(void)\n{\n    return a_fn();\n}\n',
    }))
    comps, graph, _ = circles.circles(root)
    assert comps == [["lib/a", "lib/b"]], comps
    assert graph["lib/a"]["lib/b"] == {'#include "b.h"', "b_fn()"}, graph["lib/a"]
    assert graph["lib/b"]["lib/a"] == {"a_fn()"}, graph["lib/b"]
    assert "lib/a" not in graph["lib/a"], "a's own header is not an arrow"
    assert not any(n.startswith("tests/") for n in graph), sorted(graph)
    r = run(root, "--max", "0")
    assert r.returncode == 1, r
    assert "circle 1: lib/a.c, lib/b.c" in r.stdout, r.stdout
    assert "lib/b.c -> lib/a.c: a_fn()" in r.stdout, r.stdout
    assert run(root, "--max", "1").returncode == 0


def test_local_names_are_no_circle():
    """b's own static a_fn, a member call and mentions in comments or
    strings do not reach back to a."""
    root = tree(dict(LOWER, **{
        "lib/b.c": '#include "b.h"\n'
                   "struct s { int (*a_fn)(void); };\n"
                   "static int a_fn(void)\n{\n    return 2;\n}\n"
                   "int b_fn(int x)\n{\n    struct s v = {0};\n"
                   "    /* a_fn() */ const char *m = \"a_fn()\";\n"
                   "    return x + a_fn() + v.a_fn() + (m != 0);\n}\n",
    }))
    comps, graph, _ = circles.circles(root)
    assert comps == [], comps
    assert "lib/a" not in graph["lib/b"], graph["lib/b"]
    assert run(root, "--max", "0").returncode == 0


def test_loop_through_a_header():
    """A header's inline function calling up makes a three-node loop."""
    root = tree({
        "x.c": '#include "y.h"\nvoid x_fn(void)\n{\n    y_mark();\n}\n',
        "y.h": "#define Y 1\nstatic inline void y_mark(void)\n{\n    z_fn();\n}\n",
        "z.c": "void x_fn(void);\nvoid z_fn(void)\n{\n    x_fn();\n}\n",
    })
    comps, _, _ = circles.circles(root)
    assert comps == [["x", "y", "z"]], comps


if __name__ == "__main__":
    e2e.main([test_call_back_is_a_circle, test_local_names_are_no_circle,
              test_loop_through_a_header])
