#!/usr/bin/env python3
"""test_circles.py — scripts/circles.py finds loops of files on tiny
synthetic trees: a call back into an including file is a circle; an own
header, a static function of the same name, a member call, and names in
comments or strings make no arrow; the exit status follows --max. Needs
no build and no fixtures."""
import os
import subprocess
import sys
import tempfile

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
import circles  # noqa: E402

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def tree(files):
    root = tempfile.mkdtemp(prefix="xpv-circles-")
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
    "lib/b.c": '#include "b.h"\n'
               "int b_fn(int x)\n{\n    return x + 1;\n}\n",
}

# a includes b's header and b calls back into a: one circle.
with_circle = tree(dict(LOWER, **{
    "lib/a.h": "int a_fn(void);\n",
    "lib/a.c": '#include "a.h"\n#include "b.h"\n'
               "int a_fn(void)\n{\n    return b_fn(1);\n}\n",
    "lib/b.c": '#include "b.h"\nint a_fn(void);\n'
               "int b_fn(int x)\n{\n    return x + a_fn();\n}\n",
    "lib/c.c": '#include "b.h"\nint c_fn(void)\n{\n    return b_fn(2);\n}\n',
    "tests/t.c": '#include "../lib/a.h"\nint t(void)\n{\n    return a_fn();\n}\n',
}))
comps, graph, shown = circles.circles(with_circle)
check(comps == [["lib/a", "lib/b"]], "one circle of a and b, c outside it: %r" % comps)
check(graph["lib/a"]["lib/b"] == {'#include "b.h"', "b_fn()"}, "a -> b by include and call")
check(graph["lib/b"]["lib/a"] == {"a_fn()"}, "b -> a by the call back")
check("lib/a" not in graph["lib/a"], "a's own header is not an arrow")
check(not any(n.startswith("tests/") for n in graph), "tests/ is not read")
r = run(with_circle, "--max", "0")
check(r.returncode == 1, "one circle over --max 0 exits 1 (%d)" % r.returncode)
check("circle 1: lib/a.c, lib/b.c" in r.stdout and "lib/b.c -> lib/a.c: a_fn()" in r.stdout,
      "the report names the files and the tie: %r" % r.stdout)
check(run(with_circle, "--max", "1").returncode == 0, "one circle within --max 1 exits 0")

# b's own static a_fn, a member call and mentions in comments or strings
# do not reach back to a: no circle.
without_circle = tree(dict(LOWER, **{
    "lib/a.h": "int a_fn(void);\n",
    "lib/a.c": '#include "a.h"\n#include "b.h"\n'
               "int a_fn(void)\n{\n    return b_fn(1);\n}\n",
    "lib/b.c": '#include "b.h"\n'
               "struct s { int (*a_fn)(void); };\n"
               "static int a_fn(void)\n{\n    return 2;\n}\n"
               "int b_fn(int x)\n{\n    struct s v = {0};\n"
               "    /* a_fn() */ const char *m = \"a_fn()\";\n"
               "    return x + a_fn() + v.a_fn() + (m != 0);\n}\n",
}))
comps, graph, _ = circles.circles(without_circle)
check(comps == [], "no circle: %r" % comps)
check("lib/a" not in graph["lib/b"], "b's calls stay in b: %r" % graph["lib/b"])
check(run(without_circle, "--max", "0").returncode == 0, "no circle exits 0 even at --max 0")

# A three-file loop through a header-only file is one circle of three.
loop = tree({
    "x.c": '#include "y.h"\nvoid x_fn(void)\n{\n    y_mark();\n}\n',
    "y.h": "#define Y 1\nstatic inline void y_mark(void)\n{\n    z_fn();\n}\n",
    "z.c": "void x_fn(void);\nvoid z_fn(void)\n{\n    x_fn();\n}\n",
})
comps, _, _ = circles.circles(loop)
check(comps == [["x", "y", "z"]], "a loop through a header is one circle: %r" % comps)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
