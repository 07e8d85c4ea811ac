"""Mutation fuzzing of every reader through the real binary.

Takes the shared fixtures, damages copies of them (byte flips, truncations,
insertions, cut-outs; gzip kept or stripped), indexes each with
`xprof-view --list-only`, and reports any run that crashed, or that
AddressSanitizer or UBSan complained about. Build the binary with
-DXPV_SANITIZE=ON for the sanitizer checks. Not part of ctest: it takes
minutes and its inputs are random.

usage: python3 tests/fuzz/fuzz_readers.py BINARY [RUNS=300] [SEED=1] [FIXTURES=../shared/fixtures]
Inputs that fail are kept as /tmp/xpv-fuzz-<seed>-<run>.<name>.
"""
import gzip
import os
import random
import shutil
import subprocess
import sys
import tempfile


def sources(fixtures):
    out = []
    for sub in ("xplane", "chrome-json", "nsys"):
        folder = os.path.join(fixtures, sub)
        out += [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if not n.endswith(".nsys-rep")]
    return out


def mutate(rnd, data):
    op = rnd.randrange(4)
    if op == 0:
        for _ in range(rnd.randint(1, 20)):
            data[rnd.randrange(len(data))] = rnd.randrange(256)
    elif op == 1:
        del data[rnd.randrange(len(data)):]
    elif op == 2:
        p = rnd.randrange(len(data))
        data[p:p] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 64)))
    else:
        p = rnd.randrange(len(data))
        del data[p:p + rnd.randint(1, 4096)]
    return data


def main():
    binary = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    here = os.path.dirname(os.path.abspath(__file__))
    fixtures = sys.argv[4] if len(sys.argv) > 4 else os.path.join(here, "..", "..", "..", "shared", "fixtures")
    rnd = random.Random(seed)
    srcs = sources(fixtures)
    work = tempfile.mkdtemp(prefix="xpv-fuzz-")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    failures = 0
    for i in range(runs):
        src = rnd.choice(srcs)
        data = bytearray(open(src, "rb").read())
        name = os.path.basename(src)
        if data[:2] == b"\x1f\x8b" and rnd.random() < 0.7:
            data = bytearray(gzip.decompress(bytes(data)))
            name = name[:-3] if name.endswith(".gz") else name
        data = mutate(rnd, data)
        folder = os.path.join(work, "p%d" % i)
        os.makedirs(folder)
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(bytes(data))
        r = subprocess.run([binary, "--profile-dir=" + folder, "--list-only", "--json", "--quiet",
                            "--db=" + os.path.join(work, "i%d.sqlite" % i)],
                           capture_output=True, text=True, timeout=300, env=env)
        if r.returncode not in (0, 1) or "Sanitizer" in r.stderr or "runtime error" in r.stderr:
            failures += 1
            keep = "/tmp/xpv-fuzz-%d-%d.%s" % (seed, i, name)
            shutil.copyfile(path, keep)
            print("FAIL run %d (from %s, exit %d), input kept as %s\n%s" %
                  (i, name, r.returncode, keep, r.stderr[-3000:]))
        shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (runs - failures, failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
