-- nvim_client.lua: drives `llmp lsp` from Neovim's built-in LSP client (0.7 API), headless.
-- Opens broken.llmp (one error), checks the diagnostic, hover, definition (in the file and
-- across an import), references, completion, symbols and formatting; applies the quick fix,
-- which the client sends as didChange, checks the diagnostics clear and hovers the scenario
-- for its evaluated figures.  Exits 1 on the first wrong answer.
-- Then runs docs/editors.md's key mappings and presses K and gd through them.
-- Environment: LLMP (the llmp binary), LSP_FILE (the file to open), LSP_DOCS (editors.md).
local llmp, file, docs = os.getenv('LLMP'), os.getenv('LSP_FILE'), os.getenv('LSP_DOCS')
local T = 20000

local function fail(msg)
  io.stderr:write('nvim lsp test: FAIL: ' .. msg .. '\n')
  os.exit(1)
end
local function check(cond, msg) if not cond then fail(msg) end end

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({ cmd = { llmp, 'lsp' }, name = 'llmp',
                                 root_dir = vim.fn.fnamemodify(file, ':h') })
check(id, 'start_client failed')
vim.lsp.buf_attach_client(buf, id)
check(vim.wait(T, function() local c = vim.lsp.get_client_by_id(id); return c and c.initialized end),
      'the server did not answer initialize')

-- The line (0-based) and column of the k-th `word` in the buffer.
local function at(word, k)
  k = k or 1
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local s = 0
    while true do
      s = line:find(word, s + 1, true)
      if not s then break end
      k = k - 1
      if k == 0 then return { line = i - 1, character = s } end
    end
  end
  fail('no `' .. word .. '` in the buffer')
end

-- The position of name inside the first `context` (a longer, unambiguous text).
local function inside(context, name)
  local p = at(context)
  return { line = p.line, character = p.character + context:find(name, 1, true) - 1 }
end

local function request(method, params)
  params.textDocument = { uri = vim.uri_from_bufnr(buf) }
  local res, err = vim.lsp.buf_request_sync(buf, method, params, T)
  check(res and res[id], method .. ': no answer (' .. tostring(err) .. ')')
  check(not res[id].err, method .. ': error ' .. vim.inspect(res[id].err))
  return res[id].result
end

-- Diagnostics on open: exactly check's error, at the field.
check(vim.wait(T, function() return #vim.diagnostic.get(buf) > 0 end), 'no diagnostics after opening')
local d = vim.diagnostic.get(buf)
check(#d == 1, 'expected one diagnostic, got ' .. vim.inspect(d))
check(d[1].message == 'unknown field `dtyp` in plan; did you mean `dtype`?', 'diagnostic message: ' .. d[1].message)
check(d[1].lnum == at('dtyp').line and d[1].col == 2 and d[1].end_col == 6, 'diagnostic range: ' .. vim.inspect(d[1]))
check(d[1].severity == vim.diagnostic.severity.ERROR, 'diagnostic severity')

-- Hover on a field: the schema's documentation and the value in units.
local h = request('textDocument/hover', { position = at('hidden') })
check(h and h.contents.value:find('count ≥ 1, required', 1, true), 'hover hidden: ' .. vim.inspect(h))
check(h.contents.value:find('value in `tiny`: 1024', 1, true), 'hover hidden value: ' .. h.contents.value)
-- ... with docs/language.md's notes and default.
h = request('textDocument/hover', { position = at('tp ') })
check(h.contents.value:find('default 1', 1, true) and h.contents.value:find('tensor, pipeline, context, expert parallel', 1, true),
      'hover tp: ' .. h.contents.value)
-- ... and where an overridden value came from through extends.
h = request('textDocument/hover', { position = at('norm') })
check(h.contents.value:find('overrides `norm` of `gpt`', 1, true), 'hover norm: ' .. h.contents.value)

-- Definition: a name in the file, and one in an imported file.
local def = request('textDocument/definition', { position = inside('= tiny', 'tiny') })
def = def[1] or def
check(def.uri == vim.uri_from_bufnr(buf) and def.range.start.line == at('model tiny').line,
      'definition of tiny: ' .. vim.inspect(def))
def = request('textDocument/definition', { position = at('gpt') })
def = def[1] or def
check(def.uri:match('stdlib/transformer%.llmp$'), 'definition of gpt: ' .. vim.inspect(def))
local refs = request('textDocument/references', { position = inside('plan small', 'small'), context = { includeDeclaration = true } })
check(#refs == 2, 'references of small: ' .. vim.inspect(refs))

-- Completion: enumeration words after `norm =`, field names at a statement's start.
local function labels(r)
  local set = {}
  for _, it in ipairs(r.items or r) do set[it.label] = true end
  return set
end
local p = at('layernorm')
local c = labels(request('textDocument/completion', { position = { line = p.line, character = p.character - 1 } }))
check(c.rmsnorm and c.layernorm and not c.hidden, 'completion after norm =: ' .. vim.inspect(c))
p = at('tp ')
c = labels(request('textDocument/completion', { position = { line = p.line, character = p.character - 1 } }))
check(c.micro_batch and c.schedule and c.recompute, 'completion of plan fields: ' .. vim.inspect(c))

local syms = request('textDocument/documentSymbol', {})
check(#syms == 3 and syms[3].name == 'tiny_perlmutter', 'symbols: ' .. vim.inspect(syms))
check(#request('textDocument/formatting', { options = { tabSize = 2, insertSpaces = true } }) == 0,
      'formatting changed a formatted file')

-- The quick fix, applied by the client: the buffer changes, the diagnostic goes.
local actions = request('textDocument/codeAction', { range = { start = at('dtyp'), ['end'] = at('dtyp') },
                                                   context = { diagnostics = {} } })
check(#actions == 1 and actions[1].title == 'Replace `dtyp` with `dtype`', 'code actions: ' .. vim.inspect(actions))
vim.lsp.util.apply_workspace_edit(actions[1].edit, 'utf-16')
check(vim.api.nvim_buf_get_lines(buf, at('dtype').line, at('dtype').line + 1, false)[1]:find('dtype', 1, true),
      'the quick fix did not apply')
check(vim.wait(T, function() return #vim.diagnostic.get(buf) == 0 end), 'diagnostics remain after the fix')

-- The scenario's figures from the run pipeline.
h = request('textDocument/hover', { position = at('tiny_perlmutter') })
check(h.contents.value:find('**iteration** ', 1, true) and h.contents.value:find(' · fits', 1, true),
      'hover scenario: ' .. h.contents.value)

-- docs/editors.md's Neovim lines: the first Lua block of its "## The language server in Neovim" section.
local md = table.concat(vim.fn.readfile(docs), '\n')
local block = md:match('\n## The language server in Neovim\n.-```lua\n(.-)```')
check(block, 'no Lua block under "## The language server in Neovim" in ' .. docs)
assert(loadstring(block, 'docs/editors.md'))()
vim.bo[buf].filetype = 'llmp'
check(vim.bo[buf].omnifunc == 'v:lua.vim.lsp.omnifunc', 'the docs lines did not set omnifunc')
local function floats()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then return w end
  end
end
p = at('hidden')
vim.api.nvim_win_set_cursor(0, { p.line + 1, p.character })
vim.cmd('normal K')
check(vim.wait(T, floats), 'K opened no hover window')
local shown = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(floats()), 0, -1, false), '\n')
check(shown:find('count ≥ 1', 1, true), 'the hover window shows: ' .. shown)
vim.api.nvim_win_close(floats(), true)
p = inside('= tiny', 'tiny')
vim.api.nvim_win_set_cursor(0, { p.line + 1, p.character })
vim.cmd('normal gd')
check(vim.wait(T, function() return vim.api.nvim_win_get_cursor(0)[1] == at('model tiny').line + 1 end),
      'gd did not move to `model tiny`')

vim.lsp.stop_client(id)
vim.wait(T, function() return vim.lsp.get_client_by_id(id) == nil end)
print('nvim lsp test: ok')
os.exit(0)
