"""hlo_protos.py: an independent reading of the compiled modules of an
xplane.pb (the `Hlo Proto` stats of its /host:metadata plane), walking the
protobuf wire format by the field numbers of docs/FORMATS.md, and the names
module_list gives them merged with the modules the device events name."""
import re


def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _fields(b, lo, hi):
    """(field number, wire type, value): an int, or (start, end) of bytes."""
    i = lo
    while i < hi:
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 1:
            v, i = None, i + 8
        elif wire == 5:
            v, i = None, i + 4
        elif wire == 2:
            n, i = _varint(b, i)
            v, i = (i, i + n), i + n
        else:
            raise ValueError("wire type %d at %d" % (wire, i))
        yield num, wire, v


def _text(b, span):
    return b[span[0]:span[1]].decode()


def _map_values(b, span):
    """The value (field 2) of a map entry."""
    for num, wire, v in _fields(b, *span):
        if num == 2 and wire == 2:
            yield v


def metadata_modules(path):
    """[(metadata id, metadata name, HloModule name)] of every event metadata
    of /host:metadata that carries an `Hlo Proto` stat, in file order."""
    out = []
    for mid, mname, b, proto in _proto_spans(path):
        module = None
        for hn, hw, hv in _fields(b, *proto):
            if hn == 1 and hw == 2:  # HloProto.hlo_module
                for qn, qw, qv in _fields(b, *hv):
                    if qn == 1 and qw == 2:  # HloModuleProto.name
                        module = _text(b, qv)
                        break
        out.append((mid, mname, module))
    return out


def _proto_spans(path):
    """(metadata id, metadata name, bytes, (start, end) of the HloProto)."""
    b = open(path, "rb").read()
    for num, wire, plane in _fields(b, 0, len(b)):
        if num != 1 or wire != 2:
            continue
        name, events, stat_names = None, [], {}
        for pn, pw, pv in _fields(b, *plane):
            if pn == 2 and pw == 2:
                name = _text(b, pv)
            elif pn == 4 and pw == 2:
                events.extend(_map_values(b, pv))
            elif pn == 5 and pw == 2:
                for sm in _map_values(b, pv):
                    f = {n: v for n, w, v in _fields(b, *sm)}
                    stat_names[f.get(1, 0)] = _text(b, f[2]) if 2 in f else ""
        if name != "/host:metadata":
            continue
        for em in events:
            f = {}
            for mn, mw, mv in _fields(b, *em):
                if mn == 5 and mw == 2:
                    st = {n: v for n, w, v in _fields(b, *mv)}
                    if stat_names.get(st.get(1, 0)) == "Hlo Proto" and 6 in st:
                        f["proto"] = st[6]
                elif mn in (1, 2):
                    f[mn] = mv
            if "proto" in f:
                yield f.get(1, 0), _text(b, f[2]) if 2 in f else "", b, f["proto"]


def _frame_source(b, index, frame_id):
    """"file:line" of a frame of a StackFrameIndexProto (1-based ids)."""
    parts = {1: [], 2: [], 3: [], 4: []}
    for n, w, v in _fields(b, *index):
        if n in parts and w == 2:
            parts[n].append(v)
    if not 0 < frame_id <= len(parts[4]):
        return None
    frame = {n: v for n, w, v in _fields(b, *parts[4][frame_id - 1])}
    loc_id = frame.get(1, 0)
    if not 0 < loc_id <= len(parts[3]):
        return None
    loc = {n: v for n, w, v in _fields(b, *parts[3][loc_id - 1])}
    file_id = loc.get(1, 0)
    if not 0 < file_id <= len(parts[1]):
        return None
    return "%s:%d" % (_text(b, parts[1][file_id - 1]), loc.get(3, 0))


def instructions(path):
    """{program id as text: {instruction name: (op_name, source)}} of every
    compiled module: metadata.op_name, and source_file:source_line or else
    the innermost frame of the instruction's stack_frame_id."""
    out = {}
    for mid, mname, b, proto in _proto_spans(path):
        m = re.fullmatch(r"([^(]+)\((\d+)\)", mname)
        prog = m.group(2) if m else str(mid)
        index, instrs = None, []
        for hn, hw, hv in _fields(b, *proto):
            if hn != 1 or hw != 2:
                continue
            for qn, qw, qv in _fields(b, *hv):
                if qn == 17 and qw == 2:
                    index = qv
                elif qn == 3 and qw == 2:
                    for cn, cw, cv in _fields(b, *qv):
                        if cn == 2 and cw == 2:
                            instrs.append(cv)
        ops = out.setdefault(prog, {})
        for iv in instrs:
            name, op_name, source, frame = None, None, None, 0
            for n, w, v in _fields(b, *iv):
                if n == 1:
                    name = _text(b, v)
                elif n == 7 and w == 2:
                    md = {mn: mv for mn, mw, mv in _fields(b, *v)}
                    op_name = _text(b, md[2]) if 2 in md else None
                    if 3 in md:
                        source = "%s:%d" % (_text(b, md[3]), md.get(4, 0))
                    frame = md.get(15, 0)
            if source is None and frame and index:
                source = _frame_source(b, index, frame)
            ops[name] = (op_name, source)
    return out


def schedules(path):
    """{program id as text: ({instruction name: (computation id, position)},
    {ids of computations a loop, conditional or call runs})}: each module's
    schedule (HloModuleProto schedule = 7: sequences = 1, a map from a
    computation id, key = 1, to an InstructionSequence, value = 2, whose
    instruction_ids = 1 are in run order)."""
    out = {}
    for mid, mname, b, proto in _proto_spans(path):
        m = re.fullmatch(r"([^(]+)\((\d+)\)", mname)
        names, looped, sequences = {}, set(), []
        for hn, hw, hv in _fields(b, *proto):
            if hn != 1 or hw != 2:
                continue
            for qn, qw, qv in _fields(b, *hv):
                if qn == 7 and qw == 2:
                    sequences = [v for n, w, v in _fields(b, *qv) if n == 1 and w == 2]
                if qn != 3 or qw != 2:
                    continue
                for cn, cw, cv in _fields(b, *qv):
                    if cn != 2 or cw != 2:
                        continue
                    f = {n: v for n, w, v in _fields(b, *cv) if n in (1, 2, 35)}
                    names[f.get(35)] = _text(b, f[1])
                    if _text(b, f[2]) in ("while", "conditional", "call"):
                        looped.update(_ints(b, cv, 38))
        pos = {}
        for entry in sequences:
            f = {n: v for n, w, v in _fields(b, *entry)}
            for k, iid in enumerate(_ints(b, f[2], 1) if 2 in f else []):
                pos[names.get(iid)] = (f.get(1), k)
        out[m.group(2) if m else str(mid)] = (pos, looped)
    return out


def _ints(b, span, num):
    """The values of repeated int field num of the message at span, packed
    or not."""
    vals = []
    for n, w, v in _fields(b, *span):
        if n == num and w == 0:
            vals.append(v)
        elif n == num and w == 2:
            i = v[0]
            while i < v[1]:
                x, i = _varint(b, i)
                vals.append(x)
    return vals


def proto_keys(path):
    """(module name, program id as text) of each compiled module: the
    metadata name "jit_f(79)" split, or else the HloModule name and the
    metadata id."""
    keys = set()
    for mid, mname, module in metadata_modules(path):
        m = re.fullmatch(r"([^(]+)\((\d+)\)", mname)
        keys.add((m.group(1), m.group(2)) if m else (module, str(mid)))
    return keys


def merged(protos, events):
    """{(name, program id or None): (listed name, has a proto)}: the modules
    the events name (keys with program id None when they carry none) merged
    with the protos, an event module without a program id going to the one
    proto of its name."""
    out = {k: ("%s(%s)" % k, True) for k in protos}
    for name, prog in events:
        if (name, prog) in protos:
            continue
        same = [k for k in protos if k[0] == name]
        if prog is None and len(same) == 1:
            continue
        out[(name, prog)] = (name, False)
    return out
