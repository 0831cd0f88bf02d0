#!/usr/bin/env python3
"""protocol.py LLMP FILE: feeds `llmp lsp` malformed and out-of-order messages and checks
each reply: framing errors, bodies that are not JSON or not requests, requests before
initialize and after shutdown, unknown methods, bad params, positions past the end, and the
exit status of each way to end; then completion, definition, references, symbols and
formatting across an import.
  protocol.py LLMP --parity DIR: each .llmp file of DIR (the golden tests) gets the same
diagnostics from the server as from `llmp check --error-format=short`: messages, places, notes.
  protocol.py LLMP --time FILE: how long a diagnostic takes after an edit of FILE."""
import json
import os
import re
import select
import subprocess
import sys
import time
import urllib.parse

LLMP = os.path.abspath(sys.argv[1]) if "/" in sys.argv[1] else sys.argv[1]
FAILURES = []
CHECK = []


class Server:
    def __init__(self, cwd=None):
        self.p = subprocess.Popen([LLMP, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd)
        self.buf = b""
        self.next_id = 100

    def raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        body = json.dumps(obj).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.next_id

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def _fill(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            raise TimeoutError("no reply in %d s" % timeout)
        chunk = os.read(self.p.stdout.fileno(), 65536)
        if not chunk:
            raise EOFError("the server closed its output")
        self.buf += chunk

    def recv(self, timeout=30):
        while b"\r\n\r\n" not in self.buf:
            self._fill(timeout)
        head, rest = self.buf.split(b"\r\n\r\n", 1)
        n = int(head.split(b":")[1])
        while len(rest) < n:
            self._fill(timeout)
            rest = self.buf.split(b"\r\n\r\n", 1)[1]
        self.buf = rest[n:]
        return json.loads(rest[:n])

    def recv_response(self):
        """The next response, skipping notifications (publishDiagnostics)."""
        while True:
            m = self.recv()
            if "method" not in m:
                return m

    def ping(self):
        """A sync point: an unknown method's error, which must be the next message (nothing
        sent before it answered, not even a notification)."""
        i = self.request("llmp/ping")
        m = self.recv()
        expect("ping answered in order", m.get("id") == i and m.get("error", {}).get("code") == -32601, m)

    def wait(self):
        self.p.stdin.close()
        return self.p.wait(timeout=30)


def expect(what, ok, got=None):
    if not ok:
        FAILURES.append(what)
        print("FAIL: %s: got %s" % (what, json.dumps(got)[:400]))


def error_of(m, code, id_):
    return m.get("id") == id_ and "error" in m and m["error"]["code"] == code


def lifecycle(uri, text):
    s = Server()
    # Before initialize: requests get ServerNotInitialized, notifications are dropped.
    i = s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    expect("request before initialize", error_of(s.recv(), -32002, i))
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "llmp", "version": 1, "text": text}})
    # Framing: no Content-Length, a bad one, one too large, bytes that are no header.
    s.raw(b"Content-Type: application/vscode-jsonrpc\r\n\r\n")
    m = s.recv()
    expect("header block without Content-Length", error_of(m, -32700, None), m)
    s.raw(b"Content-Length: twelve\r\n\r\n")
    m = s.recv()
    expect("Content-Length not a number", error_of(m, -32700, None) and "whole number" in m["error"]["message"], m)
    s.raw(b"Content-Length: 99999999999\r\n\r\n")
    m = s.recv()
    expect("Content-Length over the limit", error_of(m, -32700, None) and "64 MiB" in m["error"]["message"], m)
    s.raw(b"this is not a header\r\n\r\n")
    expect("a line that is not a header", error_of(s.recv(), -32700, None))
    # Bodies: not JSON, nested past cJSON's limit, JSON that is not a request, a bad id.
    for body, code, what in [(b"{\"jsonrpc\": \"2.0\", \"id\": 1, ", -32700, "truncated JSON"),
                             (b"[" * 100000, -32700, "JSON nested 100000 deep"),
                             (b"[1, 2, 3]", -32600, "a JSON array"),
                             (b"42", -32600, "a JSON number"),
                             (b"{\"jsonrpc\": \"2.0\", \"id\": {}, \"method\": \"initialize\"}", -32600, "an object as id"),
                             (b"{\"jsonrpc\": \"2.0\", \"id\": 7}", -32600, "a request without a method")]:
        s.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        m = s.recv()
        expect(what, error_of(m, code, None) or error_of(m, code, 7), m)
    # Garbage glued to the next message's header: skipped, and the message still read.
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}).encode()
    s.raw(b"garbage, \x00 and all, without a newline" + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    expect("garbage before a header reported", error_of(s.recv(), -32700, None))
    m = s.recv()
    caps = m.get("result", {}).get("capabilities", {})
    expect("initialize after garbage", m.get("id") == 1 and caps.get("hoverProvider") and caps.get("completionProvider"), m)
    s.notify("initialized", {})
    i = s.request("initialize", {})
    expect("a second initialize", error_of(s.recv(), -32600, i))
    # The didOpen sent before initialize was dropped: the document is not open.
    i = s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    m = s.recv()
    expect("a document opened before initialize is not open", error_of(m, -32602, i) and "not open" in m["error"]["message"], m)
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "llmp", "version": 1, "text": text}})
    m = s.recv()
    expect("diagnostics on open", m.get("method") == "textDocument/publishDiagnostics" and
           m["params"]["diagnostics"][0]["message"].startswith("unknown field `dtyp`"), m)
    # Bad params, unknown methods, notifications sent as requests and back.
    for method, params, code in [("textDocument/hover", None, -32602),
                                 ("textDocument/hover", {"textDocument": {"uri": 5}}, -32602),
                                 ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": "x"}}, -32602),
                                 ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}}, -32602),
                                 ("textDocument/codeAction", {"textDocument": {"uri": uri}}, -32602),
                                 ("textDocument/hover", [1, 2], -32602),
                                 ("textDocument/hover", "params", -32602),
                                 ("textDocument/didOpen", {}, -32601),
                                 ("workspace/symbol", {"query": ""}, -32601)]:
        i = s.request(method, params)
        m = s.recv_response()
        expect("%s with params %s" % (method, json.dumps(params)), error_of(m, code, i), m)
    s.notify("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    s.notify("$/cancelRequest", {"id": 3})
    s.notify("textDocument/didChange", {"textDocument": {"uri": "file:///nowhere.llmp", "version": 2}})
    s.ping()
    # Positions past the end of a line and of the file answer, and do not crash.
    for line, ch in [(0, 10 ** 6), (10 ** 6, 0), (10 ** 12, 10 ** 12), (3, 1e300)]:
        pos = {"line": line, "character": ch}
        for method in ["textDocument/hover", "textDocument/definition", "textDocument/completion"]:
            i = s.request(method, {"textDocument": {"uri": uri}, "position": pos, "context": {"includeDeclaration": True}})
            m = s.recv_response()
            expect("%s at %s" % (method, pos), m.get("id") == i and "result" in m, m)
    # An edit that breaks the syntax: the diagnostic follows, and formatting refuses.
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                        "contentChanges": [{"text": text.replace("plan small {", "plan small {{")}]})
    m = s.recv()
    expect("diagnostics after an edit", m.get("method") == "textDocument/publishDiagnostics" and
           m["params"]["version"] == 3 and m["params"]["diagnostics"], m)
    i = s.request("textDocument/formatting", {"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})
    m = s.recv_response()
    expect("formatting a file with syntax errors", error_of(m, -32803, i) and "syntax" in m["error"]["message"], m)
    i = s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 3}})
    expect("hover in a file with syntax errors", s.recv_response().get("id") == i)
    # An incremental change, which the server did not ask for, is refused and changes nothing.
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4},
                                        "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                                                      "end": {"line": 0, "character": 0}}, "text": "x"}]})
    s.ping()
    s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    m = s.recv()
    expect("didClose clears the diagnostics", m.get("method") == "textDocument/publishDiagnostics" and
           m["params"]["diagnostics"] == [], m)
    # After shutdown only exit is accepted; exit then ends with status 0.
    i = s.request("shutdown")
    m = s.recv()
    expect("shutdown", m.get("id") == i and m.get("result", 1) is None, m)
    i = s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    expect("request after shutdown", error_of(s.recv(), -32600, i))
    s.notify("exit")
    expect("exit after shutdown: status 0", s.wait() == 0)


def endings(uri, text):
    s = Server()
    s.request("initialize", {})
    s.recv()
    s.notify("exit")
    expect("exit without shutdown: status 1", s.wait() == 1)
    s = Server()
    s.request("initialize", {})
    s.recv()
    s.raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")
    expect("input ending inside a body: status 1", s.wait() == 1)
    s = Server()
    expect("empty input: status 1", s.wait() == 1)
    # A client that stops reading: the first failed write ends the server, with status 1.
    p = subprocess.Popen([LLMP, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode()
    try:
        p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        p.stdin.flush()
    except BrokenPipeError:
        pass
    err = p.stderr.read().decode()
    expect("output closed: status 1, said", p.wait(timeout=30) == 1 and "cannot write standard output" in err, err)


def unicode_positions(uri):
    """Positions count UTF-16 code units: a character outside the BMP counts two."""
    s = Server()
    s.request("initialize", {})
    s.recv()
    text = 'plan p {\n  description = "\U0001F600\u00e9"; micro_batch = 1\n  global_batch = 8\n}\n'
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "llmp", "version": 1, "text": text}})
    s.recv()
    # `micro_batch` starts after `  description = "` (17), the emoji (2), é (1) and `"; ` (3):
    # at 23 (in bytes it would be 26, in code points 22).
    i = s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 25}})
    m = s.recv_response()
    r = m.get("result") or {}
    expect("hover after a character outside the BMP",
           "`micro_batch`" in r.get("contents", {}).get("value", "") and r["range"]["start"]["character"] == 23, m)
    s.request("shutdown")
    s.recv()
    s.notify("exit")
    s.wait()


def scenario_hover(uri):
    """A scenario's figures in hover; one that `llmp run` cannot evaluate (a kernel rejects its
    arguments) says why, as run does, rather than a peak and "does not fit"."""
    s = Server()
    s.request("initialize", {})
    s.recv()
    base = ("gpu g { memory = 40 GiB; memory_bandwidth = 1555 GB/s; sms = 108; peak_fp16 = 312 TFLOP/s }\n"
            "cluster c {\n  gpu = g; gpus_per_node = 8; nodes = NODES\n"
            "  tier nv { span = node; bandwidth = 300 GB/s; latency = 2 us }\n}\n"
            "block b {\n  let t = plan.micro_batch * model.seq\n"
            "  op up = linear(t, model.hidden, model.ffn, split = column)\n"
            "  op down = linear(t, model.ffn, model.hidden, split = row)\n}\n"
            "model m { layers = 8; hidden = 1024; heads = 8; seq = 1024; vocab = 32000; ffn = 4096; layer = b; "
            "layers_only = true }\n"
            "plan p { tp = 2; pp = 2; micro_batch = 4; global_batch = 64 }\n"
            "scenario s { model = m; cluster = c; plan = p }\n")
    # On 4 nodes the pipeline's send crosses nodes, and the cluster has no tier between them.
    for nodes, want, unwanted in [(1, "· fits", "Not evaluated"),
                                  (4, "Not evaluated: kernel `p2p` (pipeline send) rejected", "does not fit")]:
        text = base.replace("NODES", str(nodes))
        expect("a clean document on %d node(s)" % nodes, open_doc(s, uri, text) == [])
        i = s.request("textDocument/hover", {"textDocument": {"uri": uri},
                                             "position": {"line": text.count("\n") - 1, "character": 9}})
        m = s.recv_response()
        v = (m.get("result") or {}).get("contents", {}).get("value", "")
        expect("hover on a scenario on %d node(s)" % nodes, m.get("id") == i and want in v and unwanted not in v, m)
    s.request("shutdown")
    s.recv()
    s.notify("exit")
    s.wait()


def open_doc(s, uri, text):
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "llmp", "version": 1, "text": text}})
    return s.recv()["params"]["diagnostics"]


def labels_at(s, uri, text, marker):
    """The completion labels at the place of marker (removed from text first)."""
    before = text[:text.index(marker)]
    pos = {"line": before.count("\n"), "character": len(before) - before.rfind("\n") - 1}
    i = s.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": pos})
    m = s.recv_response()
    return {it["label"] for it in m["result"]["items"]} if m.get("id") == i and "result" in m else set()


def completions_and_imports(folder):
    """Completion in each kind of place, and definition, references, symbols and formatting
    across an import (the documents are not on disk; their imports are)."""
    s = Server()
    s.request("initialize", {})
    s.recv()
    uri = "file://" + os.path.join(folder, "unsaved.llmp")
    text = ('import "hw/systems/perlmutter"\n|TOP|\ngpu g {\n  memory = 80 G|MEM|\n  memory_bandwidth = 2 T|BW|\n'
            '  vendor = |VENDOR|\n}\ncluster c extends perlmutter {\n  gpu = |GPU|\n  tier t {\n    |TIER|\n  }\n}\n'
            'scenario s {\n  cluster = perlmutter { |EXT| }\n  description = "a |STR|"\n}\n# a |COMMENT|\n'
            'import "hw/sys|IMPORT|\n')
    for marker, want, unwanted in [("|TOP|", {"model", "plan", "import"}, {"hidden"}),
                                   ("|MEM|", {"GB", "GiB", "TB"}, {"GB/s", "s"}),
                                   ("|BW|", {"TB/s", "Gb/s"}, {"TB", "ms"}),
                                   ("|VENDOR|", {"nvidia", "amd"}, {"rmsnorm"}),
                                   ("|GPU|", {"a100_sxm4_80gb"}, {"perlmutter"}),
                                   ("|TIER|", {"span", "bandwidth", "latency"}, {"nodes"}),
                                   ("|EXT|", {"nodes", "gpus_per_node"}, {"hidden"}),
                                   ("|IMPORT|", {"hw/systems/perlmutter", "stdlib/transformer", "hw/gpus"}, set()),
                                   ("|STR|", set(), {"perlmutter", "model", "nodes"}),
                                   ("|COMMENT|", set(), {"perlmutter", "model", "import"})]:
        clean = text
        for other in ["|TOP|", "|MEM|", "|BW|", "|VENDOR|", "|GPU|", "|TIER|", "|EXT|", "|IMPORT|", "|STR|", "|COMMENT|"]:
            if other != marker:
                clean = clean.replace(other, "")
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "llmp", "version": 1,
                                                           "text": clean.replace(marker, "")}})
        s.recv()
        got = labels_at(s, uri, clean, marker)
        expect("completion at %s: %s" % (marker, sorted(want)), want <= got and not (unwanted & got), sorted(got)[:40])
    # A clean, unformatted document that uses a cluster and a gpu from its import.
    text = ('import "hw/systems/perlmutter"\ncluster c extends perlmutter {\n  nodes=2\n  gpu = a100_sxm4_80gb\n'
            '  gpus_per_node = 2 * nodes\n}\n')
    expect("a clean document", open_doc(s, uri, text) == [])
    i = s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 23}})
    m = s.recv_response()
    v = (m.get("result") or {}).get("contents", {}).get("value", "")
    expect("hover on a field read by name", m.get("id") == i and v.startswith("**`nodes`**: cluster field") and
           "value in `c`: 2" in v and "overrides `nodes` of `perlmutter`" in v, m)
    i = s.request("textDocument/definition", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 22}})
    m = s.recv_response()
    expect("definition across an import", m.get("id") == i and m["result"]["uri"].endswith("/hw/systems/perlmutter.llmp")
           and m["result"]["range"]["start"] == {"line": 10, "character": 8}, m)
    i = s.request("textDocument/definition", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 12}})
    m = s.recv_response()
    expect("definition of an import", m.get("id") == i and m["result"]["uri"].endswith("/hw/systems/perlmutter.llmp"), m)
    i = s.request("textDocument/references", {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 10},
                                              "context": {"includeDeclaration": True}})
    m = s.recv_response()
    files = sorted(os.path.basename(r["uri"]) for r in m.get("result", []))
    expect("references across imports", m.get("id") == i and files == ["gpus.llmp", "perlmutter.llmp", "unsaved.llmp"], m)
    i = s.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    m = s.recv_response()
    expect("document symbols", m.get("id") == i and [(x["name"], x["detail"], [c["name"] for c in x["children"]])
                                                     for x in m["result"]] == [("c", "cluster extends perlmutter", ["nodes", "gpu", "gpus_per_node"])], m)
    i = s.request("textDocument/formatting", {"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})
    m = s.recv_response()
    expect("formatting", m.get("id") == i and len(m["result"]) == 1 and "  nodes         = 2\n  gpu           = a100_sxm4_80gb\n" in m["result"][0]["newText"], m)
    # An error in an imported file shows at the import that names the file, linked to its place.
    golden = os.path.join(os.path.dirname(folder), "golden")
    guri = "file://" + os.path.join(golden, "unsaved.llmp")
    diags = open_doc(s, guri, 'import "lib/tiny_hw"\nimport "lib/unimported_use"\ngpu g { sms = 1 }\n')
    d = diags[0] if len(diags) == 1 else {}
    rel = d.get("relatedInformation", [{}])[0]
    expect("an imported file's error at its import", d.get("range", {}).get("start") == {"line": 1, "character": 0} and
           d["message"].endswith("/lib/unimported_use.llmp:3:19: `tiny` is declared in %s/lib/tiny_hw.llmp, which this "
                                 "file does not import" % golden) and rel.get("location", {}).get("uri", "").endswith(
               "/lib/unimported_use.llmp") and rel["location"]["range"]["start"] == {"line": 2, "character": 18}, diags)
    # A document that is no file (VS Code's untitled:) imports from the server's folder, and
    # its imported file's error shows at the import that loaded that file there.
    u = Server(cwd=golden)
    u.request("initialize", {})
    u.recv()
    diags = open_doc(u, "untitled:Untitled-1", 'import "lib/tiny_hw"\nimport "lib/unimported_use"\ngpu g { sms = 1 }\n')
    expect("an untitled document's imported error at its import", len(diags) == 1 and
           diags[0]["range"]["start"] == {"line": 1, "character": 0}, diags)
    u.request("shutdown")
    u.recv()
    u.notify("exit")
    u.wait()
    # Quick fixes: a unit in the wrong case, an enumeration word, a field name.
    text = "gpu g {\n  memory = 80 GIB\n  memory_bandwidth = 2 TB/s\n  sms = 10\n  peak_fp16 = 1 PFLOP/s\n" \
           "  vendor = nvidai\n  l2_cahce = 40 MB\n}\n"
    diags = open_doc(s, uri, text)
    expect("three diagnostics with fixes", len(diags) == 3 and all("did you mean" in d["message"] for d in diags), diags)
    for line, old, new in [(1, "GIB", "GiB"), (5, "nvidai", "nvidia"), (6, "l2_cahce", "l2_cache")]:
        pos = {"line": line, "character": 4}
        i = s.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": pos, "end": pos},
                                                  "context": {"diagnostics": []}})
        m = s.recv_response()
        acts = m.get("result") or []
        edit = acts[0]["edit"]["changes"][uri][0] if len(acts) == 1 else {}
        col = text.split("\n")[line].index(old)
        expect("quick fix %s -> %s" % (old, new), acts and acts[0]["title"] == "Replace `%s` with `%s`" % (old, new) and
               edit["newText"] == new and edit["range"] == {"start": {"line": line, "character": col},
                                                           "end": {"line": line, "character": col + len(old)}}, m)
    s.request("shutdown")
    s.recv()
    s.notify("exit")
    s.wait()


def timing(path):
    """The time from an edit (didChange) of path to its diagnostics over 20 edits (best and
    median), for an edit that keeps the file clean and for one that adds an error."""
    s = Server()
    uri = "file://" + os.path.abspath(path)
    text = open(path).read()
    s.request("initialize", {})
    s.recv()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "llmp", "version": 1, "text": text}})
    s.recv()
    version = 1
    for label, new in [("clean edit", text + "\n# edited\n"), ("edit with an error", text + "\nplan zz { tq = 1 }\n")]:
        best = []
        for v in range(20):
            version += 1
            t0 = time.perf_counter()
            s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                "contentChanges": [{"text": new + " " * v}]})
            m = s.recv()
            best.append(time.perf_counter() - t0)
        best.sort()
        print("%s: %s (%d bytes, %d lines): diagnostics in %.1f ms (best of 20; median %.1f ms), %d diagnostics" %
              (label, path, len(text), text.count("\n"), 1e3 * best[0], 1e3 * best[10], len(m["params"]["diagnostics"])))
    s.request("shutdown")
    s.recv()
    s.notify("exit")
    s.wait()


def parse_check(stderr, folder):
    """`llmp check --error-format=short`'s lines as (file, line, col, level, message)."""
    out = []
    for line in stderr.decode("utf-8", "replace").splitlines():
        m = re.match(r"(.*?):(\d+):(\d+): (error|warning|note): (.*)$", line) or \
            re.match(r"(.*?): (error|warning|note): (.*)$", line)
        if m and len(m.groups()) == 5:
            out.append((os.path.abspath(os.path.join(folder, m[1])), int(m[2]), int(m[3]), m[4], m[5]))
        elif m:
            out.append((os.path.abspath(os.path.join(folder, m[1])), 0, 0, m[2], m[3]))
    return out


def check_all(folder, names):
    """`llmp check`'s diagnostics of each file: one run for the files that import nothing
    (each line names its file), one run each for the others (their imports' lines too)."""
    run = lambda files: subprocess.run([LLMP, "check", "--error-format=short", "--color=never"] + files,
                                       capture_output=True, cwd=folder, timeout=120).stderr
    alone = [n for n in names if not re.search(rb"^import", open(os.path.join(folder, n), "rb").read(), re.M)]
    by_file = {os.path.join(folder, n): [] for n in names}
    for d in parse_check(run(alone), folder):
        by_file[d[0]].append(d)
    for n in names:
        if n not in alone:
            by_file[os.path.join(folder, n)] = parse_check(run([os.path.join(folder, n)]), folder)
    return by_file


def server_lines(path, diags):
    """The server's diagnostics in check's terms: 1-based places, errors of other files from
    the message's own `file:line:col:`, notes from related information."""
    level = {1: "error", 2: "warning", 3: "note"}
    out = []
    for d in diags:
        msg, here = d["message"], (path, d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1)
        m = re.match(r"(/.*?):(\d+):(\d+): (.*)$", msg, re.S)
        if m:
            here, msg = (m[1], int(m[2]), int(m[3])), m[4]
        elif d["range"]["start"] == d["range"]["end"] == {"line": 0, "character": 0} and \
                not any(c[0] == path and c[1] == 1 and c[4] == msg for c in CHECK):
            here = (path, 0, 0)  # a diagnostic with no position
        out.append(here + (level[d["severity"]], msg))
        for r in d.get("relatedInformation", []):
            if r["message"] == msg:
                continue  # the place of an error in an imported file
            loc = r["location"]
            out.append((urllib.parse.unquote(loc["uri"][7:]), loc["range"]["start"]["line"] + 1,
                        loc["range"]["start"]["character"] + 1, "note", r["message"]))
    return out


def parity(folder):
    global CHECK
    s = Server()
    s.request("initialize", {})
    s.recv()
    texts = {}
    for name in sorted(os.listdir(folder)):
        try:
            text = open(os.path.join(folder, name), "rb").read().decode("utf-8") if name.endswith(".llmp") else "\0"
        except UnicodeDecodeError:
            continue  # an editor sends text: the files that are not UTF-8 are check's alone
        if "\0" not in text:
            texts[name] = text
    expected = check_all(folder, sorted(texts))
    for name, text in sorted(texts.items()):
        path = os.path.join(folder, name)
        CHECK = expected[path]
        got = server_lines(path, open_doc(s, "file://" + urllib.parse.quote(path), text))
        s.notify("textDocument/didClose", {"textDocument": {"uri": "file://" + urllib.parse.quote(path)}})
        s.recv()
        expect("the server's diagnostics of %s are check's" % name, sorted(got) == sorted(CHECK),
               {"check": sorted(CHECK), "server": sorted(got)})
    print("%d files compared, %d diagnostics" % (len(texts), sum(len(v) for v in expected.values())))
    s.request("shutdown")
    s.recv()
    s.notify("exit")
    s.wait()


def main():
    if len(sys.argv) > 3 and sys.argv[2] == "--time":
        timing(sys.argv[3])
        return 0
    if len(sys.argv) > 3 and sys.argv[2] == "--parity":
        parity(os.path.abspath(sys.argv[3]))
        if FAILURES:
            print("%d failure(s)" % len(FAILURES))
        return 1 if FAILURES else 0
    path = os.path.abspath(sys.argv[2])
    uri = "file://" + path
    text = open(path).read()
    lifecycle(uri, text)
    endings(uri, text)
    unicode_positions("file://" + os.path.join(os.path.dirname(path), "unicode.llmp"))
    scenario_hover("file://" + os.path.join(os.path.dirname(path), "figures.llmp"))
    completions_and_imports(os.path.dirname(path))
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("lsp protocol test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
