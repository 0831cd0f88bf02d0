#!/usr/bin/env python3
"""The README's shown outputs are what llmp prints today.

Every fenced block of README.md whose first line is `$ build/llmp ARGS...` shows a command and
its output: this runs `LLMP ARGS...` in the source folder (stdout, then stderr) and compares its
output, line for line, with the rest of the block.  A change to llmp's figures then fails here
until the README shows the new ones.

With --update, the stale blocks are rewritten with today's output instead (through a
temporary file and a rename).

usage: readme_outputs.py LLMP SOURCE_DIR [--update]
"""
import difflib
import os
import shlex
import subprocess
import sys


def blocks(text):
    """(line number, command, expected output) for each `$ build/llmp` block."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("$ build/llmp ") and i > 0 and lines[i - 1].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j == len(lines):
                raise SystemExit(f"README.md:{i + 1}: the block has no closing ```")
            yield i + 1, shlex.split(line[2:])[1:], lines[i + 1:j]


def main():
    update = "--update" in sys.argv[3:]
    if len(sys.argv) != 3 + update:
        raise SystemExit(__doc__.strip().split("\n")[-1])
    llmp, src = sys.argv[1], sys.argv[2]
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        text = f.read()
    found = stale = 0
    lines = text.split("\n")
    for line, args, want in reversed(list(blocks(text))):
        found += 1
        run = subprocess.run([llmp] + args, cwd=src, capture_output=True, text=True)
        got = (run.stdout + run.stderr).rstrip("\n").split("\n")
        if got != want and update:
            lines[line:line + len(want)] = got
            stale += 1
        elif got != want:
            stale += 1
            print(f"README.md:{line}: `build/llmp {' '.join(args)}` prints otherwise now:")
            sys.stdout.writelines(difflib.unified_diff([w + "\n" for w in want],
                                                       [g + "\n" for g in got],
                                                       "README.md", "llmp", n=1))
    if found == 0:
        raise SystemExit("README.md: no `$ build/llmp` block found")
    if update:
        tmp = os.path.join(src, "README.md.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.replace(tmp, os.path.join(src, "README.md"))
        print(f"{found} README blocks, {stale} updated")
        return 0
    print(f"{found} README blocks, {stale} stale")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
