#!/usr/bin/env python3
"""The README's and docs/*.md's shown outputs are what llmp prints today.

Each document is read top to bottom, in a folder of its own that holds the source folder's
top-level entries (as links), so that paths read as in the source folder:
- a fenced block whose first line is `# file: NAME` is written there as NAME (the README's
  walkthrough writes its model, cluster and plan this way, then runs them), and must be in
  `llmp fmt`'s layout;
- a fenced block whose first line is `$ build/llmp ARGS...` shows a command and its output:
  this runs `LLMP ARGS...` there (stdout, then stderr) and compares its output, line for line,
  with the rest of the block.  A change to llmp's figures then fails here until the document
  shows the new ones.
A sweep's line of elapsed time and rate ("417.1 us, 258.9 k points/s"), the one output that
differs from run to run, is compared by its form only.  A line `...` in an output stands for
one or more lines left out; the lines shown must be the output's, in order.

With --update, the stale blocks are rewritten with today's output instead (through a
temporary file and a rename); a block with `...` keeps its cuts where its lines still match
today's with the numbers masked, else it gets the whole output.

usage: readme_outputs.py LLMP SOURCE_DIR [--update]
"""
import difflib
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

ELAPSED = re.compile(r"^  [0-9.]+ [mun]?s, [0-9.]+ [kMG]? ?points/s$")


def blocks(name, text):
    """(line number, kind, payload, body) for each checked block: ("run", args, expected
    output) or ("file", its name, its text)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if i == 0 or not lines[i - 1].startswith("```"):
            continue
        command = line.startswith("$ build/llmp ")
        written = re.match(r"# file: (\S+)$", line)
        if not command and not written:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            raise SystemExit(f"{name}:{i + 1}: the block has no closing ```")
        if command:
            yield i + 1, "run", shlex.split(line[2:])[1:], lines[i + 1:j]
        else:
            yield i + 1, "file", written.group(1), lines[i:j]


CUT = "..."
NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?|\s+")


def exact(w, g):
    return w == g or bool(ELAPSED.match(w) and ELAPSED.match(g))


def masked(w, g):
    """The same line but for its numbers and spacing (for --update)."""
    return NUMBER.sub("#", w) == NUMBER.sub("#", g)


def align(want, got, eq):
    """The index in got of each line of want (None for a `...`, which takes one or more
    lines), or None when want does not match got."""
    memo = {}

    def at(i, j):
        if (i, j) not in memo:
            if i == len(want):
                memo[i, j] = [] if j == len(got) else None
            elif want[i] == CUT:
                memo[i, j] = next(([None] + rest for k in range(j + 1, len(got) + 1)
                                   if (rest := at(i + 1, k)) is not None), None)
            else:
                rest = at(i + 1, j + 1) if j < len(got) and eq(want[i], got[j]) else None
                memo[i, j] = None if rest is None else [j] + rest
        return memo[i, j]
    return at(0, 0)


def same(want, got):
    return align(want, got, exact) is not None


def updated(want, got):
    """Today's output for a stale block: its cuts kept where its lines still match."""
    where = align(want, got, masked) if CUT in want else None
    return got if where is None else [CUT if j is None else got[j] for j in where]


def check(llmp, src, path, update):
    """(blocks, stale) of one document; with update, rewrites its stale blocks."""
    name = os.path.relpath(path, src)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    found = stale = 0
    edits = []
    with tempfile.TemporaryDirectory(prefix="llmp-docs-") as work:
        for entry in os.listdir(src):
            if not entry.startswith("."):
                os.symlink(os.path.join(os.path.abspath(src), entry), os.path.join(work, entry))
        for line, kind, what, body in blocks(name, text):
            found += 1
            if kind == "file":
                target = os.path.join(work, what)
                if os.path.islink(target) or os.path.dirname(os.path.normpath(what)) not in ("", "."):
                    raise SystemExit(f"{name}:{line}: `# file: {what}` must name a new file in the folder")
                with open(target, "w", encoding="utf-8") as f:
                    f.write("\n".join(body) + "\n")
                fmt = what.endswith(".llmp") and subprocess.run([llmp, "fmt", "--check", what], cwd=work,
                                                                capture_output=True, text=True)
                if fmt and fmt.returncode != 0:
                    print(f"{name}:{line}: `{what}` is not in llmp fmt's layout:\n{fmt.stdout}{fmt.stderr}")
                    stale += 1
                continue
            run = subprocess.run([llmp] + what, cwd=work, capture_output=True, text=True)
            got = (run.stdout + run.stderr).rstrip("\n").split("\n")
            if same(body, got):
                continue
            stale += 1
            if update:
                edits.append((line, len(body), updated(body, got)))
            else:
                print(f"{name}:{line}: `build/llmp {' '.join(what)}` prints otherwise now:")
                shown = updated(body, got)  # with its cuts, where they still fit
                sys.stdout.writelines(difflib.unified_diff([w + "\n" for w in body], [g + "\n" for g in shown],
                                                           name, "llmp", n=1))
    if update and edits:
        for line, n, got in reversed(edits):
            lines[line:line + n] = got
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.replace(tmp, path)
    return found, stale


def main():
    update = "--update" in sys.argv[3:]
    if len(sys.argv) != 3 + update:
        raise SystemExit(__doc__.strip().split("\n")[-1])
    llmp, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    docs = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    found = stale = 0
    for path in docs:
        f, s = check(llmp, src, path, update)
        found, stale = found + f, stale + s
    if found == 0:
        raise SystemExit("README.md, docs/*.md: no `$ build/llmp` block found")
    verb = "updated" if update else "stale"
    print(f"{found} blocks in {len(docs)} documents, {stale} {verb}")
    return 0 if update or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
