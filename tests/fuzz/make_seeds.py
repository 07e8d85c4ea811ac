"""Seed corpora for scripts/fuzz.sh: small valid inputs of every format.

usage: python3 tests/fuzz/make_seeds.py OUT FIXTURES XPV_GEN [XPROF_VIEW]

Writes OUT/<target>/ for the targets that read profiles: the fixtures
(trace JSON cut down to its first events, so that mutations stay fast;
xplane and nsys files whole), gzip and plain forms, and small profiles from
the generator. FIXTURES may be absent: the generator's seeds remain. With
XPROF_VIEW, also OUT/routes/: one request per row of its route table (every
parameter given), so a route is fuzzed from the day it is added.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse


def put(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def json_head(path, events=150):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        doc["traceEvents"] = doc.get("traceEvents", [])[:events]
    else:
        doc = doc[:events]
    return json.dumps(doc).encode()


def from_fixtures(out, fixtures):
    if not os.path.isdir(fixtures):
        print(f"make_seeds: no fixtures at {fixtures}; generator seeds only", file=sys.stderr)
        return
    cj = os.path.join(fixtures, "chrome-json")
    for n in sorted(os.listdir(cj)):
        data = json_head(os.path.join(cj, n))
        put(f"{out}/chrome_json", n + ".head", data)
        put(f"{out}/gz_input", n + ".head.gz", gzip.compress(data[:20000]))
    for sub, target in (("xplane", "xplane"), ("nsys", "nsys")):
        folder = os.path.join(fixtures, sub)
        for n in sorted(os.listdir(folder)):
            if n.endswith((".pb", ".sqlite")) and os.path.getsize(os.path.join(folder, n)) < 2_000_000:
                shutil.copy(os.path.join(folder, n), f"{out}/{target}/{n}")
                if target == "xplane":  # their metadata planes carry HloProtos
                    shutil.copy(os.path.join(folder, n), f"{out}/hlo_proto/{n}")


def from_generator(out, gen):
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("jax", "pytorch"):
            d = os.path.join(tmp, kind)
            subprocess.run([gen, "--out", d, "--kind", kind, "--steps", "3", "--size", "40KB"],
                           check=True, stdout=subprocess.DEVNULL)
            for root, _, files in os.walk(d):
                for n in files:
                    data = open(os.path.join(root, n), "rb").read()
                    if n.endswith(".xplane.pb"):
                        put(f"{out}/xplane", f"gen-{kind}-{n}", data)
                    elif ".json" in n:
                        raw = gzip.decompress(data) if n.endswith(".gz") else data
                        put(f"{out}/chrome_json", f"gen-{kind}-{n}", raw[:200000])
                        put(f"{out}/gz_input", f"gen-{kind}-{n}.gz", gzip.compress(raw[:20000]))


def sample_value(p):
    """A value the parameter accepts, as far as its kind says."""
    kind = p["type"]
    if kind == "enum":
        return p["choices"][0]
    if kind == "int":
        return str(max(p.get("min", 0), min(p.get("max", 1), 1)))
    if kind == "number" and p["name"].startswith("end"):
        return "2.5"
    return {"number": "1.5", "id": "@0", "list": "0,1", "ref": "0:0"}.get(kind, "x")


def from_routes(out, binary):
    table = json.loads(subprocess.run([binary, "--routes"], check=True, capture_output=True,
                                      text=True).stdout)["routes"]
    for i, r in enumerate(table):
        path = r["path"].replace("{id}", "@0")
        while "{" in path:  # {name*}: any rest of the path
            a, b = path.index("{"), path.index("}")
            path = path[:a] + "x" + path[b + 1:]
        query = "&".join("%s=%s" % (p["name"], urllib.parse.quote(sample_value(p), safe="@,:"))
                         for p in r["params"])
        target = path + ("?" + query if query else "")
        put(f"{out}/routes", "route-%02d" % i,
            f"{r['method']} {target}\nAccept-Encoding: gzip\n".encode())


def main():
    out, fixtures, gen = sys.argv[1:4]
    shutil.rmtree(out, ignore_errors=True)
    for t in ("chrome_json", "xplane", "nsys", "gz_input", "hlo_proto"):
        os.makedirs(f"{out}/{t}", exist_ok=True)
    from_fixtures(out, fixtures)
    from_generator(out, gen)
    if len(sys.argv) > 4:
        from_routes(out, sys.argv[4])
    put(f"{out}/gz_input", "plain.txt", b"not compressed at all\n" * 40)
    for t in sorted(os.listdir(out)):
        print(f"make_seeds: {t}: {len(os.listdir(os.path.join(out, t)))} seeds", file=sys.stderr)


if __name__ == "__main__":
    main()
