#!/usr/bin/env python3
"""index_tables.py [--across-versions] A B: says whether two indexes hold
the same rows in every table (block ids included), leaving out the columns
that record when and how long indexing took. Exits 1 when they differ.

--across-versions compares indexes of different schema versions (an old
binary's against this one's): only the columns both have, strings as the
set of values each profile interned (the ids depend on what else a version
interns), and blocks without their data (whose encoding changed: their
time range, event count, busy time and kinds must still agree). For each
table that differs it names the shared columns that hold different values,
so a reader can tell an intended change (a new step breakdown) from a lost
row."""
import sqlite3
import sys

TABLES = ["profiles", "strings", "tracks", "blocks", "kernel_stats", "steps"]
VOLATILE = {"indexed_at", "index_seconds"}


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
        print("  %-13s %9d rows  %s" % (t, len(ra), "same" if ra == rb else "DIFFERENT"))
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


def across_versions(a, b):
    da, db = sqlite3.connect(a), sqlite3.connect(b)
    same = True
    for t in TABLES:
        cols = shared_columns(da, db, t)
        ra, rb = ordered_rows(da, t, cols), ordered_rows(db, t, cols)
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
        print("  %-13s %9d rows  %s (%s)" % (t, len(ra), verdict, note))
    return same


def main(argv):
    across = "--across-versions" in argv
    a, b = [x for x in argv if x != "--across-versions"]
    same = across_versions(a, b) if across else exact(a, b)
    print("%s and %s: %s" % (a, b, "equal" if same else "NOT EQUAL"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
