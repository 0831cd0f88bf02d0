#!/usr/bin/env python3
"""random_messages.py LLMP FILE [SEED] [COUNT]: one `llmp lsp` fed COUNT (default 1500)
messages drawn from a seeded generator: every method with good and ill-typed params, edits
that mutate FILE (brackets, quotes, NUL bytes, pieces of other shipped files), positions
in and past the text, and random bytes between messages.  Every request must get exactly
one reply, the server must end with status 0 after shutdown and exit, and write nothing on
standard error (an ASan build reports its leaks and errors there)."""
import json
import os
import random
import subprocess
import sys

LLMP, PATH = sys.argv[1], os.path.abspath(sys.argv[2])
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
COUNT = int(sys.argv[4]) if len(sys.argv) > 4 else 1500
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(PATH)))
METHODS = ["hover", "definition", "references", "completion", "formatting", "documentSymbol", "codeAction",
           "didChange", "didOpen", "didSave", "didClose"]


def main():
    rnd = random.Random(SEED)
    src = open(PATH).read()
    pieces = open(os.path.join(ROOT, "examples", "quickstart.llmp")).read()
    uri = "file://" + PATH
    out, sent = [], []

    def msg(o):
        body = json.dumps(o).encode()
        out.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        if "id" in o:
            sent.append(o["id"])

    def junk():
        return rnd.choice([None, 1, -5, 1e308, "x", [], {}, True, {"line": rnd.randint(-2, 40)}])

    def mutate(t):
        t = list(t)
        for _ in range(rnd.randint(0, 8)):
            i = rnd.randint(0, len(t))
            r = rnd.random()
            if r < 0.4 and t:
                del t[min(i, len(t) - 1)]
            elif r < 0.8:
                t.insert(i, rnd.choice('{}[]()=."#\\\n abc1_GB\u00e9\U0001F600\0'))
            else:
                j = rnd.randint(0, len(pieces) - 50)
                t[i:i] = list(pieces[j:j + rnd.randint(1, 50)])
        return "".join(t)

    msg({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
    text = src
    msg({"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "version": 1, "text": text}}})
    for k in range(1, COUNT + 1):
        m = "textDocument/" + rnd.choice(METHODS)
        pos = {"line": rnd.randint(0, 30), "character": rnd.randint(0, 40)} if rnd.random() < 0.9 else junk()
        params = {"textDocument": {"uri": uri if rnd.random() < 0.9 else junk()}, "position": pos,
                  "range": {"start": pos, "end": pos}, "options": {"tabSize": 2, "insertSpaces": True},
                  "context": {"includeDeclaration": rnd.random() < 0.5, "diagnostics": []}}
        if m.endswith(("didChange", "didOpen")):
            text = mutate(text if rnd.random() < 0.8 else src)
            params = {"textDocument": {"uri": uri, "version": k + 1, "text": text}, "contentChanges": [{"text": text}]}
        if rnd.random() < 0.05:
            params = junk()
        o = {"jsonrpc": "2.0", "method": m, "params": params}
        if not m.split("/")[1].startswith("did") and rnd.random() < 0.9:
            o["id"] = k
        msg(o)
        if rnd.random() < 0.03:
            out.append(rnd.randbytes(rnd.randint(1, 40)))
    msg({"jsonrpc": "2.0", "id": COUNT + 1, "method": "shutdown"})
    msg({"jsonrpc": "2.0", "method": "exit"})

    p = subprocess.run([LLMP, "lsp"], input=b"".join(out), capture_output=True, timeout=300)
    got, buf = [], p.stdout
    while buf:
        head, rest = buf.split(b"\r\n\r\n", 1)
        n = int(head.split(b":")[1])
        reply = json.loads(rest[:n])
        buf = rest[n:]
        if reply.get("id") is not None:
            got.append(reply["id"])
    problems = []
    if sorted(got) != sorted(sent):
        problems.append("requests unanswered %s, answered twice or unasked %s" %
                        (sorted(set(sent) - set(got))[:20], sorted(i for i in set(got) if got.count(i) != sent.count(i))[:20]))
    if p.returncode != 0:
        problems.append("exit status %d after shutdown and exit" % p.returncode)
    if p.stderr:
        problems.append("standard error:\n" + p.stderr.decode("utf-8", "replace")[:4000])
    for x in problems:
        print("FAIL (seed %d): %s" % (SEED, x))
    print("%d messages, %d requests answered%s" % (COUNT + 3, len(got), "" if problems else ": ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
