#!/usr/bin/env python3
"""test_route_table.py: the server's route table (`xprof-view --routes`,
server/route_table.c) is the one list of routes; everything that names
routes must agree with it:

  - docs/API.md: its route table is what scripts/gen_api_doc.py writes from
    the binary, and it has one `### \\`GET path\\`` answer section per route,
    no more;
  - static/js/api.js: every path the web client asks is a route, and every
    query parameter it names is one of that route's;
  - scripts/api_snapshot.py: every route is asked (or listed in NOT_ASKED
    with a reason), and every path it asks is a route;
  - tests/fuzz/dict/routes.dict: every route's literal segments and
    parameter names are tokens, and every path token leads to a route.

It also asks a live server one path per route and checks no route answers
with the 404 of a path that names none.
"""
import ast
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402

SRC = os.environ.get("XPV_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")


def src(*parts):
    return os.path.join(SRC, *parts)


def table():
    out = e2e.run(["--routes"]).stdout
    return json.loads(out)["routes"]


def real_routes():
    return [r for r in table() if not r["fallback"]]


def regex(pattern):
    """A route pattern as a regex: {x} one segment, {x*} the rest."""
    out, i = "", 0
    for m in re.finditer(r"\{(\w+)(\*?)\}", pattern):
        out += re.escape(pattern[i:m.start()]) + (".*" if m.group(2) else "[^/]+")
        i = m.end()
    return re.compile(out + re.escape(pattern[i:]) + "$")


def route_of(path, routes):
    """The first row matching path (table order, as the server matches), or None."""
    for r in routes:
        if regex(r["path"]).match(path):
            return r
    return None


def sample(pattern):
    return re.sub(r"\{\w+\*\}", "x0/x1", re.sub(r"\{\w+\}", "x0", pattern))


def test_doc_table_is_generated():
    r = subprocess.run([sys.executable, src("scripts", "gen_api_doc.py"), e2e.BIN, "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_doc_answers_one_per_route():
    with open(src("docs", "API.md"), encoding="utf-8") as f:
        headings = re.findall(r"^### `(\w+) ([^`]+)`$", f.read(), re.M)
    documented = ["%s %s" % h for h in headings]
    routes = ["%s %s" % (r["method"], r["path"]) for r in real_routes()]
    assert sorted(documented) == sorted(set(documented)), "a route documented twice"
    missing = sorted(set(routes) - set(documented))
    extra = sorted(set(documented) - set(routes))
    assert not missing and not extra, "docs/API.md: undocumented %s, not routes %s" % (
        missing, extra)


def js_paths():
    """(path with each ${...} as x0, query parameter names or None if unknown)
    of every path static/js/api.js asks."""
    with open(src("static", "js", "api.js"), encoding="utf-8") as f:
        js = f.read()
    tb = re.search(r"const TB = '([^']*)'", js).group(1)
    out = []
    for lit in re.findall(r"`([^`]*)`|'(/api/[^']*)'", js):
        text = (lit[0] or lit[1]).replace("${TB}", tb)
        if not text.startswith(("/api/", "/data/plugin/profile/")):
            continue
        names = []
        for q in re.findall(r"\$\{query\(([^)]*)\)\}", text):
            if not q.startswith("{"):
                names = None  # query(params): the caller's names
                break
            names += [n.split(":")[0].strip() for n in q.strip("{} ").split(",")
                      if n.strip() and not n.strip().startswith("...")]
        text = re.sub(r"\$\{query\([^)]*\)\}", "", text)
        path, _, query = text.partition("?")
        if names is not None:
            names += [kv.split("=")[0] for kv in query.split("&") if kv]
        out.append((re.sub(r"\$\{[^}]*\}", "x0", path), names))
    return out


def test_js_paths_are_routes():
    routes = real_routes()
    paths = js_paths()
    assert len(paths) > 15, paths
    for path, names in paths:
        r = route_of(path, table())
        assert r and not r["fallback"], "static/js/api.js asks %s, which is no route" % path
        known = {p["name"] for p in r["params"]}
        for n in names or []:
            assert n in known, "static/js/api.js sends %s to %s, which takes %s" % (
                n, r["path"], sorted(known))
    assert routes


def snapshot_paths():
    """(path with %s/%r as x0, query names) of every path scripts/api_snapshot.py
    asks: string literals that are absolute, or "%s/..." after a profile's base."""
    with open(src("scripts", "api_snapshot.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out, not_asked = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "NOT_ASKED":
            not_asked = ast.literal_eval(node.value)
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        text = node.value
        if text.startswith("%s/"):
            text = "/api/profiles/x0" + text[2:]
        if not text.startswith(("/api/", "/data/plugin/profile/")):
            continue
        path, _, query = text.partition("?")
        names = [kv.split("=")[0] for kv in query.split("&") if kv]
        out.append((re.sub(r"%[sr]", "x0", path), names))
    return out, not_asked


def test_snapshot_asks_every_route():
    asked, not_asked = snapshot_paths()
    all_rows = table()
    hit = set()
    for path, names in asked:
        r = route_of(path, all_rows)
        assert r and not r["fallback"], "api_snapshot.py asks %s, which is no route" % path
        known = {p["name"] for p in r["params"]}
        assert set(names) <= known, "api_snapshot.py sends %s to %s" % (names, r["path"])
        hit.add(r["path"])
    for path in not_asked:
        assert any(r["path"] == path for r in real_routes()), "NOT_ASKED names no route: " + path
    missing = [r["path"] for r in real_routes() if r["path"] not in hit | set(not_asked)]
    assert not missing, "scripts/api_snapshot.py does not ask %s" % missing


def dict_tokens():
    with open(src("tests", "fuzz", "dict", "routes.dict"), encoding="utf-8") as f:
        return [ast.literal_eval(line.strip()) for line in f
                if line.strip().startswith('"')]


def test_fuzz_dict_covers_every_route():
    tokens = dict_tokens()
    words = set()
    for t in tokens:
        words.update(w for w in re.split(r"[/?&]", t) if w)
    for r in real_routes():
        for seg in r["path"].split("/"):
            if seg and not seg.startswith("{"):
                assert seg in words, "routes.dict lacks %r (of %s)" % (seg, r["path"])
        for p in r["params"]:
            if not p["unused"]:
                assert any(t.startswith(p["name"] + "=") for t in tokens), \
                    "routes.dict lacks %r (of %s)" % (p["name"] + "=", r["path"])
    samples = [sample(r["path"]) for r in real_routes()]
    for t in tokens:
        if t.startswith("/"):
            path = re.sub(r"@\d+", "x0", t)
            assert any(s.startswith(path) for s in samples), \
                "routes.dict token %r leads to no route" % t


def test_every_route_is_served():
    """Each route, asked of a server holding one profile, answers as itself,
    never as a path that names no route: the table the binary prints is the
    one it serves."""
    root = e2e.tmpdir()
    os.makedirs(os.path.join(root, "profiles"))
    with open(os.path.join(root, "profiles", "one.trace.json"), "w") as f:
        json.dump({"traceEvents": [{"name": "k", "ph": "X", "ts": 1, "dur": 2, "pid": 1,
                                    "tid": 1}]}, f)
    port = e2e.free_port()
    proc = subprocess.Popen([e2e.BIN, "--profile-dir=" + os.path.join(root, "profiles"),
                             "--db=" + os.path.join(root, "index.sqlite"), "--port=%d" % port,
                             "--perfetto-port=0", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        e2e.wait_indexed(port)
        for r in real_routes():
            if r["path"] == "/api/stream":
                continue  # never ends; test_live.py reads it
            path = re.sub(r"\{\w+\*\}", "nope", r["path"].replace("{id}", "latest"))
            status, _, body = e2e.http_get(port, path)
            error = str(json.loads(body).get("error") or "") if body[:1] == b"{" else ""
            assert "no such API route" not in error and "no TensorBoard route" not in error, \
                "%s (%s) answered %d %s" % (path, r["path"], status, error)
        status, _, body = e2e.http_get(port, "/api/profiles/latest/nope")
        assert status == 404 and b"no such API route" in body
        status, _, body = e2e.http_get(port, "/data/plugin/profile/nope")
        assert status == 404 and b"no TensorBoard route nope" in body
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    if not e2e.BIN or not os.path.exists(e2e.BIN):
        print("SKIP: XPV_BIN is not set")
        sys.exit(e2e.SKIP)
    e2e.main([test_doc_table_is_generated, test_doc_answers_one_per_route,
              test_js_paths_are_routes, test_snapshot_asks_every_route,
              test_fuzz_dict_covers_every_route, test_every_route_is_served])
