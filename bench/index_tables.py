#!/usr/bin/env python3
"""index_tables.py A B: says whether two indexes hold the same rows in every
table (block ids included), leaving out the columns that record when and
how long indexing took. Exits 1 when they differ."""
import sqlite3
import sys

TABLES = ["profiles", "strings", "tracks", "blocks", "kernel_stats", "steps"]
VOLATILE = {"indexed_at", "index_seconds"}


def rows(path, table):
    db = sqlite3.connect(path)
    cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % table) if r[1] not in VOLATILE]
    try:  # insertion order where the table has one, else its key order
        db.execute("SELECT rowid FROM %s LIMIT 1" % table)
        order = "rowid"
    except sqlite3.OperationalError:
        order = ", ".join(str(i + 1) for i in range(len(cols)))
    out = db.execute("SELECT %s FROM %s ORDER BY %s" % (", ".join(cols), table, order)).fetchall()
    db.close()
    return out


def main(a, b):
    same = True
    for t in TABLES:
        ra, rb = rows(a, t), rows(b, t)
        same &= ra == rb
        print("  %-13s %9d rows  %s" % (t, len(ra), "same" if ra == rb else "DIFFERENT"))
    print("%s and %s: %s" % (a, b, "equal" if same else "NOT EQUAL"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
