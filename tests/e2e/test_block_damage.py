#!/usr/bin/env python3
"""test_block_damage.py: a damaged compressed event block under a running
server (issue 25). The blocks of one host's profile are damaged on disk
through Python's sqlite3 (a flipped byte in the zstd frames, the kind of
damage SQLite's own checks cannot see); a query that reads one answers a
503 naming that profile, never a crash or a bare 500; the server checks
the profile's blocks, indexes that profile alone again, and the same query
then answers exactly as before the damage. The other host's profile
answers as before throughout. The same for a device's packed kernel
rows. Needs no fixtures."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpv_e2e as e2e  # noqa: E402


def get_json(port, path):
    status, ctype, body = e2e.http_get(port, path, timeout=60)
    assert ctype.startswith("application/json"), (path, status, ctype)
    return status, json.loads(body)


def signed(hex_id):
    v = int(hex_id, 16)
    return v - (1 << 64) if v >= 1 << 63 else v


def largest_compressed_block(db, pid):
    """(id, track, t_min, t_max) of the profile's largest zstd (version 3) block."""
    with sqlite3.connect(db) as c:
        row = c.execute("SELECT id, track, t_min, t_max FROM blocks WHERE profile_id=? AND"
                        " substr(data, 1, 1)=x'03' ORDER BY n DESC, id LIMIT 1",
                        (signed(pid),)).fetchone()
    assert row, "no compressed block to damage"
    return row


def damage_blocks(db, pid):
    """Flips a byte in the middle and the last byte (the frame's checksum)
    of every compressed block of the profile; returns how many."""
    c = sqlite3.connect(db, timeout=30)
    rows = c.execute("SELECT id, data FROM blocks WHERE profile_id=? AND"
                     " substr(data, 1, 1)=x'03'", (signed(pid),)).fetchall()
    for block_id, data in rows:
        b = bytearray(data)
        b[len(b) // 2] ^= 0xFF
        b[-1] ^= 0xFF
        c.execute("UPDATE blocks SET data=? WHERE id=?", (bytes(b), block_id))
    c.commit()
    c.close()
    return len(rows)


REF = re.compile(r"^[0-9]+:[0-9]+$")


def without_refs(v):
    """The answer with event refs ("<block>:<index>") blanked: a profile
    indexed again stores its blocks under new ids."""
    if isinstance(v, dict):
        return {k: without_refs(x) for k, x in v.items()}
    if isinstance(v, list):
        return [without_refs(x) for x in v]
    return "ref" if isinstance(v, str) and REF.match(v) else v


def answers(port, pid, window):
    """The answers compared before and after: the events of the window,
    the whole-profile events, kernels and search."""
    out = {}
    for name, path in (("window", window), ("events", "/events"),
                       ("kernels", "/kernels?limit=1000"), ("search", "/search?q=fusion")):
        status, body = get_json(port, "/api/profiles/%s%s" % (pid, path))
        out[name] = (status, without_refs(body))
    return out


def serve_generated(*gen_args):
    """A server on a fresh index of two generated JAX hosts (xplanes only):
    (index path, process, port, its log's path, the open log)."""
    folder, db = e2e.tmpdir(), os.path.join(e2e.tmpdir(), "i.sqlite")
    subprocess.run([e2e.GEN, "--out", folder, "--kind", "jax", "--hosts", "2", "--size", "1MB",
                    "--no-json"] + list(gen_args), check=True, capture_output=True)
    log_path = os.path.join(e2e.tmpdir(), "log")
    log = open(log_path, "w")
    port = e2e.free_port()
    proc = subprocess.Popen([e2e.BIN, "--profile-dir", folder, "--port", str(port),
                             "--perfetto-port", "0", "--db", db],
                            stdout=subprocess.DEVNULL, stderr=log)
    return db, proc, port, log_path, log


def the_two_hosts(port):
    """Once serve_generated's two hosts are indexed, their profile ids: the
    one to damage, then the other."""
    e2e.wait_indexed(port, 2)
    status, profiles = get_json(port, "/api/profiles")
    assert status == 200 and len(profiles["profiles"]) == 2, profiles
    return sorted(p["id"] for p in profiles["profiles"])


def stop(proc, log, log_path):
    """Stops serve_generated's server; its log, which must hold nothing
    from the sanitizers."""
    proc.terminate()
    proc.wait(timeout=30)
    log.close()
    text = open(log_path).read()
    assert "AddressSanitizer" not in text and "runtime error" not in text, text
    return text


def test_damaged_block_rebuilds_that_profile():
    db, proc, port, log_path, log = serve_generated("--steps", "4")
    try:
        damaged, other = the_two_hosts(port)
        _, track, t_min, t_max = largest_compressed_block(db, damaged)
        window = "/events?start_us=%d&end_us=%d&tracks=%d&resolution=4000" % (
            t_min // 1000, t_max // 1000 + 1, track)
        before = answers(port, damaged, window)
        assert all(s == 200 for s, _ in before.values()), before
        assert before["window"][1]["tracks"], before["window"]
        other_before = answers(port, other, "/events")

        assert damage_blocks(db, damaged) > 0
        status, body = get_json(port, "/api/profiles/%s%s" % (damaged, window))
        assert status == 503, (status, body)
        assert damaged in body["error"] and "is damaged" in body["error"], body
        assert answers(port, other, "/events") == other_before

        # Meanwhile: 503 while the damage is there, then 200s (pending, then
        # the profile indexed again); never a 500 or a dropped connection.
        seen = set()
        deadline = time.time() + 60
        while True:
            now = answers(port, damaged, window)
            seen |= {s for s, _ in now.values()}
            if now == before:
                break
            if time.time() > deadline:
                differ = [k for k in now if now[k] != before[k]]
                raise AssertionError(("not rebuilt", seen, differ,
                                      [str(now[k])[:300] for k in differ]))
            assert answers(port, other, "/events") == other_before
            time.sleep(0.2)
        assert seen <= {200, 503}, seen
        with sqlite3.connect(db) as c:  # the rebuilt blocks are sound again
            n = c.execute("SELECT count(*) FROM blocks WHERE profile_id=?",
                          (signed(damaged),)).fetchone()[0]
        assert n > 0
        status, p = get_json(port, "/api/profiles/" + damaged)
        assert status == 200 and p["status"] == "ok", p
        assert answers(port, other, "/events") == other_before
        assert proc.poll() is None
    finally:
        text = stop(proc, log, log_path)
    assert "profile %s: event block" % damaged in text and "indexing it again" in text, text


def test_damaged_kernel_rows_rebuild_that_profile():
    """A device's packed kernel rows (kernel_device_stats) cut short on
    disk: that device's kernel table answers a 503 naming the profile, the
    server finds the damage, indexes the profile again, and the table then
    answers as before; the other host's answers never changed."""
    db, proc, port, log_path, log = serve_generated("--steps", "3", "--devices", "2")
    try:
        damaged, other = the_two_hosts(port)
        device = "/api/profiles/%s/kernels?kind=kernel&device=1&limit=1000" % damaged
        other_device = "/api/profiles/%s/kernels?kind=kernel&device=1&limit=1000" % other
        steps = "/api/profiles/%s/steps" % damaged  # reads no kernel rows
        before, other_before = get_json(port, device), get_json(port, other_device)
        steps_before = get_json(port, steps)
        assert before[0] == 200 and before[1]["kernels"], before
        assert other_before[0] == 200 and other_before[1]["kernels"], other_before
        with sqlite3.connect(db, timeout=30) as c:
            n = c.execute("UPDATE kernel_device_stats SET data=substr(data, 1, length(data) - 3)"
                          " WHERE profile_id=?", (signed(damaged),)).rowcount
        assert n > 0
        assert get_json(port, steps) == steps_before
        status, body = get_json(port, device)
        assert status == 503 and damaged in body["error"] and "is damaged" in body["error"], body
        assert get_json(port, other_device) == other_before
        seen, deadline = set(), time.time() + 60
        while True:
            now = get_json(port, device)
            seen.add(now[0])
            if now == before:
                break
            assert time.time() < deadline, ("not rebuilt", seen, str(now)[:300])
            time.sleep(0.2)
        assert seen <= {200, 503}, seen
        assert proc.poll() is None
    finally:
        text = stop(proc, log, log_path)
    assert "profile %s: kernel row blob is damaged" % damaged in text, text
    assert "indexing it again" in text, text


def test_damaged_strings_rebuild_that_profile():
    """A profile's packed strings (a chunk of `strings`) cut short on disk:
    its events (which read names only through the timeline's lookups) and
    its search answer a 503 naming the profile, the server finds the
    damage, indexes the profile again, and they then answer as before; the
    other host's answers never changed."""
    db, proc, port, log_path, log = serve_generated("--steps", "3")
    try:
        damaged, other = the_two_hosts(port)
        search = "/api/profiles/%s/search?q=fusion" % damaged
        events = "/api/profiles/%s/events?resolution=2000" % damaged
        other_events = "/api/profiles/%s/events" % other
        before = [get_json(port, search), get_json(port, events)]
        other_before = get_json(port, other_events)
        assert before[0][0] == 200 and before[0][1]["matches"], before[0]
        assert before[1][0] == 200 and before[1][1]["tracks"], str(before[1])[:300]
        with sqlite3.connect(db, timeout=30) as c:
            n = c.execute("UPDATE strings SET data=substr(data, 1, length(data) - 1)"
                          " WHERE profile_id=?", (signed(damaged),)).rowcount
        assert n > 0
        status, body = get_json(port, events)  # first: it alone must report the damage
        assert status == 503 and damaged in body["error"] and "is damaged" in body["error"], body
        assert get_json(port, other_events) == other_before
        seen, deadline = set(), time.time() + 60
        while True:
            now = [get_json(port, search), get_json(port, events)]
            seen |= {s for s, _ in now}
            if [(s, without_refs(b)) for s, b in now] == \
                    [(s, without_refs(b)) for s, b in before]:
                break
            assert time.time() < deadline, ("not rebuilt", seen, str(now)[:300])
            time.sleep(0.2)
        assert seen <= {200, 503}, seen
        assert get_json(port, other_events) == other_before
        assert proc.poll() is None
    finally:
        text = stop(proc, log, log_path)
    assert "profile %s: string chunk is damaged" % damaged in text, text
    assert "indexing it again" in text, text


if __name__ == "__main__":
    e2e.main([test_damaged_block_rebuilds_that_profile,
              test_damaged_kernel_rows_rebuild_that_profile,
              test_damaged_strings_rebuild_that_profile])
