Content-Length: 213

{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":"file:///tmp/llmp-fuzz-lsp","clientInfo":{"name":"Neovim"},"capabilities":{"textDocument":{"hover":{"contentFormat":["markdown"]}}}}}Content-Length: 52

{"jsonrpc":"2.0","method":"initialized","params":{}}Content-Length: 1143

{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp","languageId":"llmp","version":1,"text":"# A small self-contained scenario: lowering is fast, every kind is declared here.\ngpu g { memory = 40 GiB; memory_bandwidth = 1555 GB/s; sms = 108; peak_fp16 = 312 TFLOP/s }\ncluster c {\n  gpu           = g\n  gpus_per_node = 8\n  nodes         = 1\n  tier nv { span = node; bandwidth = 300 GB/s; latency = 2 us }\n}\nblock b {\n  let t = plan.micro_batch * model.seq\n  op up   = linear(t, model.hidden, model.ffn, split = column)\n  op act  = activation(gelu, t * model.ffn)\n  op down = linear(t, model.ffn, model.hidden, split = row)\n  op x    = add(t * model.hidden)\n}\nmodel m { layers = 8; hidden = 1024; heads = 8; seq = 1024; vocab = 32000; ffn = 4096; layer = b; layers_only = true }\nmodel big extends m { layers = 16 }\nplan p { tp = 2; pp = 2; micro_batch = 4; global_batch = 64 }\nscenario s {\n  model   = m { layers = 16 }\n  cluster = c { nodes = 1 }\n  plan    = p { dp = 2 }\n}\nsweep w extends s {\n  vary plan.tp in [1, 2, 4]\n  minimize iteration\n}\n"}}}Content-Length: 166

{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":18,"character":9}}}Content-Length: 171

{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":18,"character":9}}}Content-Length: 171

{"jsonrpc":"2.0","id":4,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":18,"character":9}}}Content-Length: 167

{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":10,"character":30}}}Content-Length: 172

{"jsonrpc":"2.0","id":6,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":10,"character":30}}}Content-Length: 172

{"jsonrpc":"2.0","id":7,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":10,"character":30}}}Content-Length: 167

{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":19,"character":12}}}Content-Length: 172

{"jsonrpc":"2.0","id":9,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":19,"character":12}}}Content-Length: 173

{"jsonrpc":"2.0","id":10,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":19,"character":12}}}Content-Length: 167

{"jsonrpc":"2.0","id":11,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":1,"character":21}}}Content-Length: 172

{"jsonrpc":"2.0","id":12,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":1,"character":21}}}Content-Length: 172

{"jsonrpc":"2.0","id":13,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":1,"character":21}}}Content-Length: 167

{"jsonrpc":"2.0","id":14,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":6,"character":47}}}Content-Length: 172

{"jsonrpc":"2.0","id":15,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":6,"character":47}}}Content-Length: 172

{"jsonrpc":"2.0","id":16,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":6,"character":47}}}Content-Length: 168

{"jsonrpc":"2.0","id":17,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":24,"character":12}}}Content-Length: 173

{"jsonrpc":"2.0","id":18,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":24,"character":12}}}Content-Length: 173

{"jsonrpc":"2.0","id":19,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":24,"character":12}}}Content-Length: 168

{"jsonrpc":"2.0","id":20,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":13,"character":13}}}Content-Length: 173

{"jsonrpc":"2.0","id":21,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":13,"character":13}}}Content-Length: 173

{"jsonrpc":"2.0","id":22,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":13,"character":13}}}Content-Length: 168

{"jsonrpc":"2.0","id":23,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":16,"character":24}}}Content-Length: 173

{"jsonrpc":"2.0","id":24,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":16,"character":24}}}Content-Length: 173

{"jsonrpc":"2.0","id":25,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":16,"character":24}}}Content-Length: 167

{"jsonrpc":"2.0","id":26,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":22,"character":1}}}Content-Length: 172

{"jsonrpc":"2.0","id":27,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":22,"character":1}}}Content-Length: 172

{"jsonrpc":"2.0","id":28,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":22,"character":1}}}Content-Length: 210

{"jsonrpc":"2.0","id":29,"method":"textDocument/references","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":18,"character":9},"context":{"includeDeclaration":true}}}Content-Length: 139

{"jsonrpc":"2.0","id":30,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"}}}Content-Length: 179

{"jsonrpc":"2.0","id":31,"method":"textDocument/formatting","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"options":{"tabSize":2,"insertSpaces":true}}}Content-Length: 45

{"jsonrpc":"2.0","id":32,"method":"shutdown"}Content-Length: 33

{"jsonrpc":"2.0","method":"exit"}