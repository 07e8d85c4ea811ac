#!/usr/bin/env python3
"""circles.py — the loops of files that depend on each other, and why.

  scripts/circles.py [--root DIR] [--max N]

A file depends on another when it includes that file's header or calls a
function defined there. A .c and its own .h are one node ("X.c" stands for
both), so including your own header is not a dependency. The C files are
the tree's (git ls-files, or every file under DIR when it is not the top
of a git work tree), less tests/, bench/ and tools/. A circle is a strongly
connected component of two nodes or more; each one is printed with the
arrows inside it and the include or function names that make each arrow.
Exits 1 when there are more than N circles (default 3): a circle means
neither file can be read, tested or moved without the other.

The reading is a tokenizer, not a compiler: comments, strings and
preprocessor lines are dropped (only #include "..." is kept); a function
definition is a name followed by (...) and then { at file scope; a static
one is seen only by its own file; a call is a name followed by ( inside a
body, not after . or -> (those are members). Function pointers handed
around without a call are not seen.
"""
import argparse
import os
import re
import subprocess
import sys

SKIP_DIRS = ("tests/", "bench/", "tools/")
TOKEN = re.compile(r"[A-Za-z_]\w*|->|[{}();.,=]")
INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')


def list_files(root):
    """Relative paths of the C sources and headers under root: git's when
    root is the top of a work tree, else every one below it."""
    out = None
    if os.path.exists(os.path.join(root, ".git")):
        try:
            out = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"], check=True,
                                 capture_output=True, text=True).stdout.split()
        except (OSError, subprocess.CalledProcessError):
            pass
    if out is None:
        out = []
        for d, _, names in os.walk(root):
            for n in names:
                if n.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
    return sorted(f for f in out if not f.startswith(SKIP_DIRS))


def node_of(path):
    """X.c and X.h are one node, named by the stem."""
    return path[:-2]


def strip(text):
    """The text with comments, string and char literals blanked, and the
    preprocessor lines taken out; returns (code, include targets)."""
    out, includes, i, n = [], [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            m = INCLUDE.match(text, i)
            if m:
                includes.append(m.group(1))
            i = j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" 0 ")
            i = j + 1
            continue
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        out.append(c)
        i += 1
    return "".join(out), includes


def scan(code):
    """(global definitions, static definitions, called names) of one file."""
    toks = TOKEN.findall(code)
    defs, statics, calls = set(), set(), set()
    depth, is_static, i = 0, False, 0
    while i < len(toks):
        t = toks[i]
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                is_static = False
        elif depth == 0:
            if t == ";":
                is_static = False
            elif t == "static":
                is_static = True
            elif t[0].isalpha() or t[0] == "_":
                if i + 1 < len(toks) and toks[i + 1] == "(":
                    j, level = i + 1, 0
                    while j < len(toks):
                        level += toks[j] == "("
                        level -= toks[j] == ")"
                        if level == 0:
                            break
                        j += 1
                    if j + 1 < len(toks) and toks[j + 1] == "{":
                        (statics if is_static else defs).add(t)
                    i = j
        elif (t[0].isalpha() or t[0] == "_") and i + 1 < len(toks) and toks[i + 1] == "(":
            if i == 0 or toks[i - 1] not in (".", "->"):
                calls.add(t)
        i += 1
    return defs, statics, calls


def read_tree(root, files):
    """{path: (defs, statics, calls, includes)} for each file."""
    info = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            code, includes = strip(fh.read())
        info[f] = scan(code) + (includes,)
    return info


def build_graph(info):
    """{node: {node: set of reasons}}: the arrows between nodes, each with
    the include lines and function names that make it."""
    where = {}
    for f, (defs, _, _, _) in info.items():
        for name in defs:
            where.setdefault(name, set()).add(node_of(f))
    graph = {node_of(f): {} for f in info}
    for f, (defs, statics, calls, includes) in info.items():
        a = node_of(f)
        for inc in includes:
            for cand in (os.path.join(os.path.dirname(f), inc), inc):
                cand = os.path.normpath(cand).replace(os.sep, "/")
                if cand in info:
                    if node_of(cand) != a:
                        graph[a].setdefault(node_of(cand), set()).add('#include "%s"' % inc)
                    break
        for name in calls - defs - statics:
            for b in where.get(name, ()):
                if b != a:
                    graph[a].setdefault(b, set()).add(name + "()")
    return graph


def components(graph):
    """The strongly connected components of two nodes or more (Tarjan's
    algorithm, iterative so that deep chains do not hit Python's stack)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def circles(root):
    """(circles, graph, file names by node) for the tree under root."""
    files = list_files(root)
    graph = build_graph(read_tree(root, files))
    shown = {}
    for f in files:  # a node is shown by its .c when it has one
        if f.endswith(".c") or node_of(f) not in shown:
            shown[node_of(f)] = f
    return components(graph), graph, shown


def report(comps, graph, shown):
    lines = []
    for k, comp in enumerate(comps, 1):
        lines.append("circle %d: %s" % (k, ", ".join(shown[n] for n in comp)))
        members = set(comp)
        for a in comp:
            for b in sorted(graph[a]):
                if b in members:
                    lines.append("  %s -> %s: %s" % (shown[a], shown[b],
                                                      ", ".join(sorted(graph[a][b]))))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--max", type=int, default=3, help="circles allowed (default 3)")
    args = ap.parse_args()
    comps, graph, shown = circles(args.root)
    for line in report(comps, graph, shown):
        print(line)
    print("circles: %d (at most %d)" % (len(comps), args.max))
    return 1 if len(comps) > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
