Content-Length: 213

{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":"file:///tmp/llmp-fuzz-lsp","clientInfo":{"name":"Neovim"},"capabilities":{"textDocument":{"hover":{"contentFormat":["markdown"]}}}}}Content-Length: 52

{"jsonrpc":"2.0","method":"initialized","params":{}}Content-Length: 1141

{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp","languageId":"llmp","version":1,"text":"# A small self-contained scenario: lowering is fast, every kind is declared here.\ngpu g { memory = 40 GiB; memory_bandwidth = 1555 GB/s; sms = 108; peak_fp16 = 312 TFLOP/s }\ncluster c {\n  gpu           = g\n  gpus_per_node = 8\n  nodes         = 1\n  tier nv { span = node; bandwidth = 300 GB/s; latency = 2 us }\n}\nblock b {\n  let t = plan.micro_batch * model.seq\n  op up   = linear(t, model.hidden, model.ffn, split = column)\n  op act  = activation(gelu, t * model.ffn)\n  op down = linear(t, model.ffn, model.hidden, split = row)\n  op x    = ad(t * model.hidden)\n}\nmodel m { layers = 8; hidden = 1024; heads = 8; seq = 1024; vocab = 32000; ffn = 4096; layer = b; layers_only = true }\nmodel big extends m { layers = 16 }\nplan p { tp = 2; pp = 2; micro_batch = 4; global_bath = 64 }\nscenario s {\n  model   = m { layers = 16 }\n  cluster = c { nodes = 1 }\n  plan    = p { dp = 2 }\n}\nsweep w extends s {\n  vary plan.tp in [1, 2, 4]\n  minimize iteration\n}\n"}}}Content-Length: 241

{"jsonrpc":"2.0","id":2,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"range":{"start":{"line":17,"character":42},"end":{"line":17,"character":42}},"context":{"diagnostics":[]}}}Content-Length: 241

{"jsonrpc":"2.0","id":3,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"range":{"start":{"line":13,"character":12},"end":{"line":13,"character":12}},"context":{"diagnostics":[]}}}Content-Length: 167

{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":17,"character":45}}}Content-Length: 1146

{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp","version":2},"contentChanges":[{"text":"# A small self-contained scenario: lowering is fast, every kind is declared here.\ngpu g { memory = 40 GiB; memory_bandwidth = 1555 GB/s; sms = 108; peak_fp16 = 312 TFLOP/s }\ncluster c {\n  gpu           = g\n  gpus_per_node = 8\n  nodes         = 1\n  tier nv { span = node; bandwidth = 300 GB/s; latency = 2 us }\n}\nblock b {\n  let t = plan.micro_batch * model.seq\n  op up   = linear(t, model.hidden, model.ffn, split = column)\n  op act  = activation(gelu, t * model.ffn)\n  op down = linear(t, model.ffn, model.hidden, split = row)\n  op x    = add(t * model.hidden)\n}\nmodel m { layers = 8; hidden = 1024; heads = 8; seq = 1024; vocab = 32000; ffn = 4096; layer = b; layers_only = true }\nmodel big extends m { layers = 16 }\nplan p { tp = 2; pp = 2; micro_batch = 4; global_batch = 64 }\nscenario s {\n  model   = m { layers = 16 }\n  cluster = c { nodes = 1 }\n  plan    = p { dp = 2 }\n}\nsweep w extends s {\n  vary plan.tp in [1, 2, 4]\n  minimize iteration\n}\n"}]}}Content-Length: 124

{"jsonrpc":"2.0","method":"textDocument/didSave","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"}}}Content-Length: 166

{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":18,"character":9}}}Content-Length: 1146

{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp","version":3},"contentChanges":[{"text":"# A small self-contained scenario: lowering is fast, every kind is declared here.\ngpu g { memory = 40 GiB; memory_bandwidth = 1555 GB/s; sms = 108; peak_fp16 = 312 TFLOP/s }\ncluster c {\n  gpu           = g\n  gpus_per_node = 8\n  nodes         = 1\n  tier nv { span = node; bandwidth = 300 GB/s; latency = 2 us }\n}\nblock b {\n  let t = plan.micro_batch * model.seq\n  op up   = linear(t, model.hidden, model.ffn, split = column)\n  op act  = activation(gelu, t * model.ffn)\n  op down = linear(t, model.ffn, model.hidden, split = row)\n  op x    = add(t * model.hidden)\n}\nmodel m { layers = 8; hidden = 1024; heads = 8; seq = 1024; vocab = 32000; ffn = 4096; layer = b; layers_only = true }\nmodel big extends m { layers = 16 }\nplan p { tp = 2; pp = 2; micro_batch = 4; global_batch = 64 }\nscenario s {\n  model   = m { layers = 16 }\n  cluster = c { nodes = 4 }\n  plan    = p { dp = 8 }\n}\nsweep w extends s {\n  vary plan.tp in [1, 2, 4]\n  minimize iteration\n}\n"}]}}Content-Length: 166

{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"},"position":{"line":18,"character":9}}}Content-Length: 125

{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"file:///tmp/llmp-fuzz-lsp/session.llmp"}}}Content-Length: 44

{"jsonrpc":"2.0","id":7,"method":"shutdown"}Content-Length: 33

{"jsonrpc":"2.0","method":"exit"}