#!/usr/bin/env python3
"""index_tables.py [--across-versions] A B: says whether two indexes hold
the same rows in every table (block ids included), leaving out the columns
that record when and how long indexing took. Exits 1 when they differ.

--across-versions compares indexes of different schema versions (an old
binary's against this one's): only the columns both have, strings as the
set of values each profile interned (the ids depend on what else a version
interns), blocks without their data (whose encoding changed: their
time range, event count, busy time and kinds must still agree), and
kernel_stats with each device's rows, which newer indexes pack into
kernel_device_stats. For each
table that differs it names the shared columns that hold different values,
so a reader can tell an intended change (a new step breakdown) from a lost
row.

Blocks are compared by their payload as once inflated (the zstd program
inflates the frames), so two indexes whose blocks were packed at another
level or kept raw still compare equal when they hold the same events."""
import hashlib
import math
import sqlite3
import struct
import subprocess
import sys
import tempfile

TABLES = ["profiles", "strings", "tracks", "blocks", "kernel_stats", "kernel_device_stats", "steps"]
VOLATILE = {"indexed_at", "index_seconds"}
KERNEL_COLUMNS = ("profile_id", "kind", "device", "name", "seq", "category", "count", "total_ps",
                  "min_ps", "max_ps", "median_ps", "stddev_ps", "percent", "grid", "block",
                  "registers_per_thread", "shared_memory_bytes", "occupancy_pct", "op_id",
                  "shapes", "top_rank")


class Blob:
    """A reader of the index's packed blobs (LEB128 varints, zigzag signed,
    doubles as 8 bytes little-endian, texts as length + bytes), of its own:
    the tests check the C readers against it."""

    def __init__(self, blob):
        self.blob, self.at = blob, 0

    def byte(self):
        self.at += 1
        return self.blob[self.at - 1]

    def varint(self):
        v = shift = 0
        while True:
            c = self.byte()
            v |= (c & 0x7F) << shift
            shift += 7
            if c < 0x80:
                return v

    def zigzag(self):
        u = self.varint()
        return (u >> 1) ^ -(u & 1)

    def real(self):
        v = struct.unpack_from("<d", self.blob, self.at)[0]
        self.at += 8
        return None if math.isnan(v) else v  # SQLite keeps a NaN as NULL

    def text(self):
        n = self.varint()
        self.at += n
        return bytes(self.blob[self.at - n:self.at]).decode(errors="surrogateescape")

    def done(self, what):
        assert self.at == len(self.blob), "%s: %d bytes left over" % (what, len(self.blob) - self.at)


def device_rows(blob):
    """A kernel_device_stats blob's rows, decoded from its layout
    (store/kernel_device_stats.c): tuples of kernel_stats' columns from name
    on (KERNEL_COLUMNS[3:])."""
    b = Blob(blob)
    assert b.byte() == 1, "kernel_device_stats blob version %d" % blob[0]
    rows = []
    for _ in range(b.varint()):
        known, texts = b.varint(), b.byte()
        r = {"name": b.text()}
        for col in ("seq", "count", "total_ps", "min_ps", "max_ps"):
            r[col] = b.zigzag()
        r["median_ps"], r["stddev_ps"] = b.real(), b.real()
        r["percent"] = b.real() if known & 1 << 6 else None
        for bit, col in ((1, "category"), (2, "grid"), (4, "block")):
            r[col] = b.text() if texts & bit else None
        for bit, col, get in ((7, "registers_per_thread", b.zigzag),
                              (8, "shared_memory_bytes", b.zigzag), (9, "occupancy_pct", b.real),
                              (11, "op_id", b.zigzag), (10, "shapes", b.zigzag),
                              (12, "top_rank", b.zigzag)):
            r[col] = get() if known & 1 << bit else None
        rows.append(tuple(r[c] for c in KERNEL_COLUMNS[3:]))
    b.done("kernel_device_stats blob")
    return rows


def chunk_strings(first_id, blob):
    """A `strings` chunk's (id, value) pairs, decoded from its layout
    (store/string_chunks.c)."""
    b = Blob(blob)
    assert b.byte() == 1, "string chunk version %d" % blob[0]
    out = [(first_id + i, b.text()) for i in range(b.varint())]
    b.done("string chunk")
    return out


def profile_strings(db, profile_id):
    """One profile's strings as {id: value}, however the index's version
    stores them (packed in chunks since schema 17)."""
    return {i: v for (p, i, v) in all_string_rows(db, profile_id)}


def all_string_rows(db, profile_id=None):
    """The index's strings as (profile_id, id, value) rows, unpacked from
    their chunks where the index packs them."""
    where, args = (" WHERE profile_id=?", (profile_id,)) if profile_id is not None else ("", ())
    if "data" not in [r[1] for r in db.execute("PRAGMA table_info(strings)")]:
        return db.execute("SELECT profile_id, id, value FROM strings" + where, args).fetchall()
    return [(p,) + s for p, first, blob in
            db.execute("SELECT profile_id, first_id, data FROM strings" + where, args)
            for s in chunk_strings(first, blob)]


def all_kernel_rows(db):
    """kernel_stats' rows with each device's unpacked from kernel_device_stats,
    where the index has it (indexes before it held them in kernel_stats)."""
    rows = db.execute("SELECT * FROM kernel_stats").fetchall()
    if db.execute("SELECT 1 FROM sqlite_master WHERE name='kernel_device_stats'").fetchone():
        for pid, kind, dev, blob in db.execute("SELECT * FROM kernel_device_stats"):
            rows += [(pid, kind, dev) + r for r in device_rows(blob)]
    return rows


def block_payloads(db):
    """{block id: sha1 of its payload as once inflated}, from the blob layout
    (store/event_store.c): version 2 holds the payload; version 3 its byte
    count, the chunk count k, k (chunk, frame) size pairs, then k zstd
    frames. The frames of every block go to a temporary file, which the
    zstd program inflates in one run; its output is cut back into blocks by
    their byte counts as it streams, so memory holds one block at a time."""
    plan = []
    with tempfile.TemporaryFile() as frames:
        for bid, blob in db.execute("SELECT id, data FROM blocks ORDER BY id"):
            b = Blob(blob)
            version = b.byte()
            b.varint()  # event count
            if version == 2:
                plan.append((bid, None, hashlib.sha1(blob[b.at:]).hexdigest()))
                continue
            assert version == 3, "block %d: blob version %d" % (bid, version)
            raw, k = b.varint(), b.varint()
            for _ in range(2 * k):
                b.varint()
            frames.write(blob[b.at:])
            plan.append((bid, raw, None))
        frames.seek(0)
        zstd = subprocess.Popen(["zstd", "-dcq"], stdin=frames, stdout=subprocess.PIPE)
        out = {}
        for bid, raw, digest in plan:
            if raw is not None:
                payload = zstd.stdout.read(raw)
                assert len(payload) == raw, "block %d: %d of %d bytes inflated" % (
                    bid, len(payload), raw)
                digest = hashlib.sha1(payload).hexdigest()
            out[bid] = digest
        left = zstd.stdout.read()
        assert zstd.wait() == 0 and not left, "the frames inflate to more than the blocks say"
    return out


def exact_rows(db, table, cols):
    """ordered_rows, with a block's data as the digest of its payload."""
    if table != "blocks":
        return ordered_rows(db, table, cols)
    rows = ordered_rows(db, table, [c if c != "data" else "NULL" for c in cols])
    payloads, i_id, i_data = block_payloads(db), cols.index("id"), cols.index("data")
    return [r[:i_data] + (payloads[r[i_id]],) + r[i_data + 1:] for r in rows]


def columns(db, table):
    return [r[1] for r in db.execute("PRAGMA table_info(%s)" % table) if r[1] not in VOLATILE]


def rows(path, table):
    """Every row of table in path, the volatile columns left out (tests use it)."""
    db = sqlite3.connect(path)
    out = ordered_rows(db, table, columns(db, table))
    db.close()
    return out


def ordered_rows(db, table, cols):
    try:  # insertion order where the table has one, else its key order
        db.execute("SELECT rowid FROM %s LIMIT 1" % table)
        order = "rowid"
    except sqlite3.OperationalError:
        order = ", ".join(str(i + 1) for i in range(len(cols)))
    return db.execute("SELECT %s FROM %s ORDER BY %s" % (", ".join(cols), table, order)).fetchall()


def exact(a, b):
    da, db = sqlite3.connect(a), sqlite3.connect(b)
    same = True
    for t in TABLES:
        ra, rb = exact_rows(da, t, columns(da, t)), exact_rows(db, t, columns(db, t))
        same &= ra == rb
        print("  %-19s %9d rows  %s" % (t, len(ra), "same" if ra == rb else "DIFFERENT"))
    return same


def shared_columns(da, db, table):
    cb = set(columns(db, table))
    cols = [c for c in columns(da, table) if c in cb]
    if table == "strings":
        cols = ["profile_id", "value"]  # unpacked (all_string_rows); ids aside
    if table == "blocks":
        cols = [c for c in cols if c != "data"]
    return cols


def differing(ra, rb, cols):
    """The columns whose values differ between rows paired in order."""
    return [c for i, c in enumerate(cols) if any(x[i] != y[i] for x, y in zip(ra, rb))]


def version_rows(db, table, cols):
    """ordered_rows, but kernel_stats with each device's rows and strings
    one row per value, however the version stores them (all_kernel_rows,
    all_string_rows)."""
    if table == "strings":
        return [(p, v) for p, _, v in all_string_rows(db)]
    if table != "kernel_stats":
        return ordered_rows(db, table, cols)
    have = [r[1] for r in db.execute("PRAGMA table_info(kernel_stats)")]
    at = [have.index(c) for c in cols]
    return [tuple(row[i] for i in at) for row in all_kernel_rows(db)]


def across_versions(a, b):
    da, db = sqlite3.connect(a), sqlite3.connect(b)
    same = True
    for t in TABLES:
        if t == "kernel_device_stats":
            continue  # unpacked into kernel_stats: older versions have no such table
        cols = shared_columns(da, db, t)
        ra, rb = version_rows(da, t, cols), version_rows(db, t, cols)
        if t == "strings":
            sa, sb = set(ra), set(rb)
            ra, rb = sorted(sa), sorted(sb)
            note = "values per profile"
            if sa < sb:  # what B interns beyond A's is no lost row
                note += "; B adds %d" % (len(sb) - len(sa))
                rb = ra
        else:
            ra, rb = sorted(ra, key=repr), sorted(rb, key=repr)
            left = len(set(columns(da, t)) ^ set(columns(db, t)))
            note = "%d shared columns" % len(cols) + (", %d not shared" % left if left else "")
            note += ", data not compared" if t == "blocks" else ""
        ok = ra == rb
        same &= ok
        if ok:
            verdict = "same"
        elif len(ra) != len(rb):
            verdict = "DIFFERENT: %d rows against %d" % (len(ra), len(rb))
        else:
            verdict = "DIFFERENT in " + ", ".join(differing(ra, rb, cols))
        print("  %-19s %9d rows  %s (%s)" % (t, len(ra), verdict, note))
    return same


def main(argv):
    across = "--across-versions" in argv
    a, b = [x for x in argv if x != "--across-versions"]
    same = across_versions(a, b) if across else exact(a, b)
    print("%s and %s: %s" % (a, b, "equal" if same else "NOT EQUAL"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
