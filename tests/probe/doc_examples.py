"""The .llmp examples of docs/probe.md parse, check and are in canonical layout.

  python3 doc_examples.py LLMP WORKDIR

Takes the fenced blocks of docs/probe.md that are .llmp source (they start with `import`,
`gpu`, `cluster`, `plan` or `scenario`) and writes three files: the declarations before
fitting (the first block), a new part's declaration (the second), and the final file (the
first block's imports, the calibrated declarations, the plan and the scenario).  Runs
`LLMP check` and `LLMP fmt --check` on each.  Exit 0 when all pass."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STARTS = ("import ", "gpu ", "cluster ", "plan ", "scenario ")


def llmp_blocks(path):
    blocks, cur = [], None
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith("```"):
                if cur is None:
                    cur = []
                else:
                    blocks.append("\n".join(cur) + "\n")
                    cur = None
            elif cur is not None:
                cur.append(line)
    return [b for b in blocks if b.startswith(STARTS)]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    llmp, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    blocks = llmp_blocks(os.path.join(ROOT, "docs", "probe.md"))
    if len(blocks) != 4:
        print("FAIL: docs/probe.md has %d .llmp blocks, expected 4" % len(blocks), file=sys.stderr)
        return 1
    imports = "".join(ln + "\n" for ln in blocks[0].splitlines() if ln.startswith("import "))
    files = {"before_fit.llmp": blocks[0], "new_part.llmp": blocks[1],
             "calibrated.llmp": imports + "\n" + blocks[2] + "\n" + blocks[3]}
    failed = 0
    for name, text in files.items():
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(text)
        for args in (["check"], ["fmt", "--check"]):
            r = subprocess.run([llmp] + args + [path], capture_output=True, text=True, timeout=60)
            if name == "calibrated.llmp" and args == ["check"]:
                # its folders are what step 2's `llmp fit` writes: check says they are not there yet
                errors = [ln for ln in r.stderr.splitlines() if ": error: " in ln]
                if (r.returncode == 1 and errors and
                        all("calibration folder `h100-mylab` not found" in e or "calibration folder `mylab` not found" in e
                            for e in errors)):
                    continue
            if r.returncode != 0:
                failed += 1
                print("FAIL: llmp %s %s:\n%s%s" % (" ".join(args), name, r.stdout, r.stderr),
                      file=sys.stderr)
    print("doc_examples: %d files, %s" % (len(files), "ok" if not failed else "FAILED"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
