"""Sample files in the format `llmp fit` reads (docs/calibration.md, "Sample files").

  OUT/operator/KERNEL_DTYPE.csv            kernel form: the kernel's columns (grid.KERNEL_COLUMNS),
                                           F_dur(us) and, but for adam, B_dur(us)
  OUT/nccl/KIND_fp16_NODES_GPUSPERNODE.csv shape,nodes,GPUsPerNode,dur(us)

Every file starts with `# key: value` comment lines (the provenance: GPU, driver, library
versions, host, date, command line, budget), then the header line, then one row per point.
A file is rewritten whole, atomically (a temporary file renamed over it), each time a row
is added, so a run stopped at any moment leaves valid files.  Pure Python.
"""

import os
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


class SampleFile:
    """One sample file: its comment lines, columns and rows; save() rewrites it."""

    def __init__(self, path, columns, info=None, comments=True, durable=True):
        self.path, self.durable = path, durable
        self.columns = tuple(columns)
        self.comments = comment_lines(info or {}) if comments else []
        self.rows = []

    def add(self, values, save=True):
        if len(values) != len(self.columns):
            raise ValueError("%s: %d values for %d columns" % (self.path, len(values),
                                                               len(self.columns)))
        self.rows.append(tuple(values))
        if save:
            self.save()

    def text(self):
        lines = list(self.comments) + [",".join(self.columns)]
        lines += [",".join(fmt_number(v) for v in r) for r in self.rows]
        return "\n".join(lines) + "\n"

    def save(self):
        write_atomic(self.path, self.text(), self.durable)


class SampleSet:
    """The sample files of one run, created as their first row comes.  comments: write the
    `#` provenance lines; durable: fsync each rewrite; autosave: rewrite a file as each row
    comes (else save_all() writes them).  The probe keeps both on; tests of the format may not."""

    def __init__(self, out, info=None, comments=True, durable=True, autosave=True):
        self.out, self.durable, self.autosave = out, durable, autosave
        self.info = dict(info or {})
        self.comments = comments
        self.files = {}

    def _file(self, key, path, columns, extra=None):
        f = self.files.get(key)
        if f is None:
            info = dict(self.info, **(extra or {}))
            f = self.files[key] = SampleFile(path, columns, info, self.comments, self.durable)
        return f

    def add_op(self, op, dtype, shape, fwd_us, bwd_us=None, extra=None):
        """One operator row: shape in KERNEL_COLUMNS[op] order, times in microseconds.  extra:
        header entries of this file (e.g. the implementation timed), used when it is created."""
        f = self._file(("op", op, dtype), op_path(self.out, op, dtype), op_columns(op), extra)
        row = tuple(shape) + (fwd_us,) + (() if op in FORWARD_ONLY else (bwd_us,))
        f.add(row, self.autosave)

    def add_nccl(self, kind, nodes, gpus_per_node, shape, dur_us):
        f = self._file(("nccl", kind, nodes, gpus_per_node),
                       nccl_path(self.out, kind, nodes, gpus_per_node), NCCL_COLUMNS)
        f.add((shape, nodes, gpus_per_node, dur_us), self.autosave)

    def save_all(self):
        for f in self.files.values():
            f.save()

    def paths(self):
        return sorted(f.path for f in self.files.values())
