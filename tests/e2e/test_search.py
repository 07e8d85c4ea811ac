"""End-to-end test of whole-profile search (GET /api/profiles/{id}/search):
matches anywhere in the profile, counted and ordered exactly as an
independent reading of the raw fixture gives them, with limits, offsets
(paging through every match), truncation, case-insensitivity and bad
requests."""
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xpv_e2e import BIN, FIXTURES, need_fixtures, tmpdir, main, wait_indexed  # noqa: E402

FIXTURE = "pytorch-h100-bert-small.json.gz"
STORED_ONCE = set("XiICbnstfB")  # M becomes track names; E/e close a B/b already counted


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class Server:
    def __enter__(self):
        root = tmpdir()
        shutil.copyfile(os.path.join(FIXTURES, "chrome-json", FIXTURE), os.path.join(root, FIXTURE))
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--profile-dir=" + root, "--port=%d" % self.port, "--perfetto-port=0",
             "--db=" + os.path.join(tmpdir(), "i.sqlite"), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_indexed(self.port, timeout=60)
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def raw_matches(needle):
    """(ts in ns, name) of stored events whose name holds needle, from the raw file."""
    with gzip.open(os.path.join(FIXTURES, "chrome-json", FIXTURE), "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for e in events:
        if e.get("ph") in STORED_ONCE and needle.lower() in str(e.get("name", "")).lower():
            out.append((int(Decimal(e["ts"]) * 1000), e["name"]))
    return sorted(out)


def test_counts_and_order_match_the_raw_file():
    want = raw_matches("gemm")
    assert len(want) > 5
    with Server() as s:
        status, ans = get(s.port, "/api/profiles/latest/search?q=GEMM&limit=1000")
        assert status == 200, ans
        assert ans["match_count"] == len(want), (ans["match_count"], len(want))
        assert ans["truncated"] is False
        got = [(int(Decimal(str(m["start_us"])) * 1000), m["name"]) for m in ans["matches"]]
        assert got == want
        assert all(":" in m["ref"] for m in ans["matches"])
        # every ref opens the same event in the details answer
        m = ans["matches"][len(want) // 2]
        status, detail = get(s.port, "/api/profiles/latest/event?ref=" + m["ref"])
        assert status == 200 and detail["name"] == m["name"] and detail["start_us"] == m["start_us"]


def test_limit_keeps_the_earliest():
    want = raw_matches("gemm")
    with Server() as s:
        status, ans = get(s.port, "/api/profiles/latest/search?q=gemm&limit=3")
        assert status == 200
        assert ans["match_count"] == len(want) and ans["truncated"] is True
        got = [int(Decimal(str(m["start_us"])) * 1000) for m in ans["matches"]]
        assert got == [t for t, _ in want[:3]]


def test_offset_pages_through_every_match():
    """Pages of 3 from offset 0, 3, 6, ... put together are every match, in
    the raw file's time order, each once; truncated is false on the last."""
    want = raw_matches("gemm")
    assert len(want) > 7
    with Server() as s:
        got, offset, last = [], 0, None
        while offset < len(want) + 3:
            status, ans = get(s.port, "/api/profiles/latest/search?q=gemm&limit=3&offset=%d" % offset)
            assert status == 200 and ans["offset"] == offset, ans
            assert ans["match_count"] == len(want)
            got += [(int(Decimal(str(m["start_us"])) * 1000), m["name"], m["ref"])
                    for m in ans["matches"]]
            assert ans["truncated"] is (offset + 3 < len(want)), (offset, ans["truncated"])
            last = ans
            offset += 3
        assert [(t, n) for t, n, _ in got] == want
        assert len({r for _, _, r in got}) == len(want), "a match repeated across pages"
        assert last["matches"] == []
        status, ans = get(s.port, "/api/profiles/latest/search?q=gemm&limit=1&offset=%d" % (len(want) - 1))
        assert [int(Decimal(str(m["start_us"])) * 1000) for m in ans["matches"]] == [want[-1][0]]


def test_no_match_and_bad_requests():
    with Server() as s:
        status, ans = get(s.port, "/api/profiles/latest/search?q=no-such-event-name")
        assert status == 200 and ans["match_count"] == 0 and ans["matches"] == []
        for bad in ("q=", "q=gemm&limit=0", "q=gemm&limit=99999", "q=gemm&limit=x",
                    "q=gemm&offset=-1", "q=gemm&offset=x", "q=gemm&offset=2000001"):
            status, ans = get(s.port, "/api/profiles/latest/search?" + bad)
            assert status == 400 and "error" in ans, (bad, status, ans)
        # a name of any length the URL carries is searched (kernel names run long)
        status, ans = get(s.port, "/api/profiles/latest/search?q=" + "a" * 3000)
        assert status == 200 and ans["match_count"] == 0, (status, ans)
        status, ans = get(s.port, "/api/profiles/0000000000000001/search?q=gemm")
        assert status == 404 and "error" in ans


if __name__ == "__main__":
    need_fixtures()
    main([test_counts_and_order_match_the_raw_file, test_limit_keeps_the_earliest,
          test_offset_pages_through_every_match, test_no_match_and_bad_requests])
