-- vim_syntax.lua - loads editors/vim in headless Neovim and checks it: a shipped file gets
-- filetype llmp (ftdetect), the syntax, ftplugin and indent files load without an error, a few
-- positions of examples/quickstart.llmp get their syntax groups, `gg=G` leaves every shipped
-- file as `llmp fmt` laid it out, and the syntax group of every character of the texts that
-- grammar_check.py --inputs lists is written out for grammar_check.py --tokens --vim; and
-- editors/nvim/llmp.lua starts the language server for a .llmp buffer.
-- run by vim_syntax.sh: nvim --headless -u NONE with LLMP_ROOT, LLMP_INPUTS, LLMP_OUT,
-- LLMP_STUB (lsp_stub.py) and LLMP_STUB_LOG set
local root, inputs_path, out_path = os.getenv('LLMP_ROOT'), os.getenv('LLMP_INPUTS'), os.getenv('LLMP_OUT')
local failures = {}

local function fail(msg)
  failures[#failures + 1] = msg
end

local function group_at(lnum, col)
  return vim.fn.synIDattr(vim.fn.synID(lnum, col, 1), 'name')
end

-- The group at the first occurrence of `text` on the first line that matches `line`.
local function expect(line, text, group)
  local lnum = vim.fn.search('\\V' .. vim.fn.escape(line, '\\'), 'nw')
  if lnum == 0 then
    return fail('quickstart.llmp: no line `' .. line .. '`')
  end
  local col = (vim.fn.getline(lnum)):find(text, 1, true)
  local got = col and group_at(lnum, col) or '(no such text)'
  if got ~= group then
    fail(string.format('quickstart.llmp:%d:%s: `%s` is %s, expected %s', lnum, col or 0, text, got, group))
  end
end

local function check_quickstart()
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/examples/quickstart.llmp'))
  if vim.bo.filetype ~= 'llmp' then fail('filetype is `' .. vim.bo.filetype .. '`, expected llmp') end
  if vim.b.current_syntax ~= 'llmp' then fail('syntax/llmp.vim did not load') end
  if vim.bo.commentstring ~= '# %s' then fail('ftplugin: commentstring is `' .. vim.bo.commentstring .. '`') end
  if not vim.bo.indentexpr:find('LlmpIndent') then fail('indent/llmp.vim did not load') end
  expect('import "stdlib/transformer"', 'import', 'llmpImport')
  expect('import "stdlib/transformer"', '"stdlib', 'llmpString')
  expect('model gpt_neox_20b extends gpt_neox {', 'model', 'llmpKind')
  expect('model gpt_neox_20b extends gpt_neox {', 'gpt_neox_20b', 'llmpDeclName')
  expect('model gpt_neox_20b extends gpt_neox {', 'extends', 'llmpExtends')
  expect('model gpt_neox_20b extends gpt_neox {', 'gpt_neox {', 'llmpParent')
  expect('parallel_residual = true', 'true', 'llmpBoolean')
  expect('  schedule     = 1f1b', 'schedule', 'llmpField')
  expect('  schedule     = 1f1b', '1f1b', 'llmpEnum')
  expect('  schedule     = 1f1b', '# gpipe', 'llmpComment')
  expect('placement    = [tp', 'tp', 'llmpEnum')
  expect('dp_bucket_elements = 1.26e9', '1.26e9', 'llmpNumber')
  expect('cluster   = perlmutter { nodes', 'perlmutter', 'llmpName')
  expect('measured { iteration', 'measured', 'llmpKind')
  expect('measured { iteration', '17.370', 'llmpNumber')
  expect('measured { iteration', 's }', 'llmpUnit')
  expect('vary plan.tp', 'vary', 'llmpStatement')
  expect('vary plan.tp', 'tp', 'llmpMember')
  expect('vary plan.tp', 'in [', 'llmpStatement')
  expect('let plan.dp =', 'let', 'llmpLet')
  expect('require model.layers', 'require', 'llmpStatement')
  expect('require model.layers', '%', 'llmpOperator')
  expect('minimize iteration', 'minimize', 'llmpStatement')
end

-- Per line, runs of one group as [start, end, [group]] in characters (grammar_check.py's).
local function groups(nlines)
  local out = {}
  for lnum = 1, nlines do
    local line = vim.fn.getline(lnum)
    local runs, prev = {}, nil
    for col = 1, #line do
      local g = group_at(lnum, col)
      local at = vim.str_utfindex(line, col - 1)
      if prev and prev[3][1] == g then
        prev[2] = vim.str_utfindex(line, col)
      else
        prev = { at, vim.str_utfindex(line, col), { g } }
        runs[#runs + 1] = prev
      end
    end
    out[lnum] = runs
  end
  return out
end

local function check_inputs()
  local inputs = vim.fn.json_decode(table.concat(vim.fn.readfile(inputs_path), '\n'))
  local out = {}
  vim.cmd('enew')
  vim.bo.buftype = 'nofile'
  vim.bo.filetype = 'llmp'
  for name, text in pairs(inputs) do
    local lines = vim.split(text, '\n', true)
    vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
    vim.cmd('syntax sync fromstart')
    out[name] = groups(#lines)
    if not name:find('^sample:') then
      vim.cmd('silent normal! gg=G')
      local now = vim.api.nvim_buf_get_lines(0, 0, -1, false)
      for i, l in ipairs(lines) do
        if now[i] ~= l then
          fail(string.format('%s:%d: gg=G indents `%s` as `%s`', name, i, l, now[i]))
          break
        end
      end
    end
  end
  vim.fn.writefile({ vim.fn.json_encode(out) }, out_path)
end

-- editors/nvim/llmp.lua starts `$llmp_path lsp` for a .llmp buffer, at the repository's root,
-- and the client attaches: a stub server (lsp_stub.py) records what it was given.
local function check_lsp_config()
  dofile(root .. '/editors/nvim/llmp.lua')
  vim.g.llmp_path = os.getenv('LLMP_STUB')
  local file = root .. '/stdlib/transformer.llmp'
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local log = os.getenv('LLMP_STUB_LOG')
  local uri = vim.uri_from_fname(vim.fn.fnamemodify(file, ':p'))
  local function logged()
    return vim.fn.filereadable(log) == 1 and table.concat(vim.fn.readfile(log), '\n') or ''
  end
  local seen = vim.wait(10000, function() return logged():find(uri, 1, true) ~= nil end, 50)
  local attached = vim.lsp.buf_get_clients(buf)
  local names = {}
  for _, c in pairs(attached) do names[#names + 1] = c.name end
  if not seen or table.concat(names, ',') ~= 'llmp' then
    return fail('editors/nvim/llmp.lua: clients ' .. vim.inspect(names) .. '; the server logged: ' .. logged())
  end
  local want = { '{"argv": ["lsp"]}', '{"rootUri": "' .. vim.uri_from_fname(vim.fn.resolve(root)) .. '"}' }
  for _, w in ipairs(want) do
    if not logged():find(w, 1, true) then fail('editors/nvim/llmp.lua: the server did not log ' .. w .. ': ' .. logged()) end
  end
  vim.lsp.stop_client(vim.lsp.get_active_clients())
end

local ok, err = pcall(function()
  check_quickstart()
  check_inputs()
  check_lsp_config()
end)
if not ok then fail('error: ' .. tostring(err)) end
if vim.v.errmsg ~= '' then fail('an error was reported: ' .. vim.v.errmsg) end
for _, f in ipairs(failures) do io.stderr:write(f .. '\n') end
io.stderr:write(string.format('vim_syntax.lua: %d failures\n', #failures))
vim.cmd(#failures == 0 and 'qall!' or 'cquit 1')
