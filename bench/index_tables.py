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
row."""
import math
import sqlite3
import struct
import sys

TABLES = ["profiles", "strings", "tracks", "blocks", "kernel_stats", "kernel_device_stats", "steps"]
VOLATILE = {"indexed_at", "index_seconds"}
KERNEL_COLUMNS = ("profile_id", "kind", "device", "name", "seq", "category", "count", "total_ps",
                  "min_ps", "max_ps", "median_ps", "stddev_ps", "percent", "grid", "block",
                  "registers_per_thread", "shared_memory_bytes", "occupancy_pct", "op_id",
                  "shapes", "top_rank")


def device_rows(blob):
    """A kernel_device_stats blob's rows, decoded from its layout
    (store/kernel_device_stats.c) by a reader of its own: tuples of
    kernel_stats' columns from name on (KERNEL_COLUMNS[3:])."""
    at = 0

    def varint():
        nonlocal at
        v = shift = 0
        while True:
            c = blob[at]
            at += 1
            v |= (c & 0x7F) << shift
            shift += 7
            if c < 0x80:
                return v

    def zigzag():
        u = varint()
        return (u >> 1) ^ -(u & 1)

    def real():
        nonlocal at
        v = struct.unpack_from("<d", blob, at)[0]
        at += 8
        return None if math.isnan(v) else v  # SQLite keeps a NaN as NULL

    def text():
        nonlocal at
        n = varint()
        at += n
        return bytes(blob[at - n:at]).decode()

    assert blob[0] == 1, "kernel_device_stats blob version %d" % blob[0]
    at = 1
    rows = []
    for _ in range(varint()):
        known, texts = varint(), blob[at]
        at += 1
        r = {"name": text()}
        for col in ("seq", "count", "total_ps", "min_ps", "max_ps"):
            r[col] = zigzag()
        r["median_ps"], r["stddev_ps"] = real(), real()
        r["percent"] = real() if known & 1 << 6 else None
        for bit, col in ((1, "category"), (2, "grid"), (4, "block")):
            r[col] = text() if texts & bit else None
        for bit, col, get in ((7, "registers_per_thread", zigzag), (8, "shared_memory_bytes", zigzag),
                              (9, "occupancy_pct", real), (11, "op_id", zigzag),
                              (10, "shapes", zigzag), (12, "top_rank", zigzag)):
            r[col] = get() if known & 1 << bit else None
        rows.append(tuple(r[c] for c in KERNEL_COLUMNS[3:]))
    assert at == len(blob), "kernel_device_stats blob: %d bytes left over" % (len(blob) - at)
    return rows


def all_kernel_rows(db):
    """kernel_stats' rows with each device's unpacked from kernel_device_stats,
    where the index has it (indexes before it held them in kernel_stats)."""
    rows = db.execute("SELECT * FROM kernel_stats").fetchall()
    if db.execute("SELECT 1 FROM sqlite_master WHERE name='kernel_device_stats'").fetchone():
        for pid, kind, dev, blob in db.execute("SELECT * FROM kernel_device_stats"):
            rows += [(pid, kind, dev) + r for r in device_rows(blob)]
    return rows


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
        ra, rb = ordered_rows(da, t, columns(da, t)), ordered_rows(db, t, columns(db, t))
        same &= ra == rb
        print("  %-19s %9d rows  %s" % (t, len(ra), "same" if ra == rb else "DIFFERENT"))
    return same


def shared_columns(da, db, table):
    cb = set(columns(db, table))
    cols = [c for c in columns(da, table) if c in cb]
    if table == "strings":
        cols = [c for c in cols if c != "id"]
    if table == "blocks":
        cols = [c for c in cols if c != "data"]
    return cols


def differing(ra, rb, cols):
    """The columns whose values differ between rows paired in order."""
    return [c for i, c in enumerate(cols) if any(x[i] != y[i] for x, y in zip(ra, rb))]


def version_rows(db, table, cols):
    """ordered_rows, but kernel_stats with each device's rows however the
    version stores them (all_kernel_rows)."""
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
