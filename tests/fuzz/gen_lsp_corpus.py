#!/usr/bin/env python3
"""gen_lsp_corpus.py DIR: writes the seed sessions of fuzz_lsp.c into DIR (tests/fuzz/corpus_lsp/).

Each seed is the byte stream an editor writes to `llmp lsp` in one session: initialize as
Neovim sends it, documents opened and edited, every request kind at places of interest
(found by searching the text), shutdown and exit.  The regression inputs kept beside the
seeds (names not starting with `session_`) are not written here."""
import json
import os
import sys

SMALL = """\
# A small self-contained scenario: lowering is fast, every kind is declared here.
gpu g { memory = 40 GiB; memory_bandwidth = 1555 GB/s; sms = 108; peak_fp16 = 312 TFLOP/s }
cluster c {
  gpu           = g
  gpus_per_node = 8
  nodes         = 1
  tier nv { span = node; bandwidth = 300 GB/s; latency = 2 us }
}
block b {
  let t = plan.micro_batch * model.seq
  op up   = linear(t, model.hidden, model.ffn, split = column)
  op act  = activation(gelu, t * model.ffn)
  op down = linear(t, model.ffn, model.hidden, split = row)
  op x    = add(t * model.hidden)
}
model m { layers = 8; hidden = 1024; heads = 8; seq = 1024; vocab = 32000; ffn = 4096; layer = b; layers_only = true }
model big extends m { layers = 16 }
plan p { tp = 2; pp = 2; micro_batch = 4; global_batch = 64 }
scenario s {
  model   = m { layers = 16 }
  cluster = c { nodes = 1 }
  plan    = p { dp = 2 }
}
sweep w extends s {
  vary plan.tp in [1, 2, 4]
  minimize iteration
}
"""

# A misspelt field and operator: diagnostics with "did you mean" fix-its for codeAction.
TYPO = SMALL.replace("global_batch = 64", "global_bath = 64").replace("op x    = add(", "op x    = ad(")

IMPORTS = """\
import "stdlib/transformer"
import "hw/systems/perlmutter"

model tiny extends gpt {
  layers = 4
  hidden = 1024
  heads  = 16
  seq    = 2048
  vocab  = 50257
  norm   = layernorm
}

plan small { tp = 2; pp = 2; micro_batch = 1; global_batch = 64; dtyp = bf16 }

scenario tiny_perlmutter {
  model   = tiny
  cluster = perlmutter { nodes = 1 }
  plan    = small
}
"""

URI = "file:///tmp/llmp-fuzz-lsp/session.llmp"


class Session:
    def __init__(self):
        self.out = b""
        self.id = 0

    def raw(self, b):
        self.out += b

    def send(self, obj):
        body = json.dumps(obj, separators=(",", ":")).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method, params=None):
        self.id += 1
        m = {"jsonrpc": "2.0", "id": self.id, "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)

    def notify(self, method, params=None):
        m = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)

    def start(self):
        self.request("initialize", {"processId": 1, "rootUri": "file:///tmp/llmp-fuzz-lsp",
                                    "clientInfo": {"name": "Neovim"},
                                    "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}}})
        self.notify("initialized", {})

    def end(self):
        self.request("shutdown")
        self.notify("exit")


def pos(text, needle, k=0, after=0):
    """The LSP position of the k-th occurrence of needle, moved `after` characters into it."""
    i = -1
    for _ in range(k + 1):
        i = text.index(needle, i + 1)
    i += after
    line = text.count("\n", 0, i)
    return {"line": line, "character": i - (text.rfind("\n", 0, i) + 1)}


def at(text, needle, k=0, after=0, uri=URI):
    return {"textDocument": {"uri": uri}, "position": pos(text, needle, k, after)}


def doc(uri=URI):
    return {"textDocument": {"uri": uri}}


def queries(s, text, spots):
    for needle, k, after in spots:
        for m in ("textDocument/hover", "textDocument/definition", "textDocument/completion"):
            s.request(m, at(text, needle, k, after))
    s.request("textDocument/references", dict(at(text, spots[0][0], spots[0][1], spots[0][2]),
                                              context={"includeDeclaration": True}))
    s.request("textDocument/documentSymbol", doc())
    s.request("textDocument/formatting", dict(doc(), options={"tabSize": 2, "insertSpaces": True}))


def small():
    s = Session()
    s.start()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "llmp", "version": 1, "text": SMALL}})
    queries(s, SMALL, [("scenario s", 0, 9), ("hidden", 0, 2), ("= m {", 0, 2),
                       ("GiB", 0, 1), ("latency", 0, 0), ("plan.tp", 0, 5), ("add(", 0, 1), ("layers = 16", 0, 2),
                       ("\n}", 2, 2)])
    s.end()
    return s.out


def typo():
    s = Session()
    s.start()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "llmp", "version": 1, "text": TYPO}})
    for needle in ("global_bath", "ad("):
        p = pos(TYPO, needle)
        s.request("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": {"start": p, "end": p},
                                              "context": {"diagnostics": []}})
    s.request("textDocument/hover", at(TYPO, "global_bath", 0, 3))
    s.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                        "contentChanges": [{"text": SMALL}]})
    s.notify("textDocument/didSave", doc())
    s.request("textDocument/hover", at(SMALL, "scenario s", 0, 9))
    # On 4 nodes the pipeline's send has no tier between nodes: hover says why run refuses it.
    far = SMALL.replace("nodes = 1 }", "nodes = 4 }").replace("dp = 2 }", "dp = 8 }")
    s.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 3}, "contentChanges": [{"text": far}]})
    s.request("textDocument/hover", at(far, "scenario s", 0, 9))
    s.notify("textDocument/didClose", doc())
    s.end()
    return s.out


def typing():
    """Typing a scenario out character by character: text that seldom parses."""
    s = Session()
    s.start()
    head = SMALL[:SMALL.index("scenario s")]
    tail = "scenario t {\n  model = m\n  cluster = c\n  plan = p { tp = 4 }\n}\n"
    s.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "llmp", "version": 1, "text": head}})
    for v, n in enumerate(range(4, len(tail) + 1, 12), 2):
        text = head + tail[:n]
        s.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": v},
                                            "contentChanges": [{"text": text}]})
        end = {"line": text.count("\n"), "character": len(text) - (text.rfind("\n") + 1)}
        s.request("textDocument/completion", {"textDocument": {"uri": URI}, "position": end})
    s.request("textDocument/hover", at(head + tail, "scenario t", 0, 9))
    s.end()
    return s.out


def imports():
    s = Session()
    s.start()
    bad = 'import "tests/golden/block_unknown_operator"\nimport "stdlib/transformer"\nmodel x extends gpt {}\n'
    s.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/llmp%2Dfuzz%2dlsp/two%20words.llmp",
                                                       "languageId": "llmp", "version": 1, "text": bad}})
    s.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "llmp", "version": 1, "text": IMPORTS}})
    queries(s, IMPORTS, [("gpt", 0, 1), ("perlmutter {", 0, 3), ("tiny_perlmutter", 0, 2), ("dtyp", 0, 1),
                         ("stdlib/", 0, 3)])
    s.request("textDocument/completion", at(IMPORTS, "hw/systems", 0, 3))
    p = pos(IMPORTS, "dtyp")
    s.request("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": {"start": p, "end": p}})
    s.end()
    return s.out


def malformed():
    """Framing and protocol errors the server answers and reads past."""
    s = Session()
    s.request("textDocument/hover", at(SMALL, "hidden"))  # before initialize
    s.raw(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n")  # no length
    s.raw(b"Content-Length: 12x\r\n\r\n")
    s.raw(b"Content-Length: 5\r\n\r\n{oops")
    s.raw(b"garbage before a header Content-Length: 2\r\n\r\n[]")
    s.start()
    s.request("initialize", {})
    s.send({"jsonrpc": "2.0", "id": [1], "method": "shutdown"})
    s.send({"jsonrpc": "2.0", "id": 7, "result": None})  # a response to the server: ignored
    s.request("textDocument/noSuchMethod", {})
    s.notify("$/cancelRequest", {"id": 1})
    s.request("textDocument/hover", "params")
    s.request("textDocument/hover", {"textDocument": {"uri": "file:///not/open.llmp"}, "position": {"line": 0, "character": 0}})
    s.notify("textDocument/didOpen", {"textDocument": {"uri": "untitled:1", "text": "model x {"}})
    s.request("textDocument/hover", {"textDocument": {"uri": "untitled:1"}, "position": {"line": 99, "character": -1}})
    s.request("textDocument/completion", {"textDocument": {"uri": "untitled:1"}, "position": {"line": 9e12, "character": 1e300}})
    s.request("textDocument/codeAction", {"textDocument": {"uri": "untitled:1"}, "range": {}})
    s.notify("textDocument/didChange", {"textDocument": {"uri": "untitled:1"}, "contentChanges": [{"range": {}, "text": "x"}]})
    s.request("textDocument/formatting", doc("untitled:1"))
    s.request("shutdown")
    s.request("textDocument/hover", at(SMALL, "hidden"))  # after shutdown
    s.notify("exit")
    return s.out


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, fn in (("small", small), ("typo", typo), ("typing", typing), ("imports", imports),
                     ("malformed", malformed)):
        data = fn()
        assert len(data) <= 8192, "session_%s: fuzz.lsp.60s reads inputs of up to 8 KiB" % name
        with open(os.path.join(out, "session_%s.lsp" % name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
