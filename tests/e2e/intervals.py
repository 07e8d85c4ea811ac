"""intervals.py: interval arithmetic on integer [start, end) pairs (ns or
ps) for the end-to-end tests that recompute busy and idle time from the raw
files, apart from the code under test."""


def union(iv):
    out = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(iv):
    return sum(e - s for s, e in iv)


def clip(iv, w0, w1):
    return [(max(s, w0), min(e, w1)) for s, e in iv if min(e, w1) > max(s, w0)]


def minus(a, b):
    """Length of union a outside union b (both already unions)."""
    total = 0
    for s, e in a:
        total += e - s - sum(max(0, min(e, be) - max(s, bs)) for bs, be in b)
    return total
