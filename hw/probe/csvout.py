"""Sample files in the format `llmp fit` reads (docs/calibration.md, "Sample files").

  OUT/operator/KERNEL_DTYPE.csv            kernel form: the kernel's columns (grid.KERNEL_COLUMNS),
                                           F_dur(us) and, but for adam, B_dur(us)
  OUT/nccl/KIND_fp16_NODES_GPUSPERNODE.csv shape,nodes,GPUsPerNode,dur(us)

Every file starts with `# key: value` comment lines (the provenance: GPU, driver, library
versions, host, date, command line, budget), then the header line, then one row per point.
A file is rewritten whole, atomically (a temporary file renamed over it), each time a row
is added, so a run stopped at any moment leaves valid files.  A run resumed (probe.py
--resume) reads the files an earlier run left (read()), keeps their comment lines and rows as
they are, and adds its rows after them.  Pure Python.
"""

import math
import os
import re
import tempfile

from grid import FORWARD_ONLY, KERNEL_COLUMNS

NCCL_COLUMNS = ("shape", "nodes", "GPUsPerNode", "dur(us)")

# The order of the provenance keys in a header; others follow in the order given.
HEADER_KEYS = ("probe", "gpu", "gpu_count", "driver", "cuda", "rocm", "torch", "nccl",
               "hostname", "date", "command", "budget")


def op_columns(op):
    """The header of an operator's sample file."""
    cols = KERNEL_COLUMNS[op] + ("F_dur(us)",)
    return cols if op in FORWARD_ONLY else cols + ("B_dur(us)",)


def op_key_columns(op):
    """How many leading columns of an operator's file make a row's key (its shape)."""
    return len(KERNEL_COLUMNS[op])


NCCL_KEY_COLUMNS = 3   # shape, nodes, GPUsPerNode


def op_path(out, op, dtype):
    return os.path.join(out, "operator", "%s_%s.csv" % (op, dtype))


def nccl_path(out, kind, nodes, gpus_per_node):
    return os.path.join(out, "nccl", "%s_fp16_%d_%d.csv" % (kind, nodes, gpus_per_node))


def comment_lines(info):
    """`# key: value` lines from a dict, HEADER_KEYS first; values on one line; keys whose
    value is None are left out."""
    keys = [k for k in HEADER_KEYS if k in info] + [k for k in info if k not in HEADER_KEYS]
    out = []
    for k in keys:
        v = info[k]
        if v is None:
            continue
        v = " ".join(str(v).split())   # no newlines, no runs of blanks
        out.append("# %s: %s" % (k, v))
    return out


def fmt_number(v):
    """Integers as integers; times with up to 6 significant digits, never 0 or negative."""
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    s = "%.6g" % v
    return s


def write_atomic(path, text, durable=True):
    """Writes text to path through a temporary file in the same folder and a rename; durable:
    flushed to the disk (fsync) before the rename."""
    d = os.path.dirname(path) or "."
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class SampleFileError(ValueError):
    """A sample file that an earlier run left and that cannot be resumed: `PATH:LINE: why`."""

    def __init__(self, path, line, why):
        super().__init__("%s:%d: %s" % (path, line, why))


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _key_value(path, line, column, text):
    """A key column's value: an integer (written as one, or as a float without a fraction)."""
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    v = float(text) if _NUMBER.fullmatch(text) else math.nan
    if not (math.isfinite(v) and v.is_integer()):
        raise SampleFileError(path, line, "column `%s`: `%s` is not an integer" % (column, text))
    return int(v)


def _check_time(path, line, column, text):
    """A time column's value: a positive, finite number of microseconds (as llmp fit wants)."""
    v = float(text) if _NUMBER.fullmatch(text) else math.nan
    if not (math.isfinite(v) and v > 0):
        raise SampleFileError(path, line, "column `%s`: `%s` is not a positive number of "
                                          "microseconds" % (column, text))


def provenance(comments):
    """{key: value} of `# key: value` comment lines; the first of a key repeated wins."""
    out = {}
    for c in comments:
        key, colon, value = c.lstrip("#").partition(":")
        if colon and key.strip():
            out.setdefault(key.strip(), " ".join(value.split()))
    return out


class SampleFile:
    """One sample file: its comment lines, columns and rows; save() rewrites it.  kept: the
    row lines of a file an earlier run left (read()), rewritten as they are, before rows."""

    def __init__(self, path, columns, info=None, comments=True, durable=True):
        self.path, self.durable = path, durable
        self.columns = tuple(columns)
        self.comments = comment_lines(info or {}) if comments else []
        self.show_impls = comments
        self.kept = []
        self.rows = []
        self.impls = {}   # implementation -> rows of this run that ran it, in first-seen order

    def add(self, values, save=True, impl=None):
        """One row; impl: the implementation it timed.  Where the rows of this run timed more
        than one, or another than the file's `# impl:` line names (a resumed file's, say),
        a line per implementation, `# impl of N rows: ...`, says which."""
        if len(values) != len(self.columns):
            raise ValueError("%s: %d values for %d columns" % (self.path, len(values),
                                                               len(self.columns)))
        self.rows.append(tuple(values))
        if impl is not None:
            impl = " ".join(str(impl).split())
            self.impls[impl] = self.impls.get(impl, 0) + 1
        if save:
            self.save()

    def impl_lines(self):
        """The `# impl of N rows:` lines (none while every row ran the header's impl)."""
        if not self.show_impls or not self.impls:
            return []
        header = provenance(self.comments).get("impl")
        if list(self.impls) == [header]:
            return []
        return ["# impl of %d rows: %s" % (n, impl) for impl, n in self.impls.items()]

    def text(self):
        lines = list(self.comments) + self.impl_lines() + [",".join(self.columns)] + list(self.kept)
        lines += [",".join(fmt_number(v) for v in r) for r in self.rows]
        return "\n".join(lines) + "\n"

    def save(self):
        write_atomic(self.path, self.text(), self.durable)


def read(path, columns, nkey, durable=True):
    """A sample file an earlier run wrote, to resume it: (a SampleFile holding its comment
    lines and, in kept, its rows as written; the set of its rows' keys, the first nkey
    columns as integers).  Raises SampleFileError naming the line where the header is not
    `columns`, a row has another number of values, a key is not an integer or a time not a
    positive number; OSError where the file cannot be read."""
    f = SampleFile(path, columns, durable=durable)
    keys, header, n = set(), False, 0
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            text = line.strip()
            if not text:
                continue
            if text.startswith("#"):
                (f.kept if header else f.comments).append(text)
                continue
            values = [v.strip() for v in text.split(",")]
            if not header:
                if tuple(values) != f.columns:
                    raise SampleFileError(path, n, "header `%s`, expected `%s`"
                                          % (text, ",".join(f.columns)))
                header = True
                continue
            if len(values) != len(f.columns):
                raise SampleFileError(path, n, "%d values, the header has %d"
                                      % (len(values), len(f.columns)))
            keys.add(tuple(_key_value(path, n, c, v)
                           for c, v in zip(f.columns[:nkey], values)))
            for c, v in zip(f.columns[nkey:], values[nkey:]):
                _check_time(path, n, c, v)
            f.kept.append(",".join(values))
    if not header:
        raise SampleFileError(path, n + 1, "no header line `%s` (%s)" % (
            ",".join(f.columns), "an empty file" if not n else "only comments and blank lines"))
    return f, keys


class SampleSet:
    """The sample files of one run, created as their first row comes.  comments: write the
    `#` provenance lines; durable: fsync each rewrite; autosave: rewrite a file as each row
    comes (else save_all() writes them).  The probe keeps both on; tests of the format may not."""

    def __init__(self, out, info=None, comments=True, durable=True, autosave=True):
        self.out, self.durable, self.autosave = out, durable, autosave
        self.info = dict(info or {})
        self.comments = comments
        self.files = {}
        self.resumed = None   # a comment line for every file of a resumed run (mark_resumed)

    def _file(self, key, path, columns, extra=None):
        f = self.files.get(key)
        if f is None:
            info = dict(self.info, **(extra or {}))
            f = self.files[key] = SampleFile(path, columns, info, self.comments, self.durable)
            if self.resumed and self.comments:
                f.comments.append(self.resumed)
        return f

    def _load(self, key, path, columns, nkey):
        if not os.path.isfile(path):
            return None
        f, keys = read(path, columns, nkey, self.durable)
        f.show_impls = self.comments
        self.files[key] = f
        return keys

    def load_op(self, op, dtype):
        """Takes over the operator file an earlier run left (to resume it): the set of its
        rows' shapes, or None where there is no file.  Raises SampleFileError (read())."""
        return self._load(("op", op, dtype), op_path(self.out, op, dtype), op_columns(op),
                          op_key_columns(op))

    def load_nccl(self, kind, nodes, gpus_per_node):
        """The same for a collective's file: the set of its rows' (shape, nodes, GPUsPerNode)."""
        return self._load(("nccl", kind, nodes, gpus_per_node),
                          nccl_path(self.out, kind, nodes, gpus_per_node), NCCL_COLUMNS,
                          NCCL_KEY_COLUMNS)

    def mark_resumed(self, date, command):
        """Appends `# resumed: DATE COMMAND` to the comment lines of every file held and of
        every file created from now on (none where comments are off); earlier ones stay."""
        self.resumed = comment_lines({"resumed": "%s %s" % (date, command)})[0]
        if self.comments:
            for f in self.files.values():
                f.comments.append(self.resumed)

    def add_op(self, op, dtype, shape, fwd_us, bwd_us=None, extra=None):
        """One operator row: shape in KERNEL_COLUMNS[op] order, times in microseconds.  extra:
        header entries of this file (e.g. the implementation timed), used when it is created."""
        f = self._file(("op", op, dtype), op_path(self.out, op, dtype), op_columns(op), extra)
        row = tuple(shape) + (fwd_us,) + (() if op in FORWARD_ONLY else (bwd_us,))
        f.add(row, self.autosave, (extra or {}).get("impl"))

    def add_nccl(self, kind, nodes, gpus_per_node, shape, dur_us):
        f = self._file(("nccl", kind, nodes, gpus_per_node),
                       nccl_path(self.out, kind, nodes, gpus_per_node), NCCL_COLUMNS)
        f.add((shape, nodes, gpus_per_node, dur_us), self.autosave)

    def save_all(self):
        for f in self.files.values():
            f.save()

    def paths(self):
        return sorted(f.path for f in self.files.values())
