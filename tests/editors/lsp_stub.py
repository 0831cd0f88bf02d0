#!/usr/bin/env python3
"""lsp_stub.py - a language server that only records how it was started, for the test of
editors/nvim/llmp.lua: appends its arguments, the initialize request's rootUri and each
opened document's URI to the file $LLMP_STUB_LOG, one JSON object a line; answers initialize
and shutdown, and exits on exit or at the end of its input."""
import json
import os
import sys


def log(obj):
    with open(os.environ["LLMP_STUB_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps(obj) + "\n")


def reply(id_, result):
    body = json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main():
    log({"argv": sys.argv[1:]})
    inp = sys.stdin.buffer
    while True:
        length = None
        while True:
            line = inp.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        msg = json.loads(inp.read(length))
        method = msg.get("method")
        if method == "initialize":
            log({"rootUri": msg["params"].get("rootUri")})
            reply(msg["id"], {"capabilities": {"textDocumentSync": 1}})
        elif method == "textDocument/didOpen":
            log({"didOpen": msg["params"]["textDocument"]["uri"]})
        elif method == "shutdown":
            reply(msg["id"], None)
        elif method == "exit":
            return
        elif "id" in msg:
            reply(msg["id"], None)


if __name__ == "__main__":
    main()
