Content-Length: 213

{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":"file:///tmp/llmp-fuzz-lsp","clientInfo":{"name":"Neovim"},"capabilities":{"textDocument":{"hover":{"contentFormat":["markdown"]}}}}}Content-Length: 52

{"jsonrpc":"2.0","method":"initialized","params":{}}Content-Length: 277

{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/llmp%2Dfuzz%2dlsp/two%20words.llmp","languageId":"llmp","version":1,"text":"import \"tests/golden/block_unknown_operator\"\nimport \"stdlib/transformer\"\nmodel x extends gpt {}\n"}}}Content-Length: 555

{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp","languageId":"llmp","version":1,"text":"import \"stdlib/transformer\"\nimport \"hw/systems/perlmutter\"\n\nmodel tiny extends gpt {\n  layers = 4\n  hidden = 1024\n  heads  = 16\n  seq    = 2048\n  vocab  = 50257\n  norm   = layernorm\n}\n\nplan small { tp = 2; pp = 2; micro_batch = 1; global_batch = 64; dtyp = bf16 }\n\nscenario tiny_perlmutter {\n  model   = tiny\n  cluster = perlmutter { nodes = 1 }\n  plan    = small\n}\n"}}}Content-Length: 166

{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":3,"character":20}}}Content-Length: 171

{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":3,"character":20}}}Content-Length: 171

{"jsonrpc":"2.0","id":4,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":3,"character":20}}}Content-Length: 167

{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":14,"character":17}}}Content-Length: 172

{"jsonrpc":"2.0","id":6,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":14,"character":17}}}Content-Length: 172

{"jsonrpc":"2.0","id":7,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":14,"character":17}}}Content-Length: 167

{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":14,"character":11}}}Content-Length: 172

{"jsonrpc":"2.0","id":9,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":14,"character":11}}}Content-Length: 173

{"jsonrpc":"2.0","id":10,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":14,"character":11}}}Content-Length: 168

{"jsonrpc":"2.0","id":11,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":12,"character":66}}}Content-Length: 173

{"jsonrpc":"2.0","id":12,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":12,"character":66}}}Content-Length: 173

{"jsonrpc":"2.0","id":13,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":12,"character":66}}}Content-Length: 167

{"jsonrpc":"2.0","id":14,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":0,"character":11}}}Content-Length: 172

{"jsonrpc":"2.0","id":15,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":0,"character":11}}}Content-Length: 172

{"jsonrpc":"2.0","id":16,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":0,"character":11}}}Content-Length: 210

{"jsonrpc":"2.0","id":17,"method":"textDocument/references","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":3,"character":20},"context":{"includeDeclaration":true}}}Content-Length: 139

{"jsonrpc":"2.0","id":18,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"}}}Content-Length: 179

{"jsonrpc":"2.0","id":19,"method":"textDocument/formatting","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"options":{"tabSize":2,"insertSpaces":true}}}Content-Length: 172

{"jsonrpc":"2.0","id":20,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":1,"character":11}}}Content-Length: 213

{"jsonrpc":"2.0","id":21,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"range":{"start":{"line":12,"character":65},"end":{"line":12,"character":65}}}}Content-Length: 45

{"jsonrpc":"2.0","id":22,"method":"shutdown"}Content-Length: 33

{"jsonrpc":"2.0","method":"exit"}