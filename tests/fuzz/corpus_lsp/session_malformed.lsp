Content-Length: 167

{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":10,"character":28}}}Content-Type: application/vscode-jsonrpc; charset=utf-8

Content-Length: 12x

Content-Length: 5

{oopsgarbage before a header Content-Length: 2

[]Content-Length: 213

{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"processId":1,"rootUri":"file:///tmp/llmp-fuzz-lsp","clientInfo":{"name":"Neovim"},"capabilities":{"textDocument":{"hover":{"contentFormat":["markdown"]}}}}}Content-Length: 52

{"jsonrpc":"2.0","method":"initialized","params":{}}Content-Length: 58

{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}Content-Length: 46

{"jsonrpc":"2.0","id":[1],"method":"shutdown"}Content-Length: 38

{"jsonrpc":"2.0","id":7,"result":null}Content-Length: 73

{"jsonrpc":"2.0","id":4,"method":"textDocument/noSuchMethod","params":{}}Content-Length: 62

{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}Content-Length: 72

{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":"params"}Content-Length: 148

{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///not/open.llmp"},"position":{"line":0,"character":0}}}Content-Length: 115

{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"untitled:1","text":"model x {"}}}Content-Length: 139

{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"untitled:1"},"position":{"line":99,"character":-1}}}Content-Length: 161

{"jsonrpc":"2.0","id":8,"method":"textDocument/completion","params":{"textDocument":{"uri":"untitled:1"},"position":{"line":9000000000000.0,"character":1e+300}}}Content-Length: 117

{"jsonrpc":"2.0","id":9,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"untitled:1"},"range":{}}}Content-Length: 141

{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"untitled:1"},"contentChanges":[{"range":{},"text":"x"}]}}Content-Length: 107

{"jsonrpc":"2.0","id":10,"method":"textDocument/formatting","params":{"textDocument":{"uri":"untitled:1"}}}Content-Length: 45

{"jsonrpc":"2.0","id":11,"method":"shutdown"}Content-Length: 168

{"jsonrpc":"2.0","id":12,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":10,"character":28}}}Content-Length: 33

{"jsonrpc":"2.0","method":"exit"}