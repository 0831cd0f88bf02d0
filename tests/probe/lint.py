"""pyflakes over the sampling harness (hw/probe/) and its tests: names used but never bound,
imports unused, and the like.  The harness's measuring code runs in full only on a GPU node,
and a name error there (the Adam case once referred to `model` for `models`, and every Adam
sample was skipped) would show only after a user's run.  Exits 77 (CTest: skipped) where
pyflakes is not installed (Debian: python3-pyflakes, which scripts/bootstrap.sh installs).

usage: lint.py SOURCE_DIR"""
import glob
import io
import os
import sys

try:
    from pyflakes.api import checkPath
    from pyflakes.reporter import Reporter
except ImportError:
    print("lint.py: pyflakes is not installed: skipped")
    sys.exit(77)

# `import _paths` in a test puts hw/probe/ on sys.path: used for its effect, not its name.
ALLOWED = ("'_paths' imported but unused",)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().split("\n")[-1])
    src = sys.argv[1]
    files = sorted(glob.glob(os.path.join(src, "hw", "probe", "*.py")) +
                   glob.glob(os.path.join(src, "tests", "probe", "*.py")))
    out, err = io.StringIO(), io.StringIO()
    for f in files:
        checkPath(f, Reporter(out, err))
    found = [m for m in (out.getvalue() + err.getvalue()).splitlines()
             if m and not any(a in m for a in ALLOWED)]
    for m in found:
        print(m)
    print("lint.py: %d files, %d findings" % (len(files), len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
